/* Lesson 09, another design: the reference's slots, but every training step starts from
 * nothing gathered. The LM head's unit 0, kept at the end of a validation pass (the model's next use
 * of it, by the step's order, is backward's), is gathered again for the next step's
 * embedding: one unit more on the wire in the step after each validation, and as right. */
#include "zero3.h"
#include "zero2_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A working buffer that holds one gathered unit (padded), or is being filled with one. */
typedef struct {
    float *buffer;       /* world * largest_shard floats */
    int unit;            /* the unit it holds or is receiving; -1 = none */
    int in_use;          /* acquired and not yet released: must not be reused */
    long last_used;      /* for choosing which slot to reuse */
    CommRequest gather;  /* the all-gather filling it, while in flight */
} GatherSlot;

typedef struct {
    Zero2 zero2;                  /* gradient and optimizer shards (lessons 07 and 08) */
    float *param_shard;           /* this rank's shard of every unit: the only parameters kept */
    GatherSlot *slots;            /* zero3_gather_slots of them */
    int num_slots;
    long uses;                    /* acquisitions so far, for last_used */
    int prefetch;
} Zero3;

/* Prefetch needs the unit in use and the next one arriving. Without it one is enough: the
 * unit gathered for the LM head is the first backward uses, so it stays put between them. */
static int zero3_gather_slots(int prefetch)
{
    return prefetch ? 2 : 1;
}

/* The state and its plumbing: the slots and the gathers into them, the shard kept at the
 * start, the whole model for the replica check. */
static int slot_holding(const Zero3 *zero, int unit)
{
    for (int s = 0; s < zero->num_slots; s++)
        if (zero->slots[s].unit == unit)
            return s;
    return -1;
}

/* The least recently used slot that nobody is using; an all-gather still filling it is
 * finished first. */
static int reusable_slot(RunContext *run, Zero3 *zero)
{
    int best = -1;
    for (int s = 0; s < zero->num_slots; s++)
        if (!zero->slots[s].in_use && (best < 0 || zero->slots[s].last_used < zero->slots[best].last_used))
            best = s;
    if (best < 0) { /* a unit never released: say so, rather than write out of bounds */
        fprintf(stderr, "zero3: all %d gather slots are in use and another unit is to be gathered: a unit "
                "is never released\n", zero->num_slots);
        abort();
    }
    comm_check(run->comm, comm_wait(&zero->slots[best].gather));
    return best;
}

static void gather_into(RunContext *run, Zero3 *zero, int slot, int unit, int nonblocking)
{
    const ShardPlan *plan = &zero->zero2.zero1.plan;
    GatherSlot *s = &zero->slots[slot];
    const float *own_shard = zero->param_shard + plan->shard_offset[unit];
    s->unit = unit;
    if (nonblocking)
        comm_check(run->comm, comm_all_gather_start(run->comm, own_shard, s->buffer, plan->shard_count[unit], &s->gather));
    else
        comm_check(run->comm, comm_all_gather(run->comm, own_shard, s->buffer, plan->shard_count[unit]));
}

/* After the update every gathered copy is stale. */
static void forget_gathered(RunContext *run, Zero3 *zero)
{
    for (int s = 0; s < zero->num_slots; s++) {
        comm_check(run->comm, comm_wait(&zero->slots[s].gather));
        zero->slots[s].unit = -1;
    }
}

static void zero3_gather_params(RunContext *run, float *host)
{
    Zero3 *zero = run->state;
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        int slot = reusable_slot(run, zero);
        gather_into(run, zero, slot, unit, 0);
        Range range = unit_range(cfg, unit);
        run->model->kernels->to_host(host + range.offset, zero->slots[slot].buffer, range.count * sizeof(float));
    }
    forget_gathered(run, zero);
}

/* This rank's pieces of the (broadcast) full parameters into its shard; the model drops its
 * full buffer after start (zero3_model_storage). */
static void keep_own_shard(RunContext *run, Zero3 *zero)
{
    GPT *model = run->model;
    const ShardPlan *plan = &zero->zero2.zero1.plan;
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t first = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(zero->param_shard + plan->shard_offset[unit], model->params + first,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
}

/* The gather slots zero3_gather_slots asks for, each one padded unit. */
static int allocate_slots(RunContext *run, Zero3 *zero, char *err, size_t err_len)
{
    const ShardPlan *plan = &zero->zero2.zero1.plan;
    int count = zero3_gather_slots(zero->prefetch);
    zero->slots = calloc((size_t)count, sizeof *zero->slots);
    if (zero->slots == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    zero->num_slots = count;
    for (int s = 0; s < count; s++) {
        zero->slots[s].buffer = run->model->kernels->alloc(plan->largest_shard * plan->world * sizeof(float), MEM_COMM);
        zero->slots[s].unit = -1;
        if (zero->slots[s].buffer == NULL) {
            snprintf(err, err_len, "out of memory for the gathered units");
            return -1;
        }
    }
    return 0;
}

static int zero3_setup(RunContext *run, char *err, size_t err_len)
{
    const Zero3Options *options = run->options;
    Zero3 *zero = calloc(1, sizeof *zero);
    run->state = zero;
    if (zero == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (zero2_init(run, &zero->zero2, err, err_len) != 0)
        return -1;
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = &zero->zero2.zero1.plan;
    k->free(zero->zero2.zero1.piece); /* lesson 07's all-gather source: the shard itself is, here */
    zero->zero2.zero1.piece = NULL;
    zero->prefetch = !options->no_prefetch;
    zero->param_shard = k->alloc(plan->shard_total * sizeof(float), MEM_PARAMS);
    if (zero->param_shard == NULL) {
        snprintf(err, err_len, "out of memory for the parameter shard");
        return -1;
    }
    return allocate_slots(run, zero, err, err_len);
}

static void zero3_start(RunContext *run)
{
    zero1_start(run);
    keep_own_shard(run, run->state);
}

static void zero3_stop(RunContext *run)
{
    Zero3 *zero = run->state;
    if (zero == NULL)
        return;
    const Kernels *k = run->model->kernels;
    for (int s = 0; s < zero->num_slots; s++) {
        comm_wait(&zero->slots[s].gather);
        k->free(zero->slots[s].buffer);
    }
    free(zero->slots);
    k->free(zero->param_shard);
    zero2_release(run, &zero->zero2);
    free(zero);
    run->state = NULL;
}

static ModelStorage zero3_model_storage(void)
{
    /* only shards are kept: the gradients as in lesson 08, and the parameters too, once
     * zero3_start has cut this rank's shard from the broadcast model */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}


/* The unit the model uses after the use in progress, in the order it publishes; -1 when
 * the step uses no more. */
static int next_unit(const GPT *model)
{
    UnitUse next;
    return gpt_next_param_use(model, &next) ? next.unit : -1;
}

static float *zero3_acquire_params(RunContext *run, int unit)
{
    Zero3 *zero = run->state;
    /* a training step's first forward begins: whatever a validation pass kept goes */
    if (run->model->param_use == 0 && run->model->accumulated_passes == 0)
        forget_gathered(run, zero);
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

static void zero3_release_params(RunContext *run, int unit)
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

static float zero3_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
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

const Strategy zero3 = {
    .name = "zero3",
    .model_storage = zero3_model_storage,
    .setup = zero3_setup,
    .start = zero3_start,
    .acquire_params = zero3_acquire_params,
    .release_params = zero3_release_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = zero3_optimizer_step,
    .gather_params = zero3_gather_params,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = zero3_stop,
};
