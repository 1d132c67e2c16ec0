/* Lesson 08's reference, as lessons 09 and 10 build on it (solutions/08_zero2/zero2.c): its
 * state and the hooks they reuse. Not part of lesson 08's exercise, whose design is yours;
 * read it once you have done lesson 08. */
#ifndef LESSON08_ZERO2_PARTS_H
#define LESSON08_ZERO2_PARTS_H

#include <stddef.h>

#include "zero1_parts.h"
#include "zero2.h"

typedef struct {
    Zero1 zero1;           /* the optimizer shard, the gradient shard, the collective buffers */
    float **grad_buffers;  /* the gradient working buffers backward writes into */
    int num_grad_buffers;
} Zero2;

/* The state's allocation on a Zero2 the caller owns (the first member of a later stage's
 * state, so that run->state serves both; zero2_init neither reads nor sets run->state);
 * zero2_release frees what it allocated. */
int zero2_init(RunContext *run, Zero2 *zero, char *err, size_t err_len);
void zero2_release(RunContext *run, Zero2 *zero);
/* The model's unit_grads hook and the backward hook: the buffer backward writes a unit's
 * gradients into, and the unit's reduce-scatter into the gradient shard once they are final. */
float *zero2_unit_grads(RunContext *run, int unit);
void zero2_grads_ready(RunContext *run, int unit);

#endif
