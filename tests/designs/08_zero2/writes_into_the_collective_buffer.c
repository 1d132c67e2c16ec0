/* Lesson 08, another design: backward writes every unit but unit 0 straight into the
 * reduce-scatter's own padded buffer (lesson 07's `padded`), which is then scattered with no
 * copy and zeroed whole for the next unit: one gradient buffer fewer. Unit 0 keeps its own. */
#include "zero2.h"
#include "zero1_parts.h"

#include <stdio.h>
#include <stdlib.h>

static Zero1 shards;   /* lesson 07's reference state */
static float *unit0;   /* unit 0's gradients, the whole of backward */

static ModelStorage direct_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1};
}

static size_t padded_floats(void)
{
    return shards.plan.largest_shard * (size_t)shards.plan.world;
}

static int direct_setup(RunContext *run, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    size_t unit0_floats = unit_range(&run->model->cfg, 0).count;
    if (zero1_allocate(run, &shards, MEM_GRADS, err, err_len) != 0)
        return -1;
    unit0 = k->alloc(unit0_floats * sizeof(float), MEM_COMM);
    if (unit0 == NULL) {
        snprintf(err, err_len, "out of memory for unit 0's gradients");
        return -1;
    }
    k->zero(unit0, unit0_floats * sizeof(float));
    k->zero(shards.padded, padded_floats() * sizeof(float)); /* communication buffers start as NaN */
    return 0;
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    (void)run;
    return unit == 0 ? unit0 : shards.padded;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    const Kernels *k = run->model->kernels;
    if (unit == 0) { /* through lesson 07's padded copy; then ready for the next LM head */
        reduce_scatter_unit(run, &shards, 0, unit0);
        k->zero(unit0, unit_range(&run->model->cfg, 0).count * sizeof(float));
        k->zero(shards.padded, padded_floats() * sizeof(float));
        return;
    }
    size_t shard = shards.plan.shard_count[unit]; /* the rest of padded is zero: the padding */
    comm_check(run->comm, comm_reduce_scatter(run->comm, shards.padded, shards.grad_shard + shards.plan.shard_offset[unit],
                                              shard, REDUCE_AVG));
    k->zero(shards.padded, padded_floats() * sizeof(float));
}

static float direct_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    GPT *model = run->model;
    float norm = sharded_grad_norm(run, &shards), scale = clip_scale(norm, max_norm);
    adamw_begin_step(&shards.opt);
    for (int unit = 0; unit < shards.plan.num_units; unit++)
        update_owned(run, &shards, unit, model->params + unit_range(&model->cfg, unit).offset, hyper, scale);
    for (int unit = 0; unit < shards.plan.num_units; unit++)
        all_gather_unit(run, &shards, unit, model->params + unit_range(&model->cfg, unit).offset);
    model->kernels->zero(shards.padded, padded_floats() * sizeof(float)); /* the all-gathers left parameters there */
    return norm;
}

static void direct_stop(RunContext *run)
{
    if (unit0 == NULL && shards.plan.shard_count == NULL)
        return;
    zero1_free(run, &shards);
    run->model->kernels->free(unit0);
    unit0 = NULL;
    shards = (Zero1){0};
}

const Strategy zero2 = {
    .name = "zero2",
    .model_storage = direct_model_storage,
    .setup = direct_setup,
    .start = zero1_start,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = direct_optimizer_step,
    .stop = direct_stop,
};
