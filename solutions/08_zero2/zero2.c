/* Lesson 08 reference: ZeRO stage 2 (see lessons/08_zero2/zero2.c for the exercise). */
#include "zero2.h"

ModelStorage zero2_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1}; /* backward writes into zero2_unit_grads' buffers */
}

static size_t largest_unit_after_0(const GPTConfig *cfg)
{
    size_t largest = 0;
    for (int unit = 1; unit < gpt_num_units(cfg); unit++)
        if (unit_range(cfg, unit).count > largest)
            largest = unit_range(cfg, unit).count;
    return largest;
}

/* Buffer 0 is unit 0's for the whole of backward: the LM head writes wte's gradient first
 * and the embedding last. Units L+1, L, ..., 1 each finish (and are reduce-scattered)
 * before the next begins, so buffer 1 serves them in turn. */
size_t zero2_grad_buffer_floats(const GPTConfig *cfg, int buffer)
{
    if (buffer == 0)
        return unit_range(cfg, 0).count;
    if (buffer == 1)
        return largest_unit_after_0(cfg);
    return 0;
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    Zero2 *zero = run->state;
    return zero->grad_buffers[unit == 0 ? 0 : 1];
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
