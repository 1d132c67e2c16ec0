/* Lesson 03, another design: set-up lists every tensor's range once; the packing walks the
 * list; the state is there only with --copy-tensors (without it, nothing is kept). */
#include "flat_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "timer.h"

typedef struct {
    int num_tensors;
    Range *tensors; /* layout order */
    float *packed;
    double copy_seconds;
    long steps;
} Packing;

static int packing_setup(RunContext *run, char *err, size_t err_len)
{
    const FlatOptions *options = run->options;
    GPT *model = run->model;
    int units = gpt_num_units(&model->cfg);
    run->state = NULL;
    if (!options->copy_tensors)
        return 0;
    Packing *packing = calloc(1, sizeof *packing);
    run->state = packing;
    if (packing != NULL) {
        packing->tensors = malloc((size_t)units * 12 * sizeof *packing->tensors);
        packing->packed = model->kernels->alloc(model->num_params * sizeof(float), MEM_COMM);
    }
    if (packing == NULL || packing->tensors == NULL || packing->packed == NULL) {
        snprintf(err, err_len, "out of memory for packing the gradients");
        return -1;
    }
    for (int unit = 0; unit < units; unit++)
        packing->num_tensors += unit_tensors(&model->cfg, unit, packing->tensors + packing->num_tensors);
    return 0;
}

static void packing_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

static void pack(const Kernels *k, Packing *packing, float *grads)
{
    double started = now_seconds();
    for (int t = 0, at = 0; t < packing->num_tensors; at += (int)packing->tensors[t].count, t++)
        k->copy(packing->packed + at, grads + packing->tensors[t].offset, packing->tensors[t].count * sizeof(float));
    packing->copy_seconds += now_seconds() - started;
}

static void unpack(const Kernels *k, Packing *packing, float *grads)
{
    double started = now_seconds();
    for (int t = 0, at = 0; t < packing->num_tensors; at += (int)packing->tensors[t].count, t++)
        k->copy(grads + packing->tensors[t].offset, packing->packed + at, packing->tensors[t].count * sizeof(float));
    packing->copy_seconds += now_seconds() - started;
}

static void packing_before_step(RunContext *run)
{
    Packing *packing = run->state;
    GPT *model = run->model;
    if (packing == NULL) {
        comm_check(run->comm, comm_all_reduce(run->comm, model->grads, model->num_params, REDUCE_AVG));
        return;
    }
    packing->steps++;
    pack(model->kernels, packing, model->grads);
    comm_check(run->comm, comm_all_reduce(run->comm, packing->packed, model->num_params, REDUCE_AVG));
    unpack(model->kernels, packing, model->grads);
}

static void packing_stop(RunContext *run)
{
    Packing *packing = run->state;
    if (packing == NULL)
        return;
    flat_ddp_report_copies(run, packing->copy_seconds, packing->steps);
    free(packing->tensors);
    run->model->kernels->free(packing->packed);
    free(packing);
    run->state = NULL;
}

const Strategy flat_ddp = {
    .name = "flat_ddp",
    .setup = packing_setup,
    .start = packing_start,
    .before_step = packing_before_step,
    .stop = packing_stop,
};
