/* Lesson 08 exercise: ZeRO stage 2 — shard the gradients too.
 *
 * After lesson 07 every rank still holds the whole gradient (4 bytes per parameter) only
 * to reduce-scatter it at the end of backward and keep 1/N of it. ZeRO-2 never holds the
 * whole gradient, in one buffer or in many: backward writes each unit's gradients into a
 * working buffer of yours (zero2_unit_grads, the model's unit_grads hook), and once
 * backward is done with the unit (zero2_grads_ready, the backward hook) its gradients go
 * to this rank's gradient shard and the buffer is free again. You decide which buffers
 * exist (zero2_grad_buffer_floats) and which unit writes into which: as few bytes as the
 * order of backward allows (docs/08_zero2.md gives that order). The model allocates no
 * gradient buffer of its own once zero2_model_storage says so, before it allocates.
 *
 * What you have (lesson 07's reference): reduce_scatter_unit, sharded_grad_norm,
 * update_owned, all_gather_unit; layout.h's unit_range and gpt_num_units;
 * model->kernels->zero; clip_scale, adamw_begin_step. zero2_state.c allocates your
 * buffers.
 *
 * docs/08_zero2.md says what must hold when each function returns; `make hint LESSON=08`
 * gives a hint when you are stuck. */
#include "zero2.h"

ModelStorage zero2_model_storage(void)
{
    /* TODO: which of the model's full buffers this strategy does without (model.h). */
    return (ModelStorage){0};
}

size_t zero2_grad_buffer_floats(const GPTConfig *cfg, int buffer)
{
    /* TODO: the gradient working buffers this rank holds, as few bytes as backward needs:
     * how many floats buffer `buffer` (0, 1, ...) holds, 0 when there are no more. They
     * are allocated for you, zeroed, as zero->grad_buffers[buffer]. */
    (void)cfg;
    (void)buffer;
    return 0;
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    /* TODO: one of your buffers for backward to add this unit's gradients into, never NULL, holding
     * nothing but this unit's gradients until its grads_ready (unit 0 is written first
     * and last in backward). */
    (void)run;
    (void)unit;
    return NULL;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    /* TODO: afterwards the unit's gradients, averaged over the ranks, are in this rank's
     * gradient shard, and the buffer the unit used is ready for whichever unit writes into
     * it next (backward adds). */
    (void)run;
    (void)unit;
}

float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO: lesson 07's step, with the gradient shard already complete: return the norm
     * of the whole gradient (before clipping) and leave every rank with the whole updated
     * model. */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}
