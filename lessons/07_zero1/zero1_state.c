/* Lesson 07: the state and its plumbing, given (the idea is in zero1.c). */
#include "zero1.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int zero1_setup(RunContext *run, char *err, size_t err_len)
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

void zero1_stop(RunContext *run)
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
