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

int grad_accum_start(RunContext *run, char *err, size_t err_len);
void grad_accum_grads_ready(RunContext *run, int unit);
void grad_accum_before_step(RunContext *run);
void grad_accum_stop(RunContext *run);

#endif
