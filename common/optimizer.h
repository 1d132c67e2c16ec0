/* AdamW with decoupled weight decay, global grad-norm clipping and the learning-rate
 * schedule. The state (m, v) covers any contiguous range of the flat layout, so the same
 * code updates a whole model or one ZeRO shard. */
#ifndef DTC_OPTIMIZER_H
#define DTC_OPTIMIZER_H

#include <stddef.h>

#include "kernels.h"

typedef struct {
    const Kernels *kernels;
    size_t count; /* elements covered */
    float *m, *v;
    int step;     /* steps taken so far */
    int skipping; /* the step begun has a gradient that is not finite: it changes nothing */
} AdamW;

int adamw_create(AdamW *opt, size_t count, const Kernels *kernels, char *err, size_t err_len);
void adamw_destroy(AdamW *opt);

/* One step on params/grads (count elements each), gradients scaled by grad_scale first. */
void adamw_step(AdamW *opt, float *params, const float *grads, AdamWHyper hyper, float grad_scale);

/* The same step taken in pieces, for state that covers several separate ranges of the
 * parameters (a ZeRO shard): begin the step once, then update each piece, whose moments
 * are at [first, first + n) of the state. A grad_scale that is not finite (clip_scale of a
 * norm that is not) is no step at all: parameters, moments and the step count stay as
 * they were, as a skipped step must leave them (--skip-nonfinite). */
void adamw_begin_step(AdamW *opt);
void adamw_update_range(AdamW *opt, size_t first, float *params, const float *grads, size_t n,
                        AdamWHyper hyper, float grad_scale);

/* L2 norm of a gradient range. */
float grad_norm(const Kernels *kernels, const float *grads, size_t count);

/* The factor that brings a gradient of norm `norm` down to max_norm (1 when it is already
 * within, or when clipping is off: max_norm <= 0). NaN when the norm is not finite, or
 * max_norm is NaN (how the trainer skips a step): no update is taken with it. */
float clip_scale(float norm, float max_norm);

/* Linear warm-up over warmup_steps, then cosine decay from lr to min_lr_frac * lr at the
 * last step. step is 0-based. */
float lr_schedule(float lr, int step, int total_steps, int warmup_steps, float min_lr_frac);

#endif
