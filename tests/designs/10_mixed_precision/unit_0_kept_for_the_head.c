/* Lesson 10, another design: unit 0 (embedding, tied LM head) has an fp32 buffer of its own on
 * every stage, made once a step from the embedding on (on ZeRO-3 one 16-bit gather) and used
 * by the LM head's forward and backward; the other units share one fp32 buffer, widened for
 * each use. */
#include "mixed.h"
#include "zero2_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Where every copy lives:
 *   params16     the 16-bit parameters: whole (stages 1, 2) or this rank's padded shard of
 *                every unit (stage 3); MEM_PARAMS
 *   grads16      stage 1 only: the whole 16-bit gradient, filled from the hooks; MEM_GRADS
 *   grad_shard16 this rank's averaged 16-bit gradient shard (the reduce-scatters' output):
 *                the gradients themselves on stages 2 and 3 (MEM_GRADS), a working buffer
 *                beside the whole gradient on stage 1 (MEM_COMM)
 *   master       this rank's fp32 shard of the parameters, what AdamW updates; MEM_MASTER
 *   unit_params  the fp32 unit the model computes with, widened from 16 bits; MEM_COMM
 *   padded16     one padded 16-bit unit for a collective; MEM_COMM
 *   shard_f32    one unit's piece of the gradient shard widened, for the norm and AdamW */
typedef struct {
    Zero2 zero2; /* first: zero2_unit_grads and zero1's resume hooks read run->state */
    int stage, fp16, scale_window;
    Format16 format;
    size_t largest_unit;
    bits16 *params16, *grads16, *grad_shard16, *padded16;
    float *master, *unit_params, *shard_f32;
    int unit_held; /* the unit unit_params holds, made since the last update; -1 none */
    float *unit0_params; /* unit 0 alone, made since the last update when unit0_fresh */
    int unit0_fresh;
} Mixed;

