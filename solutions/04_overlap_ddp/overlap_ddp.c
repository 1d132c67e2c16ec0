/* Lesson 04 reference: overlapping communication with backward (see lessons/04_overlap_ddp/overlap_ddp.c). */
#include "overlap_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

/* One request per unit, indexed by unit: a unit's all-reduce is in flight from its hook to
 * the wait before the step. */
typedef struct {
    int num_units;
    CommRequest *requests;
} OverlapState;

static int overlap_ddp_setup(RunContext *run, char *err, size_t err_len)
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

static void overlap_ddp_start(RunContext *run)
{
    GPT *model = run->model;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

/* Starts the unit's all-reduce, then tests the ones already in flight (the units above):
 * MPICH moves a non-blocking collective forward only inside an MPI call. */
static void overlap_ddp_grads_ready(RunContext *run, int unit)
{
    OverlapState *state = run->state;
    GPT *model = run->model;
    Range range = unit_range(&model->cfg, unit);
    comm_check(run->comm, comm_all_reduce_start(run->comm, model->grads + range.offset, range.count, REDUCE_AVG,
                                                &state->requests[unit]));
    for (int later = unit + 1; later < state->num_units; later++) {
        int done;
        comm_check(run->comm, comm_test(&state->requests[later], &done));
    }
}

/* The average is in model->grads only once a request completes. */
static void overlap_ddp_before_step(RunContext *run)
{
    OverlapState *state = run->state;
    for (int unit = 0; unit < state->num_units; unit++)
        comm_check(run->comm, comm_wait(&state->requests[unit]));
}

static void overlap_ddp_stop(RunContext *run)
{
    OverlapState *state = run->state;
    if (state == NULL)
        return;
    free(state->requests);
    free(state);
    run->state = NULL;
}

const Strategy overlap_ddp = {
    .name = "overlap_ddp",
    .setup = overlap_ddp_setup,
    .start = overlap_ddp_start,
    .grads_ready = overlap_ddp_grads_ready,
    .before_step = overlap_ddp_before_step,
    .stop = overlap_ddp_stop,
};
