/* Lesson 10 reference: mixed precision on ZeRO-1, 2 or 3 (see lessons/10_mixed_precision/mixed.c). */
#include "mixed.h"
#include "zero2_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    Zero2 zero2;       /* lesson 08's shard plan, AdamW's m and v for this rank's shard, and
                        * backward's fp32 gradient working buffers (zero2_unit_grads) */
    int stage;         /* 1: the 16-bit gradients whole; 2: they are sharded; 3: the 16-bit
                        * parameters too */
    Format16 format;   /* what every 16-bit buffer below holds: FORMAT_BF16, or FORMAT_FP16
                        * with --fp16 */
    int scale_window;  /* fp16: how many good steps in a row (run->model->good_steps counts them)
                        * double the loss scale (--scale-window); the scale itself is
                        * run->model->loss_scale, what backward multiplies the loss by:
                        * FIRST_LOSS_SCALE at the start with fp16, 1 with bf16 */
    bits16 *params;      /* stages 1 and 2: every parameter in 16 bits, laid out as the model's
                          * units: what forward and backward compute with; stage 3: NULL */
    bits16 *param_shard; /* stage 3: plan.shard_total, this rank's shard of the 16-bit
                          * parameters, laid out as the master; NULL otherwise */
    float *master;     /* plan.shard_total: this rank's shard of the parameters in fp32, what
                        * AdamW updates (padding included, zero) */
    bits16 *grads;       /* stage 1: every gradient in 16 bits, laid out as the model's units;
                          * NULL otherwise */
    bits16 *grad_shard;  /* plan.shard_total: this rank's averaged gradients, in 16 bits
                          * (stage 1: a working buffer, what the step's reduce-scatters write) */
    bits16 *padded;      /* world * largest_shard: one unit, padded, in 16 bits, for a
                          * collective */
    bits16 *piece;       /* largest_shard: this rank's piece of a unit, in 16 bits */
    float *widened;    /* world * largest_shard: one unit's parameters in fp32, for the model
                        * (lesson 07's fp32 collective buffer, zero2.zero1.padded) */
    float *grad_piece; /* largest_shard: one unit's gradient shard in fp32, for AdamW (lesson
                        * 07's zero2.zero1.piece) */
    int widened_unit;  /* the unit `widened` holds since the last update, -1 for none: set so
                        * by setup, the step, and mixed_gather_params (which writes widened,
                        * and runs before zero1_gather_optimizer, which does too) */
} Mixed;

/* Every shard's squares, widened unit by unit (a unit's shard at a time in grad_piece), and
 * summed over the ranks: the norm of the gradient the update will use (before the loss
 * scale is divided out). */
static float grad_norm_16(RunContext *run, Mixed *mixed)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    double sum_of_squares = 0.0;
    for (int unit = 0; unit < plan->num_units; unit++) {
        k->widen_16(mixed->format, mixed->grad_piece, mixed->grad_shard + plan->shard_offset[unit],
                    plan->shard_count[unit]);
        sum_of_squares += k->sum_of_squares(mixed->grad_piece, plan->shard_count[unit]);
    }
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    return (float)sqrt(sum_of_squares);
}

/* Lesson 08's state, then the 16-bit buffers in place of lesson 07's fp32 gradient shard;
 * lesson 07's fp32 collective buffers stay, as the widened unit and gradient piece. The
 * stage decides which 16-bit state is whole and which a shard: the parameters are whole up to
 * ZeRO-2, the gradients whole on ZeRO-1 (beside the shard the step reduce-scatters into). */
static int allocate_mixed(RunContext *run, Mixed *mixed, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    Zero1 *zero1 = &mixed->zero2.zero1;
    const ShardPlan *plan = &zero1->plan;
    size_t whole = run->model->num_params * sizeof(bits16), sharded = plan->shard_total * sizeof(bits16);
    k->free(zero1->grad_shard);
    zero1->grad_shard = NULL;
    mixed->widened = zero1->padded;
    mixed->grad_piece = zero1->piece;
    if (mixed->stage < 3)
        mixed->params = k->alloc(whole, MEM_PARAMS);
    else
        mixed->param_shard = k->alloc(sharded, MEM_PARAMS);
    if (mixed->stage == 1)
        mixed->grads = k->alloc(whole, MEM_GRADS);
    mixed->master = k->alloc(plan->shard_total * sizeof(float), MEM_MASTER);
    mixed->grad_shard = k->alloc(sharded, mixed->stage == 1 ? MEM_COMM : MEM_GRADS);
    mixed->padded = k->alloc(plan->largest_shard * plan->world * sizeof(bits16), MEM_COMM);
    mixed->piece = k->alloc(plan->largest_shard * sizeof(bits16), MEM_COMM);
    if ((mixed->params == NULL && mixed->param_shard == NULL) || (mixed->stage == 1 && mixed->grads == NULL) ||
        mixed->master == NULL || mixed->grad_shard == NULL || mixed->padded == NULL || mixed->piece == NULL) {
        snprintf(err, err_len, "out of memory for the 16-bit parameters or gradients, the fp32 master shard or "
                 "the 16-bit buffers");
        return -1;
    }
    return 0;
}

