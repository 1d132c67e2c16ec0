/* Lesson 05 reference: bucketed DDP (see lessons/05_bucketed_ddp/bucketed_ddp.c). Its hooks
 * are also what lesson 06 builds on (bucketed_ddp_parts.h). */
#include "bucketed_ddp.h"
#include "bucketed_ddp_parts.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

/* Units high_unit down to low_unit, in the order backward finishes them: complete when
 * low_unit's gradients are final. Neighbouring units' gradients are one Range. */
typedef struct {
    int high_unit, low_unit;
    Range range;
} Bucket;

typedef struct {
    int num_buckets;
    Bucket *buckets;        /* in the order they are sent */
    int *bucket_ending_at;  /* per unit: the bucket that unit completes, or -1 */
    CommRequest *requests;  /* one per bucket */
} BucketState;

/* The plan: walking the units in backward order, a bucket takes the next unit while the
 * two still fit in max_bytes together (greedy); a unit that does not fit starts the next
 * bucket. Returns the bucket the walk is filling when it reaches unit. */
int bucketed_ddp_bucket_of(const GPTConfig *cfg, size_t max_bytes, int unit)
{
    int bucket = -1;
    size_t filled = 0;
    for (int u = gpt_num_units(cfg) - 1; u >= unit; u--) {
        size_t bytes = unit_range(cfg, u).count * sizeof(float);
        if (bucket < 0 || filled + bytes > max_bytes) {
            bucket++;
            filled = 0;
        }
        filled += bytes;
    }
    return bucket;
}

/* The plan's buckets, each with its units' one Range. buckets has room for one per unit;
 * returns how many. */
static int plan_buckets(const GPTConfig *cfg, size_t max_bytes, Bucket *buckets)
{
    int count = 0;
    for (int unit = gpt_num_units(cfg) - 1; unit >= 0; unit--) {
        Range range = unit_range(cfg, unit);
        if (bucketed_ddp_bucket_of(cfg, max_bytes, unit) == count - 1) {
            buckets[count - 1].low_unit = unit;
            buckets[count - 1].range.offset = range.offset;
            buckets[count - 1].range.count += range.count;
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

/* A unit that completes a bucket starts the bucket's all-reduce, then tests the buckets
 * already in flight: MPICH moves them forward only inside an MPI call. */
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

const Strategy bucketed_ddp = {
    .name = "bucketed_ddp",
    .setup = bucketed_ddp_setup,
    .start = bucketed_ddp_start,
    .grads_ready = bucketed_ddp_grads_ready,
    .before_step = bucketed_ddp_before_step,
    .stop = bucketed_ddp_stop,
};
