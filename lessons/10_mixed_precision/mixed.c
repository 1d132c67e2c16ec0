/* Lesson 10 exercise: mixed precision — compute and communicate in 16 bits, update in 32,
 * on the ZeRO stage of --stage (1, 2 or 3), in bf16 or, with --fp16, in fp16.
 *
 * Lessons 07–09 keep every parameter and gradient in fp32. Keep them in a 16-bit format
 * instead for forward, backward and every collective, and an fp32 master copy of the
 * parameters for AdamW: an update is often smaller than half a 16-bit step of the weight it
 * changes, and would round away. Per rank the ZeRO paper counts 2 psi (16-bit parameters)
 * + 2 psi (16-bit gradients) + 12 psi (fp32 master, m, v), each stage sharding what it
 * shards in fp32: ZeRO-1 the 12 psi, ZeRO-2 the gradients too, ZeRO-3 everything. fp16
 * (--fp16) also needs a loss scale: backward differentiates run->model->loss_scale times
 * the loss; a step whose scaled gradients overflowed changes nothing and halves the scale
 * (run->skipped_step says it was skipped), and --scale-window good steps in a row double it
 * (run->model->good_steps counts them). bf16 keeps a scale of 1.
 *
 * The rules (docs/10_mixed_precision.md; `make grade LESSON=10` checks them): lesson 10's
 * reference numbers within its tolerance, and within 1e-3 of lesson 00's fp32 loss; the
 * bytes per step; the stage's own rules (lessons 07–09) on the 16-bit collectives; every
 * collective during the steps moves 16-bit elements; at every step's end, the 16-bit
 * parameters and gradients, the fp32 master, m and v hold what the stage's mixed-precision
 * formula says, to the byte.
 *
 * Lessons 07 and 08's references do the shards, the fp32 gradient buffers backward writes
 * and AdamW's state (zero1_parts.h, zero2_parts.h); the kernels round and widen 16-bit
 * numbers (kernels.h), the communicator sends them (comm.h). The state your strategy
 * keeps, and the hooks it uses, are yours to design (common/strategy.h, model.h). `make
 * hint LESSON=10` when you are stuck. */
#include "mixed.h"
#include "zero2_parts.h"

static ModelStorage mixed_model_storage(void)
{
    /* TODO */
    return (ModelStorage){0};
}

static float *mixed_acquire_params(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
    return NULL;
}

static void mixed_grads_ready(RunContext *run, int unit)
{
    /* TODO */
    (void)run;
    (void)unit;
}

static float mixed_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}

const Strategy mixed = {
    .name = "mixed",
    .model_storage = mixed_model_storage,
    .acquire_params = mixed_acquire_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = mixed_grads_ready,
    .optimizer_step = mixed_optimizer_step,
};
