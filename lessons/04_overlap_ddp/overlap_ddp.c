/* Lesson 04 exercise: overlapping communication with backward.
 *
 * Backward finishes the units one at a time, the last unit first: once a unit's gradients
 * are final nothing later in backward touches them, and the model says so by calling the
 * strategy's grads_ready(run, unit) hook at that moment (units L+1, L, ..., 0). Lesson 03
 * sent everything after backward, and the rank computed nothing while it waited. Send each
 * unit's gradients while the units below it are still being differentiated.
 *
 * The rules (docs/04_overlap_ddp.md; `make grade LESSON=04` checks them): every rank starts
 * from rank 0's parameters; every step, one non-blocking all-reduce per unit, of that
 * unit's gradients, started after its grads_ready and before the next unit's backward
 * begins; nothing waits until backward is over; the optimizer reads only averages.
 *
 * The state your strategy keeps, and the hooks it uses, are yours to design
 * (common/strategy.h says when each hook runs): the stubs below are a place to begin, not
 * the only way. `make hint LESSON=04` when you are stuck. */
#include "overlap_ddp.h"

#include "layout.h"

static void overlap_ddp_start(RunContext *run)
{
    /* TODO */
    (void)run;
}

static void overlap_ddp_grads_ready(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

static void overlap_ddp_before_step(RunContext *run)
{
    /* TODO */
    (void)run;
}

const Strategy overlap_ddp = {
    .name = "overlap_ddp",
    .start = overlap_ddp_start,
    .grads_ready = overlap_ddp_grads_ready,
    .before_step = overlap_ddp_before_step,
};
