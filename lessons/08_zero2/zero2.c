/* Lesson 08 exercise: ZeRO stage 2 — shard the gradients too.
 *
 * After lesson 07 every rank still holds the whole gradient (4 bytes per parameter) only
 * to reduce-scatter it at the end of backward and keep 1/N of it. ZeRO-2 reduce-scatters
 * each unit as soon as backward has finished with it, into the rank's gradient shard, and
 * never keeps the whole gradient: backward writes a unit's gradients into a working buffer
 * (zero2_unit_grads, the model's unit_grads hook), the backward hook reduce-scatters it
 * (zero2_grads_ready) and the buffer is zeroed for the next unit.
 *
 * Unit 0 is special: wte is tied to the LM head, whose gradient backward computes first,
 * and to the token embedding, whose gradient it computes last, so unit 0 needs a buffer of
 * its own for the whole of backward. Every other unit can share one buffer, one after
 * another (units L+1, L, ..., 1). Those two are the only gradient buffers besides the shard:
 * the model need not allocate its own (zero2_model_storage says so, before it does).
 *
 * What you have (lesson 07's reference): reduce_scatter_unit, sharded_grad_norm,
 * update_owned, all_gather_unit; layout.h's unit_range; model->kernels->zero; clip_scale,
 * adamw_begin_step. */
#include "zero2.h"

ModelStorage zero2_model_storage(void)
{
    /* TODO: which of the model's full buffers this strategy does without (model.h). */
    return (ModelStorage){0};
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    /* TODO: where backward writes this unit's gradients: unit 0's own buffer, or the
     * shared one. */
    (void)run;
    (void)unit;
    return NULL;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    /* TODO: reduce-scatter the unit's working buffer into this rank's gradient shard, then
     * zero the buffer for the unit that uses it next. */
    (void)run;
    (void)unit;
}

float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO: lesson 07's step without its reduce-scatter (the shard is already filled):
     * the norm from the shards, clipping, AdamW on the owned elements, all-gather. */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}
