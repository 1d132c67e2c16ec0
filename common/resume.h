/* Resumable checkpoints: everything a run needs to go on exactly where it stopped, in one
 * file. `--save PATH --save-every K` writes it to PATH.state every K steps (beside the model
 * in llm.c's format at PATH); `--resume PATH.state` continues from it, and the steps after
 * are bit for bit those of a run that never stopped (at the same number of ranks).
 *
 * What it holds: the settings that shape the run's trajectory (the model's shape, batch,
 * sequence length, steps, every optimizer setting, the seed, the micro-batches per step, the
 * lesson's own such flags (TrainConfig.lesson_settings) and a hash of the training tokens),
 * the steps done, AdamW's step count, the training data's position, the loss scale and its
 * count of good steps (fp16, strategy.h; 1 and 0 elsewhere), and the whole parameters and
 * AdamW moments m and v (unit-major, as the model lays them out; a sharding strategy gathers
 * its shards into them, so a state saved at N ranks resumes at any number that divides the
 * batch). The seed is the only randomness a run has (initialisation and the final sample): no
 * generator state is needed.
 *
 * Layout: the text line "dtc resume state 2", one "name value" line per setting, "end",
 * then binary little-endian: int32 steps done, int32 AdamW steps, uint64 data position,
 * uint64 parameter count P, float32 loss scale, int32 good steps, P floats of parameters, P
 * of m, P of v, and a uint64 hash of every binary byte before it. Written atomically
 * (paths.h). */
#ifndef DTC_RESUME_H
#define DTC_RESUME_H

#include <stddef.h>
#include <stdint.h>

#include "train_config.h"

typedef struct {
    int steps_done;
    int adam_steps;
    uint64_t data_position; /* the training loader's batch_start */
    float loss_scale;       /* the model's loss scale (model.h) */
    int good_steps;         /* the steps in a row at it without an overflow (model.h) */
    size_t num_params;
    float *params, *m, *v;  /* host memory, num_params floats each */
} ResumeState;

/* The settings a state must match, as "name value" lines; train_hash identifies the
 * training tokens. */
void resume_describe(const TrainConfig *cfg, uint64_t train_hash, char *out, size_t out_len);

/* Allocates the three host arrays (MEM_OTHER); 0, or -1 when out of memory. */
int resume_alloc(ResumeState *state, size_t num_params);
void resume_free(ResumeState *state);

int resume_save(const char *path, const char *settings, const ResumeState *state, char *err, size_t err_len);

/* Reads path into state (allocated here for expected_params): refused, with one line
 * naming the first difference, unless its settings are `settings` and it is whole. */
int resume_load(const char *path, const char *settings, size_t expected_params, ResumeState *state, char *err,
                size_t err_len);

#endif
