/* Lesson 09 reference: ZeRO stage 3 (see lessons/09_zero3/zero3.c for the exercise). */
#include "zero3.h"

int next_unit(const GPTConfig *cfg, int unit, Pass pass)
{
    int L = cfg->num_layers;
    if (pass == PASS_FORWARD)
        return unit == L + 1 ? 0 : unit + 1;
    if (unit == 0)
        return L + 1; /* the LM head's backward comes first, then the final LayerNorm */
    return unit > 1 ? unit - 1 : -1;
}

float *zero3_acquire_params(RunContext *run, int unit, Pass pass)
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
    /* the forward's second use of unit 0 is the LM head, and backward starts with it again */
    zero->at_lm_head = pass == PASS_FORWARD && unit == 0 && zero->after_final_norm;
    if (pass == PASS_FORWARD)
        zero->after_final_norm = unit == run->model->cfg.num_layers + 1;
    int next = zero->at_lm_head ? -1 : next_unit(&run->model->cfg, unit, pass);
    if (zero->prefetch && next >= 0 && slot_holding(zero, next) < 0)
        gather_into(run, zero, reusable_slot(run, zero), next, 1);
    return s->buffer;
}

void zero3_release_params(RunContext *run, int unit, Pass pass)
{
    Zero3 *zero = run->state;
    int slot = slot_holding(zero, unit);
    if (slot < 0)
        return;
    zero->slots[slot].in_use = 0;
    int backward_starts_with_it = pass == PASS_FORWARD && unit == 0 && zero->at_lm_head;
    if (!backward_starts_with_it)
        zero->slots[slot].unit = -1; /* released: gathered again when next needed */
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
