/* Lesson 09, another design: two buffers with fixed roles, "current" (the unit the model
 * computes with) and "next" (the prefetch arriving), their pointers swapped when the model
 * asks for the unit that arrived; without prefetch, "current" alone. */
#include "zero3.h"
#include "zero2_parts.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    float *buffer;
    int unit; /* held or arriving; -1: none */
    CommRequest gather;
} Held;

typedef struct {
    Zero2 grads;       /* lesson 08's state: first, for its hooks */
    float *shard;      /* this rank's parameters, laid out like its gradient shard */
    Held current, next;
    int prefetch;
} Pair;

static ModelStorage pair_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

static int pair_setup(RunContext *run, char *err, size_t err_len)
{
    const Zero3Options *options = run->options;
    Pair *p = calloc(1, sizeof *p);
    run->state = p;
    if (p == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (zero2_init(run, &p->grads, err, err_len) != 0)
        return -1;
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = &p->grads.zero1.plan;
    size_t unit_bytes = plan->largest_shard * (size_t)plan->world * sizeof(float);
    p->prefetch = !options->no_prefetch;
    p->shard = k->alloc(plan->shard_total * sizeof(float), MEM_PARAMS);
    p->current.buffer = k->alloc(unit_bytes, MEM_COMM);
    p->next.buffer = p->prefetch ? k->alloc(unit_bytes, MEM_COMM) : NULL;
    p->current.unit = p->next.unit = -1;
    if (p->shard == NULL || p->current.buffer == NULL || (p->prefetch && p->next.buffer == NULL)) {
        snprintf(err, err_len, "out of memory for the parameter shard and the gathered units");
        return -1;
    }
    return 0;
}

static void pair_start(RunContext *run)
{
    Pair *p = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = &p->grads.zero1.plan;
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t first = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(p->shard + plan->shard_offset[unit], model->params + first,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
}

static void gather(RunContext *run, Pair *p, Held *into, int unit, int nonblocking)
{
    const ShardPlan *plan = &p->grads.zero1.plan;
    const float *own = p->shard + plan->shard_offset[unit];
    comm_check(run->comm, comm_wait(&into->gather));
    into->unit = unit;
    if (nonblocking)
        comm_check(run->comm, comm_all_gather_start(run->comm, own, into->buffer, plan->shard_count[unit], &into->gather));
    else
        comm_check(run->comm, comm_all_gather(run->comm, own, into->buffer, plan->shard_count[unit]));
}

static float *pair_acquire_params(RunContext *run, int unit)
{
    Pair *p = run->state;
    if (p->current.unit != unit && p->prefetch && p->next.unit == unit) {
        Held arrived = p->next;
        p->next = p->current;
        p->current = arrived;
    } else if (p->current.unit != unit) {
        gather(run, p, &p->current, unit, 0);
    }
    comm_check(run->comm, comm_wait(&p->current.gather));
    UnitUse next;
    if (p->prefetch && gpt_next_param_use(run->model, &next) && next.unit != unit && p->next.unit != next.unit)
        gather(run, p, &p->next, next.unit, 1);
    return p->current.buffer;
}

static void pair_release_params(RunContext *run, int unit)
{
    Pair *p = run->state;
    UnitUse next;
    int used_again = gpt_next_param_use(run->model, &next) && next.unit == unit;
    if (p->current.unit == unit && !used_again)
        p->current.unit = -1;
}

static void forget(RunContext *run, Pair *p)
{
    comm_check(run->comm, comm_wait(&p->next.gather));
    p->current.unit = p->next.unit = -1;
}

static float pair_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Pair *p = run->state;
    Zero1 *shards = &p->grads.zero1;
    float norm = sharded_grad_norm(run, shards);
    adamw_begin_step(&shards->opt);
    adamw_update_range(&shards->opt, 0, p->shard, shards->grad_shard, shards->plan.shard_total, hyper,
                       clip_scale(norm, max_norm));
    forget(run, p); /* every gathered copy is stale now */
    return norm;
}

static void pair_gather_params(RunContext *run, float *host)
{
    Pair *p = run->state;
    const GPTConfig *cfg = &run->model->cfg;
    forget(run, p);
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        gather(run, p, &p->current, unit, 0);
        Range range = unit_range(cfg, unit);
        run->model->kernels->to_host(host + range.offset, p->current.buffer, range.count * sizeof(float));
    }
    p->current.unit = -1;
}

static void pair_stop(RunContext *run)
{
    Pair *p = run->state;
    if (p == NULL)
        return;
    const Kernels *k = run->model->kernels;
    comm_wait(&p->next.gather);
    k->free(p->current.buffer);
    k->free(p->next.buffer);
    k->free(p->shard);
    zero2_release(run, &p->grads);
    free(p);
    run->state = NULL;
}

const Strategy zero3 = {
    .name = "zero3",
    .model_storage = pair_model_storage,
    .setup = pair_setup,
    .start = pair_start,
    .acquire_params = pair_acquire_params,
    .release_params = pair_release_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = pair_optimizer_step,
    .gather_params = pair_gather_params,
    .stop = pair_stop,
};
