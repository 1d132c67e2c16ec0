#include "checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layout.h"
#include "paths.h"

/* The format is raw little-endian int32/float32, read and written with plain fread and
 * fwrite; a big-endian host would need byte swapping that nobody here can test. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#error "checkpoint.c assumes a little-endian host (llm.c's files are little-endian)"
#endif
_Static_assert(sizeof(float) == 4, "checkpoints store 4-byte IEEE floats");

/* llm.c's token shards start with this magic; naming it turns a confusing "bad magic"
 * into an obvious "wrong file" when someone passes train.bin as a checkpoint. */
#define TOKEN_SHARD_MAGIC 20240520

/* Header slots, in llm.c's order. */
enum { SLOT_MAGIC, SLOT_VERSION, SLOT_MAXT, SLOT_V, SLOT_L, SLOT_NH, SLOT_C, SLOT_VP };

__attribute__((format(printf, 3, 4)))
static void set_error(char *err, size_t err_len, const char *fmt, ...)
{
    if (err == NULL || err_len == 0)
        return;
    va_list args;
    va_start(args, fmt);
    vsnprintf(err, err_len, fmt, args);
    va_end(args);
}

/* ------------------------------------------------------------------ header */

static void config_to_header(const GPTConfig *cfg, int32_t header[CHECKPOINT_HEADER_INTS])
{
    memset(header, 0, CHECKPOINT_HEADER_BYTES);
    header[SLOT_MAGIC] = CHECKPOINT_MAGIC;
    header[SLOT_VERSION] = CHECKPOINT_VERSION;
    header[SLOT_MAXT] = cfg->max_seq_len;
    header[SLOT_V] = cfg->vocab_size;
    header[SLOT_L] = cfg->num_layers;
    header[SLOT_NH] = cfg->num_heads;
    header[SLOT_C] = cfg->channels;
    header[SLOT_VP] = cfg->padded_vocab_size;
}

static void header_to_config(const int32_t header[CHECKPOINT_HEADER_INTS], GPTConfig *cfg)
{
    cfg->max_seq_len = header[SLOT_MAXT];
    cfg->vocab_size = header[SLOT_V];
    cfg->num_layers = header[SLOT_L];
    cfg->num_heads = header[SLOT_NH];
    cfg->channels = header[SLOT_C];
    cfg->padded_vocab_size = header[SLOT_VP];
}

static int check_magic_and_version(const char *path, const int32_t *header,
                                   char *err, size_t err_len)
{
    int32_t magic = header[SLOT_MAGIC], version = header[SLOT_VERSION];
    if (magic != CHECKPOINT_MAGIC) {
        set_error(err, err_len, "%s: bad magic %d (expected %d)%s", path, (int)magic,
                  CHECKPOINT_MAGIC,
                  magic == TOKEN_SHARD_MAGIC ? "; this is a token shard, not a checkpoint"
                                             : "; not an llm.c checkpoint");
        return -1;
    }
    if (version != CHECKPOINT_VERSION) {
        set_error(err, err_len,
                  "%s: unsupported checkpoint version %d (only version %d, fp32, is supported)",
                  path, (int)version, CHECKPOINT_VERSION);
        return -1;
    }
    return 0;
}

/* Reads the 256-int header and checks magic and version; fills cfg from it. */
static int read_header(const char *path, FILE *fp, GPTConfig *cfg, char *err, size_t err_len)
{
    int32_t header[CHECKPOINT_HEADER_INTS];
    size_t got = fread(header, sizeof(int32_t), CHECKPOINT_HEADER_INTS, fp);
    if (got != CHECKPOINT_HEADER_INTS) {
        if (ferror(fp))
            set_error(err, err_len, "%s: cannot read header: %s", path, strerror(errno));
        else
            set_error(err, err_len, "%s: file is too short for the %d-byte checkpoint header",
                      path, CHECKPOINT_HEADER_BYTES);
        return -1;
    }
    if (check_magic_and_version(path, header, err, err_len) != 0)
        return -1;
    header_to_config(header, cfg);
    return 0;
}

