/* Lesson 10, another design: each unit's state is its own blocks (16-bit parameters, whole or a
 * shard; fp32 master shard; 16-bit gradient shard; on ZeRO-1 its whole 16-bit gradients) in a
 * table indexed by unit, not flat buffers with shard_offset; start, norm and update walk it. */
#include "mixed.h"
#include "zero2_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* What one unit keeps. The model-state rule adds bytes up per kind, so a table of per-unit
 * blocks holds exactly what one flat buffer of each kind would. */
typedef struct {
    bits16 *params;     /* ZeRO-1, 2: the unit's count parameters in 16 bits; ZeRO-3: this rank's
                         * padded shard of them */
    float *master;      /* this rank's padded shard in fp32, what AdamW updates (padding 0) */
    bits16 *grad_shard; /* this rank's shard of the averaged gradients, in 16 bits */
    bits16 *grads;      /* ZeRO-1 only: the unit's count gradients in 16 bits, whole until the step */
} UnitState;

typedef struct {
    Zero2 zero2;       /* first: lesson 08's unit_grads hook reads run->state as a Zero2 */
    int stage;         /* --stage */
    Format16 format;   /* bf16, or fp16 with --fp16 */
    int scale_window;  /* fp16: good steps in a row that double the loss scale */
    UnitState *units;  /* num_units entries */
    bits16 *wire;      /* world * largest_shard: a padded unit in 16 bits, one collective at a time */
    bits16 *outgoing;  /* largest_shard: this rank's rounded piece for the step's all-gather */
    float *computed;   /* lesson 07's fp32 padded buffer: the unit the model computes with */
    float *widened_grads; /* lesson 07's fp32 piece: one unit's gradient shard, widened */
    int computed_unit; /* the unit `computed` holds, widened from today's parameters; -1: none */
} PerUnit;

static const ShardPlan *plan_of(const PerUnit *state)
{
    return &state->zero2.zero1.plan;
}

static size_t unit_count(const RunContext *run, int unit)
{
    return unit_range(&run->model->cfg, unit).count;
}

/* The unit's blocks: 16-bit parameters whole up to ZeRO-2, 16-bit gradients whole on ZeRO-1
 * (where the shard is the step's working copy, a communication buffer). */
static int allocate_unit(const Kernels *k, int stage, size_t count, size_t shard, UnitState *unit)
{
    unit->params = k->alloc((stage < 3 ? count : shard) * sizeof(bits16), MEM_PARAMS);
    unit->master = k->alloc(shard * sizeof(float), MEM_MASTER);
    unit->grad_shard = k->alloc(shard * sizeof(bits16), stage == 1 ? MEM_COMM : MEM_GRADS);
    if (stage == 1)
        unit->grads = k->alloc(count * sizeof(bits16), MEM_GRADS);
    return unit->params && unit->master && unit->grad_shard && (stage > 1 || unit->grads) ? 0 : -1;
}

static int allocate_per_unit(RunContext *run, PerUnit *state, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = plan_of(state);
    state->units = calloc((size_t)plan->num_units, sizeof *state->units);
    if (state->units == NULL) {
        snprintf(err, err_len, "out of memory for the unit table");
        return -1;
    }
    for (int unit = 0; unit < plan->num_units; unit++)
        if (allocate_unit(k, state->stage, unit_count(run, unit), plan->shard_count[unit], &state->units[unit])) {
            snprintf(err, err_len, "out of memory for unit %d's 16-bit parameters, gradients or fp32 master", unit);
            return -1;
        }
    state->wire = k->alloc(plan->largest_shard * (size_t)plan->world * sizeof(bits16), MEM_COMM);
    state->outgoing = k->alloc(plan->largest_shard * sizeof(bits16), MEM_COMM);
    if (state->wire == NULL || state->outgoing == NULL) {
        snprintf(err, err_len, "out of memory for the 16-bit collective buffers");
        return -1;
    }
    return 0;
}

