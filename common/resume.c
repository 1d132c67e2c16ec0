#include "resume.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "paths.h"
#include "replicas.h"

#define STATE_MAGIC "dtc resume state "
#define STATE_VERSION 2
#define SETTINGS_END "end\n"

/* The flags that shape a run's trajectory; the rest (logging, outputs, threads, the
 * device) may differ between the run that saved and the run that resumes. */
static const char *const SHAPING_FLAGS[] = {"vocab", "layers", "heads", "channels", "max-seq", "batch",
                                            "seq", "steps", "lr", "beta1", "beta2", "eps", "weight-decay",
                                            "grad-clip", "warmup", "min-lr-frac", "seed"};

static void append(char *out, size_t out_len, const char *name, const char *value)
{
    size_t used = strlen(out);
    snprintf(out + used, out_len - used, "%s %s\n", name, value);
}

void resume_describe(const TrainConfig *cfg, uint64_t train_hash, char *out, size_t out_len)
{
    char value[64];
    out[0] = '\0';
    for (size_t i = 0; i < sizeof SHAPING_FLAGS / sizeof SHAPING_FLAGS[0]; i++)
        for (const Flag *f = train_flags; f->name != NULL; f++)
            if (strcmp(f->name, SHAPING_FLAGS[i]) == 0) {
                cli_format_value(f, cfg, value, sizeof value);
                append(out, out_len, f->name, value);
            }
    snprintf(value, sizeof value, "%d", cfg->accum_steps);
    append(out, out_len, "accum", value);
    snprintf(value, sizeof value, "%016llx", (unsigned long long)train_hash);
    append(out, out_len, "train-tokens-hash", value);
    size_t used = strlen(out);
    snprintf(out + used, out_len - used, "%s", cfg->lesson_settings);
}

int resume_alloc(ResumeState *state, size_t num_params)
{
    state->num_params = num_params;
    state->params = mem_alloc(num_params * sizeof(float), MEM_OTHER);
    state->m = mem_alloc(num_params * sizeof(float), MEM_OTHER);
    state->v = mem_alloc(num_params * sizeof(float), MEM_OTHER);
    return state->params != NULL && state->m != NULL && state->v != NULL ? 0 : -1;
}

void resume_free(ResumeState *state)
{
    mem_free(state->params);
    mem_free(state->m);
    mem_free(state->v);
    memset(state, 0, sizeof *state);
}

/* ---------------------------------------------------------------- the binary part */

typedef struct {
    int32_t steps_done, adam_steps;
    uint64_t data_position, num_params;
    float loss_scale;
    int32_t good_steps;
} Counters;

_Static_assert(sizeof(Counters) == 32, "the counters are written as they lie in memory: no padding");

/* The hash of the binary part: counters, then parameters, m and v. */
static uint64_t state_hash(const Counters *counters, const ResumeState *state)
{
    size_t bytes = state->num_params * sizeof(float);
    uint64_t parts[4] = {hash_bytes(counters, sizeof *counters), hash_bytes(state->params, bytes),
                         hash_bytes(state->m, bytes), hash_bytes(state->v, bytes)};
    return hash_bytes(parts, sizeof parts);
}

typedef struct {
    const char *settings;
    const ResumeState *state;
} StateFile;

static int write_state(FILE *fp, const char *path, const void *what, char *err, size_t err_len)
{
    const StateFile *file = what;
    const ResumeState *state = file->state;
    Counters counters = {state->steps_done, state->adam_steps, state->data_position, state->num_params,
                         state->loss_scale, state->good_steps};
    uint64_t hash = state_hash(&counters, state);
    int ok = fprintf(fp, "%s%d\n", STATE_MAGIC, STATE_VERSION) > 0 && fputs(file->settings, fp) >= 0 &&
             fputs(SETTINGS_END, fp) >= 0 &&
             fwrite(&counters, sizeof counters, 1, fp) == 1 &&
             fwrite(state->params, sizeof(float), state->num_params, fp) == state->num_params &&
             fwrite(state->m, sizeof(float), state->num_params, fp) == state->num_params &&
             fwrite(state->v, sizeof(float), state->num_params, fp) == state->num_params &&
             fwrite(&hash, sizeof hash, 1, fp) == 1;
    if (!ok)
        snprintf(err, err_len, "%s: cannot write the resume state: %s", path, strerror(errno));
    return ok ? 0 : -1;
}

int resume_save(const char *path, const char *settings, const ResumeState *state, char *err, size_t err_len)
{
    StateFile file = {settings, state};
    return write_file_atomically(path, write_state, &file, err, err_len);
}

/* ---------------------------------------------------------------- reading */

/* The first setting line that differs, as "it was saved with NAME A, this run has NAME B"
 * (or "without NAME B" where the state has no line there). */
