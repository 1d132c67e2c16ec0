/* GPT-2 on flat, unit-major buffers (see layout.h), on any device that supplies a Kernels
 * table. Forward and backward walk the units; a strategy observes and steers that walk
 * through GPTHooks: where a unit's parameters and gradients live, and when a unit's
 * gradients are final. */
#ifndef DTC_MODEL_H
#define DTC_MODEL_H

#include <stdint.h>

#include "events.h"
#include "gpt_config.h"
#include "kernels.h"
#include "layout.h"

typedef enum { PASS_FORWARD, PASS_BACKWARD } Pass;

/* One use of a unit's parameters: a pass computing with them, from acquire to release. */
typedef struct {
    int unit;
    Pass pass;
} UnitUse;

/* The run a strategy's hooks are given (strategy.h): the model passes it through unread. */
typedef struct RunContext RunContext;

/* The strategy's own callbacks (Strategy, strategy.h), called by the model as it walks. */
typedef struct {
    RunContext *run;
    /* Where unit's parameters are for the use in progress (gpt_param_use_now says which);
     * NULL hook = the model's own buffer. ZeRO-3 returns a gathered working buffer here. */
    float *(*acquire_params)(RunContext *run, int unit);
    /* The use in progress is done with the unit's parameters (ZeRO-3 frees its working copy). */
    void (*release_params)(RunContext *run, int unit);
    /* Where backward accumulates the unit's gradients; NULL hook = the model's own buffer. */
    float *(*unit_grads)(RunContext *run, int unit);
    /* Backward will not touch the unit's gradients again in this pass. Called for units
     * L+1, L, ..., 1, 0 (wte is shared with the LM head, so unit 0 is final last). */
    void (*grads_ready)(RunContext *run, int unit);
} GPTHooks;

/* Forward results kept for backward, one set per layer (docs/00_single_device.md says what
 * each holds). fch is the MLP's hidden layer before the GELU, which the CPU's GELU forward
 * replaces with the GELU's slope, all that backward needs of it (kernels.h). */
typedef struct {
    float *ln1, *ln1_mean, *ln1_rstd, *qkv, *atty, *att, *residual2;
    float *ln2, *ln2_mean, *ln2_rstd, *fch, *fch_gelu, *residual3;
} LayerActivations;

typedef struct {
    float *block;             /* one allocation holding everything below */
    float *encoded;           /* B*T*C */
    LayerActivations *layers; /* L entries (host array of device pointers) */
    float *lnf, *lnf_mean, *lnf_rstd;
    float *probs;             /* B*T*V: logits, turned into probabilities, then d(logits) */
    size_t floats;
} Activations;

typedef struct {
    float *block;
    float *dresidual, *dbtc, *dqkv, *dfch, *attention; /* BTC, BTC, 3BTC, 4BTC, T max(T, C/NH) */
    float *matmul_out;                                 /* BTC, forward projection output */
    size_t floats;
    void *gemm_operands; /* with 16-bit matmuls: their rounded operands (kernels.h), else NULL */
} Scratch;

typedef struct {
    GPTConfig cfg;
    const Kernels *kernels;
    size_t num_params;
    float *params; /* unit-major, num_params */
    float *grads;  /* unit-major, num_params */
    GPTHooks hooks;
    /* backward differentiates loss_scale x the mean loss (1 after gpt_create); a strategy
     * may set it */
    float loss_scale;
    /* a dynamic loss scale's count (fp16): the steps in a row without an overflow since
     * loss_scale last changed (0 after gpt_create), kept by the strategy that changes the
     * scale; beside it so that a resume state holds both */
    int good_steps;
    /* backward passes added into the gradients since gpt_zero_grad: during a step of K
     * micro-batches, the one whose forward or backward is running (0 .. K-1) */
    int accumulated_passes;
    int batch, seq_len; /* B, T of the allocated activations; 0 before gpt_set_batch */
    Activations acts;
    Scratch scratch;
    int *inputs, *targets; /* device copies of the current batch, B*T each */
    int has_targets;
    int param_use;       /* the use in progress or last made, an index of gpt_param_use */
    TraceMark unit_began; /* when the unit in use began computing: its slice of a trace */
    int matmuls_16bit;      /* every matmul rounds its operands to matmul_format (ModelStorage) */
    Format16 matmul_format;
} GPT;

