/* Lesson 03 exercise: flat DDP.
 *
 * Lesson 02 launched one all-reduce per tensor: dozens of small messages per step, each
 * paying the collective's fixed latency. Every gradient here already lives in one flat,
 * contiguous buffer (model->grads, model->num_params floats), so one all-reduce can carry
 * them all.
 *
 * Frameworks whose gradients are separate tensors must first copy them into one buffer and
 * afterwards copy the averages back. --copy-tensors does that here too (pack_gradients and
 * unpack_gradients), so you can measure what the copies cost against what they save.
 *
 * What you have: run->comm, run->model; run->options points at FlatOptions; run->state is
 * yours (a FlatState); layout.h's gpt_num_units, unit_tensors; model->kernels->copy copies
 * device memory; comm.h's collectives and comm_check.
 *
 * docs/03_flat_ddp.md, "The exercise", says what each function must leave behind, what the
 * grader checks and what to measure; `make hint LESSON=03` gives a hint when you are stuck. */
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
    /* TODO: every rank's parameters are rank 0's, sent in one call. */
    (void)run;
}

void pack_gradients(const GPT *model, float *flat)
{
    /* TODO: flat holds every tensor's gradient, tensor by tensor, one after another in
     * layout order: all num_params floats, copied wherever the buffers live. */
    (void)model;
    (void)flat;
}

void unpack_gradients(GPT *model, const float *flat)
{
    /* TODO: every tensor's gradient back in its place in model->grads, from where
     * pack_gradients put it in flat. */
    (void)model;
    (void)flat;
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
    /* TODO: the whole gradient averaged over the ranks by one all-reduce, so that
     * model->grads holds the average once this function returns, with or without
     * --copy-tensors. */
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
