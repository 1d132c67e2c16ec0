/* Lesson 04, another design: the requests in flight kept as a list in the order they
 * started; each hook tests every one still listed once and drops those done; before the
 * step, the rest are waited for, newest first. */
#include "overlap_ddp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

typedef struct {
    int count;             /* requests listed */
    CommRequest *requests; /* room for one per unit */
} Pending;

static int pending_setup(RunContext *run, char *err, size_t err_len)
{
    Pending *pending = calloc(1, sizeof *pending);
    run->state = pending;
    if (pending != NULL)
        pending->requests = calloc((size_t)gpt_num_units(&run->model->cfg), sizeof *pending->requests);
    if (pending == NULL || pending->requests == NULL) {
        snprintf(err, err_len, "out of memory for the pending requests");
        return -1;
    }
    return 0;
}

static void pending_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

/* Tests each listed request once, keeping those not yet done (in order). */
static void drop_finished(RunContext *run, Pending *pending)
{
    int kept = 0;
    for (int i = 0; i < pending->count; i++) {
        int done;
        comm_check(run->comm, comm_test(&pending->requests[i], &done));
        if (!done)
            pending->requests[kept++] = pending->requests[i];
    }
    /* the slots left behind hold copies of requests moved down: cleared, they may start anew */
    memset(&pending->requests[kept], 0, (size_t)(pending->count - kept) * sizeof *pending->requests);
    pending->count = kept;
}

static void pending_grads_ready(RunContext *run, int unit)
{
    Pending *pending = run->state;
    drop_finished(run, pending);
    Range range = unit_range(&run->model->cfg, unit);
    comm_check(run->comm, comm_all_reduce_start(run->comm, run->model->grads + range.offset, range.count, REDUCE_AVG,
                                                &pending->requests[pending->count++]));
}

static void pending_before_step(RunContext *run)
{
    Pending *pending = run->state;
    while (pending->count > 0)
        comm_check(run->comm, comm_wait(&pending->requests[--pending->count]));
}

static void pending_stop(RunContext *run)
{
    Pending *pending = run->state;
    if (pending == NULL)
        return;
    free(pending->requests);
    free(pending);
    run->state = NULL;
}

const Strategy overlap_ddp = {
    .name = "overlap_ddp",
    .setup = pending_setup,
    .start = pending_start,
    .grads_ready = pending_grads_ready,
    .before_step = pending_before_step,
    .stop = pending_stop,
};
