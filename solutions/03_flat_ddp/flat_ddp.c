/* Lesson 03 reference: flat DDP (see lessons/03_flat_ddp/flat_ddp.c for the exercise). */
#include "flat_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "timer.h"

int flat_ddp_setup(RunContext *run, char *err, size_t err_len)
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

void flat_ddp_start(RunContext *run)
{
    GPT *model = run->model;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

void pack_gradients(const GPT *model, float *flat)
{
    size_t packed = 0;
    for (int unit = 0; unit < gpt_num_units(&model->cfg); unit++) {
        Range tensors[12];
        int count = unit_tensors(&model->cfg, unit, tensors);
        for (int t = 0; t < count; t++) {
            model->kernels->copy(flat + packed, model->grads + tensors[t].offset, tensors[t].count * sizeof(float));
            packed += tensors[t].count;
        }
    }
}

void unpack_gradients(GPT *model, const float *flat)
{
    size_t packed = 0;
    for (int unit = 0; unit < gpt_num_units(&model->cfg); unit++) {
        Range tensors[12];
        int count = unit_tensors(&model->cfg, unit, tensors);
        for (int t = 0; t < count; t++) {
            model->kernels->copy(model->grads + tensors[t].offset, flat + packed, tensors[t].count * sizeof(float));
            packed += tensors[t].count;
        }
    }
}

void flat_ddp_before_step(RunContext *run)
{
    const FlatOptions *options = run->options;
    FlatState *state = run->state;
    GPT *model = run->model;
    state->steps++;
    if (options->copy_tensors) {
        double started = now_seconds();
        pack_gradients(model, state->flat);
        state->copy_seconds += now_seconds() - started;
    }
    float *gradient = options->copy_tensors ? state->flat : model->grads;
    comm_check(run->comm, comm_all_reduce(run->comm, gradient, model->num_params, REDUCE_AVG));
    if (options->copy_tensors) {
        double started = now_seconds();
        unpack_gradients(model, state->flat);
        state->copy_seconds += now_seconds() - started;
    }
}

void flat_ddp_stop(RunContext *run)
{
    FlatState *state = run->state;
    if (state == NULL)
        return;
    if (state->flat != NULL && comm_rank(run->comm) == 0 && state->steps > 0)
        printf("copy in/out (--copy-tensors): %.3f ms per step on rank 0, %ld steps\n",
               1e3 * state->copy_seconds / state->steps, state->steps);
    run->model->kernels->free(state->flat);
    free(state);
    run->state = NULL;
}
