/* Lesson 03 exercise: flat DDP.
 *
 * Lesson 02 made one all-reduce per tensor: dozens of small messages per step, each paying
 * the collective's fixed cost. Every gradient here already lives in one flat buffer
 * (model->grads, model->num_params floats), so one all-reduce can carry them all.
 * Frameworks whose gradients are separate tensors must first pack them into one buffer and
 * unpack the averages afterwards; --copy-tensors asks for that here too, so that you can
 * measure what the copies cost against what the single call saves.
 *
 * The rules (docs/03_flat_ddp.md; `make grade LESSON=03` checks them): every rank starts
 * from rank 0's parameters; every step, after the whole backward, exactly one blocking
 * all-reduce of the whole gradient; with --copy-tensors the gradients travel packed,
 * tensor by tensor, wherever the buffers live (a GPU build's are device memory), and what
 * the copies cost is reported with flat_ddp_report_copies at the end.
 *
 * The state your strategy keeps, and the hooks it uses, are yours to design
 * (common/strategy.h says when each hook runs): the stubs below are a place to begin, not
 * the only way. `make hint LESSON=03` when you are stuck. */
#include "flat_ddp.h"

#include "layout.h"

static void flat_ddp_start(RunContext *run)
{
    /* TODO */
    (void)run;
}

static void flat_ddp_before_step(RunContext *run)
{
    /* TODO */
    (void)run;
}

const Strategy flat_ddp = {
    .name = "flat_ddp",
    .start = flat_ddp_start,
    .before_step = flat_ddp_before_step,
};
