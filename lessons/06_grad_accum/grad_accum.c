/* Lesson 06 exercise: gradient accumulation.
 *
 * The global batch stays the same; each rank now runs its share as K = run->accum_steps
 * micro-batches, forward and backward one after another, their gradients adding up in
 * model->grads, and the optimizer steps once after the last. Make those K micro-batches
 * train exactly as one big batch would, and communicate no more than one batch does.
 *
 * The rules (docs/06_grad_accum.md; `make grade LESSON=06` checks them): lesson 05's, for the
 * step's last micro-batch; nothing moves between the ranks during the micro-batches before
 * it; the figures (loss, gradient norm, bytes) as one batch of the whole share gives.
 *
 * Lesson 05's reference does the buckets: its hooks (bucketed_ddp_parts.h) are yours to
 * call, and the table below uses its set-up, start, waits and clean-up (a state of yours that
 * wraps lesson 05's wraps them too); the rest is yours to design.
 * `make hint LESSON=06` when you are stuck. */
#include "grad_accum.h"
#include "bucketed_ddp_parts.h"

static float grad_accum_forward_backward(RunContext *run, const int *inputs, const int *targets)
{
    /* TODO */
    (void)run;
    (void)inputs;
    (void)targets;
    return 0.0f;
}

static void grad_accum_grads_ready(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

const Strategy grad_accum = {
    .name = "grad_accum",
    .setup = bucketed_ddp_setup, /* lesson 05's plan, broadcast, waits and clean-up */
    .start = bucketed_ddp_start,
    .forward_backward = grad_accum_forward_backward,
    .grads_ready = grad_accum_grads_ready,
    .before_step = bucketed_ddp_before_step,
    .stop = bucketed_ddp_stop,
};
