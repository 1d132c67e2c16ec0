/* Lesson 10's exercise: mixed precision, on ZeRO-1, 2 or 3. Builds on lessons 07 and 08. */
#ifndef LESSON10_MIXED_H
#define LESSON10_MIXED_H

#include <stddef.h>

#include "bf16.h"
#include "zero2.h"

typedef struct {
    int stage;         /* --stage: the ZeRO stage, 1, 2 (the default) or 3 */
    int fp32_matmuls;  /* --fp32-matmuls: the matmuls multiply fp32 activations, not bf16 */
} MixedOptions;

typedef struct {
    Zero2 zero2;       /* lesson 08's shard plan, AdamW's m and v for this rank's shard, and
                        * backward's fp32 gradient working buffers (zero2_unit_grads) */
    int stage;         /* 1: the bf16 gradients whole; 2: they are sharded; 3: the bf16
                        * parameters too */
    bf16 *params;      /* stages 1 and 2: every parameter in bf16, laid out as the model's
                        * units: what forward and backward compute with; stage 3: NULL */
    bf16 *param_shard; /* stage 3: plan.shard_total, this rank's shard of the bf16 parameters,
                        * laid out as the master; NULL otherwise */
    float *master;     /* plan.shard_total: this rank's shard of the parameters in fp32, what
                        * AdamW updates (padding included, zero) */
    bf16 *grads;       /* stage 1: every gradient in bf16, laid out as the model's units;
                        * NULL otherwise */
    bf16 *grad_shard;  /* plan.shard_total: this rank's averaged gradients, in bf16 (stage 1:
                        * a working buffer, what the step's reduce-scatters write) */
    bf16 *padded;      /* world * largest_shard: one unit, padded, in bf16, for a collective */
    bf16 *piece;       /* largest_shard: this rank's piece of a unit, in bf16 */
    float *widened;    /* world * largest_shard: one unit's parameters in fp32, for the model
                        * (lesson 07's fp32 collective buffer, zero2.zero1.padded) */
    float *grad_piece; /* largest_shard: one unit's gradient shard in fp32, for AdamW (lesson
                        * 07's zero2.zero1.piece) */
    int widened_unit;  /* the unit `widened` holds since the last update, -1 for none: set so
                        * by mixed_setup, your step, and mixed_gather_params (which writes
                        * widened, and runs before zero1_gather_optimizer, which does too) */
} Mixed;

/* The strategy's name for --stage: "mixed_zero1", "mixed_zero2" or "mixed_zero3". */
const char *mixed_strategy_name(const void *options);

ModelStorage mixed_model_storage(void);
int mixed_setup(RunContext *run, char *err, size_t err_len);
void mixed_start(RunContext *run);
float *mixed_acquire_params(RunContext *run, int unit);
void mixed_grads_ready(RunContext *run, int unit);
float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm);
void mixed_gather_params(RunContext *run, float *host);
void mixed_stop(RunContext *run);

/* Given: the norm of the whole averaged gradient, from every rank's bf16 gradient shard. */
float bf16_grad_norm(RunContext *run, Mixed *mixed);

#endif
