/* Lesson 06 reference: gradient accumulation (see lessons/06_grad_accum/grad_accum.c). */
#include "grad_accum.h"

float grad_accum_forward_backward(RunContext *run, const int *inputs, const int *targets)
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

void grad_accum_grads_ready(RunContext *run, int unit)
{
    int last_micro_batch = run->model->accumulated_passes == run->accum_steps - 1;
    if (last_micro_batch)
        bucketed_ddp_grads_ready(run, unit);
}
