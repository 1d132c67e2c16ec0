/* Lesson 02, another design: each tensor summed over the ranks, then divided by the number
 * of ranks here, element by element (host memory: the CPU build); the parameters broadcast
 * tensor by tensor. */
#include "naive_ddp.h"

#include "layout.h"

/* Calls fn on every parameter tensor of buffer, in layout order. */
static void each_tensor(RunContext *run, float *buffer, void (*fn)(RunContext *run, float *tensor, size_t count))
{
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        Range tensors[12];
        int count = unit_tensors(cfg, unit, tensors);
        for (int t = 0; t < count; t++)
            fn(run, buffer + tensors[t].offset, tensors[t].count);
    }
}

static void broadcast_tensor(RunContext *run, float *tensor, size_t count)
{
    comm_check(run->comm, comm_broadcast(run->comm, tensor, count, 0));
}

static void average_tensor(RunContext *run, float *tensor, size_t count)
{
    comm_check(run->comm, comm_all_reduce(run->comm, tensor, count, REDUCE_SUM));
    float ranks = (float)comm_size(run->comm);
    for (size_t i = 0; i < count; i++)
        tensor[i] /= ranks;
}

static void naive_start(RunContext *run)
{
    each_tensor(run, run->model->params, broadcast_tensor);
}

static void naive_before_step(RunContext *run)
{
    each_tensor(run, run->model->grads, average_tensor);
}

const Strategy naive_ddp = {
    .name = "naive_ddp",
    .start = naive_start,
    .before_step = naive_before_step,
};
