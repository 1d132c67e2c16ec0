/* Lesson 06 reference: gradient accumulation (see lessons/06_grad_accum/grad_accum.c). */
#include "grad_accum.h"
#include "bucketed_ddp_parts.h"

/* Each micro-batch's backward differentiates 1/K of its mean loss, so the K gradients add
 * up to the gradient of the mean over the whole share. */
static float grad_accum_forward_backward(RunContext *run, const int *inputs, const int *targets)
{
    GPT *model = run->model;
    size_t tokens = (size_t)model->batch * model->seq_len;
    model->loss_scale = 1.0f / (float)run->accum_steps;
    double loss = 0.0;
    for (int micro = 0; micro < run->accum_steps; micro++) {
        loss += gpt_forward(model, inputs + micro * tokens, targets + micro * tokens);
        gpt_backward(model);
    }
    return (float)(loss / run->accum_steps);
}

/* No sync: the sum is final only in the last micro-batch's backward. */
static void grad_accum_grads_ready(RunContext *run, int unit)
{
    int last_micro_batch = run->model->accumulated_passes == run->accum_steps - 1;
    if (last_micro_batch)
        bucketed_ddp_grads_ready(run, unit);
}

const Strategy grad_accum = {
    .name = "grad_accum",
    .setup = bucketed_ddp_setup, /* lesson 05's plan, broadcast, waits and clean-up, as they are */
    .start = bucketed_ddp_start,
    .forward_backward = grad_accum_forward_backward,
    .grads_ready = grad_accum_grads_ready,
    .before_step = bucketed_ddp_before_step,
    .stop = bucketed_ddp_stop,
};
