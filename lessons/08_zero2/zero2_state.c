/* Lesson 08: the state and its plumbing, given (the idea is in zero2.c). */
#include "zero2.h"

#include <stdio.h>
#include <stdlib.h>

/* How many buffers zero2_grad_buffer_floats asks for: at least one (backward writes
 * somewhere), at most one per unit (a unit writes into one buffer), else -1 with a reason. */
static int count_grad_buffers(const GPTConfig *cfg, char *err, size_t err_len)
{
    int most = gpt_num_units(cfg), count = 0;
    while (count <= most && zero2_grad_buffer_floats(cfg, count) > 0)
        count++;
    if (count == 0)
        snprintf(err, err_len, "zero2_grad_buffer_floats asks for no buffer: backward needs one to write "
                 "gradients into");
    else if (count > most)
        snprintf(err, err_len, "zero2_grad_buffer_floats asks for more than %d buffers, one per unit: backward "
                 "writes each unit into one", most);
    return count == 0 || count > most ? -1 : count;
}

/* The working buffers, zeroed: backward adds into them, and a communication buffer starts
 * as NaN (alloc.h). */
static int allocate_grad_buffers(RunContext *run, Zero2 *zero, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    const Kernels *k = run->model->kernels;
    int count = count_grad_buffers(cfg, err, err_len);
    if (count < 0)
        return -1;
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