static ModelStorage mixed_model_storage(void)
{
    /* the model's fp32 parameters only until start has made the master and the 16-bit
     * copy; its gradients never: backward writes into zero2_unit_grads' fp32 buffers */
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

static size_t unit_count(const RunContext *run, int unit)
{
    return unit_range(&run->model->cfg, unit).count;
}

static int mixed_setup(RunContext *run, char *err, size_t err_len)
{
    const MixedOptions *options = run->options;
    Mixed *mix = calloc(1, sizeof *mix);
    run->state = mix;
    if (mix == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    if (zero2_init(run, &mix->zero2, err, err_len) != 0)
        return -1;
    const Kernels *k = run->model->kernels;
    Zero1 *z1 = &mix->zero2.zero1;
    const ShardPlan *plan = &z1->plan;
    /* lesson 07's fp32 gradient shard and gather source: no stage here keeps them (padded
     * stays, for the fp32 gathers of the checkpoint and the resume state) */
    k->free(z1->grad_shard);
    z1->grad_shard = NULL;
    k->free(z1->piece);
    z1->piece = NULL;

    mix->stage = options->stage;
    mix->fp16 = options->fp16;
    mix->scale_window = options->scale_window;
    mix->format = options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    mix->unit_held = -1;
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < plan->num_units; unit++)
        if (unit_range(cfg, unit).count > mix->largest_unit)
            mix->largest_unit = unit_range(cfg, unit).count;

    size_t whole = run->model->num_params, shard = plan->shard_total;
    mix->params16 = k->alloc((mix->stage == 3 ? shard : whole) * sizeof(bits16), MEM_PARAMS);
    if (mix->stage == 1)
        mix->grads16 = k->alloc(whole * sizeof(bits16), MEM_GRADS);
    mix->grad_shard16 = k->alloc(shard * sizeof(bits16), mix->stage == 1 ? MEM_COMM : MEM_GRADS);
    mix->master = k->alloc(shard * sizeof(float), MEM_MASTER);
    mix->padded16 = k->alloc(plan->largest_shard * (size_t)plan->world * sizeof(bits16), MEM_COMM);
    mix->unit_params = k->alloc(mix->largest_unit * sizeof(float), MEM_COMM);
    mix->unit0_params = k->alloc(unit_range(cfg, 0).count * sizeof(float), MEM_COMM);
    mix->shard_f32 = k->alloc(plan->largest_shard * sizeof(float), MEM_COMM);
    if (mix->params16 == NULL || (mix->stage == 1 && mix->grads16 == NULL) || mix->grad_shard16 == NULL ||
        mix->master == NULL || mix->padded16 == NULL || mix->unit_params == NULL || mix->shard_f32 == NULL || mix->unit0_params == NULL) {
        snprintf(err, err_len, "out of memory for the mixed-precision buffers");
        return -1;
    }
    return 0;
}

/* Rank 0's fp32 parameters everywhere (or the resumed master); this rank's pieces into its
 * fp32 master shard (padding stays zero), and the 16-bit parameters rounded from them. */
static void mixed_start(RunContext *run)
{
    Mixed *mix = run->state;
    GPT *model = run->model;
    const Kernels *k = model->kernels;
    const ShardPlan *plan = &mix->zero2.zero1.plan;
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        Range range = unit_range(&model->cfg, unit);
        size_t first = range.offset + (size_t)plan->rank * plan->shard_count[unit];
        k->copy(mix->master + plan->shard_offset[unit], model->params + first,
                owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
    if (mix->stage == 3)
        k->round_to_16(mix->format, mix->params16, mix->master, plan->shard_total);
    else
        k->round_to_16(mix->format, mix->params16, model->params, model->num_params);
    model->loss_scale = mix->fp16 ? FIRST_LOSS_SCALE : 1.0f;
    model->good_steps = 0;
    mix->unit_held = -1;
    mix->unit0_fresh = 0;
}

static float *mixed_acquire_params(RunContext *run, int unit)
{
    Mixed *mix = run->state;
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = &mix->zero2.zero1.plan;
    size_t count = unit_count(run, unit);
    int zero = unit == 0;
    float *dst = zero ? mix->unit0_params : mix->unit_params;
    if (zero ? mix->unit0_fresh : mix->unit_held == unit)
        return dst; /* unit 0 from the embedding on: the LM head's forward and backward */
    if (mix->stage == 3) {
        comm_check(run->comm, comm_all_gather_16(run->comm, mix->format, mix->params16 + plan->shard_offset[unit],
                                                 mix->padded16, plan->shard_count[unit]));
        k->widen_16(mix->format, dst, mix->padded16, count);
    } else {
        k->widen_16(mix->format, dst, mix->params16 + unit_range(&run->model->cfg, unit).offset, count);
    }
    if (zero)
        mix->unit0_fresh = 1;
    else
        mix->unit_held = unit;
    return dst;
}

/* The unit's fp32 gradients (padded, zero padding) rounded into padded16 and reduce-scattered
 * with the mean into this rank's piece of the 16-bit gradient shard. */
static void reduce_scatter_16_unit(RunContext *run, Mixed *mix, int unit, const bits16 *rounded, const float *fp32)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = &mix->zero2.zero1.plan;
    size_t count = unit_count(run, unit), shard = plan->shard_count[unit], padded = shard * (size_t)plan->world;
    if (fp32 != NULL)
        k->round_to_16(mix->format, mix->padded16, fp32, count);
    else
        k->copy(mix->padded16, rounded, count * sizeof(bits16));
    k->zero(mix->padded16 + count, (padded - count) * sizeof(bits16));
    comm_check(run->comm, comm_reduce_scatter_16(run->comm, mix->format, mix->padded16,
                                                 mix->grad_shard16 + plan->shard_offset[unit], shard, REDUCE_AVG));
}

static void mixed_grads_ready(RunContext *run, int unit)
{
    Mixed *mix = run->state;
    const Kernels *k = run->model->kernels;
    float *grads = zero2_unit_grads(run, unit);
    size_t count = unit_count(run, unit);
    if (mix->stage == 1) /* kept whole until the step */
        k->round_to_16(mix->format, mix->grads16 + unit_range(&run->model->cfg, unit).offset, grads, count);
    else
        reduce_scatter_16_unit(run, mix, unit, NULL, grads);
    k->zero(grads, count * sizeof(float)); /* backward adds into it next time */
}

/* Unit u's piece of the 16-bit gradient shard, widened into shard_f32. */
static float *widened_grad_piece(RunContext *run, Mixed *mix, int unit)
{
    const ShardPlan *plan = &mix->zero2.zero1.plan;
    run->model->kernels->widen_16(mix->format, mix->shard_f32, mix->grad_shard16 + plan->shard_offset[unit],
                                  plan->shard_count[unit]);
    return mix->shard_f32;
}

static float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mixed *mix = run->state;
    GPT *model = run->model;
    const Kernels *k = model->kernels;
    Zero1 *z1 = &mix->zero2.zero1;
    const ShardPlan *plan = &z1->plan;
    const GPTConfig *cfg = &model->cfg;

    if (mix->stage == 1) /* backward is over: every unit's whole 16-bit gradient to its owners */
        for (int unit = 0; unit < plan->num_units; unit++)
            reduce_scatter_16_unit(run, mix, unit, mix->grads16 + unit_range(cfg, unit).offset, NULL);

    /* the norm of the scaled gradient, unit piece by unit piece, then the scale divided out
     * (a power of two: exactly) */
    double sum_of_squares = 0.0;
    for (int unit = 0; unit < plan->num_units; unit++)
        sum_of_squares += k->sum_of_squares(widened_grad_piece(run, mix, unit), plan->shard_count[unit]);
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    float loss_scale = model->loss_scale;
    float norm = (float)(sqrt(sum_of_squares) / loss_scale);

    if (mix->fp16 && !isfinite(norm)) { /* overflowed: nothing changes but the scale */
        model->loss_scale = loss_scale * 0.5f;
        model->good_steps = 0;
        run->skipped_step = 1;
        return INFINITY;
    }

    float grad_scale = clip_scale(norm, max_norm) / loss_scale;
    adamw_begin_step(&z1->opt);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t offset = plan->shard_offset[unit], shard = plan->shard_count[unit];
        adamw_update_range(&z1->opt, offset, mix->master + offset, widened_grad_piece(run, mix, unit),
                           owned_real_count(plan, cfg, unit), hyper, grad_scale);
        if (mix->stage == 3) { /* the new 16-bit shard, gathered before each use */
            k->round_to_16(mix->format, mix->params16 + offset, mix->master + offset, shard);
        } else { /* rounded into this rank's place and all-gathered in place */
            size_t count = unit_count(run, unit);
            k->round_to_16(mix->format, mix->padded16 + (size_t)plan->rank * shard, mix->master + offset, shard);
            comm_check(run->comm, comm_all_gather_16(run->comm, mix->format, mix->padded16 + (size_t)plan->rank * shard,
                                                     mix->padded16, shard));
            k->copy(mix->params16 + unit_range(cfg, unit).offset, mix->padded16, count * sizeof(bits16));
        }
    }
    mix->unit_held = -1; /* what was widened before the update is stale */
    mix->unit0_fresh = 0;

    if (mix->fp16 && ++model->good_steps >= mix->scale_window) {
        model->loss_scale = loss_scale * 2.0f;
        model->good_steps = 0;
    }
    return norm;
}

/* The whole fp32 master, for the replica check, the sample and the checkpoint. */
static void mixed_gather_params(RunContext *run, float *host)
{
    Mixed *mix = run->state;
    Zero1 *z1 = &mix->zero2.zero1;
    const GPTConfig *cfg = &run->model->cfg;
    for (int unit = 0; unit < z1->plan.num_units; unit++) {
        Range range = unit_range(cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, mix->master + z1->plan.shard_offset[unit], z1->padded,
                                              z1->plan.shard_count[unit]));
        run->model->kernels->to_host(host + range.offset, z1->padded, range.count * sizeof(float));
    }
}

static void mixed_stop(RunContext *run)
{
    Mixed *mix = run->state;
    if (mix == NULL)
        return;
    const Kernels *k = run->model->kernels;
    k->free(mix->params16);
    k->free(mix->grads16);
    k->free(mix->grad_shard16);
    k->free(mix->master);
    k->free(mix->padded16);
    k->free(mix->unit_params);
    k->free(mix->unit0_params);
    k->free(mix->shard_f32);
    zero2_release(run, &mix->zero2);
    free(mix);
    run->state = NULL;
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
