/* Lesson 06 exercise: gradient accumulation.
 *
 * The global batch stays the same; each rank now runs its share as K = run->accum_steps
 * micro-batches, forward and backward one after another, their gradients adding up in
 * model->grads, and the loop steps the optimizer once after the last. For that to be one
 * big batch, two things must hold:
 *   1. what the gradients add up to is the gradient of the mean loss over the whole share,
 *      not K times it;
 *   2. the sum is final only after the last micro-batch; the buckets are communicated
 *      then, and not before ("no sync").
 *
 * What you have: inputs and targets hold the K micro-batches one after another, each
 * model->batch rows of model->seq_len tokens; model.h's gpt_forward and gpt_backward
 * (backward differentiates model->loss_scale x its micro-batch's mean loss, and counts in
 * model->accumulated_passes the passes already added since the gradients were zeroed);
 * lesson 05's reference bucketed_ddp_grads_ready, which starts the buckets. */
#include "grad_accum.h"

float grad_accum_forward_backward(RunContext *run, const int *inputs, const int *targets)
{
    /* TODO: every micro-batch forward and backward, so that the gradients add up to those
     * of the mean loss; return the mean of the micro-batches' losses. */
    (void)run;
    (void)inputs;
    (void)targets;
    return 0.0f;
}

void grad_accum_grads_ready(RunContext *run, int unit)
{
    /* TODO: lesson 05's buckets, once the sum is final. */
    bucketed_ddp_grads_ready(run, unit);
}
