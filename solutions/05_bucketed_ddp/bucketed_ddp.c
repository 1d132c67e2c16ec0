/* Lesson 05 reference: bucketed DDP (see lessons/05_bucketed_ddp/bucketed_ddp.c). */
#include "bucketed_ddp.h"

#include <stdio.h>
#include <stdlib.h>

int plan_buckets(const GPTConfig *cfg, size_t max_bytes, Bucket *buckets)
{
    int count = 0;
    for (int unit = gpt_num_units(cfg) - 1; unit >= 0; unit--) {
        Range range = unit_range(cfg, unit);
        Bucket *open = count > 0 ? &buckets[count - 1] : NULL;
        if (open != NULL && (open->range.count + range.count) * sizeof(float) <= max_bytes) {
            open->low_unit = unit;
            open->range.offset = range.offset;
            open->range.count += range.count;
        } else {
            buckets[count++] = (Bucket){.high_unit = unit, .low_unit = unit, .range = range};
        }
    }
    return count;
}

static int allocate_state(RunContext *run, BucketState *state)
{
    int units = gpt_num_units(&run->model->cfg);
    state->buckets = calloc((size_t)units, sizeof *state->buckets);
    state->bucket_ending_at = malloc((size_t)units * sizeof *state->bucket_ending_at);
    state->requests = calloc((size_t)units, sizeof *state->requests);
    return state->buckets != NULL && state->bucket_ending_at != NULL && state->requests != NULL ? 0 : -1;
}

int bucketed_ddp_setup(RunContext *run, char *err, size_t err_len)
{
    const BucketOptions *options = run->options;
    BucketState *state = calloc(1, sizeof *state);
    run->state = state;
    if (state == NULL || allocate_state(run, state) != 0) {
        snprintf(err, err_len, "out of memory for the bucket plan");
        return -1;
    }
    size_t max_bytes = (size_t)(options->bucket_mb * 1e6);
    state->num_buckets = plan_buckets(&run->model->cfg, max_bytes, state->buckets);
    for (int unit = 0; unit < gpt_num_units(&run->model->cfg); unit++)
        state->bucket_ending_at[unit] = -1;
    for (int b = 0; b < state->num_buckets; b++)
        state->bucket_ending_at[state->buckets[b].low_unit] = b;
    return 0;
}

void bucketed_ddp_start(RunContext *run)
{
    GPT *model = run->model;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

void bucketed_ddp_grads_ready(RunContext *run, int unit)
{
    BucketState *state = run->state;
    int completed = state->bucket_ending_at[unit];
    if (completed < 0)
        return;
    Range range = state->buckets[completed].range;
    comm_check(run->comm, comm_all_reduce_start(run->comm, run->model->grads + range.offset, range.count,
                                                REDUCE_AVG, &state->requests[completed]));
    for (int earlier = 0; earlier < completed; earlier++) {
        int done;
        comm_check(run->comm, comm_test(&state->requests[earlier], &done));
    }
}

void bucketed_ddp_before_step(RunContext *run)
{
    BucketState *state = run->state;
    for (int b = 0; b < state->num_buckets; b++)
        comm_check(run->comm, comm_wait(&state->requests[b]));
}

void bucketed_ddp_stop(RunContext *run)
{
    BucketState *state = run->state;
    if (state == NULL)
        return;
    free(state->buckets);
    free(state->bucket_ending_at);
    free(state->requests);
    free(state);
    run->state = NULL;
}
