/* Checkpoint save/load: round trips, the exact llm.c byte layout, and rejection of bad
 * files. File offsets here are worked out by hand from the format description, not
 * from layout.c, so a mistake in either shows up as a mismatch. */
#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "files.h"
#include "gpt_config.h"
#include "layout.h"

static char tmp_dir[64];
static char path_buffer[256];

/* The template is reset each time because mkdtemp overwrites it, and under --no-fork
 * every test shares one process. */
static void make_tmp_dir(void)
{
    strcpy(tmp_dir, "/tmp/dtc_checkpoint_XXXXXX");
    cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp failed");
}

/* Every test gets a fresh directory, removed with whatever the test left in it. */
static void remove_tmp_dir(void) { files_remove_dir(tmp_dir); }

TestSuite(checkpoint, .init = make_tmp_dir, .fini = remove_tmp_dir);

static const char *tmp_path(const char *name)
{
    snprintf(path_buffer, sizeof path_buffer, "%s/%s", tmp_dir, name);
    return path_buffer;
}

/* L=2, NH=2, C=8, V=70 (Vp=128), maxT=16: 2,912 parameters. */
static GPTConfig small_config(void)
{
    GPTConfig cfg = {.max_seq_len = 16, .vocab_size = 70, .num_layers = 2,
                     .num_heads = 2, .channels = 8};
    cfg.padded_vocab_size = gpt_padded_vocab(cfg.vocab_size);
    return cfg;
}

/* params[i] = i: every float says where it sat in the unit-major buffer. */
static float *params_encoding_position(size_t count)
{
    float *params = malloc(count * sizeof(float));
    cr_assert_not_null(params);
    for (size_t i = 0; i < count; i++)
        params[i] = (float)i;
    return params;
}

/* Distinct arbitrary bit patterns (an odd multiplier is a bijection mod 2^32), including
 * denormals and -0, to prove the bytes go through untouched. Those with an all-ones
 * exponent (NaN, infinity) lose its top bit: a checkpoint holding them is refused. */
static float *params_with_distinct_bits(size_t count)
{
    float *params = malloc(count * sizeof(float));
    cr_assert_not_null(params);
    for (size_t i = 0; i < count; i++) {
        uint32_t bits = (uint32_t)i * 2654435761u + 12345u;
        if ((bits & 0x7f800000u) == 0x7f800000u)
            bits &= ~0x40000000u;
        memcpy(&params[i], &bits, sizeof bits);
    }
    return params;
}

static unsigned char *read_whole_file(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    cr_assert_not_null(fp, "cannot open %s", path);
    fseek(fp, 0, SEEK_END);
    *size = (size_t)ftell(fp);
    rewind(fp);
    unsigned char *bytes = malloc(*size);
    cr_assert_not_null(bytes);
    cr_assert_eq(fread(bytes, 1, *size, fp), *size);
    fclose(fp);
    return bytes;
}

static void overwrite_header_slot(const char *path, int slot, int32_t value)
{
    FILE *fp = fopen(path, "r+b");
    cr_assert_not_null(fp);
    cr_assert_eq(fseek(fp, (long)slot * 4, SEEK_SET), 0);
    cr_assert_eq(fwrite(&value, sizeof value, 1, fp), 1u);
    cr_assert_eq(fclose(fp), 0);
}

static void append_bytes(const char *path, size_t count)
{
    FILE *fp = fopen(path, "ab");
    cr_assert_not_null(fp);
    for (size_t i = 0; i < count; i++)
        cr_assert_eq(fputc(0, fp), 0);
    cr_assert_eq(fclose(fp), 0);
}

/* Saves the small model with params[i] = i and returns the file's path. */
static const char *save_small_checkpoint(const char *name)
{
    GPTConfig cfg = small_config();
    float *params = params_encoding_position(gpt_num_params(&cfg));
    char err[512] = "";
    const char *path = tmp_path(name);
    cr_assert_eq(checkpoint_save(path, &cfg, params, err, sizeof err), 0, "%s", err);
    free(params);
    return path;
}

