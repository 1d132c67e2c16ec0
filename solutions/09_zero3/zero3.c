/* Lesson 09 reference: ZeRO stage 3 (see lessons/09_zero3/zero3.c for the exercise). */
#include "zero3.h"

ModelStorage zero3_model_storage(void)
{
    /* only shards are kept: the gradients as in lesson 08, and the parameters too, once
     * zero3_start has cut this rank's shard from the broadcast model */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

/* Prefetch needs the unit in use and the next one arriving. Without it one is enough: the
 * unit gathered for the LM head is the first backward uses, so it stays put between them. */
int zero3_gather_slots(int prefetch)
{
    return prefetch ? 2 : 1;
}

/* The unit the model uses after the use in progress, in the order it publishes; -1 when
 * the step uses no more. */
static int next_unit(const GPT *model)
{
    UnitUse next;
    return gpt_next_param_use(model, &next) ? next.unit : -1;
}

float *zero3_acquire_params(RunContext *run, int unit)
{
    Zero3 *zero = run->state;
    int slot = slot_holding(zero, unit);
    if (slot < 0) {
        slot = reusable_slot(run, zero);
        gather_into(run, zero, slot, unit, 0);
    }
    GatherSlot *s = &zero->slots[slot];
    comm_check(run->comm, comm_wait(&s->gather)); /* a prefetch may still be arriving */
    s->in_use = 1;
    s->last_used = ++zero->uses;
    int next = next_unit(run->model);
    if (zero->prefetch && next >= 0 && slot_holding(zero, next) < 0)
        gather_into(run, zero, reusable_slot(run, zero), next, 1);
    return s->buffer;
}

void zero3_release_params(RunContext *run, int unit)
{
    Zero3 *zero = run->state;
    int slot = slot_holding(zero, unit);
    if (slot < 0)
        return;
    zero->slots[slot].in_use = 0;
    /* the LM head's unit 0 ends forward and begins backward: keep it; the rest are
     * gathered again when next needed */
    if (next_unit(run->model) != unit)
        zero->slots[slot].unit = -1;
}

float zero3_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Zero3 *zero = run->state;
    Zero1 *shards = &zero->zero2.zero1;
    float norm = sharded_grad_norm(run, shards);
    /* the padding is zero in parameters and gradients alike, and AdamW keeps it zero */
    adamw_begin_step(&shards->opt);
    adamw_update_range(&shards->opt, 0, zero->param_shard, shards->grad_shard, shards->plan.shard_total, hyper,
                       clip_scale(norm, max_norm));
    forget_gathered(run, zero);
    return norm;
}
