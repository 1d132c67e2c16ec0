/* Lesson 08: the state and its plumbing, given (the idea is in zero2.c). */
#include "zero2.h"

#include <stdio.h>
#include <stdlib.h>

static size_t largest_unit_after_0(const GPTConfig *cfg)
{
    size_t largest = 0;
    for (int unit = 1; unit < gpt_num_units(cfg); unit++)
        if (unit_range(cfg, unit).count > largest)
            largest = unit_range(cfg, unit).count;
    return largest;
}

int zero2_init(RunContext *run, Zero2 *zero, char *err, size_t err_len)
{
    GPT *model = run->model;
    const Kernels *k = model->kernels;
    if (zero1_allocate(run, &zero->zero1, MEM_GRADS, err, err_len) != 0)
        return -1;
    /* backward writes into these two working buffers (zero2_unit_grads) */
    zero->unit0_grads = k->alloc(unit_range(&model->cfg, 0).count * sizeof(float), MEM_COMM);
    zero->unit_grads = k->alloc(largest_unit_after_0(&model->cfg) * sizeof(float), MEM_COMM);
    if (zero->unit0_grads == NULL || zero->unit_grads == NULL) {
        snprintf(err, err_len, "out of memory for the gradient working buffers");
        return -1;
    }
    /* backward adds into them, and a communication buffer starts as NaN (alloc.h) */
    k->zero(zero->unit0_grads, unit_range(&model->cfg, 0).count * sizeof(float));
    k->zero(zero->unit_grads, largest_unit_after_0(&model->cfg) * sizeof(float));
    return 0;
}

void zero2_release(RunContext *run, Zero2 *zero)
{
    zero1_free(run, &zero->zero1);
    run->model->kernels->free(zero->unit0_grads);
    run->model->kernels->free(zero->unit_grads);
}

int zero2_setup(RunContext *run, char *err, size_t err_len)
{
    Zero2 *zero = calloc(1, sizeof *zero);
    run->state = zero;
    if (zero == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    return zero2_init(run, zero, err, err_len);
}

void zero2_stop(RunContext *run)
{
    if (run->state == NULL)
        return;
    zero2_release(run, run->state);
    free(run->state);
    run->state = NULL;
}
