/* Lesson 08's exercise: ZeRO stage 2, gradients sharded too. Builds on lesson 07. */
#ifndef LESSON08_ZERO2_H
#define LESSON08_ZERO2_H

#include <stddef.h>

#include "zero1.h"

typedef struct {
    Zero1 zero1;         /* the optimizer shard, the gradient shard, the collective buffers */
    float *unit0_grads;  /* unit 0's gradients: written at the start and at the end of backward */
    float *unit_grads;   /* one other unit's gradients, reused unit after unit */
} Zero2;

ModelStorage zero2_model_storage(void);
int zero2_setup(RunContext *run, char *err, size_t err_len);
/* zero2_setup's work on a Zero2 the caller owns (the first member of a later stage's state,
 * so that run->state serves both); zero2_release frees what it allocated. */
int zero2_init(RunContext *run, Zero2 *zero, char *err, size_t err_len);
void zero2_release(RunContext *run, Zero2 *zero);
float *zero2_unit_grads(RunContext *run, int unit);
void zero2_grads_ready(RunContext *run, int unit);
float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm);
void zero2_stop(RunContext *run);

#endif
