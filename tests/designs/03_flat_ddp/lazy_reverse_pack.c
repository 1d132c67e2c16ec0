/* Lesson 03, another design: the state is one static struct of this file (one strategy per
 * process), the packing buffer is allocated at the first step that needs it, and the
 * tensors are packed from the last one to the first. */
#include "flat_ddp.h"

#include <stdio.h>

#include "layout.h"
#include "timer.h"

static struct {
    float *packed;
    double copy_seconds;
    long steps;
} flat;

/* Tensor t of the walk from the last to the first: its range, or count 0 past the end. */
static Range tensor_from_the_end(const GPTConfig *cfg, int t)
{
    for (int unit = gpt_num_units(cfg) - 1; unit >= 0; unit--) {
        Range tensors[12];
        int count = unit_tensors(cfg, unit, tensors);
        if (t < count)
            return tensors[count - 1 - t];
        t -= count;
    }
    return (Range){0, 0};
}

static void copy_all(GPT *model, int into_packed)
{
    double started = now_seconds();
    size_t at = 0;
    for (int t = 0;; t++) {
        Range tensor = tensor_from_the_end(&model->cfg, t);
        if (tensor.count == 0)
            break;
        float *grads = model->grads + tensor.offset;
        if (into_packed)
            model->kernels->copy(flat.packed + at, grads, tensor.count * sizeof(float));
        else
            model->kernels->copy(grads, flat.packed + at, tensor.count * sizeof(float));
        at += tensor.count;
    }
    flat.copy_seconds += now_seconds() - started;
}

static void lazy_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

static void lazy_before_step(RunContext *run)
{
    const FlatOptions *options = run->options;
    GPT *model = run->model;
    flat.steps++;
    if (!options->copy_tensors) {
        comm_check(run->comm, comm_all_reduce(run->comm, model->grads, model->num_params, REDUCE_AVG));
        return;
    }
    if (flat.packed == NULL)
        flat.packed = model->kernels->alloc(model->num_params * sizeof(float), MEM_COMM);
    if (flat.packed == NULL) {
        fprintf(stderr, "03_flat_ddp: out of memory for the packing buffer\n");
        comm_check(run->comm, -1); /* ends every rank */
    }
    copy_all(model, 1);
    comm_check(run->comm, comm_all_reduce(run->comm, flat.packed, model->num_params, REDUCE_AVG));
    copy_all(model, 0);
}

static void lazy_stop(RunContext *run)
{
    if (flat.packed != NULL)
        flat_ddp_report_copies(run, flat.copy_seconds, flat.steps);
    run->model->kernels->free(flat.packed);
    flat.packed = NULL;
    flat.copy_seconds = 0.0;
    flat.steps = 0;
}

const Strategy flat_ddp = {
    .name = "flat_ddp",
    .start = lazy_start,
    .before_step = lazy_before_step,
    .stop = lazy_stop,
};
