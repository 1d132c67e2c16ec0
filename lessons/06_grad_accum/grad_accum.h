/* Lesson 06's exercise: gradient accumulation on top of lesson 05's buckets. */
#ifndef LESSON06_GRAD_ACCUM_H
#define LESSON06_GRAD_ACCUM_H

#include <stddef.h>

#include "bucketed_ddp.h"
#include "strategy.h"

typedef struct {
    BucketOptions buckets; /* first, so lesson 05's functions read run->options as theirs */
    int accum;             /* --accum: micro-batches per optimizer step */
} AccumOptions;

/* The step's K micro-batches, forward and backward; returns their mean loss. */
float grad_accum_forward_backward(RunContext *run, const int *inputs, const int *targets);
/* Lesson 05's buckets, during the last micro-batch's backward only. */
void grad_accum_grads_ready(RunContext *run, int unit);

#endif
