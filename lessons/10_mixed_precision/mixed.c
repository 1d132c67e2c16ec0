/* Lesson 10 exercise: mixed precision — compute and communicate in 16 bits, update in 32,
 * on the ZeRO stage of --stage (1, 2 or 3), in bf16 or, with --fp16, in fp16.
 *
 * Lesson 08 keeps every parameter in fp32 (4 bytes) and its gradient shard in fp32 too.
 * Mixed-precision training keeps two copies of the parameters: 16-bit ones (2 bytes) that
 * forward and backward compute with, and an fp32 "master" copy that AdamW updates, because
 * an update is often smaller than half a 16-bit step of the weight it changes: applied to
 * 16-bit weights it would round away. The gradients are 16-bit as well, so every collective
 * moves half the bytes. The ZeRO paper's formula for one rank, with psi parameters, is
 * 2 psi (16-bit parameters) + 2 psi (16-bit gradients) + 12 psi (fp32 master, m and v); each
 * ZeRO stage shards what it shards in fp32: ZeRO-1 the last 12 psi (2 psi + 2 psi + 12 psi /
 * N), ZeRO-2 the gradients too (2 psi + 14 psi / N), ZeRO-3 everything (16 psi / N).
 *
 * mixed->format says which 16-bit format (float16.h): bf16 (8 significant bits, fp32's
 * range) or fp16 (11 significant bits, a largest value of 65504 and nothing below 2^-24).
 * fp16 needs loss scaling: backward differentiates run->model->loss_scale times the loss
 * (65536 at the start), so the gradients arrive scaled into fp16's range; the step divides
 * the scale out (a power of two: exactly), and when a scaled gradient overflowed to infinity
 * the step changes nothing, halves the scale and sets run->overflowed; after
 * mixed->scale_window good steps in a row the scale doubles (run->good_steps counts them).
 * bf16 keeps a scale of 1.
 *
 * The pieces (mixed.h): mixed->stage; mixed->params holds every parameter in 16 bits (stages
 * 1 and 2), unit by unit as the model lays them out (gpt_param_use, unit_range), and
 * mixed->param_shard this rank's shard of them (stage 3); mixed->master this rank's fp32
 * shard of them, laid out as lesson 07's gradient shard; mixed->grads every gradient in 16
 * bits (stage 1); mixed->grad_shard this rank's 16-bit shard of the averaged gradient. The
 * model takes its parameters as floats (its matmuls round their operands to 16 bits again,
 * which changes nothing for weights that are 16-bit already): a unit is widened
 * (kernels->widen_16, exact) into mixed->widened when the model asks for it (the
 * acquire_params hook, as lesson 09's gather); mixed->widened_unit says which unit it holds.
 * Backward writes fp32 gradients into lesson 08's working buffers (zero2_unit_grads);
 * kernels->round_to_16 rounds them. The communicator has 16-bit collectives (comm.h:
 * comm_reduce_scatter_16, comm_all_gather_16), each told the format.
 *
 * Given in mixed_state.c: setup (every buffer allocated), start (the master cut from the
 * broadcast parameters, the 16-bit copy rounded from them, the first loss scale), grad_norm_16
 * (the global norm from the 16-bit shards, still scaled) and the checkpoint's gather of the
 * master. From lesson 08: zero2_unit_grads(run, unit), the fp32 buffer backward wrote the
 * unit's gradients into (the same buffer every time it is asked for that unit). From lesson
 * 07: the plan and owned_real_count; from optimizer.h: clip_scale, adamw_begin_step and
 * AdamW over a range (adamw_update_range). */
#include "mixed.h"

ModelStorage mixed_model_storage(void)
{
    /* TODO: which of the model's full fp32 buffers this strategy does without (model.h). */
    return (ModelStorage){0};
}

float *mixed_acquire_params(RunContext *run, int unit)
{
    /* TODO: the unit's parameters in fp32, for the model to compute with (on ZeRO-3, from
     * every rank's 16-bit shard of them); a unit mixed->widened_unit says is there already
     * needs no work. */
    (void)run;
    (void)unit;
    return NULL;
}

void mixed_grads_ready(RunContext *run, int unit)
{
    /* TODO: the unit's gradients are final in its fp32 working buffer: from ZeRO-2 on, this
     * rank's shard of their average, in 16 bits, into mixed->grad_shard; on ZeRO-1, kept
     * whole in 16 bits for the step. The working buffer ready for the next step. */
    (void)run;
    (void)unit;
}

float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO: on ZeRO-1, this rank's shard of the average of the whole 16-bit gradients first.
     * The norm of the true gradient (grad_norm_16, the loss scale divided out). In fp16, the
     * loss scale: an overflow (a norm that is not finite) leaves everything else as it was;
     * otherwise AdamW on this rank's fp32 master shard with the 16-bit gradients, unscaled;
     * the 16-bit parameters from the updated master: every rank's whole, or on ZeRO-3 this
     * rank's shard; mixed->widened_unit to -1 (what widened holds is stale). Return the
     * norm. */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}
