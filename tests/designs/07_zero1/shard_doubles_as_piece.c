/* Lesson 07, another design: the shard layout is not stored but walked (a running offset,
 * unit by unit); after the update, each unit's slot of the gradient shard, no longer
 * needed, holds the updated parameters it sends in the all-gather, so there is no buffer
 * for a piece. */
#include "zero1.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "optimizer.h"

typedef struct {
    AdamW opt;         /* m and v of every shard of this rank, unit after unit */
    float *shards;     /* the gradient shards, unit after unit; then the parameters sent */
    float *padded;     /* N x the largest shard */
} Walked;

/* Each rank's share of a unit: ceil(count / world). */
static size_t shard_of(const GPTConfig *cfg, int world, int unit)
{
    return (unit_range(cfg, unit).count + (size_t)world - 1) / (size_t)world;
}

size_t zero1_owned(const GPTConfig *cfg, int world, int rank, int unit, size_t *first)
{
    size_t count = unit_range(cfg, unit).count, shard = shard_of(cfg, world, unit);
    *first = (size_t)rank * shard;
    size_t left = count > *first ? count - *first : 0;
    return left < shard ? left : shard;
}

static int walked_setup(RunContext *run, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    const Kernels *k = run->model->kernels;
    int world = comm_size(run->comm);
    size_t total = 0, largest = 0;
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        size_t shard = shard_of(cfg, world, unit);
        total += shard;
        largest = shard > largest ? shard : largest;
    }
    Walked *w = calloc(1, sizeof *w);
    run->state = w;
    if (w == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (adamw_create(&w->opt, total, k, err, err_len) != 0)
        return -1;
    w->shards = k->alloc(total * sizeof(float), MEM_COMM);
    w->padded = k->alloc(largest * (size_t)world * sizeof(float), MEM_COMM);
    if (w->shards == NULL || w->padded == NULL) {
        snprintf(err, err_len, "out of memory for the shards");
        return -1;
    }
    return 0;
}

static void walked_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

static float walked_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Walked *w = run->state;
    GPT *model = run->model;
    const Kernels *k = model->kernels;
    const GPTConfig *cfg = &model->cfg;
    int world = comm_size(run->comm), rank = comm_rank(run->comm), units = gpt_num_units(cfg);
    size_t at = 0;
    for (int unit = 0; unit < units; at += shard_of(cfg, world, unit), unit++) {
        Range range = unit_range(cfg, unit);
        size_t shard = shard_of(cfg, world, unit);
        k->copy(w->padded, model->grads + range.offset, range.count * sizeof(float));
        k->zero(w->padded + range.count, (shard * (size_t)world - range.count) * sizeof(float));
        comm_check(run->comm, comm_reduce_scatter(run->comm, w->padded, w->shards + at, shard, REDUCE_AVG));
    }
    double sum_of_squares = k->sum_of_squares(w->shards, at);
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    float norm = (float)sqrt(sum_of_squares), scale = clip_scale(norm, max_norm);
    adamw_begin_step(&w->opt);
    at = 0;
    for (int unit = 0; unit < units; at += shard_of(cfg, world, unit), unit++) {
        float *params = model->params + unit_range(cfg, unit).offset;
        size_t first, real = zero1_owned(cfg, world, rank, unit, &first);
        adamw_update_range(&w->opt, at, params + first, w->shards + at, real, hyper, scale);
        /* the gradients are spent: the slot now carries the parameters to send, padded */
        k->copy(w->shards + at, params + first, real * sizeof(float));
        k->zero(w->shards + at + real, (shard_of(cfg, world, unit) - real) * sizeof(float));
    }
    at = 0;
    for (int unit = 0; unit < units; at += shard_of(cfg, world, unit), unit++) {
        Range range = unit_range(cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, w->shards + at, w->padded, shard_of(cfg, world, unit)));
        k->copy(model->params + range.offset, w->padded, range.count * sizeof(float));
    }
    return norm;
}

static void walked_stop(RunContext *run)
{
    Walked *w = run->state;
    if (w == NULL)
        return;
    adamw_destroy(&w->opt);
    run->model->kernels->free(w->shards);
    run->model->kernels->free(w->padded);
    free(w);
    run->state = NULL;
}

const Strategy zero1 = {
    .name = "zero1",
    .setup = walked_setup,
    .start = walked_start,
    .optimizer_step = walked_optimizer_step,
    .stop = walked_stop,
};
