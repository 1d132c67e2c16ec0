/* Lesson 05 exercise: bucketed DDP.
 *
 * Lesson 04 started one all-reduce per unit: the embeddings are one big message, the final
 * LayerNorm a tiny one, and every message pays the collective's fixed cost. Buckets group
 * neighbouring units, in the order backward finishes them, into messages of about
 * --bucket-mb each. A bucket's all-reduce starts as soon as its last unit is final.
 *
 * Units are contiguous in the flat buffers and a bucket takes neighbours, so a bucket's
 * gradients are one Range: from its lowest unit's offset to the end of its highest unit.
 *
 * Every rank must issue the same buckets in the same order: collectives match by the order
 * they are started in, not by what they carry.
 *
 * What you have: run->comm, run->model; run->options points at BucketOptions; run->state
 * is yours (a BucketState, allocated below); layout.h's gpt_num_units, unit_range;
 * comm_all_reduce_start, comm_test, comm_wait, comm_broadcast, comm_check.
 *
 * docs/05_bucketed_ddp.md, "The exercise", says what each function must leave behind, the
 * plans you should get, what the grader checks and what to measure; `make hint LESSON=05`
 * gives a hint when you are stuck. */
#include "bucketed_ddp.h"

#include <stdio.h>
#include <stdlib.h>

int plan_buckets(const GPTConfig *cfg, size_t max_bytes, Bucket *buckets)
{
    /* TODO: the buckets in the order backward completes them, each a run of neighbouring
     * units (high_unit down to low_unit) with its gradients as one Range: a unit joins the
     * bucket being filled while the bucket still fits in max_bytes (a larger unit stays
     * alone); every parameter in exactly one bucket. Return how many. */
    (void)cfg;
    (void)max_bytes;
    (void)buckets;
    return 0;
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
    /* TODO: every rank's parameters are rank 0's. */
    (void)run;
}

void bucketed_ddp_grads_ready(RunContext *run, int unit)
{
    /* TODO: if this unit completes a bucket, that bucket on its way to its average over
     * the ranks, without blocking backward; the buckets already in flight given a chance
     * to progress. */
    (void)run;
    (void)unit;
}

void bucketed_ddp_before_step(RunContext *run)
{
    /* TODO: every bucket's all-reduce complete: only then does model->grads hold the
     * average. */
    (void)run;
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
