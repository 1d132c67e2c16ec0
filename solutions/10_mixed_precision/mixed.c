/* Lesson 10 reference: mixed precision on ZeRO-1, 2 or 3 (see lessons/10_mixed_precision/mixed.c). */
#include "mixed.h"

ModelStorage mixed_model_storage(void)
{
    /* the model computes with units widened from the bf16 parameters and writes its
     * gradients into lesson 08's working buffers: neither of its fp32 buffers is needed
     * after start */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

float *mixed_acquire_params(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    Range range = unit_range(&run->model->cfg, unit);
    /* the LM head's unit 0 ends forward and begins backward: it is still there */
    if (mixed->widened_unit == unit)
        return mixed->widened;
    if (mixed->stage < 3) {
        k->widen_bf16(mixed->widened, mixed->params + range.offset, range.count);
    } else {
        comm_check(run->comm, comm_all_gather_bf16(run->comm, mixed->param_shard + plan->shard_offset[unit],
                                                   mixed->padded, plan->shard_count[unit]));
        k->widen_bf16(mixed->widened, mixed->padded, range.count);
    }
    mixed->widened_unit = unit;
    return mixed->widened;
}

/* The unit's bf16 gradients, its first count elements of mixed->padded: padded with zeros
 * and reduce-scattered, averaged, into the unit's place in the bf16 gradient shard. */
static void scatter_unit(RunContext *run, Mixed *mixed, int unit)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    size_t count = unit_range(&run->model->cfg, unit).count, shard = plan->shard_count[unit];
    run->model->kernels->zero(mixed->padded + count, (shard * (size_t)plan->world - count) * sizeof(bf16));
    comm_check(run->comm, comm_reduce_scatter_bf16(run->comm, mixed->padded,
                                                   mixed->grad_shard + plan->shard_offset[unit], shard, REDUCE_AVG));
}

void mixed_grads_ready(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const Kernels *k = run->model->kernels;
    float *grads = zero2_unit_grads(run, unit);
    Range range = unit_range(&run->model->cfg, unit);
    if (mixed->stage == 1) {
        /* ZeRO-1 keeps the whole gradient, in bf16; the step reduce-scatters it */
        k->round_to_bf16(mixed->grads + range.offset, grads, range.count);
    } else {
        k->round_to_bf16(mixed->padded, grads, range.count);
        scatter_unit(run, mixed, unit);
    }
    k->zero(grads, range.count * sizeof(float));
}

/* AdamW on the unit's fp32 master shard with its bf16 gradient shard, widened; then the
 * bf16 parameters from the updated master: this rank's shard rounded (ZeRO-3), or every
 * rank's shard rounded and all-gathered in bf16 into the whole unit. */
static void update_unit(RunContext *run, Mixed *mixed, int unit, AdamWHyper hyper, float scale)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
    Range range = unit_range(&run->model->cfg, unit);
    k->widen_bf16(mixed->grad_piece, mixed->grad_shard + offset, shard);
    /* the padding is zero in the master and the gradient alike, and AdamW keeps it zero */
    adamw_update_range(&mixed->zero2.zero1.opt, offset, mixed->master + offset, mixed->grad_piece, shard, hyper,
                       scale);
    if (mixed->stage == 3) {
        k->round_to_bf16(mixed->param_shard + offset, mixed->master + offset, shard);
        return;
    }
    k->round_to_bf16(mixed->piece, mixed->master + offset, shard);
    comm_check(run->comm, comm_all_gather_bf16(run->comm, mixed->piece, mixed->padded, shard));
    k->copy(mixed->params + range.offset, mixed->padded, range.count * sizeof(bf16));
}

float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    for (int unit = 0; mixed->stage == 1 && unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        run->model->kernels->copy(mixed->padded, mixed->grads + range.offset, range.count * sizeof(bf16));
        scatter_unit(run, mixed, unit);
    }
    float norm = bf16_grad_norm(run, mixed);
    float scale = clip_scale(norm, max_norm);
    adamw_begin_step(&mixed->zero2.zero1.opt);
    for (int unit = 0; unit < plan->num_units; unit++)
        update_unit(run, mixed, unit, hyper, scale);
    mixed->widened_unit = -1; /* what it holds is from before the update */
    return norm;
}
