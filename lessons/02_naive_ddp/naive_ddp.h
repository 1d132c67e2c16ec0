/* Lesson 02's exercise: data parallelism in its plainest form. */
#ifndef LESSON02_NAIVE_DDP_H
#define LESSON02_NAIVE_DDP_H

#include <stddef.h>

#include "strategy.h"

/* Once, before training: make every rank's parameters equal to rank 0's. */
void naive_ddp_start(RunContext *run);

/* After backward: replace every gradient with its average over the ranks, one blocking
 * all-reduce per parameter tensor. */
void naive_ddp_before_step(RunContext *run);

#endif