/* Names the first header field that differs, so the user knows which flag to fix. */
static int check_shape_matches(const char *path, const GPTConfig *file_cfg,
                               const GPTConfig *model_cfg, char *err, size_t err_len)
{
    const struct { const char *name; int in_file, in_model; } fields[] = {
        {"maxT", file_cfg->max_seq_len, model_cfg->max_seq_len},
        {"V", file_cfg->vocab_size, model_cfg->vocab_size},
        {"L", file_cfg->num_layers, model_cfg->num_layers},
        {"NH", file_cfg->num_heads, model_cfg->num_heads},
        {"C", file_cfg->channels, model_cfg->channels},
        {"Vp", file_cfg->padded_vocab_size, model_cfg->padded_vocab_size},
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (fields[i].in_file != fields[i].in_model) {
            set_error(err, err_len, "%s: checkpoint has %s=%d but the model has %s=%d", path,
                      fields[i].name, fields[i].in_file, fields[i].name, fields[i].in_model);
            return -1;
        }
    }
    return 0;
}

/* A size check before reading catches truncated and over-long files up front, instead
 * of failing halfway through the tensors or silently ignoring trailing data. */
static int check_file_size(const char *path, FILE *fp, size_t num_params,
                           char *err, size_t err_len)
{
    struct stat st;
    if (fstat(fileno(fp), &st) != 0) {
        set_error(err, err_len, "%s: cannot stat: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        set_error(err, err_len, "%s: not a regular file", path);
        return -1;
    }
    size_t expected = CHECKPOINT_HEADER_BYTES + sizeof(float) * num_params;
    if ((unsigned long long)st.st_size != (unsigned long long)expected) {
        set_error(err, err_len,
                  "%s: file is %lld bytes (%s) but a checkpoint of this shape is %zu bytes "
                  "(%d-byte header + 4 x %zu params)",
                  path, (long long)st.st_size,
                  (unsigned long long)st.st_size < expected ? "truncated" : "extra bytes",
                  expected, CHECKPOINT_HEADER_BYTES, num_params);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ tensors */

/* Block tensors appear once per layer in the file; the others once. */
static int instances_of(const GPTConfig *cfg, TensorKind kind)
{
    return tensor_is_per_layer(kind) ? cfg->num_layers : 1;
}

/* The index of the first NaN or infinity, or count when there is none. */
static size_t first_not_finite(const float *values, size_t count)
{
    for (size_t i = 0; i < count; i++)
        if (!isfinite(values[i]))
            return i;
    return count;
}

/* Visits tensor instances in file (tensor-major) order and reads each straight into its
 * unit-major place, so no staging copy of the model is needed. */
static int read_tensors(const char *path, FILE *fp, const GPTConfig *cfg, float *params,
                        char *err, size_t err_len)
{
    for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++) {
        for (int layer = 0; layer < instances_of(cfg, (TensorKind)kind); layer++) {
            Range r = tensor_range(cfg, (TensorKind)kind, layer);
            if (fread(params + r.offset, sizeof(float), r.count, fp) != r.count) {
                set_error(err, err_len, "%s: cannot read %s (layer %d): %s", path,
                          tensor_name((TensorKind)kind), layer,
                          ferror(fp) ? strerror(errno) : "unexpected end of file");
                return -1;
            }
            size_t bad = first_not_finite(params + r.offset, r.count);
            if (bad < r.count) {
                set_error(err, err_len, "%s: %s (layer %d) holds %g at element %zu: not a trained model", path,
                          tensor_name((TensorKind)kind), layer, params[r.offset + bad], bad);
                return -1;
            }
        }
    }
    return 0;
}

static int write_tensors(const char *path, FILE *fp, const GPTConfig *cfg,
                         const float *params, char *err, size_t err_len)
{
    for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++) {
        for (int layer = 0; layer < instances_of(cfg, (TensorKind)kind); layer++) {
            Range r = tensor_range(cfg, (TensorKind)kind, layer);
            if (fwrite(params + r.offset, sizeof(float), r.count, fp) != r.count) {
                set_error(err, err_len, "%s: cannot write %s (layer %d): %s", path,
                          tensor_name((TensorKind)kind), layer, strerror(errno));
                return -1;
            }
        }
    }
    return 0;
}

/* ------------------------------------------------------------------ public API */

/* The checkpoint at path, open and past its header (read into *file_cfg); NULL with the
 * reason in err. */
static FILE *open_checkpoint(const char *path, GPTConfig *file_cfg, char *err, size_t err_len)
{
    char why[512];
    FILE *fp = open_input(path, "checkpoint", why, sizeof why);
    if (fp == NULL) {
        set_error(err, err_len, "%s", why);
        return NULL;
    }
    if (read_header(path, fp, file_cfg, err, err_len) != 0) {
        fclose(fp);
        return NULL;
    }
    return fp;
}

int checkpoint_read_config(const char *path, GPTConfig *cfg, char *err, size_t err_len)
{
    GPTConfig file_cfg;
    FILE *fp = open_checkpoint(path, &file_cfg, err, err_len);
    if (fp == NULL)
        return -1;
    fclose(fp);
    /* The shape sizes the caller's buffers, so a nonsense header must stop here. */
    char reason[256];
    if (gpt_config_check(&file_cfg, reason, sizeof reason) != 0) {
        set_error(err, err_len, "%s: checkpoint header has a %s", path, reason);
        return -1;
    }
    *cfg = file_cfg;
    return 0;
}

int checkpoint_load(const char *path, const GPTConfig *expected, float *params,
                    char *err, size_t err_len)
{
    char reason[256];
    if (gpt_config_check(expected, reason, sizeof reason) != 0) {
        set_error(err, err_len, "%s: cannot load into this model: %s", path, reason);
        return -1;
    }
    GPTConfig file_cfg;
    FILE *fp = open_checkpoint(path, &file_cfg, err, err_len);
    if (fp == NULL)
        return -1;
    int status = check_shape_matches(path, &file_cfg, expected, err, err_len);
    if (status == 0)
        status = check_file_size(path, fp, gpt_num_params(expected), err, err_len);
    if (status == 0)
        status = read_tensors(path, fp, expected, params, err, err_len);
    fclose(fp); /* read-only stream: closing cannot lose data */
    return status;
}

typedef struct {
    const GPTConfig *cfg;
    const float *params;
} Checkpoint;

static int write_checkpoint(FILE *fp, const char *path, const void *what, char *err, size_t err_len)
{
    const Checkpoint *checkpoint = what;
    int32_t header[CHECKPOINT_HEADER_INTS];
    config_to_header(checkpoint->cfg, header);
    if (fwrite(header, sizeof(int32_t), CHECKPOINT_HEADER_INTS, fp) != CHECKPOINT_HEADER_INTS) {
        set_error(err, err_len, "%s: cannot write header: %s", path, strerror(errno));
        return -1;
    }
    return write_tensors(path, fp, checkpoint->cfg, checkpoint->params, err, err_len);
}

int checkpoint_save(const char *path, const GPTConfig *cfg, const float *params,
                    char *err, size_t err_len)
{
    char reason[256];
    if (gpt_config_check(cfg, reason, sizeof reason) != 0) {
        set_error(err, err_len, "%s: refusing to save: %s", path, reason);
        return -1;
    }
    Checkpoint checkpoint = {cfg, params};
    char unwanted[8];
    return err != NULL ? write_file_atomically(path, write_checkpoint, &checkpoint, err, err_len)
                       : write_file_atomically(path, write_checkpoint, &checkpoint, unwanted, sizeof unwanted);
}
