/* Lesson 07 reference: ZeRO stage 1 (see lessons/07_zero1/zero1.c for the exercise). */
#include "zero1.h"

#include <math.h>

void plan_shards(ShardPlan *plan, const GPTConfig *cfg)
{
    size_t world = (size_t)plan->world, offset = 0;
    plan->largest_shard = 0;
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t count = unit_range(cfg, unit).count;
        plan->shard_count[unit] = (count + world - 1) / world;
        plan->shard_offset[unit] = offset;
        offset += plan->shard_count[unit];
        if (plan->shard_count[unit] > plan->largest_shard)
            plan->largest_shard = plan->shard_count[unit];
    }
    plan->shard_total = offset;
}

size_t owned_real_count(const ShardPlan *plan, const GPTConfig *cfg, int unit)
{
    size_t count = unit_range(cfg, unit).count, first = (size_t)plan->rank * plan->shard_count[unit];
    if (first >= count)
        return 0;
    return count - first < plan->shard_count[unit] ? count - first : plan->shard_count[unit];
}

void reduce_scatter_unit(RunContext *run, Zero1 *zero, int unit, const float *unit_grads)
{
    const Kernels *k = run->model->kernels;
    size_t count = unit_range(&run->model->cfg, unit).count;
    size_t shard = zero->plan.shard_count[unit], padded = shard * (size_t)zero->plan.world;
    k->copy(zero->padded, unit_grads, count * sizeof(float));
    k->zero(zero->padded + count, (padded - count) * sizeof(float));
    comm_check(run->comm, comm_reduce_scatter(run->comm, zero->padded, zero->grad_shard + zero->plan.shard_offset[unit],
                                              shard, REDUCE_AVG));
}

float sharded_grad_norm(RunContext *run, Zero1 *zero)
{
    double sum_of_squares = run->model->kernels->sum_of_squares(zero->grad_shard, zero->plan.shard_total);
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    return (float)sqrt(sum_of_squares);
}

void update_owned(RunContext *run, Zero1 *zero, int unit, float *unit_params, AdamWHyper hyper, float scale)
{
    const GPTConfig *cfg = &run->model->cfg;
    size_t first = (size_t)zero->plan.rank * zero->plan.shard_count[unit], offset = zero->plan.shard_offset[unit];
    adamw_update_range(&zero->opt, offset, unit_params + first, zero->grad_shard + offset,
                       owned_real_count(&zero->plan, cfg, unit), hyper, scale);
}

void all_gather_unit(RunContext *run, Zero1 *zero, int unit, float *unit_params)
{
    const Kernels *k = run->model->kernels;
    size_t count = unit_range(&run->model->cfg, unit).count, shard = zero->plan.shard_count[unit];
    size_t real = owned_real_count(&zero->plan, &run->model->cfg, unit);
    k->copy(zero->piece, unit_params + (size_t)zero->plan.rank * shard, real * sizeof(float));
    k->zero(zero->piece + real, (shard - real) * sizeof(float));
    comm_check(run->comm, comm_all_gather(run->comm, zero->piece, zero->padded, shard));
    k->copy(unit_params, zero->padded, count * sizeof(float));
}

float zero1_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Zero1 *zero = run->state;
    GPT *model = run->model;
    for (int unit = 0; unit < zero->plan.num_units; unit++)
        reduce_scatter_unit(run, zero, unit, model->grads + unit_range(&model->cfg, unit).offset);
    float norm = sharded_grad_norm(run, zero);
    float scale = clip_scale(norm, max_norm);
    adamw_begin_step(&zero->opt);
    for (int unit = 0; unit < zero->plan.num_units; unit++)
        update_owned(run, zero, unit, model->params + unit_range(&model->cfg, unit).offset, hyper, scale);
    for (int unit = 0; unit < zero->plan.num_units; unit++)
        all_gather_unit(run, zero, unit, model->params + unit_range(&model->cfg, unit).offset);
    return norm;
}
