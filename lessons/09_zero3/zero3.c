/* Lesson 09 exercise: ZeRO stage 3 — shard the parameters too.
 *
 * After lesson 08 every rank still holds every parameter (4 bytes each) although it
 * updates only its shard. Keep only the shard, and rebuild a unit when the model needs it:
 * the model asks for a unit's parameters through one accessor (the strategy's
 * acquire_params hook) and says when it is done (release_params). Per step that is an
 * all-gather of every unit in forward, another in backward, and lesson 08's reduce-scatter
 * of the gradients: 3 psi of traffic instead of 2, for 16 psi / N bytes of model state.
 * Then hide the gathers: while a unit computes, the next one can already be on its way
 * (unless --no-prefetch). The model publishes the order in which a step uses the units
 * (model.h: gpt_param_use, gpt_next_param_use).
 *
 * The rules (docs/09_zero3.md; `make grade LESSON=09` checks them): lesson 08's numbers,
 * shards and gradient rules; every unit's forward and backward compute with a buffer an
 * all-gather filled for it since the last update, that gather finished first; at most two
 * gathered units held in a step (one with --no-prefetch); with prefetch, each gather
 * started before the previous unit's compute and still arriving when it began; at every
 * step's end, parameters, gradients, m and v one padded shard per unit.
 *
 * Lessons 07 and 08's references do the shards and the gradients (zero1_parts.h,
 * zero2_parts.h: their state, steps and hooks). The state your strategy keeps, and the
 * hooks it uses, are yours to design (common/strategy.h, model.h). `make hint LESSON=09`
 * when you are stuck. */
#include "zero3.h"
#include "zero2_parts.h"

static ModelStorage zero3_model_storage(void)
{
    /* TODO */
    return (ModelStorage){0};
}

static float *zero3_acquire_params(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
    return NULL;
}

static void zero3_release_params(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

static float zero3_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}

const Strategy zero3 = {
    .name = "zero3",
    .model_storage = zero3_model_storage,
    .acquire_params = zero3_acquire_params,
    .release_params = zero3_release_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = zero3_optimizer_step,
};
