/* Lesson 10 reference: mixed precision on ZeRO-2 (see lessons/10_mixed_precision/mixed.c). */
#include "mixed.h"

ModelStorage mixed_model_storage(void)
{
    /* the model computes with units widened from mixed->params and writes its gradients into
     * lesson 08's working buffers: neither of its fp32 buffers is needed after start */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

float *mixed_acquire_params(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    Range range = unit_range(&run->model->cfg, unit);
    run->model->kernels->widen_bf16(mixed->widened, mixed->params + range.offset, range.count);
    return mixed->widened;
}

void mixed_grads_ready(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    float *grads = zero2_unit_grads(run, unit);
    size_t count = unit_range(&run->model->cfg, unit).count, shard = plan->shard_count[unit];
    k->round_to_bf16(mixed->padded, grads, count);
    k->zero(mixed->padded + count, (shard * (size_t)plan->world - count) * sizeof(bf16));
    comm_check(run->comm, comm_reduce_scatter_bf16(run->comm, mixed->padded,
                                                   mixed->grad_shard + plan->shard_offset[unit], shard, REDUCE_AVG));
    k->zero(grads, count * sizeof(float));
}

float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    float norm = bf16_grad_norm(run, mixed);
    float scale = clip_scale(norm, max_norm);
    adamw_begin_step(&mixed->zero2.zero1.opt);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
        Range range = unit_range(&run->model->cfg, unit);
        k->widen_bf16(mixed->grad_piece, mixed->grad_shard + offset, shard);
        /* the padding is zero in the master and the gradient alike, and AdamW keeps it zero */
        adamw_update_range(&mixed->zero2.zero1.opt, offset, mixed->master + offset, mixed->grad_piece, shard, hyper,
                           scale);
        k->round_to_bf16(mixed->piece, mixed->master + offset, shard);
        comm_check(run->comm, comm_all_gather_bf16(run->comm, mixed->piece, mixed->padded, shard));
        k->copy(mixed->params + range.offset, mixed->padded, range.count * sizeof(bf16));
    }
    return norm;
}