static int per_unit_setup(RunContext *run, char *err, size_t err_len)
{
    const MixedOptions *options = run->options;
    PerUnit *state = calloc(1, sizeof *state);
    run->state = state;
    if (state == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    state->stage = options->stage;
    state->format = options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    state->scale_window = options->scale_window;
    state->computed_unit = -1;
    if (zero2_init(run, &state->zero2, err, err_len) != 0)
        return -1;
    /* lesson 07's fp32 gradient shard is replaced by the 16-bit ones in the table */
    run->model->kernels->free(state->zero2.zero1.grad_shard);
    state->zero2.zero1.grad_shard = NULL;
    state->computed = state->zero2.zero1.padded;
    state->widened_grads = state->zero2.zero1.piece;
    return allocate_per_unit(run, state, err, err_len);
}

/* Rank 0's fp32 parameters everywhere, then each unit's master shard cut from them and its
 * 16-bit parameters rounded: from the model's fp32 unit, or on ZeRO-3 from the master shard. */
static void per_unit_start(RunContext *run)
{
    PerUnit *state = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = plan_of(state);
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        UnitState *mine = &state->units[unit];
        const float *whole = model->params + unit_range(&model->cfg, unit).offset;
        size_t shard = plan->shard_count[unit];
        model->kernels->copy(mine->master, whole + (size_t)plan->rank * shard,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
        if (state->stage < 3)
            model->kernels->round_to_16(state->format, mine->params, whole, unit_count(run, unit));
        else
            model->kernels->round_to_16(state->format, mine->params, mine->master, shard);
    }
    model->loss_scale = state->format == FORMAT_FP16 ? FIRST_LOSS_SCALE : 1.0f;
}

/* Widens the unit's 16-bit parameters into `computed`; ZeRO-3 gathers its shards first. */
static void widen_params(RunContext *run, PerUnit *state, int unit)
{
    const bits16 *source = state->units[unit].params;
    if (state->stage == 3) {
        comm_check(run->comm, comm_all_gather_16(run->comm, state->format, source, state->wire,
                                                 plan_of(state)->shard_count[unit]));
        source = state->wire;
    }
    run->model->kernels->widen_16(state->format, state->computed, source, unit_count(run, unit));
}

static float *per_unit_acquire_params(RunContext *run, int unit)
{
    PerUnit *state = run->state;
    /* unit 0 ends forward (the LM head) and begins backward: no second widen, or gather */
    if (state->computed_unit != unit) {
        widen_params(run, state, unit);
        state->computed_unit = unit;
    }
    return state->computed;
}

/* The unit's 16-bit gradients, already at the start of `wire`: the padding zeroed (the buffer
 * starts as NaN), then reduce-scattered and averaged in 16 bits into the unit's shard. */
static void scatter_wire(RunContext *run, PerUnit *state, int unit)
{
    size_t count = unit_count(run, unit), shard = plan_of(state)->shard_count[unit];
    run->model->kernels->zero(state->wire + count, (shard * (size_t)plan_of(state)->world - count) * sizeof(bits16));
    comm_check(run->comm, comm_reduce_scatter_16(run->comm, state->format, state->wire,
                                                 state->units[unit].grad_shard, shard, REDUCE_AVG));
}

static void per_unit_grads_ready(RunContext *run, int unit)
{
    PerUnit *state = run->state;
    const Kernels *k = run->model->kernels;
    float *fp32_grads = zero2_unit_grads(run, unit);
    size_t count = unit_count(run, unit);
    if (state->stage == 1) {
        k->round_to_16(state->format, state->units[unit].grads, fp32_grads, count); /* sent by the step */
    } else {
        k->round_to_16(state->format, state->wire, fp32_grads, count);
        scatter_wire(run, state, unit);
    }
    k->zero(fp32_grads, count * sizeof(float)); /* backward adds into it next time */
}

/* Sum of squares of every gradient shard, unit by unit, then over the ranks. */
static float shard_norm(RunContext *run, PerUnit *state)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = plan_of(state);
    double squares = 0.0;
    for (int unit = 0; unit < plan->num_units; unit++) {
        k->widen_16(state->format, state->widened_grads, state->units[unit].grad_shard, plan->shard_count[unit]);
        squares += k->sum_of_squares(state->widened_grads, plan->shard_count[unit]);
    }
    comm_check(run->comm, comm_sum_double(run->comm, &squares));
    return (float)sqrt(squares);
}

/* AdamW on the unit's master with its gradient shard widened, then the 16-bit parameters from
 * the new master: the shard rounded in place (ZeRO-3), or every rank's piece gathered. */
