/* Lesson 08's exercise: ZeRO stage 2, gradients sharded too. Builds on lesson 07. */
#ifndef LESSON08_ZERO2_H
#define LESSON08_ZERO2_H

#include <stddef.h>

#include "zero1_parts.h"

typedef struct {
    Zero1 zero1;           /* the optimizer shard, the gradient shard, the collective buffers */
    float **grad_buffers;  /* the gradient working buffers zero2_grad_buffer_floats asks for */
    int num_grad_buffers;
} Zero2;

ModelStorage zero2_model_storage(void);
/* The exercise's choice of gradient working buffers: how many floats buffer `buffer` (0, 1,
 * ...) holds, 0 when there are no more. zero2_init allocates exactly these, zeroed, as
 * grad_buffers[0], [1], ...; zero2_unit_grads hands them to backward. */
size_t zero2_grad_buffer_floats(const GPTConfig *cfg, int buffer);
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
