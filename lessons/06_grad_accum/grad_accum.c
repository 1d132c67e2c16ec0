/* Lesson 06 exercise: gradient accumulation.
 *
 * The global batch stays the same; each rank now runs it as run->accum_steps micro-batches,
 * forward and backward one after another, their gradients adding up in model->grads. Two
 * things make that equal to one big batch:
 *   1. each backward differentiates the mean loss of its micro-batch, so the sum over K
 *      micro-batches is K times the mean: scale each micro-batch's loss by 1/K
 *      (model->loss_scale, which backward multiplies in);
 *   2. communication is needed once per optimizer step, not once per micro-batch: the sum
 *      is only final after the last micro-batch (run->micro_step == run->accum_steps - 1),
 *      so on the others skip the buckets' all-reduces ("no sync").
 *
 * This lesson builds on lesson 05: bucketed_ddp_start, _grads_ready, _before_step and _stop
 * (its reference solution) do the bucketing; run->options is an AccumOptions, whose first
 * member is lesson 05's BucketOptions. */
#include "grad_accum.h"

int grad_accum_start(RunContext *run, char *err, size_t err_len)
{
    /* TODO: scale each micro-batch's loss by 1 / run->accum_steps. */
    return bucketed_ddp_start(run, err, err_len);
}

void grad_accum_grads_ready(RunContext *run, int unit)
{
    /* TODO: communicate only after the last micro-batch. */
    bucketed_ddp_grads_ready(run, unit);
}

void grad_accum_before_step(RunContext *run)
{
    bucketed_ddp_before_step(run);
}

void grad_accum_stop(RunContext *run)
{
    bucketed_ddp_stop(run);
}