static void update_unit(RunContext *run, PerUnit *state, int unit, AdamWHyper hyper, float factor)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = plan_of(state);
    UnitState *mine = &state->units[unit];
    size_t shard = plan->shard_count[unit];
    k->widen_16(state->format, state->widened_grads, mine->grad_shard, shard);
    /* AdamW's m and v stay lesson 07's flat shard: the unit's moments start at its offset */
    adamw_update_range(&state->zero2.zero1.opt, plan->shard_offset[unit], mine->master, state->widened_grads, shard,
                       hyper, factor);
    if (state->stage == 3) {
        k->round_to_16(state->format, mine->params, mine->master, shard);
        return;
    }
    k->round_to_16(state->format, state->outgoing, mine->master, shard);
    comm_check(run->comm, comm_all_gather_16(run->comm, state->format, state->outgoing, state->wire, shard));
    k->copy(mine->params, state->wire, unit_count(run, unit) * sizeof(bits16));
}

/* fp16 only: 1 when the gradients overflowed (the step is skipped, the scale halved); a good
 * step counts towards doubling the scale. */
static int skip_for_overflow(RunContext *run, const PerUnit *state, float norm)
{
    if (state->format != FORMAT_FP16)
        return 0;
    if (isfinite(norm)) {
        run->model->good_steps++;
        if (run->model->good_steps >= state->scale_window) {
            run->model->loss_scale *= 2.0f;
            run->model->good_steps = 0;
        }
        return 0;
    }
    run->model->loss_scale *= 0.5f;
    run->model->good_steps = 0;
    run->skipped_step = 1;
    return 1;
}

static float per_unit_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    PerUnit *state = run->state;
    int units = plan_of(state)->num_units;
    for (int unit = 0; state->stage == 1 && unit < units; unit++) {
        run->model->kernels->copy(state->wire, state->units[unit].grads, unit_count(run, unit) * sizeof(bits16));
        scatter_wire(run, state, unit);
    }
    /* the scale this step's gradients carry: a power of two, divided out exactly */
    float loss_scale = run->model->loss_scale;
    float norm = shard_norm(run, state) / loss_scale;
    if (skip_for_overflow(run, state, norm))
        return norm;
    float factor = clip_scale(norm, max_norm) / loss_scale;
    adamw_begin_step(&state->zero2.zero1.opt);
    for (int unit = 0; unit < units; unit++)
        update_unit(run, state, unit, hyper, factor);
    state->computed_unit = -1; /* widened from the parameters before the update */
    return norm;
}

/* The fp32 master, whole, through `computed` (and the checkpoint's optimizer gather after it
 * writes the same buffer): no unit is widened there afterwards. */
static void per_unit_gather_params(RunContext *run, float *host)
{
    PerUnit *state = run->state;
    const ShardPlan *plan = plan_of(state);
    for (int unit = 0; unit < plan->num_units; unit++) {
        comm_check(run->comm, comm_all_gather(run->comm, state->units[unit].master, state->computed,
                                              plan->shard_count[unit]));
        run->model->kernels->to_host(host + unit_range(&run->model->cfg, unit).offset, state->computed,
                                     unit_count(run, unit) * sizeof(float));
    }
    state->computed_unit = -1;
}

static void per_unit_stop(RunContext *run)
{
    PerUnit *state = run->state;
    if (state == NULL)
        return;
    const Kernels *k = run->model->kernels;
    for (int unit = 0; state->units != NULL && unit < plan_of(state)->num_units; unit++) {
        k->free(state->units[unit].params);
        k->free(state->units[unit].master);
        k->free(state->units[unit].grad_shard);
        k->free(state->units[unit].grads);
    }
    free(state->units);
    k->free(state->wire);
    k->free(state->outgoing);
    zero2_release(run, &state->zero2);
    free(state);
    run->state = NULL;
}

static ModelStorage per_unit_model_storage(void)
{
    /* forward and backward see only the widened unit and lesson 08's gradient buffers */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

const Strategy mixed = {
    .name = "mixed",
    .model_storage = per_unit_model_storage,
    .setup = per_unit_setup,
    .start = per_unit_start,
    .acquire_params = per_unit_acquire_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = per_unit_grads_ready,
    .optimizer_step = per_unit_optimizer_step,
    .gather_params = per_unit_gather_params,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = per_unit_stop,
};
