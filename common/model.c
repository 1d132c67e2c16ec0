#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rng.h"
#include "trace.h"

/* ---------------------------------------------------------------- parameters */

/* One unit's tensors, resolved to pointers into whatever buffer holds that unit. */
typedef struct {
    float *t[NUM_TENSOR_KINDS];
    float *unit_base; /* the unit's first element */
} UnitTensors;

static UnitTensors resolve_unit(const GPTConfig *cfg, int unit, float *unit_base)
{
    UnitTensors tensors = {{0}, unit_base};
    size_t unit_offset = unit_range(cfg, unit).offset;
    int first, end;
    unit_kinds(cfg, unit, &first, &end);
    for (int kind = first; kind < end; kind++)
        tensors.t[kind] = unit_base + (tensor_range(cfg, (TensorKind)kind, unit - 1).offset - unit_offset);
    return tensors;
}

/* A hook that hands back no buffer is a strategy bug: say which, rather than crash later. */
static float *checked(float *buffer, const char *hook, int unit)
{
    if (buffer == NULL) {
        fprintf(stderr, "the strategy's %s hook gave no buffer for unit %d\n", hook, unit);
        abort();
    }
    return buffer;
}

int gpt_num_param_uses(const GPTConfig *cfg) { return 2 * cfg->num_layers + 5; }

UnitUse gpt_param_use(const GPTConfig *cfg, int index)
{
    int L = cfg->num_layers, last_forward = L + 2;
    if (index <= last_forward)
        return (UnitUse){index <= L + 1 ? index : 0, PASS_FORWARD};
    int nth_backward = index - last_forward - 1; /* 0: the LM head, then L+1, L, ..., 1 */
    return (UnitUse){nth_backward == 0 ? 0 : L + 2 - nth_backward, PASS_BACKWARD};
}

UnitUse gpt_param_use_now(const GPT *model) { return gpt_param_use(&model->cfg, model->param_use); }

int gpt_next_param_use(const GPT *model, UnitUse *next)
{
    int index = model->param_use + 1;
    if (index >= gpt_num_param_uses(&model->cfg))
        return 0;
    *next = gpt_param_use(&model->cfg, index);
    return 1;
}

/* The model keeps the order it publishes: a strategy plans on it. */
static void advance_param_use(GPT *model, int unit, Pass pass)
{
    int index = ++model->param_use;
    UnitUse expected = index < gpt_num_param_uses(&model->cfg) ? gpt_param_use(&model->cfg, index)
                                                                : (UnitUse){-1, pass};
    if (expected.unit != unit || expected.pass != pass) {
        fprintf(stderr, "model.c uses unit %d (%s) where gpt_param_use publishes use %d as unit %d\n", unit,
                pass == PASS_FORWARD ? "forward" : "backward", index, expected.unit);
        abort();
    }
}

/* Parameters a strategy gathers for a unit (ZeRO-3) are in use from the unit's acquire to
 * its release: --trace counts them on a track of their own, beside the memory track. */
static void count_gathered(const GPT *model, int unit, int sign)
{
    if (model->hooks.acquire_params != NULL)
        events_count(TRACE_GATHERED_COUNTER, sign * (double)(unit_range(&model->cfg, unit).count * sizeof(float)) / 1e6);
}

/* A unit's compute runs from acquiring its parameters to releasing them: that span is what
 * --trace records as "forward/backward unit N", and what the communication log marks as
 * its start and end (the start with the buffer the unit computes with). */
static float *acquire_params(GPT *model, int unit, Pass pass)
{
    advance_param_use(model, unit, pass);
    float *params = model->hooks.acquire_params != NULL
                        ? checked(model->hooks.acquire_params(model->hooks.run, unit), "acquire_params", unit)
                        : model->params + unit_range(&model->cfg, unit).offset;
    model->unit_began = events_mark_begin(pass == PASS_FORWARD ? "forward_start" : "backward_start", unit, params,
                                          unit_range(&model->cfg, unit).count);
    count_gathered(model, unit, 1);
    return params;
}

