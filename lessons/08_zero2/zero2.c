/* Lesson 08 exercise: ZeRO stage 2 — shard the gradients too.
 *
 * After lesson 07 every rank still holds the whole gradient (4 bytes per parameter) only
 * to reduce-scatter it at the end of backward and keep 1/N of it. ZeRO-2 reduce-scatters
 * each unit as soon as backward has finished with it, into the rank's gradient shard, and
 * never keeps the whole gradient: backward writes a unit's gradients into a working buffer
 * (zero2_unit_grads, the model's unit_grads hook), and once the unit is done the backward
 * hook (zero2_grads_ready) reduce-scatters it and readies the buffer for the next unit.
 *
 * Unit 0 is special: wte is tied to the LM head, whose gradient backward computes first,
 * and to the token embedding, whose gradient it computes last, so unit 0 needs a buffer of
 * its own for the whole of backward. Every other unit can share one buffer, one after
 * another (units L+1, L, ..., 1). Those two are the only gradient buffers besides the shard:
 * the model need not allocate its own (zero2_model_storage says so, before it does).
 *
 * What you have (lesson 07's reference): reduce_scatter_unit, sharded_grad_norm,
 * update_owned, all_gather_unit; layout.h's unit_range; model->kernels->zero; clip_scale,
 * adamw_begin_step. The state's two working buffers are allocated in zero2_state.c.
 *
 * docs/08_zero2.md says what must hold when each function returns; its Hints, opened one
 * at a time after you have tried, say how. */
#include "zero2.h"

ModelStorage zero2_model_storage(void)
{
    /* TODO: which of the model's full buffers this strategy does without (model.h). */
    return (ModelStorage){0};
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    /* TODO: a buffer for backward to add this unit's gradients into, never NULL, holding
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
