/* Lesson 05, another design and another plan: the buckets are filled from unit 0 upwards
 * (so the bucket the last units fall in may be the small one), listed in the order they
 * are sent; no tests in the hooks; the waits go newest first. */
#include "bucketed_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

typedef struct {
    int low_unit, high_unit; /* the bucket completes at low_unit */
    CommRequest request;
} Bucket;

typedef struct {
    int count;
    Bucket *buckets; /* in the order they are sent: highest units first */
} Plan;

/* Filling from unit 0 upwards, the number of the bucket (counted from unit 0) of each unit,
 * and how many buckets there are. */
static int fill_upwards(const GPTConfig *cfg, size_t max_bytes, int unit, int *total)
{
    int bucket = 0, of_unit = 0;
    size_t open = 0;
    for (int u = 0; u < gpt_num_units(cfg); u++) {
        size_t bytes = unit_range(cfg, u).count * sizeof(float);
        if (open > 0 && open + bytes > max_bytes) {
            bucket++;
            open = 0;
        }
        open += bytes;
        if (u == unit)
            of_unit = bucket;
    }
    *total = bucket + 1;
    return of_unit;
}

int bucketed_ddp_bucket_of(const GPTConfig *cfg, size_t max_bytes, int unit)
{
    int total, from_unit_0 = fill_upwards(cfg, max_bytes, unit, &total);
    return total - 1 - from_unit_0; /* sent in reverse: the highest units' bucket first */
}

static int plan_setup(RunContext *run, char *err, size_t err_len)
{
    const BucketOptions *options = run->options;
    const GPTConfig *cfg = &run->model->cfg;
    size_t max_bytes = (size_t)(options->bucket_mb * 1e6);
    Plan *plan = calloc(1, sizeof *plan);
    run->state = plan;
    if (plan != NULL) {
        plan->count = bucketed_ddp_bucket_of(cfg, max_bytes, 0) + 1;
        plan->buckets = calloc((size_t)plan->count, sizeof *plan->buckets);
    }
    if (plan == NULL || plan->buckets == NULL) {
        snprintf(err, err_len, "out of memory for the bucket plan");
        return -1;
    }
    for (int unit = gpt_num_units(cfg) - 1, last = -1; unit >= 0; unit--) {
        int bucket = bucketed_ddp_bucket_of(cfg, max_bytes, unit);
        if (bucket != last)
            plan->buckets[bucket].high_unit = unit; /* the walk meets a bucket's highest unit first */
        plan->buckets[bucket].low_unit = unit;
        last = bucket;
    }
    return 0;
}

static void plan_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

static void plan_grads_ready(RunContext *run, int unit)
{
    Plan *plan = run->state;
    const GPTConfig *cfg = &run->model->cfg;
    for (int i = 0; i < plan->count; i++) {
        Bucket *b = &plan->buckets[i];
        if (b->low_unit != unit)
            continue;
        Range low = unit_range(cfg, b->low_unit), high = unit_range(cfg, b->high_unit);
        size_t count = high.offset + high.count - low.offset;
        comm_check(run->comm, comm_all_reduce_start(run->comm, run->model->grads + low.offset, count, REDUCE_AVG,
                                                    &b->request));
    }
}

static void plan_before_step(RunContext *run)
{
    Plan *plan = run->state;
    for (int i = plan->count - 1; i >= 0; i--)
        comm_check(run->comm, comm_wait(&plan->buckets[i].request));
}

static void plan_stop(RunContext *run)
{
    Plan *plan = run->state;
    if (plan == NULL)
        return;
    free(plan->buckets);
    free(plan);
    run->state = NULL;
}

const Strategy bucketed_ddp = {
    .name = "bucketed_ddp",
    .setup = plan_setup,
    .start = plan_start,
    .grads_ready = plan_grads_ready,
    .before_step = plan_before_step,
    .stop = plan_stop,
};