static void release_params(GPT *model, int unit, Pass pass)
{
    events_mark_end(pass == PASS_FORWARD ? "forward_end" : "backward_end", unit, model->unit_began,
                    pass == PASS_FORWARD ? "forward" : "backward");
    count_gathered(model, unit, -1);
    if (model->hooks.release_params != NULL)
        model->hooks.release_params(model->hooks.run, unit);
}

static float *unit_grads(GPT *model, int unit)
{
    if (model->hooks.unit_grads != NULL)
        return checked(model->hooks.unit_grads(model->hooks.run, unit), "unit_grads", unit);
    return model->grads + unit_range(&model->cfg, unit).offset;
}

/* grads: the buffer backward wrote the unit's gradients into (the log names it, so that the
 * grader can add up the gradient buffers a strategy keeps). */
static void grads_ready(GPT *model, int unit, const UnitTensors *grads)
{
    events_mark("grads_ready", unit, grads->unit_base, unit_range(&model->cfg, unit).count);
    if (model->hooks.grads_ready != NULL)
        model->hooks.grads_ready(model->hooks.run, unit);
}

int gpt_create_with(GPT *model, const GPTConfig *cfg, const Kernels *kernels, ModelStorage storage, char *err,
                    size_t err_len)
{
    memset(model, 0, sizeof *model);
    model->param_use = -1;
    if (gpt_config_check(cfg, err, err_len) != 0)
        return -1;
    model->cfg = *cfg;
    model->kernels = kernels;
    model->loss_scale = 1.0f;
    model->matmuls_16bit = storage.matmuls_16bit;
    model->matmul_format = storage.matmul_format;
    model->num_params = gpt_num_params(cfg);
    size_t bytes = model->num_params * sizeof(float);
    model->params = kernels->alloc(bytes, MEM_PARAMS);
    if (!storage.no_gradients)
        model->grads = kernels->alloc(bytes, MEM_GRADS);
    if (model->params == NULL || (model->grads == NULL && !storage.no_gradients)) {
        snprintf(err, err_len, "out of memory allocating %zu parameters%s (%.1f MB)", model->num_params,
                 storage.no_gradients ? "" : " and their gradients", (storage.no_gradients ? 1.0 : 2.0) * bytes / 1e6);
        gpt_destroy(model);
        return -1;
    }
    return 0;
}

int gpt_create(GPT *model, const GPTConfig *cfg, const Kernels *kernels, char *err, size_t err_len)
{
    return gpt_create_with(model, cfg, kernels, (ModelStorage){0}, err, err_len);
}

void gpt_drop_params(GPT *model)
{
    model->kernels->free(model->params);
    model->params = NULL;
}

static void free_batch_buffers(GPT *model)
{
    const Kernels *k = model->kernels;
    k->free(model->acts.block);
    k->free(model->scratch.block);
    k->free(model->scratch.gemm_operands);
    k->free(model->inputs);
    k->free(model->targets);
    mem_free(model->acts.layers);
    memset(&model->acts, 0, sizeof model->acts);
    memset(&model->scratch, 0, sizeof model->scratch);
    model->inputs = model->targets = NULL;
    model->batch = model->seq_len = 0;
}

void gpt_destroy(GPT *model)
{
    if (model->kernels == NULL)
        return;
    free_batch_buffers(model);
    model->kernels->free(model->params);
    model->kernels->free(model->grads);
    model->params = model->grads = NULL;
}

static void fill_constant(float *x, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        x[i] = value;
}

static int is_layernorm_weight(TensorKind kind)
{
    return kind == TENSOR_LN1W || kind == TENSOR_LN2W || kind == TENSOR_LNFW;
}

