/* Lesson 10, another design: on ZeRO-1 and 2 unit 0 (embedding, tied LM head) has an fp32 slot of
 * its own, widened once a step, beside a slot the other units share (ZeRO-3 uses that one alone);
 * no piece buffers: the shared slot widens gradient shards, a spent gradient shard sends the master. */
#include "mixed.h"
#include "zero2_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOT_UNIT_0, SLOT_SHARED, NUM_SLOTS };

/* A unit widened to fp32 for the model, valid until the parameters change. */
typedef struct {
    float *values;
    int unit; /* the unit it holds; -1: nothing that can be used */
} Slot;

typedef struct {
    Zero2 zero2;         /* first: lesson 08's unit_grads hook reads run->state as a Zero2 */
    int stage;           /* --stage: 1 and 2 keep the 16-bit parameters whole, 3 a shard */
    Format16 format;     /* bf16, or fp16 with --fp16 */
    int scale_window;    /* fp16: good steps in a row before the loss scale doubles */
    bits16 *params16;    /* ZeRO-1, 2: num_params, laid out as the model's units; ZeRO-3:
                          * shard_total, laid out as the master */
    float *master;       /* shard_total: this rank's fp32 shards, what AdamW updates */
    bits16 *grads16;     /* ZeRO-1: num_params, the whole 16-bit gradient until the step; else NULL */
    bits16 *grad_shard16; /* shard_total: the averaged 16-bit gradient shards; once a unit is
                           * updated, its part carries the rounded master to the all-gather */
    bits16 *wire16;      /* world * largest_shard: a padded unit in 16 bits, one collective at a time */
    Slot slots[NUM_SLOTS]; /* unit 0's own (its count of floats; ZeRO-1, 2 only), and the shared
                            * one (lesson 07's padded fp32 buffer, which its checkpoint gathers
                            * write too) */
} TwoSlots;

static const ShardPlan *plan_of(const TwoSlots *s)
{
    return &s->zero2.zero1.plan;
}

/* Where the unit is widened. ZeRO-3's rule allows one buffer of gathered parameters (the unit
 * in use), so there every unit shares a slot: unit 0 is gathered again for the LM head and
 * kept from there into backward, the gathers the bytes graded count on. */
static Slot *slot_of(TwoSlots *s, int unit)
{
    return &s->slots[unit == 0 && s->stage < 3 ? SLOT_UNIT_0 : SLOT_SHARED];
}

static void forget_slots(TwoSlots *s)
{
    for (int slot = 0; slot < NUM_SLOTS; slot++)
        s->slots[slot].unit = -1;
}

/* Lesson 07's fp32 gradient shard and piece give way to the 16-bit shard and the shared slot;
 * its padded buffer stays, as the shared slot. */
static int allocate_two_slots(RunContext *run, TwoSlots *s, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    Zero1 *zero1 = &s->zero2.zero1;
    size_t shards = zero1->plan.shard_total, whole = run->model->num_params;
    k->free(zero1->grad_shard);
    k->free(zero1->piece);
    zero1->grad_shard = NULL;
    zero1->piece = NULL;
    s->params16 = k->alloc((s->stage < 3 ? whole : shards) * sizeof(bits16), MEM_PARAMS);
    s->master = k->alloc(shards * sizeof(float), MEM_MASTER);
    /* on ZeRO-1 the gradients kept are the whole ones; the shard is the step's working copy */
    s->grad_shard16 = k->alloc(shards * sizeof(bits16), s->stage == 1 ? MEM_COMM : MEM_GRADS);
    if (s->stage == 1)
        s->grads16 = k->alloc(whole * sizeof(bits16), MEM_GRADS);
    s->wire16 = k->alloc(zero1->plan.largest_shard * (size_t)zero1->plan.world * sizeof(bits16), MEM_COMM);
    if (s->stage < 3)
        s->slots[SLOT_UNIT_0].values = k->alloc(unit_range(&run->model->cfg, 0).count * sizeof(float), MEM_COMM);
    s->slots[SLOT_SHARED].values = zero1->padded;
    if (s->params16 == NULL || s->master == NULL || s->grad_shard16 == NULL || (s->stage == 1 && s->grads16 == NULL) ||
        s->wire16 == NULL || (s->stage < 3 && s->slots[SLOT_UNIT_0].values == NULL)) {
        snprintf(err, err_len, "out of memory for the 16-bit parameters or gradients, the fp32 master or the slots");
        return -1;
    }
    return 0;
}

