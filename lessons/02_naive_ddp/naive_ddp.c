/* Lesson 02 exercise: naive data parallelism.
 *
 * Every rank holds a whole copy of the model and trains on its own rows of each global
 * batch. Make N ranks train exactly as one device would on the whole batch: the same loss,
 * the same gradient norm, the same parameters on every rank at the end.
 *
 * The rules (docs/02_naive_ddp.md; `make grade LESSON=02` checks them): every rank starts
 * from rank 0's parameters, made equal once, from start (not setup), before the first step;
 * every step, after the whole backward, the gradients are averaged over the ranks the naive
 * way: one blocking all-reduce per parameter tensor, of that tensor's size.
 *
 * Which hooks your strategy uses, and what state it keeps, are yours to design
 * (common/strategy.h says when each runs): the two below are a place to begin, not the only
 * way. `make hint LESSON=02` when you are stuck. */
#include "naive_ddp.h"

#include "layout.h"

static void naive_ddp_start(RunContext *run)
{
    /* TODO */
    (void)run;
}

static void naive_ddp_before_step(RunContext *run)
{
    /* TODO */
    (void)run;
}

const Strategy naive_ddp = {
    .name = "naive_ddp",
    .start = naive_ddp_start,
    .before_step = naive_ddp_before_step,
};