static int is_bias(TensorKind kind)
{
    return kind == TENSOR_LN1B || kind == TENSOR_QKVB || kind == TENSOR_ATTPROJB ||
           kind == TENSOR_LN2B || kind == TENSOR_FCB || kind == TENSOR_FCPROJB || kind == TENSOR_LNFB;
}

static void init_tensor(const GPTConfig *cfg, float *x, TensorKind kind, Rng *rng)
{
    size_t n = tensor_numel(cfg, kind);
    const float std = 0.02f;
    if (is_layernorm_weight(kind))
        fill_constant(x, n, 1.0f);
    else if (is_bias(kind))
        fill_constant(x, n, 0.0f);
    else if (kind == TENSOR_WTE) /* rows past V are padding and stay 0 */
        rng_fill_normal(rng, x, (size_t)cfg->vocab_size * cfg->channels, std);
    else if (kind == TENSOR_ATTPROJW || kind == TENSOR_FCPROJW)
        /* residual projections: keep the residual stream's variance from growing with depth */
        rng_fill_normal(rng, x, n, std / sqrtf(2.0f * cfg->num_layers));
    else
        rng_fill_normal(rng, x, n, std);
}

void gpt_init_weights(GPT *model, uint64_t seed)
{
    const GPTConfig *cfg = &model->cfg;
    float *host = mem_alloc(model->num_params * sizeof(float), MEM_OTHER);
    Rng rng;
    rng_seed(&rng, seed);
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        UnitTensors tensors = resolve_unit(cfg, unit, host + unit_range(cfg, unit).offset);
        for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++)
            if (tensors.t[kind] != NULL)
                init_tensor(cfg, tensors.t[kind], (TensorKind)kind, &rng);
    }
    model->kernels->to_device(model->params, host, model->num_params * sizeof(float));
    mem_free(host);
}

/* ---------------------------------------------------------------- activations */

/* Hands out consecutive slices of one block; with a NULL base it only counts. */
typedef struct {
    float *base;
    size_t used;
} Carver;

static float *carve(Carver *carver, size_t floats)
{
    float *slice = carver->base == NULL ? NULL : carver->base + carver->used;
    carver->used += floats;
    return slice;
}

static void carve_activations(Activations *acts, Carver *c, const GPTConfig *cfg, int B, int T)
{
    size_t BT = (size_t)B * T, C = (size_t)cfg->channels;
    acts->encoded = carve(c, BT * C);
    for (int l = 0; l < cfg->num_layers; l++) {
        LayerActivations *a = &acts->layers[l];
        a->ln1 = carve(c, BT * C);
        a->ln1_mean = carve(c, BT);
        a->ln1_rstd = carve(c, BT);
        a->qkv = carve(c, 3 * BT * C);
        a->atty = carve(c, BT * C);
        a->att = carve(c, (size_t)B * cfg->num_heads * T * T);
        a->residual2 = carve(c, BT * C);
        a->ln2 = carve(c, BT * C);
        a->ln2_mean = carve(c, BT);
        a->ln2_rstd = carve(c, BT);
        a->fch = carve(c, 4 * BT * C);
        a->fch_gelu = carve(c, 4 * BT * C);
        a->residual3 = carve(c, BT * C);
    }
    acts->lnf = carve(c, BT * C);
    acts->lnf_mean = carve(c, BT);
    acts->lnf_rstd = carve(c, BT);
    acts->probs = carve(c, BT * cfg->vocab_size);
}

static void carve_scratch(Scratch *s, Carver *c, const GPTConfig *cfg, int B, int T)
{
    size_t BTC = (size_t)B * T * cfg->channels;
    s->dresidual = carve(c, BTC);
    s->dbtc = carve(c, BTC);
    s->dqkv = carve(c, 3 * BTC);
    s->dfch = carve(c, 4 * BTC);
    s->attention = carve(c, attention_scratch_floats(T, cfg->channels, cfg->num_heads));
    s->matmul_out = s->dbtc; /* forward and backward never need it at the same time */
}

