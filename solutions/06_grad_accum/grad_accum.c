/* Lesson 06 reference: gradient accumulation (see lessons/06_grad_accum/grad_accum.c). */
#include "grad_accum.h"

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
