/* Lesson 08 exercise: ZeRO stage 2 — shard the gradients too.
 *
 * After lesson 07 every rank still holds the whole gradient (4 bytes per parameter) only to
 * reduce-scatter it at the end of backward and keep 1/N of it. Never hold the whole
 * gradient, in one buffer or in many: let backward write each unit's gradients somewhere
 * small (the model's unit_grads hook), and move them to this rank's gradient shard as soon
 * as backward is done with the unit (the grads_ready hook).
 *
 * The rules (docs/08_zero2.md; `make grade LESSON=08` checks them): lesson 07's numbers and
 * shards; each unit's reduce-scatter between its grads_ready and the next unit's backward;
 * at every step's end, parameters whole and gradients, m and v one padded shard per unit;
 * no buffer of the whole gradient's size live during a step, and the buffers backward
 * writes gradients into smaller than the whole gradient together. The model allocates no
 * gradient buffer of its own once the strategy's model_storage says so.
 *
 * Lesson 07's reference does the shards (zero1_parts.h: its state, Zero1, and the steps of
 * its optimizer step). The state your strategy keeps, and the hooks it uses, are yours to
 * design (common/strategy.h, model.h). `make hint LESSON=08` when you are stuck. */
#include "zero2.h"
#include "zero1_parts.h"

static ModelStorage zero2_model_storage(void)
{
    /* TODO */
    return (ModelStorage){0};
}

float *zero2_unit_grads(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
    return NULL;
}

void zero2_grads_ready(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

static float zero2_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}

const Strategy zero2 = {
    .name = "zero2",
    .model_storage = zero2_model_storage,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = zero2_optimizer_step,
};