/* Loading must fail, and the one-line message must name the file and contain want. */
static void assert_load_rejected(const char *path, const GPTConfig *cfg, const char *want)
{
    float *params = malloc(gpt_num_params(cfg) * sizeof(float));
    cr_assert_not_null(params);
    char err[512] = "";
    cr_assert_eq(checkpoint_load(path, cfg, params, err, sizeof err), -1,
                 "load of %s should fail (want '%s')", path, want);
    cr_assert_not_null(strstr(err, path), "error '%s' should name %s", err, path);
    cr_assert_not_null(strstr(err, want), "error '%s' should mention '%s'", err, want);
    cr_assert_null(strchr(err, '\n'), "error should be one line: '%s'", err);
    free(params);
}

static int count_dir_entries(void)
{
    int count = files_count(tmp_dir);
    cr_assert_geq(count, 0, "cannot read %s", tmp_dir);
    return count;
}

/* ------------------------------------------------------------ round trip */

Test(checkpoint, round_trip_is_bitwise_identical)
{
    GPTConfig cfg = small_config();
    size_t count = gpt_num_params(&cfg);
    cr_assert_eq(count, 2912u, "small config should have 2,912 params");
    float *saved = params_with_distinct_bits(count);
    float *loaded = calloc(count, sizeof(float));
    char err[512] = "";
    const char *path = tmp_path("model.bin");
    cr_assert_eq(checkpoint_save(path, &cfg, saved, err, sizeof err), 0, "%s", err);
    cr_assert_eq(checkpoint_load(path, &cfg, loaded, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(saved, loaded, count * sizeof(float)), 0, "round trip changed bytes");
    free(saved);
    free(loaded);
}

Test(checkpoint, saving_over_an_existing_file_replaces_it)
{
    GPTConfig cfg = small_config();
    size_t count = gpt_num_params(&cfg);
    float *first = params_encoding_position(count);
    float *second = params_with_distinct_bits(count);
    float *loaded = calloc(count, sizeof(float));
    char err[512] = "";
    const char *path = tmp_path("model.bin");
    cr_assert_eq(checkpoint_save(path, &cfg, first, err, sizeof err), 0, "%s", err);
    cr_assert_eq(checkpoint_save(path, &cfg, second, err, sizeof err), 0, "%s", err);
    cr_assert_eq(checkpoint_load(path, &cfg, loaded, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memcmp(second, loaded, count * sizeof(float)), 0);
    cr_assert_eq(count_dir_entries(), 1, "only the checkpoint should remain");
    free(first);
    free(second);
    free(loaded);
}

Test(checkpoint, saving_leaves_no_temp_files)
{
    save_small_checkpoint("a.bin");
    save_small_checkpoint("b.bin");
    cr_assert_eq(count_dir_entries(), 2, "expected exactly a.bin and b.bin");
    cr_assert_eq(access(tmp_path("a.bin"), R_OK), 0);
    cr_assert_eq(access(tmp_path("b.bin"), R_OK), 0);
}

Test(checkpoint, saving_into_a_missing_directory_fails_cleanly)
{
    GPTConfig cfg = small_config();
    float *params = params_encoding_position(gpt_num_params(&cfg));
    char err[512] = "";
    const char *path = tmp_path("no_such_dir/model.bin");
    cr_assert_eq(checkpoint_save(path, &cfg, params, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path), "error '%s' should name %s", err, path);
    cr_assert_eq(count_dir_entries(), 0);
    free(params);
}

Test(checkpoint, saving_a_bad_shape_is_refused)
{
    GPTConfig cfg = small_config();
    float *params = params_encoding_position(gpt_num_params(&cfg));
    cfg.num_heads = 3; /* 8 channels do not split into 3 heads */
    char err[512] = "";
    const char *path = tmp_path("model.bin");
    cr_assert_eq(checkpoint_save(path, &cfg, params, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path), "error '%s' should name %s", err, path);
    cr_assert_eq(count_dir_entries(), 0);
    free(params);
}

/* ------------------------------------------------------------ file layout */

Test(checkpoint, header_follows_the_llmc_format)
{
    size_t size;
    unsigned char *bytes = read_whole_file(save_small_checkpoint("model.bin"), &size);
    cr_assert_eq(size, 1024u + 4u * 2912u);
    int32_t header[256];
    memcpy(header, bytes, sizeof header);
    const int32_t want[8] = {20240326, 3, 16, 70, 2, 2, 8, 128};
    for (int i = 0; i < 8; i++)
        cr_assert_eq(header[i], want[i], "header[%d] = %d, want %d", i, header[i], want[i]);
    for (int i = 8; i < 256; i++)
        cr_assert_eq(header[i], 0, "header[%d] should be zero", i);
    free(bytes);
}

/* Tensor sizes of the small config, in file order, from the format description. */
enum { C = 8, VP = 128, MAXT = 16, LAYERS = 2, NUM_KINDS = 16 };
static const char *const kind_names[NUM_KINDS] = {
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"};
static const size_t kind_numel[NUM_KINDS] = {
    VP * C, MAXT * C, C, C, 3 * C * C, 3 * C, C * C, C,
    C, C, 4 * C * C, 4 * C, 4 * C * C, C, C, C};
enum { FIRST_BLOCK_KIND = 2, END_BLOCK_KIND = 14 };

static int is_block_kind(int kind)
{
    return kind >= FIRST_BLOCK_KIND && kind < END_BLOCK_KIND;
}

/* Where (kind, layer) starts in the unit-major buffer: embeddings, blocks, final LN. */
static size_t unit_major_offset(int kind, int layer)
{
    size_t embed = VP * C + MAXT * C, block = 0, within_block = 0;
    for (int k = FIRST_BLOCK_KIND; k < END_BLOCK_KIND; k++) {
        if (k < kind)
            within_block += kind_numel[k];
        block += kind_numel[k];
    }
    if (kind == 0) return 0;
    if (kind == 1) return VP * C;
    if (is_block_kind(kind)) return embed + (size_t)layer * block + within_block;
    return embed + LAYERS * block + (kind == 14 ? 0 : C);
}

/* Where (kind, layer) starts among the file's floats: all earlier kinds, every layer. */
static size_t tensor_major_offset(int kind, int layer)
{
    size_t offset = 0;
    for (int k = 0; k < kind; k++)
        offset += kind_numel[k] * (is_block_kind(k) ? LAYERS : 1);
    return offset + (size_t)layer * kind_numel[kind];
}

Test(checkpoint, file_spot_checks_worked_by_hand)
{
    size_t size;
    unsigned char *bytes = read_whole_file(save_small_checkpoint("model.bin"), &size);
    const float *file = (const float *)(bytes + 1024);
    /* wte 1024 + wpe 128 + ln1w 2x8 + ln1b 2x8 floats precede layer 0's qkvw in the
     * file; in memory it follows embeddings (1152) + layer 0's ln1w, ln1b (16). */
    cr_assert_float_eq(file[1184], 1168.0f, 0.0f, "layer 0 qkvw[0] = %g", file[1184]);
    cr_assert_float_eq(file[1184 + 191], 1168.0f + 191.0f, 0.0f, "layer 0 qkvw[191]");
    /* Layer 1's qkvw follows layer 0's in the file; in memory it is a block (872) later. */
    cr_assert_float_eq(file[1376], 2040.0f, 0.0f, "layer 1 qkvw[0] = %g", file[1376]);
    /* Layer 1's ln1b: file 1152 + 16 + 8; memory 1152 + 872 + 8. */
    cr_assert_float_eq(file[1176], 2032.0f, 0.0f, "layer 1 ln1b[0] = %g", file[1176]);
    cr_assert_float_eq(file[1024], 1024.0f, 0.0f, "wpe[0]");
    cr_assert_float_eq(file[2896], 2896.0f, 0.0f, "lnfw[0]");
    free(bytes);
}

Test(checkpoint, every_tensor_sits_where_the_format_says)
{
    GPTConfig cfg = small_config();
    cr_assert_eq(cfg.padded_vocab_size, VP);
    size_t size;
    unsigned char *bytes = read_whole_file(save_small_checkpoint("model.bin"), &size);
    const float *file = (const float *)(bytes + 1024);
    size_t covered = 0;
    for (int kind = 0; kind < NUM_KINDS; kind++) {
        for (int layer = 0; layer < (is_block_kind(kind) ? LAYERS : 1); layer++) {
            size_t in_file = tensor_major_offset(kind, layer);
            size_t in_memory = unit_major_offset(kind, layer);
            for (size_t i = 0; i < kind_numel[kind]; i++)
                cr_assert_float_eq(file[in_file + i], (float)(in_memory + i), 0.0f,
                                   "%s layer %d element %zu: file has %g, want %zu",
                                   kind_names[kind], layer, i, file[in_file + i],
                                   in_memory + i);
            covered += kind_numel[kind];
        }
    }
    cr_assert_eq(covered * 4 + 1024, size, "tensors should fill the file exactly");
    free(bytes);
}

/* ------------------------------------------------------------ read_config */

Test(checkpoint, read_config_returns_the_shape)
{
    GPTConfig want = small_config(), got;
    memset(&got, 0xff, sizeof got);
    char err[512] = "";
    cr_assert_eq(checkpoint_read_config(save_small_checkpoint("model.bin"), &got, err,
                                        sizeof err), 0, "%s", err);
    cr_assert_eq(got.max_seq_len, want.max_seq_len);
    cr_assert_eq(got.vocab_size, want.vocab_size);
    cr_assert_eq(got.padded_vocab_size, want.padded_vocab_size);
    cr_assert_eq(got.num_layers, want.num_layers);
    cr_assert_eq(got.num_heads, want.num_heads);
    cr_assert_eq(got.channels, want.channels);
}

Test(checkpoint, read_config_rejects_bad_magic_and_nonsense_shapes)
{
    const char *path = save_small_checkpoint("model.bin");
    GPTConfig cfg;
    char err[512] = "";
    overwrite_header_slot(path, 6, 0); /* C = 0 */
    cr_assert_eq(checkpoint_read_config(path, &cfg, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, path), "error '%s' should name %s", err, path);
    overwrite_header_slot(path, 0, 12345);
    cr_assert_eq(checkpoint_read_config(path, &cfg, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, "12345"), "error '%s' should show the magic found", err);
}

/* ------------------------------------------------------------ rejection */

Test(checkpoint, rejects_wrong_magic)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("model.bin");
    overwrite_header_slot(path, 0, 12345);
    assert_load_rejected(path, &cfg, "bad magic 12345 (expected 20240326)");
}

Test(checkpoint, names_a_token_shard_passed_as_a_checkpoint)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("train.bin");
    overwrite_header_slot(path, 0, 20240520);
    assert_load_rejected(path, &cfg, "token shard");
}

Test(checkpoint, rejects_unsupported_version)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("model.bin");
    overwrite_header_slot(path, 1, 5);
    assert_load_rejected(path, &cfg, "unsupported checkpoint version 5");
}

