/* Lesson 07's reference, as lessons 08, 09 and 10 build on it (solutions/07_zero1/zero1.c):
 * its state and the steps of its optimizer step. Not part of lesson 07's exercise, whose
 * design is yours; read it once you have done lesson 07. */
#ifndef LESSON07_ZERO1_PARTS_H
#define LESSON07_ZERO1_PARTS_H

#include <stddef.h>

#include "layout.h"
#include "optimizer.h"
#include "strategy.h"
#include "zero1.h"

/* Every unit is cut into `world` equal shards: unit u's count is padded up to a multiple of
 * world, and rank r owns elements [r * shard_count[u], (r + 1) * shard_count[u]) of it. A
 * rank's shards of all units, one after another, make its shard buffers. */
typedef struct {
    int num_units, rank, world;
    size_t *shard_count;   /* per unit: elements each rank owns, padding included */
    size_t *shard_offset;  /* per unit: where its shard starts in this rank's shard buffers */
    size_t shard_total;    /* this rank's elements over all units */
    size_t largest_shard;  /* the largest shard_count */
} ShardPlan;

/* How many of the elements this rank owns in unit u are real, not padding. */
size_t owned_real_count(const ShardPlan *plan, const GPTConfig *cfg, int unit);

typedef struct {
    ShardPlan plan;
    AdamW opt;         /* m and v for this rank's shard only, laid out as the shard buffers */
    float *grad_shard; /* plan.shard_total: this rank's averaged gradients */
    float *padded;     /* world * largest_shard: one unit, padded, for a collective */
    float *piece;      /* largest_shard: this rank's piece of a unit, padded */
} Zero1;

/* Rank 0's parameters to every rank (the later stages start the same way). */
void zero1_start(RunContext *run);
/* What a resumable checkpoint needs (strategy.h): the whole of AdamW's m and v from every
 * rank's shards, and back, each rank keeping its own. Lessons 08 and 09 use them as they are.
 * They read run->state as a Zero1: a state of your own that holds one keeps it first (or
 * has hooks of its own that pass them its Zero1). */
int zero1_gather_optimizer(RunContext *run, float *m, float *v);
void zero1_load_optimizer(RunContext *run, const float *m, const float *v, int adam_steps);

/* The steps of ZeRO-1's optimizer step, for the stages that build on it.
 * reduce_scatter_unit: the unit's gradients (unit_grads, left as they are) copied into
 *   `padded`, padding zeroed, reduce-scattered with the mean over ranks into this rank's
 *   piece of grad_shard; a blocking collective, `padded` overwritten.
 * sharded_grad_norm: the norm of the whole gradient from every rank's grad_shard; a
 *   collective (every rank calls it).
 * update_owned: AdamW on the elements of the unit this rank owns; unit_params is the
 *   unit's start in the whole parameters. The step's adamw_begin_step is the caller's, once
 *   a step, before the first unit.
 * all_gather_unit: every rank's updated piece of the unit into unit_params (the unit's
 *   start); a blocking collective, through `piece` and `padded`. */
void reduce_scatter_unit(RunContext *run, Zero1 *zero, int unit, const float *unit_grads);
float sharded_grad_norm(RunContext *run, Zero1 *zero);
void update_owned(RunContext *run, Zero1 *zero, int unit, float *unit_params, AdamWHyper hyper, float scale);
void all_gather_unit(RunContext *run, Zero1 *zero, int unit, float *unit_params);

/* The state's allocation: the plan, AdamW for the shard, the gradient shard (counted as
 * grad_shard_kind: a working buffer beside ZeRO-1's full gradient, the gradients themselves
 * from ZeRO-2 on) and the two collective buffers. Returns 0 or -1. */
int zero1_allocate(RunContext *run, Zero1 *zero, MemKind grad_shard_kind, char *err, size_t err_len);
void zero1_free(RunContext *run, Zero1 *zero);

#endif
