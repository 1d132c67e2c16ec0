/* The model's hooks (GPTHooks), on which overlap, bucketing and ZeRO build: when
 * grads_ready fires and what is final by then, which pass acquires which unit's
 * parameters, and that a strategy may move parameters and gradients to buffers of its own
 * without changing a bit of the result. Also: gradient accumulation, seeded determinism
 * and the statistics of the GPT-2 initialisation. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_config.h"
#include "kernels.h"
#include "layout.h"
#include "model.h"
#include "tiny_model.h"
#include "rng.h"
#include "strategy.h"


static void make_tiny_model(GPT *m, uint64_t seed)
{
    GPTConfig cfg = tiny_model_config();
    char err[256];
    cr_assert_eq(gpt_create(m, &cfg, &cpu_kernels, err, sizeof err), 0, "%s", err);
    gpt_init_weights(m, seed);
    cr_assert_eq(gpt_set_batch(m, TINY_B, TINY_T, err, sizeof err), 0, "%s", err);
}

static float *copy_floats(const float *x, size_t n)
{
    float *copy = malloc(n * sizeof(float));
    memcpy(copy, x, n * sizeof(float));
    return copy;
}

/* One plain forward + backward from zeroed gradients, no hooks: the reference. */
static float reference_step(GPT *m)
{
    float loss = gpt_forward(m, tiny_inputs, tiny_targets);
    gpt_zero_grad(m);
    gpt_backward(m);
    return loss;
}

/* ---------------------------------------------------------------- a recording strategy */

typedef enum { EV_ACQUIRE, EV_RELEASE, EV_UNIT_GRADS, EV_GRADS_READY } EventKind;

typedef struct {
    EventKind kind;
    int unit;
    Pass pass;
} Event;

enum { MAX_EVENTS = 512 };

typedef struct {
    GPT *model;
    Event events[MAX_EVENTS];
    int count;
    /* grads_ready: unit u's gradients copied here (same layout) the first time u is
     * declared ready in a backward */
    float *snapshot;
    int snapped[64];
    /* acquire_params: when set, the unit's values are copied from master into working and
     * working is returned; release_params poisons the unit's working range with NaN (as
     * ZeRO-3 frees its gathered copy) */
    const float *master;
    float *working;
    /* unit_grads: when set, backward accumulates here instead of into model->grads */
    float *grads_elsewhere;
    RunContext run; /* what the hooks are given: its state is the recorder */
} Recorder;

static void record(Recorder *rec, EventKind kind, int unit, Pass pass)
{
    cr_assert_lt(rec->count, MAX_EVENTS, "too many hook calls");
    cr_assert(unit >= 0 && unit < gpt_num_units(&rec->model->cfg) && unit < 64,
              "hook called for unit %d of %d", unit, gpt_num_units(&rec->model->cfg));
    rec->events[rec->count++] = (Event){kind, unit, pass};
}

static float *rec_acquire(RunContext *run, int unit)
{
    Recorder *rec = run->state;
    record(rec, EV_ACQUIRE, unit, gpt_param_use_now(rec->model).pass);
    Range r = unit_range(&rec->model->cfg, unit);
    if (rec->working == NULL)
        return rec->model->params + r.offset;
    memcpy(rec->working + r.offset, rec->master + r.offset, r.count * sizeof(float));
    return rec->working + r.offset;
}

static void rec_release(RunContext *run, int unit)
{
    Recorder *rec = run->state;
    record(rec, EV_RELEASE, unit, gpt_param_use_now(rec->model).pass);
    if (rec->working != NULL) {
        Range r = unit_range(&rec->model->cfg, unit);
        for (size_t i = 0; i < r.count; i++)
            rec->working[r.offset + i] = NAN;
    }
}

static float *rec_unit_grads(RunContext *run, int unit)
{
    Recorder *rec = run->state;
    record(rec, EV_UNIT_GRADS, unit, PASS_BACKWARD);
    float *base = rec->grads_elsewhere != NULL ? rec->grads_elsewhere : rec->model->grads;
    return base + unit_range(&rec->model->cfg, unit).offset;
}