static int two_slots_setup(RunContext *run, char *err, size_t err_len)
{
    const MixedOptions *options = run->options;
    TwoSlots *s = calloc(1, sizeof *s);
    run->state = s;
    if (s == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    s->stage = options->stage;
    s->format = options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    s->scale_window = options->scale_window;
    forget_slots(s);
    if (zero2_init(run, &s->zero2, err, err_len) != 0)
        return -1;
    return allocate_two_slots(run, s, err, err_len);
}

/* The unit's own 16-bit parameters: where it lies in the model, or its shard on ZeRO-3. */
static bits16 *own_params16(const RunContext *run, const TwoSlots *s, int unit)
{
    if (s->stage == 3)
        return s->params16 + plan_of(s)->shard_offset[unit];
    return s->params16 + unit_range(&run->model->cfg, unit).offset;
}

/* After lesson 07's broadcast: the master shards cut from the fp32 parameters, and the 16-bit
 * parameters rounded from what this stage keeps of them (the padding is zero everywhere). */
static void two_slots_start(RunContext *run)
{
    TwoSlots *s = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = plan_of(s);
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t mine = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(s->master + plan->shard_offset[unit], model->params + mine,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
    const float *rounded_from = s->stage < 3 ? model->params : s->master;
    model->kernels->round_to_16(s->format, s->params16, rounded_from, s->stage < 3 ? model->num_params
                                                                                   : plan->shard_total);
    model->loss_scale = s->format == FORMAT_FP16 ? FIRST_LOSS_SCALE : 1.0f;
}

/* Widens the unit into its slot; on ZeRO-3 after gathering its 16-bit shards. */
static void fill_slot(RunContext *run, TwoSlots *s, Slot *slot, int unit)
{
    const bits16 *source = own_params16(run, s, unit);
    if (s->stage == 3) {
        comm_check(run->comm, comm_all_gather_16(run->comm, s->format, source, s->wire16,
                                                 plan_of(s)->shard_count[unit]));
        source = s->wire16;
    }
    run->model->kernels->widen_16(s->format, slot->values, source, unit_range(&run->model->cfg, unit).count);
    slot->unit = unit;
}

static float *two_slots_acquire_params(RunContext *run, int unit)
{
    TwoSlots *s = run->state;
    Slot *slot = slot_of(s, unit);
    if (slot->unit != unit)
        fill_slot(run, s, slot, unit);
    return slot->values;
}

/* The unit's 16-bit gradients at the start of wire16: padded with zeros (the buffer starts as
 * NaN) and reduce-scattered, averaged in 16 bits, into the unit's place in the shard. */
static void reduce_scatter_wire(RunContext *run, TwoSlots *s, int unit)
{
    const ShardPlan *plan = plan_of(s);
    size_t count = unit_range(&run->model->cfg, unit).count, shard = plan->shard_count[unit];
    run->model->kernels->zero(s->wire16 + count, (shard * (size_t)plan->world - count) * sizeof(bits16));
    comm_check(run->comm, comm_reduce_scatter_16(run->comm, s->format, s->wire16,
                                                 s->grad_shard16 + plan->shard_offset[unit], shard, REDUCE_AVG));
}

static void two_slots_grads_ready(RunContext *run, int unit)
{
    TwoSlots *s = run->state;
    const Kernels *k = run->model->kernels;
    Range range = unit_range(&run->model->cfg, unit);
    float *fp32_grads = zero2_unit_grads(run, unit);
    /* ZeRO-1 keeps the unit in the whole 16-bit gradient; the others send it now */
    k->round_to_16(s->format, s->stage == 1 ? s->grads16 + range.offset : s->wire16, fp32_grads, range.count);
    if (s->stage > 1)
        reduce_scatter_wire(run, s, unit);
    k->zero(fp32_grads, range.count * sizeof(float)); /* backward adds into it next time */
}

/* Every gradient shard widened into the shared slot, unit by unit, squared and summed, then
 * summed over the ranks. */
static float shard_norm(RunContext *run, TwoSlots *s)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = plan_of(s);
    float *widened = s->slots[SLOT_SHARED].values;
    double squares = 0.0;
    for (int unit = 0; unit < plan->num_units; unit++) {
        k->widen_16(s->format, widened, s->grad_shard16 + plan->shard_offset[unit], plan->shard_count[unit]);
        squares += k->sum_of_squares(widened, plan->shard_count[unit]);
    }
    comm_check(run->comm, comm_sum_double(run->comm, &squares));
    return (float)sqrt(squares);
}

/* AdamW on the unit's master shard with its gradient shard widened in the shared slot; then the
 * new 16-bit parameters: rounded into the shard (ZeRO-3), or rounded over the spent gradient
 * shard, all-gathered from there and copied into the whole unit. */
static void update_unit(RunContext *run, TwoSlots *s, int unit, AdamWHyper hyper, float factor)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = plan_of(s);
    size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
    float *widened = s->slots[SLOT_SHARED].values;
    bits16 *grad = s->grad_shard16 + offset;
    k->widen_16(s->format, widened, grad, shard);
    adamw_update_range(&s->zero2.zero1.opt, offset, s->master + offset, widened, shard, hyper, factor);
    if (s->stage == 3) {
        k->round_to_16(s->format, own_params16(run, s, unit), s->master + offset, shard);
        return;
    }
    k->round_to_16(s->format, grad, s->master + offset, shard);
    comm_check(run->comm, comm_all_gather_16(run->comm, s->format, grad, s->wire16, shard));
    k->copy(own_params16(run, s, unit), s->wire16, unit_range(&run->model->cfg, unit).count * sizeof(bits16));
}

