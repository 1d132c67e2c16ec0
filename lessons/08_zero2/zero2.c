/* Lesson 08 exercise: ZeRO stage 2 — shard the gradients too.
 *
 * After lesson 07 every rank still holds the whole gradient (4 bytes per parameter) only
 * to reduce-scatter it at the end of backward and keep 1/N of it. ZeRO-2 reduce-scatters
 * each unit as soon as backward has finished with it, into the rank's gradient shard, and
 * never keeps the whole gradient: backward writes a unit's gradients into a working buffer
 * (zero2_unit_grads, the model's unit_grads hook), the backward hook reduce-scatters it
 * (zero2_grads_ready) and the buffer is zeroed for the next unit.
 *
 * Unit 0 is special: wte is tied to the LM head, whose gradient backward computes first,
 * and to the token embedding, whose gradient it computes last, so unit 0 needs a buffer of
 * its own for the whole of backward. Every other unit can share one buffer, one after
 * another (units L+1, L, ..., 1). The full gradient buffer is freed in zero2_start.
 *
 * What you have (lesson 07's reference): reduce_scatter_unit, sharded_grad_norm,
 * update_owned, all_gather_unit; layout.h's unit_range; model->kernels->zero; clip_scale,
 * adamw_begin_step. */
#include "zero2.h"

#include <stdio.h>
#include <stdlib.h>

float *zero2_unit_grads(RunContext *run, int unit)
{
    /* TODO: where backward writes this unit's gradients: unit 0's own buffer, or the
     * shared one. */
    (void)run;
    (void)unit;
    return NULL;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    /* TODO: reduce-scatter the unit's working buffer into this rank's gradient shard, then
     * zero the buffer for the unit that uses it next. */
    (void)run;
    (void)unit;
}

float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO: lesson 07's step without its reduce-scatter (the shard is already filled):
     * the norm from the shards, clipping, AdamW on the owned elements, all-gather. */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}

/* ---------------------------------------------------------------- state (given) */

static size_t largest_unit_after_0(const GPTConfig *cfg)
{
    size_t largest = 0;
    for (int unit = 1; unit < gpt_num_units(cfg); unit++)
        if (unit_range(cfg, unit).count > largest)
            largest = unit_range(cfg, unit).count;
    return largest;
}

int zero2_init(RunContext *run, Zero2 *zero, char *err, size_t err_len)
{
    GPT *model = run->model;
    const Kernels *k = model->kernels;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
    if (zero1_allocate(run, &zero->zero1, MEM_GRADS, err, err_len) != 0)
        return -1;
    /* the full gradient buffer goes: backward writes into the two working buffers instead */
    k->free(model->grads);
    model->grads = NULL;
    zero->unit0_grads = k->alloc(unit_range(&model->cfg, 0).count * sizeof(float), MEM_COMM);
    zero->unit_grads = k->alloc(largest_unit_after_0(&model->cfg) * sizeof(float), MEM_COMM);
    if (zero->unit0_grads == NULL || zero->unit_grads == NULL) {
        snprintf(err, err_len, "out of memory for the gradient working buffers");
        return -1;
    }
    return 0;
}

void zero2_release(RunContext *run, Zero2 *zero)
{
    zero1_free(run, &zero->zero1);
    run->model->kernels->free(zero->unit0_grads);
    run->model->kernels->free(zero->unit_grads);
}

int zero2_start(RunContext *run, char *err, size_t err_len)
{
    Zero2 *zero = calloc(1, sizeof *zero);
    run->state = zero;
    if (zero == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return zero2_init(run, zero, err, err_len);
}

void zero2_stop(RunContext *run)
{
    if (run->state == NULL)
        return;
    zero2_release(run, run->state);
    free(run->state);
    run->state = NULL;
}
