/* Lesson 02, another design: the tensors' ranges listed once, at set-up, and walked from the
 * last tensor to the first every step; the parameters broadcast unit by unit. */
#include "naive_ddp.h"

#include <stdio.h>
#include <stdlib.h>

#include "layout.h"

typedef struct {
    int count;
    Range *tensors; /* every parameter tensor, in layout order */
} TensorTable;

static int table_setup(RunContext *run, char *err, size_t err_len)
{
    const GPTConfig *cfg = &run->model->cfg;
    int units = gpt_num_units(cfg);
    TensorTable *table = calloc(1, sizeof *table);
    run->state = table;
    if (table != NULL)
        table->tensors = malloc((size_t)units * 12 * sizeof *table->tensors);
    if (table == NULL || table->tensors == NULL) {
        snprintf(err, err_len, "out of memory for the tensor table");
        return -1;
    }
    for (int unit = 0; unit < units; unit++)
        table->count += unit_tensors(cfg, unit, table->tensors + table->count);
    return 0;
}

static void table_start(RunContext *run)
{
    GPT *model = run->model;
    for (int unit = 0; unit < gpt_num_units(&model->cfg); unit++) {
        Range range = unit_range(&model->cfg, unit);
        comm_check(run->comm, comm_broadcast(run->comm, model->params + range.offset, range.count, 0));
    }
}

static void table_before_step(RunContext *run)
{
    const TensorTable *table = run->state;
    for (int t = table->count - 1; t >= 0; t--)
        comm_check(run->comm, comm_all_reduce(run->comm, run->model->grads + table->tensors[t].offset,
                                              table->tensors[t].count, REDUCE_AVG));
}

static void table_stop(RunContext *run)
{
    TensorTable *table = run->state;
    if (table == NULL)
        return;
    free(table->tensors);
    free(table);
    run->state = NULL;
}

const Strategy naive_ddp = {
    .name = "naive_ddp",
    .setup = table_setup,
    .start = table_start,
    .before_step = table_before_step,
    .stop = table_stop,
};
