/* Lesson 03's exercise exports one strategy; its flags and the report it prints are given. */
#ifndef LESSON03_FLAT_DDP_H
#define LESSON03_FLAT_DDP_H

#include "strategy.h"

typedef struct {
    int copy_tensors; /* --copy-tensors: gradients treated as separate tensors, packed and unpacked */
} FlatOptions; /* what run->options points at */

extern const Strategy flat_ddp;

/* Given (main.c): rank 0 prints what packing and unpacking cost, `seconds` in total over
 * `steps` steps; nothing when steps is 0. Call it once, at the end of the run. */
void flat_ddp_report_copies(const RunContext *run, double seconds, long steps);

#endif
