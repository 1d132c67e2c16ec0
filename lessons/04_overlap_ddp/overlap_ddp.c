/* Lesson 04 exercise: overlapping communication with backward.
 *
 * Backward produces gradients from the last unit to the first: once the final LayerNorm's
 * gradients are final, nothing later in backward touches them, so their all-reduce can
 * start while the blocks below are still computing. The model calls
 * overlap_ddp_grads_ready(run, unit) at exactly that moment (units L+1, L, ..., 0).
 *
 * Start a non-blocking all-reduce of the unit's gradients there; before the optimizer
 * step, wait for every one of them.
 *
 * A CPU twist: MPICH moves a non-blocking collective forward only while the program is
 * inside an MPI call. Testing the requests already in flight each time the hook runs gives
 * it those chances without blocking.
 *
 * What you have: run->comm, run->model; run->state is yours (an OverlapState);
 * layout.h's unit_range(cfg, unit) gives the unit's Range in the flat buffers;
 * comm_all_reduce_start, comm_test, comm_wait (a finished or never-started request waits as
 * a no-op); comm_broadcast; comm_check.
 *
 * docs/04_overlap_ddp.md, "The exercise", says what each function must leave behind, what
 * the grader checks and what to measure; `make hint LESSON=04` gives a hint when you are
 * stuck. */
#include "overlap_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

int overlap_ddp_setup(RunContext *run, char *err, size_t err_len)
{
    GPT *model = run->model;
    OverlapState *state = calloc(1, sizeof *state);
    run->state = state;
    if (state != NULL) {
        state->num_units = gpt_num_units(&model->cfg);
        state->requests = calloc((size_t)state->num_units, sizeof *state->requests);
    }
    if (state == NULL || state->requests == NULL) {
        snprintf(err, err_len, "out of memory for the request list");
        return -1;
    }
    return 0;
}

void overlap_ddp_start(RunContext *run)
{
    /* TODO: every rank's parameters are rank 0's. */
    (void)run;
}

void overlap_ddp_grads_ready(RunContext *run, int unit)
{
    /* TODO: this unit's gradients on their way to their average over the ranks, without
     * blocking backward; the requests already in flight given a chance to progress. */
    (void)run;
    (void)unit;
}

void overlap_ddp_before_step(RunContext *run)
{
    /* TODO: every unit's all-reduce complete: only then does model->grads hold the
     * average. */
    (void)run;
}

void overlap_ddp_stop(RunContext *run)
{
    OverlapState *state = run->state;
    if (state == NULL)
        return;
    free(state->requests);
    free(state);
    run->state = NULL;
}
