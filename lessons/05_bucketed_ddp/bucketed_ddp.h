/* Lesson 05's exercise exports one strategy and one question about its plan. */
#ifndef LESSON05_BUCKETED_DDP_H
#define LESSON05_BUCKETED_DDP_H

#include <stddef.h>

#include "strategy.h"

typedef struct {
    float bucket_mb; /* --bucket-mb: the most gradient MB a bucket holds (a larger unit travels alone) */
} BucketOptions; /* what run->options points at (lesson 06's options start with it too) */

extern const Strategy bucketed_ddp;

/* The bucket that carries unit's gradients in the plan for buckets of at most max_bytes,
 * counted from 0 in the order the buckets are sent. The bucket sweep (main.c) and the tests
 * ask it; unit 0's answer + 1 is the number of buckets. */
int bucketed_ddp_bucket_of(const GPTConfig *cfg, size_t max_bytes, int unit);

#endif
