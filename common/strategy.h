/* How a lesson trains on several ranks. The training loop (trainer.c) is the same for every
 * lesson; a strategy is called at fixed points of it:
 *
 *   setup                 once, after every rank initialised its own model from seed + rank:
 *                         allocates what the strategy keeps; no communication (a rank whose
 *                         setup fails never reaches a collective the others would wait in)
 *   start                 once every rank has set up: the strategy's first communication
 *   each step:
 *     forward_backward    this rank's rows of the batch, forward then backward (NULL: one
 *                         pass over them all); during each backward
 *       grads_ready(unit)   fires as each unit's gradients become final (units L+1 .. 0)
 *     before_step         after the last backward: every rank must now hold the global
 *                         mean gradient
 *     (the loop then takes the gradient norm, clips, and steps AdamW)
 *     optimizer_step      instead of that, for a strategy that shards the optimizer (ZeRO)
 *   gather_params         at the end, for the replica check, the checkpoint and the sample
 *                         (and with gather_optimizer, for a resumable checkpoint)
 *   stop                  once, at the end
 *
 * A strategy that shards the model says first which of the model's full buffers it does
 * without (model_storage, read before the model allocates), then where a unit's parameters
 * and gradients are
 * (acquire_params, release_params, unit_grads: the model's hooks, see model.h); the model
 * publishes the order of its uses of parameters (gpt_param_use, gpt_next_param_use).
 *
 * Every callback may be NULL (lesson 00 uses none). Only setup can fail; a callback that
 * meets a communication error ends the job through comm_check, so no rank waits on a dead
 * peer. */
#ifndef DTC_STRATEGY_H
#define DTC_STRATEGY_H

#include <stddef.h>

#include "comm.h"
#include "kernels.h"
#include "model.h"

struct RunContext {
    Comm *comm;
    GPT *model;
    const void *options; /* the lesson's own flags (Lesson.options) */
    void *state;         /* whatever the strategy keeps between calls; its setup sets it */
    int accum_steps;     /* micro-batches per optimizer step: forward_backward's rows are
                          * accum_steps x the model's B rows of T tokens */
    int skipped_step;    /* optimizer_step sets it for a step it skipped on purpose: the
                          * gradients, scaled by model->loss_scale, overflowed, so nothing
                          * changed but the scale; the trainer reports the step as skipped */
};

typedef struct {
    const char *name; /* short, for tables: "naive_ddp" */
    /* The model's full buffers this strategy does without; NULL: it keeps both. */
    ModelStorage (*model_storage)(void);
    /* Returns 0, or -1 with a one-line reason (out of memory): then every rank stops. */
    int (*setup)(RunContext *run, char *err, size_t err_len);
    void (*start)(RunContext *run);
    /* Runs the step's forward and backward passes over this rank's rows and returns their
     * mean loss (as the forwards return it, unscaled). */
    float (*forward_backward)(RunContext *run, const int *inputs, const int *targets);
    void (*grads_ready)(RunContext *run, int unit);
    float *(*acquire_params)(RunContext *run, int unit);
    void (*release_params)(RunContext *run, int unit);
    float *(*unit_grads)(RunContext *run, int unit);
    void (*before_step)(RunContext *run);
    /* Clips to max_norm (0 = no clipping) and updates the parameters; returns the global
     * gradient norm before clipping. NULL: the loop does it over model->grads with an AdamW
     * of its own; a strategy with this callback keeps its own optimizer state. */
    float (*optimizer_step)(RunContext *run, AdamWHyper hyper, float max_norm);
    /* Leaves every parameter in host (num_params floats) on every rank; a collective.
     * NULL: the model's own full buffer, model->params. */
    void (*gather_params)(RunContext *run, float *host);
    /* For a strategy with optimizer_step, what a resumable checkpoint needs (resume.h):
     * AdamW's whole m and v (num_params floats each, laid out as model->params) into host
     * arrays on every rank, a collective, returning AdamW's step count; and back, each
     * rank keeping what it owns. NULL: the strategy cannot save or resume. */
    int (*gather_optimizer)(RunContext *run, float *m, float *v);
    void (*load_optimizer)(RunContext *run, const float *m, const float *v, int adam_steps);
    void (*stop)(RunContext *run);
} Strategy;

#endif