static int mixed_setup(RunContext *run, char *err, size_t err_len)
{
    Mixed *mixed = calloc(1, sizeof *mixed);
    run->state = mixed;
    if (mixed == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    const MixedOptions *options = run->options;
    mixed->stage = options->stage;
    mixed->format = options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    mixed->scale_window = options->scale_window;
    mixed->widened_unit = -1;
    if (zero2_init(run, &mixed->zero2, err, err_len) != 0)
        return -1;
    return allocate_mixed(run, mixed, err, err_len);
}

/* Rank 0's fp32 parameters to every rank (lesson 07's start); this rank keeps its shard of
 * them as the master, and the 16-bit parameters rounded from them: every one, or on ZeRO-3
 * its shard, rounded from the master (the padding zero in both). The model then drops its
 * fp32 buffer (mixed_model_storage). fp16 scales the loss from the first backward on. */
static void mixed_start(RunContext *run)
{
    Mixed *mixed = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t first = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(mixed->master + plan->shard_offset[unit], model->params + first,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
    if (mixed->stage < 3)
        model->kernels->round_to_16(mixed->format, mixed->params, model->params, model->num_params);
    else
        model->kernels->round_to_16(mixed->format, mixed->param_shard, mixed->master, plan->shard_total);
    model->loss_scale = mixed->format == FORMAT_FP16 ? FIRST_LOSS_SCALE : 1.0f;
}

/* The fp32 master, whole on every rank (the checkpoint holds it, not its 16-bit rounding):
 * each unit's shards all-gathered in fp32 through the widened buffer, which then holds no
 * unit's parameters. A checkpoint gathers the parameters before the optimizer state
 * (zero1_gather_optimizer, which also writes widened), so this reset covers both; the next
 * step widens, or on ZeRO-3 gathers, unit 0 anew. */
static void mixed_gather_params(RunContext *run, float *host)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    for (int unit = 0; unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, mixed->master + plan->shard_offset[unit], mixed->widened,
                                              plan->shard_count[unit]));
        run->model->kernels->to_host(host + range.offset, mixed->widened, range.count * sizeof(float));
    }
    mixed->widened_unit = -1;
}

static void mixed_stop(RunContext *run)
{
    Mixed *mixed = run->state;
    if (mixed == NULL)
        return;
    const Kernels *k = run->model->kernels;
    k->free(mixed->params);
    k->free(mixed->param_shard);
    k->free(mixed->grads);
    k->free(mixed->master);
    k->free(mixed->grad_shard);
    k->free(mixed->padded);
    k->free(mixed->piece);
    zero2_release(run, &mixed->zero2);
    free(mixed);
    run->state = NULL;
}

static ModelStorage mixed_model_storage(void)
{
    /* the model computes with units widened from the 16-bit parameters and writes its
     * gradients into lesson 08's working buffers: neither of its fp32 buffers is needed
     * after start */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

static float *mixed_acquire_params(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    Range range = unit_range(&run->model->cfg, unit);
    /* the LM head's unit 0 ends forward and begins backward: it is still there */
    if (mixed->widened_unit == unit)
        return mixed->widened;
    if (mixed->stage < 3) {
        k->widen_16(mixed->format, mixed->widened, mixed->params + range.offset, range.count);
    } else {
        comm_check(run->comm, comm_all_gather_16(run->comm, mixed->format,
                                                 mixed->param_shard + plan->shard_offset[unit], mixed->padded,
                                                 plan->shard_count[unit]));
        k->widen_16(mixed->format, mixed->widened, mixed->padded, range.count);
    }
    mixed->widened_unit = unit;
    return mixed->widened;
}

/* The unit's 16-bit gradients, its first count elements of mixed->padded: padded with zeros
 * and reduce-scattered, averaged, into the unit's place in the 16-bit gradient shard. */
static void scatter_unit(RunContext *run, Mixed *mixed, int unit)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    size_t count = unit_range(&run->model->cfg, unit).count, shard = plan->shard_count[unit];
    run->model->kernels->zero(mixed->padded + count, (shard * (size_t)plan->world - count) * sizeof(bits16));
    comm_check(run->comm, comm_reduce_scatter_16(run->comm, mixed->format, mixed->padded,
                                                 mixed->grad_shard + plan->shard_offset[unit], shard, REDUCE_AVG));
}

