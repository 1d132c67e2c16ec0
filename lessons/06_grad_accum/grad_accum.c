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
 * Lesson 05's reference strategy, bucketed_ddp (bucketed_ddp.h), does the buckets: its
 * hooks are yours to call. The forwarding below is given; the rest is yours to design.
 * `make hint LESSON=06` when you are stuck. */
#include "grad_accum.h"

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
    bucketed_ddp.grads_ready(run, unit);
}

/* Lesson 05's plan, broadcast, waits and clean-up, as they are. */
static int setup(RunContext *run, char *err, size_t err_len)
{
    return bucketed_ddp.setup(run, err, err_len);
}

static void start(RunContext *run)
{
    bucketed_ddp.start(run);
}

static void before_step(RunContext *run)
{
    bucketed_ddp.before_step(run);
}

static void stop(RunContext *run)
{
    bucketed_ddp.stop(run);
}

const Strategy grad_accum = {
    .name = "grad_accum",
    .setup = setup,
    .start = start,
    .forward_backward = grad_accum_forward_backward,
    .grads_ready = grad_accum_grads_ready,
    .before_step = before_step,
    .stop = stop,
};
