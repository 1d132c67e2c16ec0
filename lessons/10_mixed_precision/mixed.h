/* Lesson 10's exercise: mixed precision, on ZeRO-2. Builds on lessons 07 and 08. */
#ifndef LESSON10_MIXED_H
#define LESSON10_MIXED_H

#include <stddef.h>

#include "bf16.h"
#include "zero2.h"

typedef struct {
    Zero2 zero2;       /* lesson 08's shard plan, AdamW's m and v for this rank's shard, and
                        * backward's fp32 gradient working buffers (zero2_unit_grads) */
    bf16 *params;      /* every parameter in bf16, laid out as the model's units: what forward
                        * and backward compute with */
    float *master;     /* plan.shard_total: this rank's shard of the parameters in fp32, what
                        * AdamW updates (padding included, zero) */
    bf16 *grad_shard;  /* plan.shard_total: this rank's averaged gradients, in bf16 */
    bf16 *padded;      /* world * largest_shard: one unit, padded, in bf16, for a collective */
    bf16 *piece;       /* largest_shard: this rank's piece of a unit, in bf16 */
    float *widened;    /* world * largest_shard: one unit's parameters in fp32, for the model
                        * (lesson 07's fp32 collective buffer, zero2.zero1.padded) */
    float *grad_piece; /* largest_shard: one unit's gradient shard in fp32, for AdamW (lesson
                        * 07's zero2.zero1.piece) */
} Mixed;

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