static void rec_grads_ready(RunContext *run, int unit)
{
    Recorder *rec = run->state;
    record(rec, EV_GRADS_READY, unit, PASS_BACKWARD);
    if (rec->snapshot != NULL && !rec->snapped[unit]) {
        rec->snapped[unit] = 1;
        Range r = unit_range(&rec->model->cfg, unit);
        const float *grads = rec->grads_elsewhere != NULL ? rec->grads_elsewhere : rec->model->grads;
        memcpy(rec->snapshot + r.offset, grads + r.offset, r.count * sizeof(float));
    }
}

static Recorder *new_recorder(GPT *m)
{
    Recorder *rec = calloc(1, sizeof *rec);
    rec->model = m;
    rec->run = (RunContext){.model = m, .state = rec};
    m->hooks = (GPTHooks){.run = &rec->run, .acquire_params = rec_acquire, .release_params = rec_release,
                          .unit_grads = rec_unit_grads, .grads_ready = rec_grads_ready};
    return rec;
}

static void free_recorder(GPT *m, Recorder *rec)
{
    m->hooks = (GPTHooks){0};
    free(rec->snapshot);
    free(rec);
}

static int count_events(const Recorder *rec, EventKind kind, int unit, Pass pass)
{
    int n = 0;
    for (int i = 0; i < rec->count; i++)
        n += rec->events[i].kind == kind && rec->events[i].unit == unit && rec->events[i].pass == pass;
    return n;
}

/* Every release closes an open acquire of the same unit and pass, and none is left open. */
static void expect_balanced_acquires(const Recorder *rec, const char *phase, int units)
{
    int open[64][2] = {{0}};
    cr_assert_leq(units, 64);
    for (int i = 0; i < rec->count; i++) {
        const Event *e = &rec->events[i];
        if (e->kind == EV_ACQUIRE)
            open[e->unit][e->pass]++;
        else if (e->kind == EV_RELEASE) {
            cr_assert_gt(open[e->unit][e->pass], 0, "%s: unit %d released (pass %d) without an acquire",
                         phase, e->unit, (int)e->pass);
            open[e->unit][e->pass]--;
        }
    }
    for (int u = 0; u < units; u++)
        cr_assert(open[u][0] == 0 && open[u][1] == 0, "%s: unit %d acquired and never released", phase, u);
}

/* ---------------------------------------------------------------- grads_ready */

