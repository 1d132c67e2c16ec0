/* Lesson 06 reference: gradient accumulation (see lessons/06_grad_accum/grad_accum.c). */
#include "grad_accum.h"

int grad_accum_start(RunContext *run, char *err, size_t err_len)
{
    run->model->loss_scale = 1.0f / (float)run->accum_steps;
    return bucketed_ddp_start(run, err, err_len);
}

void grad_accum_grads_ready(RunContext *run, int unit)
{
    int last_micro_batch = run->micro_step == run->accum_steps - 1;
    if (last_micro_batch)
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