/* fp16's dynamic loss scale after a step with this true gradient norm: 0 for a step to skip
 * (an overflow halves the scale and restarts the count), 1 for a good one (scale_window in a
 * row double the scale). bf16 has no scale to keep. */
static int scale_allows_step(RunContext *run, const TwoSlots *s, float norm)
{
    if (s->format == FORMAT_BF16)
        return 1;
    int good = isfinite(norm);
    run->model->good_steps = good ? run->model->good_steps + 1 : 0;
    if (!good) {
        run->model->loss_scale /= 2.0f;
        run->skipped_step = 1;
    } else if (run->model->good_steps == s->scale_window) {
        run->model->loss_scale *= 2.0f;
        run->model->good_steps = 0;
    }
    return good;
}

static float two_slots_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    TwoSlots *s = run->state;
    const int units = plan_of(s)->num_units;
    for (int unit = 0; s->stage == 1 && unit < units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        run->model->kernels->copy(s->wire16, s->grads16 + range.offset, range.count * sizeof(bits16));
        reduce_scatter_wire(run, s, unit);
    }
    s->slots[SLOT_SHARED].unit = -1; /* it widens gradient shards from here on */
    float loss_scale = run->model->loss_scale; /* a power of two: dividing it out is exact */
    float norm = shard_norm(run, s) / loss_scale;
    if (!scale_allows_step(run, s, norm))
        return norm; /* nothing changed: unit 0's slot still holds its parameters */
    float factor = clip_scale(norm, max_norm) / loss_scale;
    adamw_begin_step(&s->zero2.zero1.opt);
    for (int unit = 0; unit < units; unit++)
        update_unit(run, s, unit, hyper, factor);
    forget_slots(s);
    return norm;
}

/* The fp32 master, whole, through the shared slot; a checkpoint's optimizer gather writes that
 * buffer next, so it holds no unit afterwards. Unit 0's slot is untouched and still valid. */
static void two_slots_gather_params(RunContext *run, float *host)
{
    TwoSlots *s = run->state;
    const ShardPlan *plan = plan_of(s);
    float *through = s->slots[SLOT_SHARED].values;
    for (int unit = 0; unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, s->master + plan->shard_offset[unit], through,
                                              plan->shard_count[unit]));
        run->model->kernels->to_host(host + range.offset, through, range.count * sizeof(float));
    }
    s->slots[SLOT_SHARED].unit = -1;
}

static void two_slots_stop(RunContext *run)
{
    TwoSlots *s = run->state;
    if (s == NULL)
        return;
    const Kernels *k = run->model->kernels;
    k->free(s->params16);
    k->free(s->master);
    k->free(s->grads16);
    k->free(s->grad_shard16);
    k->free(s->wire16);
    k->free(s->slots[SLOT_UNIT_0].values); /* the shared slot is lesson 07's, freed below */
    zero2_release(run, &s->zero2);
    free(s);
    run->state = NULL;
}

static ModelStorage two_slots_model_storage(void)
{
    /* the model computes in the slots and writes into lesson 08's gradient buffers */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

const Strategy mixed = {
    .name = "mixed",
    .model_storage = two_slots_model_storage,
    .setup = two_slots_setup,
    .start = two_slots_start,
    .acquire_params = two_slots_acquire_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = two_slots_grads_ready,
    .optimizer_step = two_slots_optimizer_step,
    .gather_params = two_slots_gather_params,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = two_slots_stop,
};