/* The most operands one product rounds: attention's (kernels.h), or one matmul's (its
 * backward: N*C + OC*C + N*OC) over the model's matmuls: the block's four and the LM head. */
static size_t most_gemm_operands(const GPTConfig *cfg, int B, int T)
{
    size_t N = (size_t)B * T, C = (size_t)cfg->channels, V = (size_t)cfg->vocab_size;
    size_t shapes[][2] = {{C, 3 * C}, {C, C}, {C, 4 * C}, {4 * C, C}, {C, V}}; /* inputs, outputs */
    size_t most = attention_operands16(B, T, cfg->channels, cfg->num_heads);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        size_t in = shapes[i][0], out = shapes[i][1], count = N * in + out * in + N * out;
        most = count > most ? count : most;
    }
    return most;
}

static int allocate_batch_buffers(GPT *model, int B, int T)
{
    const Kernels *k = model->kernels;
    const GPTConfig *cfg = &model->cfg;
    model->acts.layers = mem_alloc((size_t)cfg->num_layers * sizeof(LayerActivations), MEM_OTHER);
    if (model->acts.layers == NULL)
        return -1;
    Carver count = {NULL, 0};
    Activations counting = {.layers = model->acts.layers};
    carve_activations(&counting, &count, cfg, B, T);
    model->acts.floats = count.used;
    Carver scratch_count = {NULL, 0};
    Scratch scratch_counting;
    carve_scratch(&scratch_counting, &scratch_count, cfg, B, T);
    model->scratch.floats = scratch_count.used;

    model->acts.block = k->alloc(model->acts.floats * sizeof(float), MEM_ACTIVATIONS);
    model->scratch.block = k->alloc(model->scratch.floats * sizeof(float), MEM_SCRATCH);
    model->inputs = k->alloc((size_t)B * T * sizeof(int), MEM_DATA);
    model->targets = k->alloc((size_t)B * T * sizeof(int), MEM_DATA);
    if (model->matmuls_16bit)
        model->scratch.gemm_operands =
            k->alloc(most_gemm_operands(cfg, B, T) * k->operand16_bytes, MEM_SCRATCH);
    if (!model->acts.block || !model->scratch.block || !model->inputs || !model->targets ||
        (model->matmuls_16bit && !model->scratch.gemm_operands))
        return -1;
    Carver acts_carver = {model->acts.block, 0};
    carve_activations(&model->acts, &acts_carver, cfg, B, T);
    Carver scratch_carver = {model->scratch.block, 0};
    carve_scratch(&model->scratch, &scratch_carver, cfg, B, T);
    return 0;
}

int gpt_set_batch(GPT *model, int B, int T, char *err, size_t err_len)
{
    free_batch_buffers(model);
    if (B < 1 || T < 1 || T > model->cfg.max_seq_len) {
        snprintf(err, err_len, "batch %d x sequence %d does not fit the model (maxT=%d)",
                 B, T, model->cfg.max_seq_len);
        return -1;
    }
    if (allocate_batch_buffers(model, B, T) != 0) {
        snprintf(err, err_len, "out of memory allocating activations for batch %d x %d", B, T);
        free_batch_buffers(model);
        return -1;
    }
    model->batch = B;
    model->seq_len = T;
    return 0;
}

/* ---------------------------------------------------------------- matmuls */

/* The kernels' matmuls, on 16-bit operands when the model was created with matmuls_16bit. */
static void matmul_forward(GPT *model, float *out, const float *inp, const float *weight, const float *bias, int N,
                           int C, int OC)
{
    const Kernels *k = model->kernels;
    if (model->matmuls_16bit)
        k->matmul_forward_16(model->matmul_format, out, inp, weight, bias, N, C, OC, model->scratch.gemm_operands);
    else
        k->matmul_forward(out, inp, weight, bias, N, C, OC);
}

