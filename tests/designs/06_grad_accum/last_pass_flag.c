/* Lesson 06, another design: forward_backward raises a flag of this file before the last
 * micro-batch's backward, and the hook passes units on to lesson 05 only while it is up;
 * each micro-batch's gradients are scaled through the loss, its loss summed in float. */
#include "grad_accum.h"
#include "bucketed_ddp_parts.h"

static int syncing; /* up during the step's last backward */

static float flag_forward_backward(RunContext *run, const int *inputs, const int *targets)
{
    GPT *model = run->model;
    size_t tokens = (size_t)model->batch * model->seq_len;
    int k = run->accum_steps;
    model->loss_scale = 1.0f / (float)k;
    float loss_sum = 0.0f;
    for (int micro = 0; micro < k; micro++) {
        loss_sum += gpt_forward(model, inputs + micro * tokens, targets + micro * tokens);
        syncing = micro == k - 1;
        gpt_backward(model);
    }
    syncing = 0;
    return loss_sum / (float)k;
}

static void flag_grads_ready(RunContext *run, int unit)
{
    if (syncing)
        bucketed_ddp_grads_ready(run, unit);
}

const Strategy grad_accum = {
    .name = "grad_accum",
    .setup = bucketed_ddp_setup,
    .start = bucketed_ddp_start,
    .forward_backward = flag_forward_backward,
    .grads_ready = flag_grads_ready,
    .before_step = bucketed_ddp_before_step,
    .stop = bucketed_ddp_stop,
};
