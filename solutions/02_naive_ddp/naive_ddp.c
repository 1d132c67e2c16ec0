/* Lesson 02 reference: naive data parallelism (see lessons/02_naive_ddp/naive_ddp.c). */
#include "naive_ddp.h"

#include "layout.h"

/* Every rank starts from its own seed; rank 0's parameters become everyone's. */
static void naive_ddp_start(RunContext *run)
{
    GPT *model = run->model;
    comm_check(run->comm, comm_broadcast(run->comm, model->params, model->num_params, 0));
}

/* Unit by unit, tensor by tensor: every rank walks the same layout, so the i-th all-reduce
 * of every rank is the same tensor. */
static void naive_ddp_before_step(RunContext *run)
{
    GPT *model = run->model;
    for (int unit = 0; unit < gpt_num_units(&model->cfg); unit++) {
        Range tensors[12];
        int count = unit_tensors(&model->cfg, unit, tensors);
        for (int t = 0; t < count; t++)
            comm_check(run->comm, comm_all_reduce(run->comm, model->grads + tensors[t].offset, tensors[t].count,
                                                  REDUCE_AVG));
    }
}

const Strategy naive_ddp = {
    .name = "naive_ddp",
    .start = naive_ddp_start,
    .before_step = naive_ddp_before_step,
};
