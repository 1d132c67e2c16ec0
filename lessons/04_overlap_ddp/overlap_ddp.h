/* Lesson 04's exercise: overlap communication with the rest of backward. */
#ifndef LESSON04_OVERLAP_DDP_H
#define LESSON04_OVERLAP_DDP_H

#include <stddef.h>

#include "strategy.h"

typedef struct {
    int num_units;
    CommRequest *requests; /* one per unit */
} OverlapState;

int overlap_ddp_setup(RunContext *run, char *err, size_t err_len);
void overlap_ddp_start(RunContext *run);
/* Backward hook: the unit's gradients are final. */
void overlap_ddp_grads_ready(RunContext *run, int unit);
void overlap_ddp_before_step(RunContext *run);
void overlap_ddp_stop(RunContext *run);

#endif