static void matmul_backward(GPT *model, float *dinp, float *dweight, float *dbias, const float *dout,
                            const float *inp, const float *weight, int N, int C, int OC)
{
    const Kernels *k = model->kernels;
    if (model->matmuls_16bit)
        k->matmul_backward_16(model->matmul_format, dinp, dweight, dbias, dout, inp, weight, N, C, OC,
                              model->scratch.gemm_operands);
    else
        k->matmul_backward(dinp, dweight, dbias, dout, inp, weight, N, C, OC);
}

/* The kernels' attention, its products on 16-bit operands as the matmuls' are. */
static void attention_forward(GPT *model, float *out, float *att, const float *qkv)
{
    const Kernels *k = model->kernels;
    int B = model->batch, T = model->seq_len, C = model->cfg.channels, NH = model->cfg.num_heads;
    if (model->matmuls_16bit)
        k->attention_forward_16(model->matmul_format, out, att, model->scratch.attention, qkv, B, T, C, NH,
                                model->scratch.gemm_operands);
    else
        k->attention_forward(out, att, model->scratch.attention, qkv, B, T, C, NH);
}

static void attention_backward(GPT *model, float *dqkv, const float *dout, const float *qkv, const float *att)
{
    const Kernels *k = model->kernels;
    int B = model->batch, T = model->seq_len, C = model->cfg.channels, NH = model->cfg.num_heads;
    if (model->matmuls_16bit)
        k->attention_backward_16(model->matmul_format, dqkv, model->scratch.attention, dout, qkv, att, B, T, C, NH,
                                 model->scratch.gemm_operands);
    else
        k->attention_backward(dqkv, model->scratch.attention, dout, qkv, att, B, T, C, NH);
}

/* ---------------------------------------------------------------- forward */

static void block_forward(GPT *model, int layer, const UnitTensors *p, const float *inp)
{
    const Kernels *k = model->kernels;
    int B = model->batch, T = model->seq_len, C = model->cfg.channels;
    int N = B * T;
    LayerActivations *a = &model->acts.layers[layer];
    float *proj = model->scratch.matmul_out;

    k->layernorm_forward(a->ln1, a->ln1_mean, a->ln1_rstd, inp, p->t[TENSOR_LN1W], p->t[TENSOR_LN1B], N, C);
    matmul_forward(model, a->qkv, a->ln1, p->t[TENSOR_QKVW], p->t[TENSOR_QKVB], N, C, 3 * C);
    attention_forward(model, a->atty, a->att, a->qkv);
    matmul_forward(model, proj, a->atty, p->t[TENSOR_ATTPROJW], p->t[TENSOR_ATTPROJB], N, C, C);
    k->residual_forward(a->residual2, inp, proj, (size_t)N * C);
    k->layernorm_forward(a->ln2, a->ln2_mean, a->ln2_rstd, a->residual2, p->t[TENSOR_LN2W], p->t[TENSOR_LN2B], N, C);
    matmul_forward(model, a->fch, a->ln2, p->t[TENSOR_FCW], p->t[TENSOR_FCB], N, C, 4 * C);
    k->gelu_forward(a->fch_gelu, a->fch, (size_t)N * 4 * C);
    matmul_forward(model, proj, a->fch_gelu, p->t[TENSOR_FCPROJW], p->t[TENSOR_FCPROJB], N, 4 * C, C);
    k->residual_forward(a->residual3, a->residual2, proj, (size_t)N * C);
}

static const float *block_input(const GPT *model, int layer)
{
    return layer == 0 ? model->acts.encoded : model->acts.layers[layer - 1].residual3;
}

