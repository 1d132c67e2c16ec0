/* Lesson 05 exercise: bucketed DDP.
 *
 * Lesson 04 started one all-reduce per unit: the embeddings are one big message, the final
 * LayerNorm a tiny one, and every message pays the collective's fixed cost. Group
 * neighbouring units, in the order backward finishes them, into buckets of at most
 * --bucket-mb of gradients (a unit larger than that travels alone), and send each bucket as
 * soon as its last unit's gradients are final.
 *
 * The rules (docs/05_bucketed_ddp.md; `make grade LESSON=05` checks them): every rank starts
 * from rank 0's parameters; every step, one non-blocking all-reduce per bucket, started as
 * soon as the bucket's last unit is final and before the next unit's backward begins; no
 * bucket over the cap unless it holds one unit, and no two neighbouring buckets that would
 * fit in the cap together; nothing waits until backward is over; every rank sends the same
 * buckets in the same order. bucketed_ddp_bucket_of (bucketed_ddp.h) answers for your plan.
 *
 * The state your strategy keeps, and the hooks it uses, are yours to design
 * (common/strategy.h says when each hook runs): the stubs below are a place to begin, not
 * the only way. `make hint LESSON=05` when you are stuck. */
#include "bucketed_ddp.h"

#include "layout.h"

int bucketed_ddp_bucket_of(const GPTConfig *cfg, size_t max_bytes, int unit)
{
    /* TODO */
    (void)cfg;
    (void)max_bytes;
    (void)unit;
    return 0;
}

void bucketed_ddp_start(RunContext *run)
{
    /* TODO */
    (void)run;
}

void bucketed_ddp_grads_ready(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

void bucketed_ddp_before_step(RunContext *run)
{
    /* TODO */
    (void)run;
}

const Strategy bucketed_ddp = {
    .name = "bucketed_ddp",
    .start = bucketed_ddp_start,
    .grads_ready = bucketed_ddp_grads_ready,
    .before_step = bucketed_ddp_before_step,
};
