/* Lesson 07 reference: ZeRO stage 1 (see lessons/07_zero1/zero1.c for the exercise). Its
 * state and steps are also what lessons 08-10 build on (zero1_parts.h). */
#include "zero1.h"
#include "zero1_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "optimizer.h"

/* Unit u: ceil(count / world) elements per rank, padding included; the shards one after
 * another in this rank's shard buffers, in unit order. Every rank comes to the same plan. */
static void plan_shards(ShardPlan *plan, const GPTConfig *cfg)
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

size_t zero1_owned(const GPTConfig *cfg, int world, int rank, int unit, size_t *first)
{
    size_t count = unit_range(cfg, unit).count, shard = (count + (size_t)world - 1) / (size_t)world;
    *first = (size_t)rank * shard;
    return *first >= count ? 0 : (count - *first < shard ? count - *first : shard);
}

size_t owned_real_count(const ShardPlan *plan, const GPTConfig *cfg, int unit)
{
    size_t first;
    return zero1_owned(cfg, plan->world, plan->rank, unit, &first);
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

/* Every unit reduce-scattered, the norm, every rank's update of what it owns, every unit
 * all-gathered: ZeRO-1 keeps the whole gradient until the step. */
static float zero1_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
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

int zero1_allocate(RunContext *run, Zero1 *zero, MemKind grad_shard_kind, char *err, size_t err_len)
{
    const GPT *model = run->model;
    const Kernels *k = model->kernels;
    ShardPlan *plan = &zero->plan;
    plan->num_units = gpt_num_units(&model->cfg);
    plan->rank = comm_rank(run->comm);
    plan->world = comm_size(run->comm);
    plan->shard_count = calloc((size_t)plan->num_units, sizeof *plan->shard_count);
    plan->shard_offset = calloc((size_t)plan->num_units, sizeof *plan->shard_offset);
    if (plan->shard_count == NULL || plan->shard_offset == NULL) {
        snprintf(err, err_len, "out of memory for the shard plan");
        return -1;
    }
    plan_shards(plan, &model->cfg);
    if (adamw_create(&zero->opt, plan->shard_total, k, err, err_len) != 0)
        return -1;
    zero->grad_shard = k->alloc(plan->shard_total * sizeof(float), grad_shard_kind);
    zero->padded = k->alloc(plan->largest_shard * plan->world * sizeof(float), MEM_COMM);
    zero->piece = k->alloc(plan->largest_shard * sizeof(float), MEM_COMM);
    if (zero->grad_shard == NULL || zero->padded == NULL || zero->piece == NULL) {
        snprintf(err, err_len, "out of memory for the gradient shard and the collective buffers");
        return -1;
    }
    return 0;
}

void zero1_free(RunContext *run, Zero1 *zero)
{
    const Kernels *k = run->model->kernels;
    adamw_destroy(&zero->opt);
    k->free(zero->grad_shard);
    k->free(zero->padded);
    k->free(zero->piece);
    free(zero->plan.shard_count);
    free(zero->plan.shard_offset);
}

static int zero1_setup(RunContext *run, char *err, size_t err_len)
{
    Zero1 *zero = calloc(1, sizeof *zero);
    run->state = zero;
    if (zero == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    /* the full gradient stays (backward writes it); the shard is the reduce-scatter's
     * output, a working buffer */
    return zero1_allocate(run, zero, MEM_COMM, err, err_len);
}

void zero1_start(RunContext *run)
{
    GPT *model = run->model;
    /* every rank started from its own seed; lesson 02's first rule still holds */
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

static void zero1_stop(RunContext *run)
{
    if (run->state == NULL)
        return;
    zero1_free(run, run->state);
    free(run->state);
    run->state = NULL;
}

/* One moment (m or v) whole on the host: each unit's shards all-gathered, padding dropped. */
static void gather_moment(RunContext *run, Zero1 *zero, const float *shards, float *whole)
{
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < zero->plan.num_units; unit++) {
        Range range = unit_range(cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, shards + zero->plan.shard_offset[unit], zero->padded,
                                              zero->plan.shard_count[unit]));
        run->model->kernels->to_host(whole + range.offset, zero->padded, range.count * sizeof(float));
    }
}

int zero1_gather_optimizer(RunContext *run, float *m, float *v)
{
    Zero1 *zero = run->state;
    gather_moment(run, zero, zero->opt.m, m);
    gather_moment(run, zero, zero->opt.v, v);
    return zero->opt.step;
}

/* This rank's pieces of a whole moment into its shards; the padding stays zero. */
static void load_moment(RunContext *run, Zero1 *zero, const float *whole, float *shards)
{
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < zero->plan.num_units; unit++) {
        size_t first = unit_range(cfg, unit).offset + (size_t)zero->plan.rank * zero->plan.shard_count[unit];
        run->model->kernels->to_device(shards + zero->plan.shard_offset[unit], whole + first,
                                       owned_real_count(&zero->plan, cfg, unit) * sizeof(float));
    }
}

void zero1_load_optimizer(RunContext *run, const float *m, const float *v, int adam_steps)
{
    Zero1 *zero = run->state;
    load_moment(run, zero, m, zero->opt.m);
    load_moment(run, zero, v, zero->opt.v);
    zero->opt.step = adam_steps;
}

const Strategy zero1 = {
    .name = "zero1",
    .setup = zero1_setup,
    .start = zero1_start,
    .optimizer_step = zero1_optimizer_step,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = zero1_stop,
};