float gpt_forward(GPT *model, const int *inputs, const int *targets)
{
    const Kernels *k = model->kernels;
    const GPTConfig *cfg = &model->cfg;
    int B = model->batch, T = model->seq_len, C = cfg->channels, L = cfg->num_layers;
    size_t token_bytes = (size_t)B * T * sizeof(int);
    k->to_device(model->inputs, inputs, token_bytes);
    model->has_targets = targets != NULL;
    if (targets != NULL)
        k->to_device(model->targets, targets, token_bytes);
    model->param_use = -1; /* a step's uses start again (gpt_param_use) */
    events_micro(model->accumulated_passes);

    UnitTensors p = resolve_unit(cfg, 0, acquire_params(model, 0, PASS_FORWARD));
    k->encoder_forward(model->acts.encoded, model->inputs, p.t[TENSOR_WTE], p.t[TENSOR_WPE], B, T, C);
    release_params(model, 0, PASS_FORWARD);
    for (int l = 0; l < L; l++) {
        p = resolve_unit(cfg, l + 1, acquire_params(model, l + 1, PASS_FORWARD));
        block_forward(model, l, &p, block_input(model, l));
        release_params(model, l + 1, PASS_FORWARD);
    }
    Activations *a = &model->acts;
    p = resolve_unit(cfg, L + 1, acquire_params(model, L + 1, PASS_FORWARD));
    k->layernorm_forward(a->lnf, a->lnf_mean, a->lnf_rstd, block_input(model, L),
                         p.t[TENSOR_LNFW], p.t[TENSOR_LNFB], B * T, C);
    release_params(model, L + 1, PASS_FORWARD);
    /* the LM head is wte itself (tied), over the V real rows only */
    p = resolve_unit(cfg, 0, acquire_params(model, 0, PASS_FORWARD));
    matmul_forward(model, a->probs, a->lnf, p.t[TENSOR_WTE], NULL, B * T, C, cfg->vocab_size);
    release_params(model, 0, PASS_FORWARD);
    return k->softmax_crossentropy_forward(a->probs, targets ? model->targets : NULL, B * T, cfg->vocab_size);
}

/* ---------------------------------------------------------------- backward */

/* On entry scratch.dresidual holds d(residual3); on return d(block input). */
static void block_backward(GPT *model, int layer, const UnitTensors *p, const UnitTensors *g)
{
    const Kernels *k = model->kernels;
    int B = model->batch, T = model->seq_len, C = model->cfg.channels;
    int N = B * T;
    LayerActivations *a = &model->acts.layers[layer];
    Scratch *s = &model->scratch;

    matmul_backward(model, s->dfch, g->t[TENSOR_FCPROJW], g->t[TENSOR_FCPROJB], s->dresidual,
                    a->fch_gelu, p->t[TENSOR_FCPROJW], N, 4 * C, C);
    k->gelu_backward(s->dfch, a->fch, (size_t)N * 4 * C);
    matmul_backward(model, s->dbtc, g->t[TENSOR_FCW], g->t[TENSOR_FCB], s->dfch, a->ln2, p->t[TENSOR_FCW], N, C,
                    4 * C);
    k->layernorm_backward(s->dresidual, g->t[TENSOR_LN2W], g->t[TENSOR_LN2B], s->dbtc, a->residual2,
                          p->t[TENSOR_LN2W], a->ln2_mean, a->ln2_rstd, N, C);
    matmul_backward(model, s->dbtc, g->t[TENSOR_ATTPROJW], g->t[TENSOR_ATTPROJB], s->dresidual, a->atty,
                    p->t[TENSOR_ATTPROJW], N, C, C);
    attention_backward(model, s->dqkv, s->dbtc, a->qkv, a->att);
    matmul_backward(model, s->dbtc, g->t[TENSOR_QKVW], g->t[TENSOR_QKVB], s->dqkv, a->ln1, p->t[TENSOR_QKVW], N, C,
                    3 * C);
    k->layernorm_backward(s->dresidual, g->t[TENSOR_LN1W], g->t[TENSOR_LN1B], s->dbtc, block_input(model, layer),
                          p->t[TENSOR_LN1W], a->ln1_mean, a->ln1_rstd, N, C);
}

