/* Lesson 10's exercise: mixed precision in bf16 or fp16, on ZeRO-1, 2 or 3. Builds on lessons 07 and 08. */
#ifndef LESSON10_MIXED_H
#define LESSON10_MIXED_H

#include <stddef.h>

#include "float16.h"
#include "zero2_parts.h"

typedef struct {
    int stage;         /* --stage: the ZeRO stage, 1, 2 (the default) or 3 */
    int fp32_matmuls;  /* --fp32-matmuls: the matmuls multiply fp32 activations, not 16-bit */
    int fp16;          /* --fp16: fp16 with a dynamic loss scale, not bf16 */
    int scale_window;  /* --scale-window: steps in a row without an overflow before the fp16
                        * loss scale doubles */
} MixedOptions;

/* fp16's loss scale starts here, as PyTorch's GradScaler does: 2^16; and doubles after this
 * many good steps in a row unless --scale-window says otherwise (GradScaler's too). */
#define FIRST_LOSS_SCALE 65536.0f
#define DEFAULT_SCALE_WINDOW 2000

typedef struct {
    Zero2 zero2;       /* lesson 08's shard plan, AdamW's m and v for this rank's shard, and
                        * backward's fp32 gradient working buffers (zero2_unit_grads) */
    int stage;         /* 1: the 16-bit gradients whole; 2: they are sharded; 3: the 16-bit
                        * parameters too */
    Format16 format;   /* what every 16-bit buffer below holds: FORMAT_BF16, or FORMAT_FP16
                        * with --fp16 */
    int scale_window;  /* fp16: how many good steps in a row (run->good_steps counts them)
                        * double the loss scale (--scale-window); the scale itself is
                        * run->model->loss_scale, what backward multiplies the loss by:
                        * FIRST_LOSS_SCALE at the start with fp16, 1 with bf16 */
    bits16 *params;      /* stages 1 and 2: every parameter in 16 bits, laid out as the model's
                          * units: what forward and backward compute with; stage 3: NULL */
    bits16 *param_shard; /* stage 3: plan.shard_total, this rank's shard of the 16-bit
                          * parameters, laid out as the master; NULL otherwise */
    float *master;     /* plan.shard_total: this rank's shard of the parameters in fp32, what
                        * AdamW updates (padding included, zero) */
    bits16 *grads;       /* stage 1: every gradient in 16 bits, laid out as the model's units;
                          * NULL otherwise */
    bits16 *grad_shard;  /* plan.shard_total: this rank's averaged gradients, in 16 bits
                          * (stage 1: a working buffer, what the step's reduce-scatters write) */
    bits16 *padded;      /* world * largest_shard: one unit, padded, in 16 bits, for a
                          * collective */
    bits16 *piece;       /* largest_shard: this rank's piece of a unit, in 16 bits */
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

/* Given: the norm of the whole averaged gradient, from every rank's 16-bit gradient shard
 * (times the loss scale, as the gradients are; infinite or NaN when an fp16 one overflowed). */
float grad_norm_16(RunContext *run, Mixed *mixed);

#endif