static void first_difference(const char *saved, const char *wanted, char *out, size_t out_len)
{
    while (*saved != '\0' || *wanted != '\0') {
        size_t saved_len = strcspn(saved, "\n"), wanted_len = strcspn(wanted, "\n");
        if (saved_len != wanted_len || strncmp(saved, wanted, saved_len) != 0) {
            if (saved_len == 0)
                snprintf(out, out_len, "it was saved without %.*s", (int)wanted_len, wanted);
            else if (wanted_len == 0)
                snprintf(out, out_len, "it was saved with %.*s, this run has no such setting", (int)saved_len,
                         saved);
            else
                snprintf(out, out_len, "it was saved with %.*s, this run has %.*s", (int)saved_len, saved,
                         (int)wanted_len, wanted);
            return;
        }
        saved += saved_len + (saved[saved_len] == '\n');
        wanted += wanted_len + (wanted[wanted_len] == '\n');
    }
    snprintf(out, out_len, "its settings differ");
}

/* The text part: the magic line, then the settings up to "end", compared with `settings`. */
static int read_settings(FILE *fp, const char *path, const char *settings, char *err, size_t err_len)
{
    char line[256], saved[4096] = "", why[512];
    int version = 0, length = 0;
    if (fgets(line, sizeof line, fp) == NULL || strncmp(line, STATE_MAGIC, strlen(STATE_MAGIC)) != 0 ||
        sscanf(line + strlen(STATE_MAGIC), "%d\n%n", &version, &length) != 1 ||
        line[strlen(STATE_MAGIC) + length] != '\0') {
        snprintf(err, err_len, "--resume %s: not a resume state (it does not start with \"%s%d\")", path,
                 STATE_MAGIC, STATE_VERSION);
        return -1;
    }
    if (version != STATE_VERSION) {
        snprintf(err, err_len, "--resume %s: a resume state of format %d; this program reads format %d only", path,
                 version, STATE_VERSION);
        return -1;
    }
    while (fgets(line, sizeof line, fp) != NULL && strcmp(line, SETTINGS_END) != 0)
        if (strlen(saved) + strlen(line) < sizeof saved)
            strcat(saved, line);
    if (strcmp(saved, settings) != 0) {
        first_difference(saved, settings, why, sizeof why);
        for (char *c = why; *c != '\0'; c++)
            *c = *c == '\n' ? ' ' : *c;
        snprintf(err, err_len, "--resume %s: does not match this run: %s", path, why);
        return -1;
    }
    return 0;
}

static int counters_in_range(const Counters *counters)
{
    return counters->steps_done >= 0 && counters->adam_steps >= 0 && counters->loss_scale > 0.0f &&
           isfinite(counters->loss_scale) && counters->good_steps >= 0;
}

static int read_binary(FILE *fp, const char *path, size_t expected_params, ResumeState *state, char *err,
                       size_t err_len)
{
    Counters counters;
    uint64_t hash;
    if (fread(&counters, sizeof counters, 1, fp) != 1 || counters.num_params != expected_params) {
        snprintf(err, err_len, "--resume %s: %s", path,
                 feof(fp) ? "cut short" : "holds another number of parameters than this model");
        return -1;
    }
    if (resume_alloc(state, expected_params) != 0) {
        snprintf(err, err_len, "--resume %s: out of memory", path);
        return -1;
    }
    int whole = fread(state->params, sizeof(float), expected_params, fp) == expected_params &&
                fread(state->m, sizeof(float), expected_params, fp) == expected_params &&
                fread(state->v, sizeof(float), expected_params, fp) == expected_params &&
                fread(&hash, sizeof hash, 1, fp) == 1 && fgetc(fp) == EOF;
    const char *damage = !whole                               ? "not the size its header says"
                         : hash != state_hash(&counters, state) ? "its contents do not match their hash"
                         : !counters_in_range(&counters)        ? "a step count or the loss scale is out of range"
                                                                : NULL;
    if (damage != NULL) {
        snprintf(err, err_len, "--resume %s: damaged (%s)", path, damage);
        return -1;
    }
    state->steps_done = counters.steps_done;
    state->adam_steps = counters.adam_steps;
    state->data_position = counters.data_position;
    state->loss_scale = counters.loss_scale;
    state->good_steps = counters.good_steps;
    return 0;
}

int resume_load(const char *path, const char *settings, size_t expected_params, ResumeState *state, char *err,
                size_t err_len)
{
    memset(state, 0, sizeof *state);
    char reason[512];
    FILE *fp = open_input(path, "resume state", reason, sizeof reason);
    if (fp == NULL) {
        snprintf(err, err_len, "--resume %s", reason);
        return -1;
    }
    int status = read_settings(fp, path, settings, err, err_len);
    if (status == 0)
        status = read_binary(fp, path, expected_params, state, err, err_len);
    fclose(fp);
    if (status != 0)
        resume_free(state);
    return status;
}
