/* Lesson 03's exercise: one all-reduce over the whole flat gradient. */
#ifndef LESSON03_FLAT_DDP_H
#define LESSON03_FLAT_DDP_H

#include <stddef.h>

#include "strategy.h"

typedef struct {
    int copy_tensors; /* --copy-tensors: gradients treated as separate tensors, packed and unpacked */
} FlatOptions;

typedef struct {
    float *flat;         /* the packing buffer (--copy-tensors only) */
    double copy_seconds; /* time spent packing and unpacking, all steps */
    long steps;
} FlatState;

int flat_ddp_setup(RunContext *run, char *err, size_t err_len);
void flat_ddp_start(RunContext *run);
void flat_ddp_before_step(RunContext *run);
/* Prints what the copies cost (rank 0) and frees the state. */
void flat_ddp_stop(RunContext *run);

/* Copy every parameter tensor's gradient into flat, one after another in layout order, and
 * back: what flattening costs when gradients are not already one buffer. */
void pack_gradients(const GPT *model, float *flat);
void unpack_gradients(GPT *model, const float *flat);

#endif
