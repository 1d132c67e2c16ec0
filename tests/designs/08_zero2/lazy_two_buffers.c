/* Lesson 08, another design: unit 0 keeps a buffer of its own, and the other units take
 * turns in two shared buffers (L+1, L-1, ... in one; L, L-2, ... in the other); a shared
 * buffer is zeroed lazily, when a new unit first asks for it, not after each reduce-scatter. */
#include "zero2.h"
#include "zero1_parts.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    Zero1 shards;     /* lesson 07's reference: first, so its functions see their state */
    float *unit0;     /* unit 0's gradients, the whole of backward */
    float *turns[2];  /* the other units', taking turns */
    int owner[2];     /* the unit each shared buffer holds now, or -1 */
} Turns;

static ModelStorage turns_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1};
}

static int turns_setup(RunContext *run, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    const Kernels *k = run->model->kernels;
    Turns *t = calloc(1, sizeof *t);
    run->state = t;
    if (t == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (zero1_allocate(run, &t->shards, MEM_GRADS, err, err_len) != 0)
        return -1;
    size_t largest = 0;
    for (int unit = 1; unit < gpt_num_units(cfg); unit++)
        largest = unit_range(cfg, unit).count > largest ? unit_range(cfg, unit).count : largest;
    t->unit0 = k->alloc(unit_range(cfg, 0).count * sizeof(float), MEM_COMM);
    t->turns[0] = k->alloc(largest * sizeof(float), MEM_COMM);
    t->turns[1] = k->alloc(largest * sizeof(float), MEM_COMM);
    if (t->unit0 == NULL || t->turns[0] == NULL || t->turns[1] == NULL) {
        snprintf(err, err_len, "out of memory for the gradient buffers");
        return -1;
    }
    k->zero(t->unit0, unit_range(cfg, 0).count * sizeof(float));
    t->owner[0] = t->owner[1] = -1;
    return 0;
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    Turns *t = run->state;
    if (unit == 0)
        return t->unit0;
    int turn = unit % 2;
    if (t->owner[turn] != unit) { /* a new unit: whatever the last one left goes */
        run->model->kernels->zero(t->turns[turn], unit_range(&run->model->cfg, unit).count * sizeof(float));
        t->owner[turn] = unit;
    }
    return t->turns[turn];
}

void zero2_grads_ready(RunContext *run, int unit)
{
    Turns *t = run->state;
    reduce_scatter_unit(run, &t->shards, unit, zero2_unit_grads(run, unit));
    if (unit == 0) /* the next step's LM head adds into it first */
        run->model->kernels->zero(t->unit0, unit_range(&run->model->cfg, 0).count * sizeof(float));
    else
        t->owner[unit % 2] = -1; /* spent: the next unit that asks zeroes it */
}

static float turns_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Turns *t = run->state;
    GPT *model = run->model;
    float norm = sharded_grad_norm(run, &t->shards), scale = clip_scale(norm, max_norm);
    adamw_begin_step(&t->shards.opt);
    for (int unit = 0; unit < t->shards.plan.num_units; unit++)
        update_owned(run, &t->shards, unit, model->params + unit_range(&model->cfg, unit).offset, hyper, scale);
    for (int unit = 0; unit < t->shards.plan.num_units; unit++)
        all_gather_unit(run, &t->shards, unit, model->params + unit_range(&model->cfg, unit).offset);
    return norm;
}

static void turns_stop(RunContext *run)
{
    Turns *t = run->state;
    if (t == NULL)
        return;
    zero1_free(run, &t->shards);
    run->model->kernels->free(t->unit0);
    run->model->kernels->free(t->turns[0]);
    run->model->kernels->free(t->turns[1]);
    free(t);
    run->state = NULL;
}

const Strategy zero2 = {
    .name = "zero2",
    .model_storage = turns_model_storage,
    .setup = turns_setup,
    .start = zero1_start,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = turns_optimizer_step,
    .stop = turns_stop,
};
