/* Lesson 08 reference: ZeRO stage 2 (see lessons/08_zero2/zero2.c for the exercise). Its
 * state and hooks are also what lessons 09 and 10 build on (zero2_parts.h). */
#include "zero2.h"
#include "zero1_parts.h"
#include "zero2_parts.h"

#include <stdio.h>
#include <stdlib.h>

static ModelStorage zero2_model_storage(void)
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
static size_t zero2_grad_buffer_floats(const GPTConfig *cfg, int buffer)
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

/* Lesson 07's step, with the gradient shard already complete. */
static float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
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

/* How many buffers zero2_grad_buffer_floats asks for: it ends with a 0. */
static int count_grad_buffers(const GPTConfig *cfg)
{
    int count = 0;
    while (zero2_grad_buffer_floats(cfg, count) > 0)
        count++;
    return count;
}

/* The working buffers, zeroed: backward adds into them, and a communication buffer starts
 * as NaN (alloc.h). */
static int allocate_grad_buffers(RunContext *run, Zero2 *zero, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    const Kernels *k = run->model->kernels;
    int count = count_grad_buffers(cfg);
    zero->grad_buffers = calloc((size_t)count, sizeof *zero->grad_buffers);
    if (zero->grad_buffers == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    zero->num_grad_buffers = count;
    for (int b = 0; b < count; b++) {
        size_t bytes = zero2_grad_buffer_floats(cfg, b) * sizeof(float);
        zero->grad_buffers[b] = k->alloc(bytes, MEM_COMM);
        if (zero->grad_buffers[b] == NULL) {
            snprintf(err, err_len, "out of memory for gradient working buffer %d (%zu bytes)", b, bytes);
            return -1;
        }
        k->zero(zero->grad_buffers[b], bytes);
    }
    return 0;
}

int zero2_init(RunContext *run, Zero2 *zero, char *err, size_t err_len)
{
    if (zero1_allocate(run, &zero->zero1, MEM_GRADS, err, err_len) != 0)
        return -1;
    return allocate_grad_buffers(run, zero, err, err_len);
}

void zero2_release(RunContext *run, Zero2 *zero)
{
    zero1_free(run, &zero->zero1);
    for (int b = 0; b < zero->num_grad_buffers; b++)
        run->model->kernels->free(zero->grad_buffers[b]);
    free(zero->grad_buffers);
}

static int zero2_setup(RunContext *run, char *err, size_t err_len)
{
    Zero2 *zero = calloc(1, sizeof *zero);
    run->state = zero;
    if (zero == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return zero2_init(run, zero, err, err_len);
}

static void zero2_stop(RunContext *run)
{
    if (run->state == NULL)
        return;
    zero2_release(run, run->state);
    free(run->state);
    run->state = NULL;
}

const Strategy zero2 = {
    .name = "zero2",
    .model_storage = zero2_model_storage,
    .setup = zero2_setup,
    .start = zero1_start,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = zero2_optimizer_step,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = zero2_stop,
};