static UnitTensors grads_of(GPT *model, int unit)
{
    return resolve_unit(&model->cfg, unit, unit_grads(model, unit));
}

/* LM head and final LayerNorm: leaves d(last block output) in scratch.dresidual. */
static void head_backward(GPT *model)
{
    const Kernels *k = model->kernels;
    const GPTConfig *cfg = &model->cfg;
    int N = model->batch * model->seq_len, C = cfg->channels, L = cfg->num_layers;
    Activations *a = &model->acts;
    Scratch *s = &model->scratch;

    k->softmax_crossentropy_backward(a->probs, model->targets, N, cfg->vocab_size,
                                     model->loss_scale / N);
    UnitTensors p = resolve_unit(cfg, 0, acquire_params(model, 0, PASS_BACKWARD));
    UnitTensors g = grads_of(model, 0);
    matmul_backward(model, s->dbtc, g.t[TENSOR_WTE], NULL, a->probs, a->lnf, p.t[TENSOR_WTE], N, C, cfg->vocab_size);
    release_params(model, 0, PASS_BACKWARD);

    p = resolve_unit(cfg, L + 1, acquire_params(model, L + 1, PASS_BACKWARD));
    g = grads_of(model, L + 1);
    k->zero(s->dresidual, (size_t)N * C * sizeof(float));
    k->layernorm_backward(s->dresidual, g.t[TENSOR_LNFW], g.t[TENSOR_LNFB], s->dbtc, block_input(model, L),
                          p.t[TENSOR_LNFW], a->lnf_mean, a->lnf_rstd, N, C);
    release_params(model, L + 1, PASS_BACKWARD);
    grads_ready(model, L + 1, &g);
}

void gpt_backward(GPT *model)
{
    const GPTConfig *cfg = &model->cfg;
    if (!model->has_targets) {
        /* a programming error, not bad input: backward needs a forward with targets */
        fprintf(stderr, "gpt_backward: no forward with targets since the last backward\n");
        abort();
    }
    model->has_targets = 0; /* backward turns the probabilities into d(logits) in place */
    head_backward(model);
    for (int l = cfg->num_layers - 1; l >= 0; l--) {
        UnitTensors p = resolve_unit(cfg, l + 1, acquire_params(model, l + 1, PASS_BACKWARD));
        UnitTensors g = grads_of(model, l + 1);
        block_backward(model, l, &p, &g);
        release_params(model, l + 1, PASS_BACKWARD);
        grads_ready(model, l + 1, &g);
    }
    /* the embedding's backward needs no parameters, only unit 0's gradients */
    TraceMark began = events_mark_begin("backward_start", 0, NULL, unit_range(cfg, 0).count);
    UnitTensors g = grads_of(model, 0);
    model->kernels->encoder_backward(g.t[TENSOR_WTE], g.t[TENSOR_WPE], model->scratch.dresidual,
                                     model->inputs, model->batch, model->seq_len, cfg->channels);
    events_mark_end("backward_end", 0, began, "backward embedding");
    grads_ready(model, 0, &g);
    model->accumulated_passes++;
}

void gpt_zero_grad(GPT *model)
{
    model->accumulated_passes = 0;
    if (model->grads == NULL) /* sharded gradients (ZeRO-2/3): the strategy zeroes its own */
        return;
    model->kernels->zero(model->grads, model->num_params * sizeof(float));
}

double gpt_flops_per_token(const GPTConfig *cfg, int T)
{
    double L = cfg->num_layers, C = cfg->channels, V = cfg->vocab_size;
    double matmul_weights = L * 12.0 * C * C + V * C; /* every weight a token meets in a matmul */
    /* q.k^T and p.v over the whole T x T square, as MFU is usually defined (PaLM's 12 L T C
     * per token); a causal kernel computes about half of it */
    double attention = L * 2.0 * T * C;
    return 6.0 * matmul_weights + 6.0 * attention;   /* 2 flops per MAC, backward = 2x forward */
}
