/* Lesson 07, another design: every unit keeps a state of its own (an AdamW over its shard,
 * its gradient shard), allocated apart; a unit that divides by N is reduce-scattered
 * straight from the gradients and a shard with no padding all-gathered straight from the
 * parameters, with no copy; the norm is summed unit by unit as the shards arrive. */
#include "zero1.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layout.h"
#include "optimizer.h"

typedef struct {
    size_t count, shard, first, real; /* the unit's elements; each rank's shard; this rank's */
    AdamW opt;                        /* m and v of this rank's shard */
    float *grad_shard;                /* shard elements: the averaged gradients it owns */
} UnitShard;

typedef struct {
    int num_units;
    UnitShard *units;
    float *padded; /* N x the largest shard: a padded unit, for the collectives */
    float *piece;  /* the largest shard: a padded shard of parameters to send */
} PerUnit;

size_t zero1_owned(const GPTConfig *cfg, int world, int rank, int unit, size_t *first)
{
    size_t count = unit_range(cfg, unit).count, shard = (count + (size_t)world - 1) / (size_t)world;
    *first = shard * (size_t)rank;
    if (*first >= count)
        return 0;
    return count - *first < shard ? count - *first : shard;
}

static int unit_setup(RunContext *run, UnitShard *u, int unit, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    int world = comm_size(run->comm);
    u->count = unit_range(cfg, unit).count;
    u->shard = (u->count + (size_t)world - 1) / (size_t)world;
    u->real = zero1_owned(cfg, world, comm_rank(run->comm), unit, &u->first);
    if (adamw_create(&u->opt, u->shard, run->model->kernels, err, err_len) != 0)
        return -1;
    u->grad_shard = run->model->kernels->alloc(u->shard * sizeof(float), MEM_COMM);
    if (u->grad_shard == NULL) {
        snprintf(err, err_len, "out of memory for unit %d's gradient shard", unit);
        return -1;
    }
    return 0;
}

static int per_unit_setup(RunContext *run, char *err, size_t err_len)
{
    PerUnit *state = calloc(1, sizeof *state);
    run->state = state;
    if (state == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    state->num_units = gpt_num_units(&run->model->cfg);
    state->units = calloc((size_t)state->num_units, sizeof *state->units);
    if (state->units == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    size_t largest = 0;
    for (int unit = 0; unit < state->num_units; unit++) {
        if (unit_setup(run, &state->units[unit], unit, err, err_len) != 0)
            return -1;
        largest = state->units[unit].shard > largest ? state->units[unit].shard : largest;
    }
    state->padded = run->model->kernels->alloc(largest * (size_t)comm_size(run->comm) * sizeof(float), MEM_COMM);
    state->piece = run->model->kernels->alloc(largest * sizeof(float), MEM_COMM);
    if (state->padded == NULL || state->piece == NULL) {
        snprintf(err, err_len, "out of memory for the collective buffer");
        return -1;
    }
    return 0;
}

static void per_unit_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

/* The unit's averaged gradients, this rank's shard of them: from the gradients themselves
 * when the unit divides evenly, else from a padded copy. */
static void scatter(RunContext *run, PerUnit *state, int unit, const float *grads)
{
    const Kernels *k = run->model->kernels;
    UnitShard *u = &state->units[unit];
    size_t padded = u->shard * (size_t)comm_size(run->comm);
    const float *send = grads;
    if (padded != u->count) {
        k->copy(state->padded, grads, u->count * sizeof(float));
        k->zero(state->padded + u->count, (padded - u->count) * sizeof(float));
        send = state->padded;
    }
    comm_check(run->comm, comm_reduce_scatter(run->comm, send, u->grad_shard, u->shard, REDUCE_AVG));
}

static void gather(RunContext *run, PerUnit *state, int unit, float *params)
{
    const Kernels *k = run->model->kernels;
    UnitShard *u = &state->units[unit];
    const float *send = params + u->first;
    if (u->real < u->shard) {
        k->copy(state->piece, params + u->first, u->real * sizeof(float));
        k->zero(state->piece + u->real, (u->shard - u->real) * sizeof(float));
        send = state->piece;
    }
    comm_check(run->comm, comm_all_gather(run->comm, send, state->padded, u->shard));
    k->copy(params, state->padded, u->count * sizeof(float));
}

static float per_unit_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    PerUnit *state = run->state;
    GPT *model = run->model;
    double sum_of_squares = 0.0;
    for (int unit = 0; unit < state->num_units; unit++) {
        scatter(run, state, unit, model->grads + unit_range(&model->cfg, unit).offset);
        sum_of_squares += model->kernels->sum_of_squares(state->units[unit].grad_shard, state->units[unit].shard);
    }
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    float norm = (float)sqrt(sum_of_squares), scale = clip_scale(norm, max_norm);
    for (int unit = 0; unit < state->num_units; unit++) {
        UnitShard *u = &state->units[unit];
        float *params = model->params + unit_range(&model->cfg, unit).offset;
        adamw_begin_step(&u->opt);
        adamw_update_range(&u->opt, 0, params + u->first, u->grad_shard, u->real, hyper, scale);
    }
    for (int unit = 0; unit < state->num_units; unit++)
        gather(run, state, unit, model->params + unit_range(&model->cfg, unit).offset);
    return norm;
}

static void per_unit_stop(RunContext *run)
{
    PerUnit *state = run->state;
    if (state == NULL)
        return;
    for (int unit = 0; state->units != NULL && unit < state->num_units; unit++) {
        adamw_destroy(&state->units[unit].opt);
        run->model->kernels->free(state->units[unit].grad_shard);
    }
    run->model->kernels->free(state->padded);
    run->model->kernels->free(state->piece);
    free(state->units);
    free(state);
    run->state = NULL;
}

const Strategy zero1 = {
    .name = "zero1",
    .setup = per_unit_setup,
    .start = per_unit_start,
    .optimizer_step = per_unit_optimizer_step,
    .stop = per_unit_stop,
};