Test(hooks, grads_ready_once_per_unit_from_last_to_first)
{
    GPT m;
    make_tiny_model(&m, 7);
    Recorder *rec = new_recorder(&m);
    gpt_forward(&m, tiny_inputs, tiny_targets);
    for (int i = 0; i < rec->count; i++)
        cr_assert_neq(rec->events[i].kind, EV_GRADS_READY, "grads_ready during forward");
    rec->count = 0;
    gpt_zero_grad(&m);
    gpt_backward(&m);

    int L = m.cfg.num_layers, ready = 0;
    for (int i = 0; i < rec->count; i++) {
        if (rec->events[i].kind != EV_GRADS_READY)
            continue;
        int want = L + 1 - ready; /* L+1, L, ..., 1, 0 */
        cr_assert_eq(rec->events[i].unit, want, "grads_ready call %d was for unit %d, want %d",
                     ready, rec->events[i].unit, want);
        ready++;
    }
    cr_assert_eq(ready, L + 2, "grads_ready called %d times, want once per unit (%d)", ready, L + 2);
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

Test(hooks, a_unit_is_final_when_declared_ready)
{
    GPT m;
    make_tiny_model(&m, 7);
    Recorder *rec = new_recorder(&m);
    rec->snapshot = calloc(m.num_params, sizeof(float));
    /* start from non-zero gradients (as after a previous micro-batch), so a unit touched
     * after its hook shows up whatever the value it would add */
    reference_step(&m);
    rec->count = 0;
    memset(rec->snapped, 0, sizeof rec->snapped);
    gpt_forward(&m, tiny_inputs, tiny_targets);
    gpt_backward(&m);

    for (int unit = 0; unit < gpt_num_units(&m.cfg); unit++) {
        Range r = unit_range(&m.cfg, unit);
        size_t changed = 0, first = 0;
        for (size_t i = 0; i < r.count; i++)
            if (memcmp(&rec->snapshot[r.offset + i], &m.grads[r.offset + i], sizeof(float)) != 0 &&
                changed++ == 0)
                first = i;
        cr_assert_eq(changed, 0, "unit %d: %zu gradients changed after grads_ready "
                     "(first at +%zu: %g at the hook, %g at the end)", unit, changed, first,
                     rec->snapshot[r.offset + first], m.grads[r.offset + first]);
    }
    /* nor does backward ask for a unit's gradient buffer (unit_grads) after its hook */
    for (int unit = 0; unit < gpt_num_units(&m.cfg); unit++) {
        int asked = -1, ready = -1;
        for (int i = 0; i < rec->count; i++) {
            if (rec->events[i].unit != unit)
                continue;
            if (rec->events[i].kind == EV_UNIT_GRADS)
                asked = i;
            if (rec->events[i].kind == EV_GRADS_READY)
                ready = i;
        }
        cr_assert(asked >= 0 && asked < ready, "unit %d: unit_grads (last at %d) not before grads_ready (%d)",
                  unit, asked, ready);
    }
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

/* ---------------------------------------------------------------- acquire / release */

Test(hooks, every_unit_is_acquired_in_both_passes)
{
    GPT m;
    make_tiny_model(&m, 7);
    Recorder *rec = new_recorder(&m);
    int L = m.cfg.num_layers, units = gpt_num_units(&m.cfg);

    gpt_forward(&m, tiny_inputs, tiny_targets);
    expect_balanced_acquires(rec, "forward", units);
    int next_first = 0; /* forward meets units in order 0, 1, ..., L+1 */
    int seen[64] = {0};
    for (int i = 0; i < rec->count; i++) {
        const Event *e = &rec->events[i];
        cr_assert_neq(e->kind, EV_UNIT_GRADS, "forward asked for gradients of unit %d", e->unit);
        if (e->kind != EV_ACQUIRE)
            continue;
        cr_assert_eq(e->pass, PASS_FORWARD, "forward acquired unit %d with the backward pass", e->unit);
        if (!seen[e->unit]) {
            cr_assert_eq(e->unit, next_first, "forward first acquired unit %d, want %d", e->unit, next_first);
            seen[e->unit] = 1;
            next_first++;
        }
    }
    cr_assert_eq(next_first, units, "forward acquired %d of %d units", next_first, units);

    rec->count = 0;
    gpt_zero_grad(&m);
    gpt_backward(&m);
    expect_balanced_acquires(rec, "backward", units);
    for (int unit = 0; unit < units; unit++)
        cr_assert_gt(count_events(rec, EV_ACQUIRE, unit, PASS_BACKWARD), 0,
                     "backward never acquired unit %d", unit);
    int last_block = L + 1; /* the final LayerNorm and the blocks: L+1, L, ..., 1, never back up */
    for (int i = 0; i < rec->count; i++) {
        const Event *e = &rec->events[i];
        if (e->kind == EV_ACQUIRE) {
            cr_assert_eq(e->pass, PASS_BACKWARD, "backward acquired unit %d with the forward pass", e->unit);
            if (e->unit >= 1) {
                cr_assert_leq(e->unit, last_block, "backward acquired unit %d after unit %d",
                              e->unit, last_block);
                last_block = e->unit;
            }
            /* a unit's parameters are not needed once its gradients are final */
            for (int j = 0; j < i; j++)
                cr_assert(!(rec->events[j].kind == EV_GRADS_READY && rec->events[j].unit == e->unit),
                          "unit %d acquired after its grads_ready", e->unit);
        }
    }
    cr_assert_eq(last_block, 1, "backward stopped at unit %d", last_block);
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

/* The order the model publishes (gpt_param_use) is the order it acquires in, use for use,
 * and it is the order a GPT-2 step has: forward 0, 1, ..., L+1, 0 (the tied LM head);
 * backward 0, L+1, L, ..., 1. gpt_next_param_use looks one use ahead. */
Test(hooks, the_model_acquires_in_the_order_it_publishes)
{
    GPT m;
    make_tiny_model(&m, 7);
    Recorder *rec = new_recorder(&m);
    int L = m.cfg.num_layers, want[64], num_want = 0;
    for (int unit = 0; unit <= L + 1; unit++)
        want[num_want++] = unit;
    want[num_want++] = 0;
    int first_backward = num_want;
    want[num_want++] = 0;
    for (int unit = L + 1; unit >= 1; unit--)
        want[num_want++] = unit;
    cr_assert_eq(gpt_num_param_uses(&m.cfg), num_want);
    for (int i = 0; i < num_want; i++) {
        UnitUse use = gpt_param_use(&m.cfg, i);
        cr_assert_eq(use.unit, want[i], "use %d: published unit %d, want %d", i, use.unit, want[i]);
        cr_assert_eq(use.pass, i < first_backward ? PASS_FORWARD : PASS_BACKWARD, "use %d: wrong pass", i);
    }

    gpt_forward(&m, tiny_inputs, tiny_targets);
    UnitUse next;
    cr_assert(gpt_next_param_use(&m, &next), "after forward, backward's uses follow");
    cr_assert(next.unit == 0 && next.pass == PASS_BACKWARD, "after forward: unit %d next", next.unit);
    gpt_zero_grad(&m);
    gpt_backward(&m);
    cr_assert(!gpt_next_param_use(&m, &next), "after backward no use follows, but unit %d does", next.unit);
    int made = 0;
    for (int i = 0; i < rec->count; i++) {
        const Event *e = &rec->events[i];
        if (e->kind != EV_ACQUIRE)
            continue;
        cr_assert_lt(made, num_want, "more acquires than the %d published uses", num_want);
        cr_assert_eq(e->unit, want[made], "acquire %d was unit %d, published %d", made, e->unit, want[made]);
        cr_assert_eq(e->pass, made < first_backward ? PASS_FORWARD : PASS_BACKWARD);
        made++;
    }
    cr_assert_eq(made, num_want, "%d acquires for %d published uses", made, num_want);
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

/* ZeRO-3: parameters come from a gathered working copy that only exists between acquire
 * and release; the model's own buffer may hold anything (here NaN). Bit-identical loss
 * and gradients prove that the model reads parameters only through acquire_params and
 * never after release_params. */
Test(hooks, parameters_from_a_working_copy_give_identical_results)
{
    GPT m;
    make_tiny_model(&m, 11);
    float want_loss = reference_step(&m);
    float *want_grads = copy_floats(m.grads, m.num_params);

    Recorder *rec = new_recorder(&m);
    float *master = copy_floats(m.params, m.num_params);
    rec->master = master;
    rec->working = malloc(m.num_params * sizeof(float));
    for (size_t i = 0; i < m.num_params; i++) {
        rec->working[i] = NAN;
        m.params[i] = NAN;
    }
    float loss = gpt_forward(&m, tiny_inputs, tiny_targets);
    gpt_zero_grad(&m);
    gpt_backward(&m);
    cr_assert(memcmp(&loss, &want_loss, sizeof loss) == 0, "loss %.9g, want %.9g", loss, want_loss);
    for (size_t i = 0; i < m.num_params; i++)
        cr_assert(memcmp(&m.grads[i], &want_grads[i], sizeof(float)) == 0,
                  "gradient %zu: %.9g, want %.9g", i, m.grads[i], want_grads[i]);

    /* and the hook's buffer really is the one read: other values, other loss */
    for (size_t i = 0; i < m.num_params; i++)
        master[i] *= 1.5f;
    float other = gpt_forward(&m, tiny_inputs, tiny_targets);
    cr_assert(isfinite(other) && other != want_loss, "loss %g ignores the acquired parameters", other);

    free(rec->working);
    free(master);
    free(want_grads);
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

/* ZeRO-2 and bucketing: gradients may be accumulated in a buffer of the strategy's. */
Test(hooks, gradients_into_another_buffer_are_identical)
{
    GPT m;
    make_tiny_model(&m, 13);
    reference_step(&m);
    float *want = copy_floats(m.grads, m.num_params);

    Recorder *rec = new_recorder(&m);
    rec->grads_elsewhere = calloc(m.num_params, sizeof(float));
    gpt_zero_grad(&m);
    gpt_forward(&m, tiny_inputs, tiny_targets);
    gpt_backward(&m);
    cr_assert(memcmp(rec->grads_elsewhere, want, m.num_params * sizeof(float)) == 0,
              "gradients accumulated elsewhere differ from the model's own");
    for (size_t i = 0; i < m.num_params; i++)
        cr_assert(m.grads[i] == 0.0f, "model gradient %zu written (%g) although unit_grads moved it", i, m.grads[i]);

    free(rec->grads_elsewhere);
    free(want);
    free_recorder(&m, rec);
    gpt_destroy(&m);
}

/* ---------------------------------------------------------------- accumulation */

Test(hooks, two_backwards_without_zero_grad_accumulate)
{
    GPT m;
    make_tiny_model(&m, 17);
    float loss1 = reference_step(&m);
    float *once = copy_floats(m.grads, m.num_params);
    float loss2 = gpt_forward(&m, tiny_inputs, tiny_targets);
    gpt_backward(&m);
    cr_assert(loss1 == loss2, "same batch, different loss: %g vs %g", loss1, loss2);

    double largest = 0.0;
    size_t nonzero = 0;
    for (size_t i = 0; i < m.num_params; i++) {
        largest = fmax(largest, fabs(once[i]));
        nonzero += once[i] != 0.0f;
    }
    cr_assert_gt(nonzero, m.num_params / 2, "only %zu of %zu gradients are non-zero", nonzero, m.num_params);
    /* Not bit-exact: where a unit gets several contributions (wte: LM head and embedding)
     * (a + b) + a + b rounds differently from 2 (a + b). Allow a few float ulps of the
     * tensor's scale. A backward that overwrote instead of adding would be off by 50%. */
    for (size_t i = 0; i < m.num_params; i++) {
        double want = 2.0 * once[i];
        cr_assert(fabs(m.grads[i] - want) <= 1e-6 * largest + 4e-7 * fabs(want),
                  "gradient %zu after two backwards: %.9g, want 2 x %.9g", i, m.grads[i], once[i]);
    }
    free(once);
    gpt_destroy(&m);
}

/* A strategy that accumulates (lesson 06) tells the last pass by this count. */
Test(hooks, the_model_counts_the_backward_passes_since_zero_grad)
{
    GPT m;
    make_tiny_model(&m, 17);
    gpt_zero_grad(&m);
    cr_assert_eq(m.accumulated_passes, 0);
    for (int pass = 1; pass <= 3; pass++) {
        gpt_forward(&m, tiny_inputs, tiny_targets);
        cr_assert_eq(m.accumulated_passes, pass - 1, "a forward does not count");
        gpt_backward(&m);
        cr_assert_eq(m.accumulated_passes, pass);
    }
    gpt_forward(&m, tiny_inputs, NULL);
    cr_assert_eq(m.accumulated_passes, 3, "a forward without targets does not count");
    gpt_zero_grad(&m);
    cr_assert_eq(m.accumulated_passes, 0);
    gpt_destroy(&m);
}

/* ---------------------------------------------------------------- determinism */

Test(hooks, same_seed_same_model_other_seed_other_model)
{
    GPT a, b, c;
    make_tiny_model(&a, 42);
    make_tiny_model(&b, 42);
    make_tiny_model(&c, 43);
    cr_assert(memcmp(a.params, b.params, a.num_params * sizeof(float)) == 0, "same seed, different params");
    float loss_a = gpt_forward(&a, tiny_inputs, tiny_targets);
    float loss_b = gpt_forward(&b, tiny_inputs, tiny_targets);
    float loss_c = gpt_forward(&c, tiny_inputs, tiny_targets);
    cr_assert(memcmp(&loss_a, &loss_b, sizeof loss_a) == 0, "same seed: loss %.9g vs %.9g", loss_a, loss_b);

    size_t random = 0, differ = 0;
    for (size_t i = 0; i < a.num_params; i++) {
        int drawn = a.params[i] != 0.0f && a.params[i] != 1.0f;
        random += drawn;
        differ += drawn && a.params[i] != c.params[i];
    }
    cr_assert_gt(random, 0u);
    cr_assert_eq(differ, random, "seeds 42 and 43 share %zu of %zu random weights", random - differ, random);
    cr_assert(loss_a != loss_c, "seeds 42 and 43 give the same loss %.9g", loss_a);
    gpt_destroy(&a);
    gpt_destroy(&b);
    gpt_destroy(&c);
}

/* "Draws in layout order": replaying the generator over the units in order, one normal
 * per random weight, must give the same numbers (to float rounding of the std). */
Test(hooks, weights_are_drawn_in_layout_order)
{
    GPT m;
    make_tiny_model(&m, 2024);
    const GPTConfig *cfg = &m.cfg;
    Rng rng;
    rng_seed(&rng, 2024);
    double residual_std = 0.02 / sqrt(2.0 * cfg->num_layers);
    size_t checked = 0;
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        int first, end;
        unit_kinds(cfg, unit, &first, &end);
        for (int kind = first; kind < end; kind++) {
            double std = kind == TENSOR_ATTPROJW || kind == TENSOR_FCPROJW ? residual_std : 0.02;
            int drawn = kind == TENSOR_WTE || kind == TENSOR_WPE || kind == TENSOR_QKVW ||
                        kind == TENSOR_ATTPROJW || kind == TENSOR_FCW || kind == TENSOR_FCPROJW;
            if (!drawn)
                continue;
            Range r = tensor_range(cfg, (TensorKind)kind, unit - 1);
            size_t count = kind == TENSOR_WTE ? (size_t)cfg->vocab_size * cfg->channels : r.count;
            for (size_t i = 0; i < count; i++) {
                double want = std * rng_normal(&rng);
                float got = m.params[r.offset + i];
                cr_assert(fabs(got - want) <= 1e-6 * fabs(want) + 1e-12,
                          "%s (unit %d) element %zu: %.9g, replay gives %.9g",
                          tensor_name((TensorKind)kind), unit, i, got, want);
                checked++;
            }
        }
    }
    cr_assert_gt(checked, 1000u);
    gpt_destroy(&m);
}

/* ---------------------------------------------------------------- initialisation */

typedef struct {
    double mean, std;
    size_t n;
} Moments;

static Moments moments(const float *x, size_t n)
{
    double sum = 0.0, sum_sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += x[i];
    double mean = sum / n;
    for (size_t i = 0; i < n; i++)
        sum_sq += (x[i] - mean) * (x[i] - mean);
    return (Moments){mean, sqrt(sum_sq / n), n};
}

/* The std of a sample of n normals has a relative standard error of 1/sqrt(2n): 0.8% for
 * the smallest tensor here (wpe, 8,192 values), so 4% is 5 standard errors. */
#define INIT_STD_TOL 0.04

static void expect_normal(const char *what, const float *x, size_t n, double want_std)
{
    Moments mo = moments(x, n);
    cr_assert(fabs(mo.std / want_std - 1.0) <= INIT_STD_TOL, "%s: std %.6f, want %.6f (n=%zu)",
              what, mo.std, want_std, n);
    /* the mean of n normals has a standard error of std / sqrt(n); allow 5 of them */
    cr_assert(fabs(mo.mean) <= 5.0 * want_std / sqrt((double)n), "%s: mean %.3g, want ~0 (std %.4f, n=%zu)",
              what, mo.mean, want_std, n);
}

static void expect_all(const char *what, int layer, const float *x, size_t n, float value)
{
    for (size_t i = 0; i < n; i++)
        cr_assert(x[i] == value, "%s (layer %d) element %zu is %g, want exactly %g", what, layer, i, x[i], value);
}

Test(hooks, initialisation_follows_gpt2)
{
    /* C = 128 and V = 200 (Vp = 256: 56 padding rows), L = 4 */
    GPTConfig cfg = {.max_seq_len = 64, .vocab_size = 200, .num_layers = 4, .num_heads = 4, .channels = 128};
    cfg.padded_vocab_size = gpt_padded_vocab(cfg.vocab_size);
    GPT m;
    char err[256];
    cr_assert_eq(gpt_create(&m, &cfg, &cpu_kernels, err, sizeof err), 0, "%s", err);
    gpt_init_weights(&m, 1337);
    double residual_std = 0.02 / sqrt(2.0 * cfg.num_layers);
    size_t C = (size_t)cfg.channels;

    Range wte = tensor_range(&cfg, TENSOR_WTE, 0);
    size_t real = (size_t)cfg.vocab_size * C;
    expect_normal("wte", m.params + wte.offset, real, 0.02);
    expect_all("wte padding rows", 0, m.params + wte.offset + real, wte.count - real, 0.0f);
    Range wpe = tensor_range(&cfg, TENSOR_WPE, 0);
    expect_normal("wpe", m.params + wpe.offset, wpe.count, 0.02);

    for (int layer = 0; layer < cfg.num_layers; layer++) {
        for (int kind = TENSOR_LN1W; kind <= TENSOR_FCPROJB; kind++) {
            Range r = tensor_range(&cfg, (TensorKind)kind, layer);
            const float *x = m.params + r.offset;
            const char *name = tensor_name((TensorKind)kind);
            switch (kind) {
            case TENSOR_LN1W: case TENSOR_LN2W:
                expect_all(name, layer, x, r.count, 1.0f);
                break;
            case TENSOR_LN1B: case TENSOR_LN2B: case TENSOR_QKVB: case TENSOR_ATTPROJB:
            case TENSOR_FCB: case TENSOR_FCPROJB:
                expect_all(name, layer, x, r.count, 0.0f);
                break;
            case TENSOR_ATTPROJW: case TENSOR_FCPROJW:
                expect_normal(name, x, r.count, residual_std);
                break;
            default: /* qkvw, fcw */
                expect_normal(name, x, r.count, 0.02);
            }
        }
    }
    Range lnfw = tensor_range(&cfg, TENSOR_LNFW, 0), lnfb = tensor_range(&cfg, TENSOR_LNFB, 0);
    expect_all("lnfw", 0, m.params + lnfw.offset, lnfw.count, 1.0f);
    expect_all("lnfb", 0, m.params + lnfb.offset, lnfb.count, 0.0f);

    /* normal, not uniform with the same std: 68.3% of normals lie within one std, 57.7%
     * of uniforms (qkvw over all layers: 196,608 values, standard error 0.1%) */
    size_t inside = 0, total = 0;
    for (int layer = 0; layer < cfg.num_layers; layer++) {
        Range r = tensor_range(&cfg, TENSOR_QKVW, layer);
        for (size_t i = 0; i < r.count; i++)
            inside += fabs(m.params[r.offset + i]) <= 0.02;
        total += r.count;
    }
    double fraction = (double)inside / total;
    cr_assert(fabs(fraction - 0.6827) <= 0.005, "%.4f of qkvw within one std, want 0.6827", fraction);

    /* the gradients start at zero */
    for (size_t i = 0; i < m.num_params; i++)
        cr_assert(m.grads[i] == 0.0f, "gradient %zu starts at %g", i, m.grads[i]);
    gpt_destroy(&m);
}
