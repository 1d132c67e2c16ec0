/* Lesson 03 reference: flat DDP (see lessons/03_flat_ddp/flat_ddp.c for the exercise). */
#include "flat_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "timer.h"

typedef struct {
    float *flat;         /* the packing buffer (--copy-tensors only) */
    double copy_seconds; /* time spent packing and unpacking, all steps */
    long steps;
} FlatState;

static int flat_ddp_setup(RunContext *run, char *err, size_t err_len)
{
    const FlatOptions *options = run->options;
    GPT *model = run->model;
    FlatState *state = calloc(1, sizeof *state);
    run->state = state;
    if (state != NULL && options->copy_tensors)
        state->flat = model->kernels->alloc(model->num_params * sizeof(float), MEM_COMM);
    if (state == NULL || (options->copy_tensors && state->flat == NULL)) {
        snprintf(err, err_len, "out of memory for the flattening buffer");
        return -1;
    }
    return 0;
}

static void flat_ddp_start(RunContext *run)
{
    GPT *model = run->model;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

/* Tensor by tensor, in layout order, as a framework with separate tensors must (one copy of
 * the whole buffer would give the same numbers and measure nothing); to_flat says which
 * way. Every rank walks the same order, so element i means the same on every rank. */
static void copy_tensors(GPT *model, float *flat, int to_flat)
{
    size_t packed = 0;
    for (int unit = 0; unit < gpt_num_units(&model->cfg); unit++) {
        Range tensors[12];
        int count = unit_tensors(&model->cfg, unit, tensors);
        for (int t = 0; t < count; t++) {
            float *tensor = model->grads + tensors[t].offset;
            size_t bytes = tensors[t].count * sizeof(float);
            model->kernels->copy(to_flat ? flat + packed : tensor, to_flat ? tensor : flat + packed, bytes);
            packed += tensors[t].count;
        }
    }
}

static void timed_copy(RunContext *run, FlatState *state, int to_flat)
{
    double started = now_seconds();
    copy_tensors(run->model, state->flat, to_flat);
    state->copy_seconds += now_seconds() - started;
}

static void flat_ddp_before_step(RunContext *run)
{
    FlatState *state = run->state;
    GPT *model = run->model;
    state->steps++;
    if (state->flat != NULL)
        timed_copy(run, state, 1);
    float *gradient = state->flat != NULL ? state->flat : model->grads;
    comm_check(run->comm, comm_all_reduce(run->comm, gradient, model->num_params, REDUCE_AVG));
    if (state->flat != NULL)
        timed_copy(run, state, 0);
}

static void flat_ddp_stop(RunContext *run)
{
    FlatState *state = run->state;
    if (state == NULL)
        return;
    if (state->flat != NULL)
        flat_ddp_report_copies(run, state->copy_seconds, state->steps);
    run->model->kernels->free(state->flat);
    free(state);
    run->state = NULL;
}

const Strategy flat_ddp = {
    .name = "flat_ddp",
    .setup = flat_ddp_setup,
    .start = flat_ddp_start,
    .before_step = flat_ddp_before_step,
    .stop = flat_ddp_stop,
};
