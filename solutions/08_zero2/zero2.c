/* Lesson 08 reference: ZeRO stage 2 (see lessons/08_zero2/zero2.c for the exercise). */
#include "zero2.h"

ModelStorage zero2_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1}; /* backward writes into zero2_unit_grads' buffers */
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    Zero2 *zero = run->state;
    return unit == 0 ? zero->unit0_grads : zero->unit_grads;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    Zero2 *zero = run->state;
    float *grads = zero2_unit_grads(run, unit);
    reduce_scatter_unit(run, &zero->zero1, unit, grads);
    run->model->kernels->zero(grads, unit_range(&run->model->cfg, unit).count * sizeof(float));
}

float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Zero2 *zero = run->state;
    GPT *model = run->model;
    float norm = sharded_grad_norm(run, &zero->zero1);
    float scale = clip_scale(norm, max_norm);
    adamw_begin_step(&zero->zero1.opt);
    for (int unit = 0; unit < zero->zero1.plan.num_units; unit++)
        update_owned(run, &zero->zero1, unit, model->params + unit_range(&model->cfg, unit).offset, hyper, scale);
    for (int unit = 0; unit < zero->zero1.plan.num_units; unit++)
        all_gather_unit(run, &zero->zero1, unit, model->params + unit_range(&model->cfg, unit).offset);
    return norm;
}