static void mixed_grads_ready(RunContext *run, int unit)
{
    Mixed *mixed = run->state;
    const Kernels *k = run->model->kernels;
    float *grads = zero2_unit_grads(run, unit);
    Range range = unit_range(&run->model->cfg, unit);
    if (mixed->stage == 1) {
        /* ZeRO-1 keeps the whole gradient, in 16 bits; the step reduce-scatters it */
        k->round_to_16(mixed->format, mixed->grads + range.offset, grads, range.count);
    } else {
        k->round_to_16(mixed->format, mixed->padded, grads, range.count);
        scatter_unit(run, mixed, unit);
    }
    k->zero(grads, range.count * sizeof(float));
}

/* AdamW on the unit's fp32 master shard with its 16-bit gradient shard, widened; then the
 * 16-bit parameters from the updated master: this rank's shard rounded (ZeRO-3), or every
 * rank's shard rounded and all-gathered in 16 bits into the whole unit. */
static void update_unit(RunContext *run, Mixed *mixed, int unit, AdamWHyper hyper, float scale)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
    Range range = unit_range(&run->model->cfg, unit);
    k->widen_16(mixed->format, mixed->grad_piece, mixed->grad_shard + offset, shard);
    /* the padding is zero in the master and the gradient alike, and AdamW keeps it zero */
    adamw_update_range(&mixed->zero2.zero1.opt, offset, mixed->master + offset, mixed->grad_piece, shard, hyper,
                       scale);
    if (mixed->stage == 3) {
        k->round_to_16(mixed->format, mixed->param_shard + offset, mixed->master + offset, shard);
        return;
    }
    k->round_to_16(mixed->format, mixed->piece, mixed->master + offset, shard);
    comm_check(run->comm, comm_all_gather_16(run->comm, mixed->format, mixed->piece, mixed->padded, shard));
    k->copy(mixed->params + range.offset, mixed->padded, range.count * sizeof(bits16));
}

/* fp16's dynamic loss scale, after a step whose gradient norm (unscaled) was `norm`: an
 * overflow halves the scale and says the step is skipped; scale_window steps in a row
 * without one double it. Returns 1 when the step must change nothing. bf16 keeps 1. */
static int overflowed(RunContext *run, Mixed *mixed, float norm)
{
    if (mixed->format != FORMAT_FP16)
        return 0;
    if (!isfinite(norm)) {
        run->model->loss_scale /= 2.0f;
        run->model->good_steps = 0;
        run->skipped_step = 1;
        return 1;
    }
    if (++run->model->good_steps == mixed->scale_window) {
        run->model->loss_scale *= 2.0f;
        run->model->good_steps = 0;
    }
    return 0;
}

static float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    for (int unit = 0; mixed->stage == 1 && unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        run->model->kernels->copy(mixed->padded, mixed->grads + range.offset, range.count * sizeof(bits16));
        scatter_unit(run, mixed, unit);
    }
    /* the gradients are loss_scale times the true ones: a power of two, divided out exactly */
    float loss_scale = run->model->loss_scale;
    float norm = grad_norm_16(run, mixed) / loss_scale;
    if (overflowed(run, mixed, norm))
        return norm;
    float scale = clip_scale(norm, max_norm) / loss_scale;
    adamw_begin_step(&mixed->zero2.zero1.opt);
    for (int unit = 0; unit < plan->num_units; unit++)
        update_unit(run, mixed, unit, hyper, scale);
    mixed->widened_unit = -1; /* what it holds is from before the update */
    return norm;
}

const Strategy mixed = {
    .name = "mixed",
    .model_storage = mixed_model_storage,
    .setup = mixed_setup,
    .start = mixed_start,
    .acquire_params = mixed_acquire_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = mixed_grads_ready,
    .optimizer_step = mixed_optimizer_step,
    .gather_params = mixed_gather_params,
    .gather_optimizer = zero1_gather_optimizer,
    .load_optimizer = zero1_load_optimizer,
    .stop = mixed_stop,
};
