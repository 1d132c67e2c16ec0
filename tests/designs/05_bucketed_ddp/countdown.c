/* Lesson 05, another design: the plan is a bucket number per unit; each bucket counts down
 * the units still to come and starts when the count reaches zero, whatever the order the
 * hooks arrive in; each hook tests only the bucket started before the one it starts. */
#include "bucketed_ddp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"

typedef struct {
    int num_units, num_buckets;
    int *bucket_of_unit;   /* per unit */
    int *units_left;       /* per bucket: units whose gradients are not final yet this step */
    int *units_in;         /* per bucket: how many units it holds */
    Range *ranges;         /* per bucket: its gradients */
    CommRequest *requests; /* per bucket */
} Countdown;

/* Greedy from the last unit down: a unit joins the open bucket while both fit the cap. */
int bucketed_ddp_bucket_of(const GPTConfig *cfg, size_t max_bytes, int unit)
{
    int bucket = 0;
    size_t open = 0;
    for (int u = gpt_num_units(cfg) - 1; u >= unit; u--) {
        size_t bytes = unit_range(cfg, u).count * sizeof(float);
        if (open > 0 && open + bytes > max_bytes) {
            bucket++;
            open = 0;
        }
        open += bytes;
    }
    return bucket;
}

static int allocate(Countdown *c)
{
    size_t n = (size_t)c->num_units;
    c->bucket_of_unit = calloc(n, sizeof *c->bucket_of_unit);
    c->units_left = calloc(n, sizeof *c->units_left);
    c->units_in = calloc(n, sizeof *c->units_in);
    c->ranges = calloc(n, sizeof *c->ranges);
    c->requests = calloc(n, sizeof *c->requests);
    return c->bucket_of_unit && c->units_left && c->units_in && c->ranges && c->requests ? 0 : -1;
}

static int countdown_setup(RunContext *run, char *err, size_t err_len)
{
    const BucketOptions *options = run->options;
    const GPTConfig *cfg = &run->model->cfg;
    Countdown *c = calloc(1, sizeof *c);
    run->state = c;
    if (c != NULL)
        c->num_units = gpt_num_units(cfg);
    if (c == NULL || allocate(c) != 0) {
        snprintf(err, err_len, "out of memory for the buckets");
        return -1;
    }
    size_t max_bytes = (size_t)(options->bucket_mb * 1e6);
    for (int unit = 0; unit < c->num_units; unit++) {
        int b = c->bucket_of_unit[unit] = bucketed_ddp_bucket_of(cfg, max_bytes, unit);
        Range range = unit_range(cfg, unit);
        if (c->units_in[b]++ == 0)
            c->ranges[b] = range; /* units come lowest first here: the bucket starts at this one */
        else
            c->ranges[b].count += range.count;
    }
    c->num_buckets = c->bucket_of_unit[0] + 1;
    memcpy(c->units_left, c->units_in, (size_t)c->num_buckets * sizeof *c->units_left);
    return 0;
}

static void countdown_start(RunContext *run)
{
    comm_check(run->comm, comm_broadcast(run->comm, run->model->params, run->model->num_params, 0));
}

static void countdown_grads_ready(RunContext *run, int unit)
{
    Countdown *c = run->state;
    int b = c->bucket_of_unit[unit];
    if (--c->units_left[b] > 0)
        return;
    comm_check(run->comm, comm_all_reduce_start(run->comm, run->model->grads + c->ranges[b].offset,
                                                c->ranges[b].count, REDUCE_AVG, &c->requests[b]));
    if (b > 0) {
        int done;
        comm_check(run->comm, comm_test(&c->requests[b - 1], &done));
    }
}

static void countdown_before_step(RunContext *run)
{
    Countdown *c = run->state;
    for (int b = 0; b < c->num_buckets; b++) {
        comm_check(run->comm, comm_wait(&c->requests[b]));
        c->units_left[b] = c->units_in[b];
    }
}

static void countdown_stop(RunContext *run)
{
    Countdown *c = run->state;
    if (c == NULL)
        return;
    free(c->bucket_of_unit);
    free(c->units_left);
    free(c->units_in);
    free(c->ranges);
    free(c->requests);
    free(c);
    run->state = NULL;
}

const Strategy bucketed_ddp = {
    .name = "bucketed_ddp",
    .setup = countdown_setup,
    .start = countdown_start,
    .grads_ready = countdown_grads_ready,
    .before_step = countdown_before_step,
    .stop = countdown_stop,
};