Test(checkpoint, rejects_truncated_file)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("model.bin");
    cr_assert_eq(truncate(path, 1024 + 4 * 2912 - 4), 0);
    assert_load_rejected(path, &cfg, "truncated");
}

Test(checkpoint, rejects_file_shorter_than_the_header)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("model.bin");
    cr_assert_eq(truncate(path, 100), 0);
    assert_load_rejected(path, &cfg, "too short");
}

Test(checkpoint, rejects_extra_bytes)
{
    GPTConfig cfg = small_config();
    const char *path = save_small_checkpoint("model.bin");
    append_bytes(path, 4);
    assert_load_rejected(path, &cfg, "extra bytes");
}

Test(checkpoint, rejects_shape_mismatch_naming_the_field)
{
    GPTConfig model = small_config();
    const char *path = save_small_checkpoint("model.bin");
    model.channels = 16;
    assert_load_rejected(path, &model, "checkpoint has C=8 but the model has C=16");
    model = small_config();
    model.num_layers = 3;
    assert_load_rejected(path, &model, "checkpoint has L=2 but the model has L=3");
    model = small_config();
    model.max_seq_len = 32;
    assert_load_rejected(path, &model, "maxT=16");
}

Test(checkpoint, rejects_missing_file_with_the_system_reason)
{
    GPTConfig cfg = small_config();
    assert_load_rejected(tmp_path("absent.bin"), &cfg, "No such file");
}

Test(checkpoint, tolerates_a_null_error_buffer)
{
    GPTConfig cfg = small_config();
    float params[1];
    cr_assert_eq(checkpoint_load(tmp_path("absent.bin"), &cfg, params, NULL, 0), -1);
}
