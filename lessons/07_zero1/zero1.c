/* Lesson 07 exercise: ZeRO stage 1 — shard the optimizer state.
 *
 * In DDP every rank keeps AdamW's m and v for every parameter: 8 bytes per parameter on
 * top of 4 for the parameters and 4 for the gradients, all identical on every rank. ZeRO-1
 * keeps m and v for 1/N of the parameters on each rank, and divides the work to match:
 *
 *   1. reduce-scatter the gradients (averaged): rank r receives only its shard, summed
 *      over the ranks and divided by N — half of an all-reduce's traffic;
 *   2. the global gradient norm (for clipping) is the square root of the sum over ranks of
 *      each shard's sum of squares: one all-reduce of one number;
 *   3. AdamW updates only the parameters this rank owns, with its shard of m and v;
 *   4. all-gather the updated parameters, so every rank holds the whole model again — the
 *      other half of the all-reduce's traffic. Same bytes as DDP, a quarter of the memory
 *      for optimizer state at N = 4.
 *
 * Shards are per unit: unit u's count is padded up to a multiple of N so it splits evenly
 * (the padding is zero, never updated, and never copied back). Rank r owns elements
 * [r * shard_count[u], (r + 1) * shard_count[u]) of the padded unit; its shards of all
 * units, one after another, make its shard buffers (grad_shard, AdamW's m and v).
 *
 * What you have: layout.h's unit_range; comm_reduce_scatter, comm_all_gather,
 * comm_sum_double (a double summed over ranks), comm_check; model->kernels->copy, zero and
 * sum_of_squares; optimizer.h's clip_scale, adamw_begin_step, adamw_update_range. The
 * state and its allocation are given, in zero1_state.c, and so is zero1_optimizer_step
 * below, which calls your functions in order.
 *
 * docs/07_zero1.md says what must hold when each function returns; `make hint LESSON=07`
 * gives a hint when you are stuck. */
#include "zero1.h"

#include <math.h>

void plan_shards(ShardPlan *plan, const GPTConfig *cfg)
{
    /* TODO: cut every unit into `world` equal shards that cover it with the least padding,
     * and place each unit's shard after the earlier units' in this rank's shard buffers;
     * then the totals. Every rank must come to the same plan. */
    (void)plan;
    (void)cfg;
}

size_t owned_real_count(const ShardPlan *plan, const GPTConfig *cfg, int unit)
{
    /* TODO: how many of the elements this rank owns in the unit are real, not padding
     * (possibly none). */
    (void)plan;
    (void)cfg;
    (void)unit;
    return 0;
}

void reduce_scatter_unit(RunContext *run, Zero1 *zero, int unit, const float *unit_grads)
{
    /* TODO: afterwards this rank's shard of the unit in zero->grad_shard holds the unit's
     * gradients averaged over the ranks, its padding zero. unit_grads holds only the real
     * elements; the collective moves the whole padded unit (zero->padded starts as NaN). */
    (void)run;
    (void)zero;
    (void)unit;
    (void)unit_grads;
}

float sharded_grad_norm(RunContext *run, Zero1 *zero)
{
    /* TODO: the norm of the whole averaged gradient, the same on every rank, from the
     * gradient shards alone. */
    (void)run;
    (void)zero;
    return 0.0f;
}

void update_owned(RunContext *run, Zero1 *zero, int unit, float *unit_params, AdamWHyper hyper, float scale)
{
    /* TODO: one AdamW update (the step is already begun) of exactly the real parameters
     * this rank owns of the unit, with their gradients and moments from this rank's shard
     * buffers; nothing else written. Where does this rank's piece sit in the unit, and
     * where in the shard buffers? */
    (void)run;
    (void)zero;
    (void)unit;
    (void)unit_params;
    (void)hyper;
    (void)scale;
}

void all_gather_unit(RunContext *run, Zero1 *zero, int unit, float *unit_params)
{
    /* TODO: afterwards every rank's unit_params holds the whole unit, each element as its
     * owner updated it, and nothing past the unit's count is written. */
    (void)run;
    (void)zero;
    (void)unit;
    (void)unit_params;
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
