/* Lesson 02 exercise: naive data parallelism.
 *
 * Every rank holds a whole copy of the model and trains on its own rows of each global
 * batch. Two things keep the copies identical, and the run equal to one device training on
 * the whole batch:
 *   1. the copies start equal: each rank initialised its model from its own seed
 *      (seed + rank), so broadcast rank 0's parameters to all;
 *   2. every step applies the same update: after backward each rank's gradient is the mean
 *      over its own rows only; the average over ranks is the mean over the global batch.
 *
 * What you have: run->comm and run->model (model->params, model->grads, num_params);
 * layout.h's gpt_num_units and unit_tensors give each tensor's Range in the flat buffers;
 * comm.h's collectives; comm_check(run->comm, status) ends the job on an error.
 *
 * docs/02_naive_ddp.md, "The exercise", says what the grader checks and what to measure;
 * `make hint LESSON=02` gives a hint when you are stuck. */
#include "naive_ddp.h"

#include "layout.h"

void naive_ddp_start(RunContext *run)
{
    /* TODO: every rank's parameters (all num_params of them) are rank 0's, bit for bit. */
    (void)run;
}

void naive_ddp_before_step(RunContext *run)
{
    /* TODO: every rank's model->grads holds the average over the ranks of each gradient,
     * reached the naive way: one blocking all-reduce per parameter tensor, the same calls
     * in the same order on every rank. */
    (void)run;
}
