/* Lesson 07 exercise: ZeRO stage 1 — shard the optimizer state.
 *
 * In DDP every rank keeps AdamW's m and v for every parameter: 8 bytes per parameter on top
 * of 4 for the parameters and 4 for the gradients, identical on every rank, and every rank
 * repeats the same update. Keep m and v for 1/N of the parameters on each rank, have each
 * rank update only those, and give every rank the whole updated model again: the same
 * training, a quarter of the optimizer state at N = 4.
 *
 * The rules (docs/07_zero1.md; `make grade LESSON=07` checks them): every rank starts from
 * rank 0's parameters; every step, after the whole backward, each unit's gradients are
 * reduce-scattered (averaged) once and its parameters all-gathered once, in shards of
 * ceil(count / N) elements, the unit padded to N of them; no all-reduce of the gradient;
 * the gradient norm for clipping is the whole averaged gradient's, the same on every rank;
 * at every step's end each rank holds the whole parameters and gradients and AdamW's m and
 * v for its shard of each unit only, to the byte. zero1_owned (zero1.h) answers for your
 * shards.
 *
 * The state your strategy keeps, and the hooks it uses, are yours to design
 * (common/strategy.h says when each hook runs; optimizer_step replaces the loop's norm,
 * clipping and AdamW). `make hint LESSON=07` when you are stuck. */
#include "zero1.h"

#include "layout.h"
#include "optimizer.h"

size_t zero1_owned(const GPTConfig *cfg, int world, int rank, int unit, size_t *first)
{
    /* TODO */
    (void)cfg;
    (void)world;
    (void)rank;
    (void)unit;
    *first = 0;
    return 0;
}

static float zero1_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    /* TODO */
    (void)run;
    (void)hyper;
    (void)max_norm;
    return 0.0f;
}

const Strategy zero1 = {
    .name = "zero1",
    .optimizer_step = zero1_optimizer_step,
};
