/* Lesson 05's exercise: gradient buckets, each all-reduced as soon as it is complete. */
#ifndef LESSON05_BUCKETED_DDP_H
#define LESSON05_BUCKETED_DDP_H

#include <stddef.h>

#include "layout.h"
#include "strategy.h"

typedef struct {
    float bucket_mb; /* --bucket-mb: the most a bucket holds (a larger unit gets its own) */
} BucketOptions;

/* Units high_unit down to low_unit, in the order backward finishes them: complete when
 * low_unit's gradients are final. Their gradients are the one contiguous range `range`. */
typedef struct {
    int high_unit, low_unit;
    Range range;
} Bucket;

typedef struct {
    int num_buckets;
    Bucket *buckets;        /* in the order they complete */
    int *bucket_ending_at;  /* per unit: the bucket that unit completes, or -1 */
    CommRequest *requests;  /* one per bucket */
} BucketState;

/* Groups the units, walking them in backward order (L+1 down to 0), into buckets of at most
 * max_bytes of gradients; a unit larger than max_bytes gets a bucket of its own. buckets
 * must have room for one per unit. Returns how many buckets. */
int plan_buckets(const GPTConfig *cfg, size_t max_bytes, Bucket *buckets);

int bucketed_ddp_setup(RunContext *run, char *err, size_t err_len);
void bucketed_ddp_start(RunContext *run);
void bucketed_ddp_grads_ready(RunContext *run, int unit);
void bucketed_ddp_before_step(RunContext *run);
void bucketed_ddp_stop(RunContext *run);

#endif