/* What the model allocates, declared before it does: the full buffers that a strategy does
 * without, keeping shards of its own instead (so no strategy frees what the model owns), and
 * the scratch that 16-bit matmuls round their operands into. */
typedef struct {
    int no_gradients;  /* never allocated: backward writes where the unit_grads hook says */
    int no_parameters; /* kept only until the strategy has its share (gpt_drop_params) */
    int matmuls_16bit;      /* every matmul multiplies operands rounded to matmul_format, summing
                             * in fp32, as mixed precision does (kernels.h); the activations
                             * stay fp32 */
    Format16 matmul_format; /* bf16 or fp16 (float16.h) */
} ModelStorage;

/* Allocates parameters and gradients (zeroed). Returns 0, or -1 with a reason. */
int gpt_create(GPT *model, const GPTConfig *cfg, const Kernels *kernels, char *err, size_t err_len);
/* The same, without the buffers storage does without. */
int gpt_create_with(GPT *model, const GPTConfig *cfg, const Kernels *kernels, ModelStorage storage, char *err,
                    size_t err_len);
/* Frees the full parameters once a strategy that keeps only a shard has taken it; from then
 * on forward and backward get every unit's parameters from the acquire_params hook. */
void gpt_drop_params(GPT *model);
void gpt_destroy(GPT *model);

/* GPT-2 initialisation from a seed: weights N(0, 0.02), the two residual projections
 * (attprojw, fcprojw) scaled by 1/sqrt(2L), LayerNorm weights 1, biases 0, the padded
 * vocabulary rows of wte 0. Draws in layout order, so a seed means the same model everywhere. */
void gpt_init_weights(GPT *model, uint64_t seed);

/* (Re)allocates activations for B x T (T <= maxT). Returns 0, or -1 when the allocator
 * refuses (over --mem-limit or out of memory), leaving the model with no activations. */
int gpt_set_batch(GPT *model, int B, int T, char *err, size_t err_len);

/* Runs the model on B x T host tokens. With targets, returns the mean cross-entropy
 * loss over the B*T positions; without (NULL), returns 0 and leaves next-token
 * probabilities in acts.probs. */
float gpt_forward(GPT *model, const int *inputs, const int *targets);

/* Accumulates d(loss_scale x mean loss of the last forward)/d(params) into the gradient buffers.
 * Exactly one backward per forward with targets: backward reuses the probabilities'
 * memory for d(logits), so a second call (or one after a forward without targets)
 * aborts with a message. */
void gpt_backward(GPT *model);

/* Zeroes the gradients (the model's own buffer, if it has one) and accumulated_passes. */
void gpt_zero_grad(GPT *model);

/* The order in which a training step uses the units' parameters, published so that a
 * strategy can plan ahead (ZeRO-3 prefetches the next use) instead of mirroring the model.
 * Forward: units 0, 1, ..., L+1, then 0 again (the LM head is wte, tied); backward: 0 (the
 * LM head first), L+1, L, ..., 1 (the embedding's backward reads no parameters). Uses are
 * numbered 0 .. gpt_num_param_uses - 1; the model aborts if it ever calls a hook out of
 * this order. A forward without backward (validation, sampling) stops after its part. */
int gpt_num_param_uses(const GPTConfig *cfg);
UnitUse gpt_param_use(const GPTConfig *cfg, int index);
/* The use in progress (from acquire to release) or, between uses, the last one made. */
UnitUse gpt_param_use_now(const GPT *model);
/* The use after the one in progress, in the published order; 0 when none follows. */
int gpt_next_param_use(const GPT *model, UnitUse *next);

/* Estimated floating-point operations to train on one token (forward + backward). */
double gpt_flops_per_token(const GPTConfig *cfg, int T);

#endif
