/* Lesson 09 exercise: ZeRO stage 3 — shard the parameters too.
 *
 * After lesson 08 every rank still holds every parameter (4 bytes each) although it
 * updates only its shard. ZeRO-3 keeps only the shard (param_shard, laid out like the
 * gradient shard) and rebuilds a unit when the model needs it: the model asks for a unit's
 * parameters through one accessor (zero3_acquire_params) and says when it is done
 * (zero3_release_params). Acquire all-gathers the unit from every rank's shard into a
 * working buffer (a GatherSlot: you decide how many there are, zero3_gather_slots);
 * release lets the buffer go, so the unit is gathered again for its backward. Per step
 * that is an all-gather of every unit in forward, another in backward, and lesson 08's
 * reduce-scatter of the gradients: 3 psi instead of DDP's 2 psi, for 16 psi / N bytes of
 * model state per rank.
 *
 * Prefetch: while a unit computes, the next unit's all-gather can already be in flight
 * (comm_all_gather_start into another slot); acquire must then wait for it before handing
 * the buffer out (comm_wait). Which unit is next? The model publishes the order in which a
 * step uses the units (model.h: gpt_param_use, gpt_next_param_use): forward walks 0, 1,
 * ..., L, L+1 and then 0 again (the LM head shares wte); backward starts with the LM head
 * (unit 0 again, so it need not be dropped at the end of forward), then L+1, L, ..., 1 (the
 * embedding's backward needs no parameters).
 *
 * The optimizer step is AdamW on the shard itself; afterwards every gathered copy is stale.
 *
 * Given in zero3_state.c: slot_holding, reusable_slot (the least recently used free slot, its
 * gather finished), gather_into (blocking or not) and forget_gathered; lesson 07's
 * sharded_grad_norm; lesson 08's gradient hooks (main.c uses them as they are). */
#include "zero3.h"

ModelStorage zero3_model_storage(void)
{
    /* TODO: which of the model's full buffers this strategy does without (model.h). */
    return (ModelStorage){0};
}

int zero3_gather_slots(int prefetch)
{
    /* TODO: how many gathered units this rank holds at once, with prefetch and without: as
     * few as the model's order of use allows. Each slot is one padded unit, allocated for
     * you (zero->slots[0], [1], ...). */
    (void)prefetch;
    return 0;
}

float *zero3_acquire_params(RunContext *run, int unit)
{
    /* TODO: the buffer holding the unit's whole parameters, ready to compute with; with
     * zero->prefetch, the next unit on its way. */
    (void)run;
    (void)unit;
    return NULL;
}

void zero3_release_params(RunContext *run, int unit)
{
    /* TODO: the model is done with the unit for now. */
    (void)run;
    (void)unit;
}

float zero3_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO: the norm from the gradient shards; AdamW over the whole parameter shard
     * (padding included: it is zero in both and stays zero); forget the gathered units. */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}
