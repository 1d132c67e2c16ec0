/* Lesson 06's exercise exports one strategy: gradient accumulation on lesson 05's buckets. */
#ifndef LESSON06_GRAD_ACCUM_H
#define LESSON06_GRAD_ACCUM_H

#include "bucketed_ddp.h"
#include "strategy.h"

typedef struct {
    BucketOptions buckets; /* first, so that lesson 05's strategy reads run->options as its own */
    int accum;             /* --accum: micro-batches per optimizer step */
} AccumOptions; /* what run->options points at */

extern const Strategy grad_accum;

#endif
