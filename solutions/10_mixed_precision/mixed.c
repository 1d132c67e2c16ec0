/* Lesson 10 reference: mixed precision on ZeRO-1, 2 or 3 (see lessons/10_mixed_precision/mixed.c). */
#include "mixed.h"

#include <math.h>

ModelStorage mixed_model_storage(void)
{
    /* the model computes with units widened from the 16-bit parameters and writes its
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
        k->widen_16(mixed->format, mixed->widened, mixed->params + range.offset, range.count);
    } else {
        comm_check(run->comm, comm_all_gather_16(run->comm, mixed->format,
                                                 mixed->param_shard + plan->shard_offset[unit], mixed->padded,
                                                 plan->shard_count[unit]));
        k->widen_16(mixed->format, mixed->widened, mixed->padded, range.count);
    }
    mixed->widened_unit = unit;
    return mixed->widened;
}

/* The unit's 16-bit gradients, its first count elements of mixed->padded: padded with zeros
 * and reduce-scattered, averaged, into the unit's place in the 16-bit gradient shard. */
static void scatter_unit(RunContext *run, Mixed *mixed, int unit)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    size_t count = unit_range(&run->model->cfg, unit).count, shard = plan->shard_count[unit];
    run->model->kernels->zero(mixed->padded + count, (shard * (size_t)plan->world - count) * sizeof(bits16));
    comm_check(run->comm, comm_reduce_scatter_16(run->comm, mixed->format, mixed->padded,
                                                 mixed->grad_shard + plan->shard_offset[unit], shard, REDUCE_AVG));
}

void mixed_grads_ready(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const Kernels *k = run->model->kernels;
    float *grads = zero2_unit_grads(run, unit);
    Range range = unit_range(&run->model->cfg, unit);
    if (mixed->stage == 1) {
        /* ZeRO-1 keeps the whole gradient, in 16 bits; the step reduce-scatters it */
        k->round_to_16(mixed->format, mixed->grads + range.offset, grads, range.count);
    } else {
        k->round_to_16(mixed->format, mixed->padded, grads, range.count);
        scatter_unit(run, mixed, unit);
    }
    k->zero(grads, range.count * sizeof(float));
}

/* AdamW on the unit's fp32 master shard with its 16-bit gradient shard, widened; then the
 * 16-bit parameters from the updated master: this rank's shard rounded (ZeRO-3), or every
 * rank's shard rounded and all-gathered in 16 bits into the whole unit. */
static void update_unit(RunContext *run, Mixed *mixed, int unit, AdamWHyper hyper, float scale)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
    Range range = unit_range(&run->model->cfg, unit);
    k->widen_16(mixed->format, mixed->grad_piece, mixed->grad_shard + offset, shard);
    /* the padding is zero in the master and the gradient alike, and AdamW keeps it zero */
    adamw_update_range(&mixed->zero2.zero1.opt, offset, mixed->master + offset, mixed->grad_piece, shard, hyper,
                       scale);
    if (mixed->stage == 3) {
        k->round_to_16(mixed->format, mixed->param_shard + offset, mixed->master + offset, shard);
        return;
    }
    k->round_to_16(mixed->format, mixed->piece, mixed->master + offset, shard);
    comm_check(run->comm, comm_all_gather_16(run->comm, mixed->format, mixed->piece, mixed->padded, shard));
    k->copy(mixed->params + range.offset, mixed->padded, range.count * sizeof(bits16));
}

/* fp16's dynamic loss scale, after a step whose gradient norm (unscaled) was `norm`: an
 * overflow halves the scale and says the step is skipped; scale_window steps in a row
 * without one double it. Returns 1 when the step must change nothing. bf16 keeps 1. */
static int overflowed(RunContext *run, Mixed *mixed, float norm)
{
    if (mixed->format != FORMAT_FP16)
        return 0;
    if (!isfinite(norm)) {
        run->model->loss_scale /= 2.0f;
        run->good_steps = 0;
        run->overflowed = 1;
        return 1;
    }
    if (++run->good_steps == mixed->scale_window) {
        run->model->loss_scale *= 2.0f;
        run->good_steps = 0;
    }
    return 0;
}

float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    for (int unit = 0; mixed->stage == 1 && unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        run->model->kernels->copy(mixed->padded, mixed->grads + range.offset, range.count * sizeof(bits16));
        scatter_unit(run, mixed, unit);
    }
    /* the gradients are loss_scale times the true ones: a power of two, divided out exactly */
    float loss_scale = run->model->loss_scale;
    float norm = grad_norm_16(run, mixed) / loss_scale;
    if (overflowed(run, mixed, norm))
        return norm;
    float scale = clip_scale(norm, max_norm) / loss_scale;
    adamw_begin_step(&mixed->zero2.zero1.opt);
    for (int unit = 0; unit < plan->num_units; unit++)
        update_unit(run, mixed, unit, hyper, scale);
    mixed->widened_unit = -1; /* what it holds is from before the update */
    return norm;
}
