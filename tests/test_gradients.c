/* Finite-difference gradient checks of the CPU backward kernels, one layer at a time, and
 * of the whole model.
 *
 * Method (every layer): draw a random projection R (seeded), let f(x) = sum(R * forward(x)),
 * get the analytic gradient of f by running backward with dout = R, and compare every
 * element with the numerical derivative from central differences
 * D(h) = (f(x + h) - f(x - h)) / (x_up - x_down), f accumulated in double from the float
 * outputs, x_up and x_down the float values actually stored (float(x + h) is not x + h;
 * dividing by the true step removes that error). Two of them, D(h) and D(2h), are combined
 * by Richardson extrapolation, (4 D(h) - D(2h)) / 3, which cancels the h^2 truncation term
 * (see "Why these numbers" below). The whole model is checked the same way, with f the
 * loss gpt_forward returns.
 *
 * Error measure: err = |analytic - numeric| / max(|analytic|, |numeric|, floor), worst over
 * every element, with floor = FLOOR_FRACTION * the largest |gradient| of the tensor (or an
 * absolute floor where stated). Relative error means nothing for an element whose
 * gradient is ~0 (it is then all noise); the floor judges such elements by the absolute
 * error tol * floor instead, on the scale of the tensor's gradient.
 * Every comparison also checks that the same gradient scaled by 1.01 is rejected, so each
 * tolerance is known to be tight enough to catch a 1% error. */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpt_config.h"
#include "kernels.h"
#include "layout.h"
#include "model.h"
#include "tiny_model.h"
#include "rng.h"
#include "strategy.h"

/* Why these numbers (layer checks).
 * f sums float outputs that each carry a rounding error of ~1e-7 relative (a few ulp:
 * dot products, exp_poly, 1/sqrt), and LayerNorm or softmax shift a whole row at once
 * when their float mean, rstd or sum round differently. That rounding is noise of ~1e-7
 * in f and so ~1e-7 / h in D(h): with h = 1e-3 it is ~1e-4 absolute, measured at up to
 * 4e-2 of a small LayerNorm gradient (and 1.5e-2 in attention, 1.2e-2 in GELU). A larger
 * h cuts the noise, but the truncation error h^2 |f'''| / 6 of D(h) grows (the same
 * LayerNorm element: 3.5e-3 at h = 1e-2, 1.7e-2 at 3e-2). Richardson extrapolation,
 * (4 D(h) - D(2h)) / 3, cancels the h^2 term, so h can be 2e-2 (inputs are O(1)) with an
 * O(h^4) truncation error and ~5e-6 of noise.
 * Measured with h = 2e-2 over these tests and 7 other seeds: worst err 9.3e-4 (GELU,
 * noise), 8.5e-4 (LayerNorm dinp), 7.6e-4 (attention), 2e-4 (matmul), < 5e-5 (encoder).
 * LAYER_TOL = 3e-3: 3x above that, and 3x below the 1% error each check proves it catches.
 * FLOOR_FRACTION = 1e-2: elements under 1% of the tensor's largest gradient are held to
 * an absolute 3e-5 of it, where noise, not the kernel, decides their relative error. */
#define LAYER_TOL 3e-3
#define LAYER_H 2e-2
#define FLOOR_FRACTION 1e-2

typedef struct {
    double worst;        /* largest err over the elements */
    size_t worst_index;
    double analytic, numeric; /* at worst_index */
    double floor_used;
} GradReport;

static GradReport compare_gradients(const float *analytic, const double *numeric, size_t n,
                                    double floor_fraction, double abs_floor)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++)
        largest = fmax(largest, fmax(fabs((double)analytic[i]), fabs(numeric[i])));
    GradReport report = {0.0, 0, 0.0, 0.0, fmax(floor_fraction * largest, abs_floor)};
    for (size_t i = 0; i < n; i++) {
        double a = analytic[i], num = numeric[i];
        double scale = fmax(fmax(fabs(a), fabs(num)), report.floor_used);
        double err = fabs(a - num) / scale;
        if (!(err <= report.worst)) { /* NaN lands here too */
            report.worst = isnan(err) ? INFINITY : err;
            report.worst_index = i;
            report.analytic = a;
            report.numeric = num;
        }
    }
    return report;
}

/* Asserts that analytic matches numeric within tol, and that a 1%-wrong version of the
 * same analytic gradient would not. */
static void expect_gradients_match(const char *what, const float *analytic, const double *numeric,
                                   size_t n, double tol, double abs_floor)
{
    GradReport ok = compare_gradients(analytic, numeric, n, FLOOR_FRACTION, abs_floor);
    cr_log_info("gradcheck %-26s n=%4zu worst err %.2e (at %zu: analytic %.8g numeric %.8g, floor %.2g)",
                what, n, ok.worst, ok.worst_index, ok.analytic, ok.numeric, ok.floor_used);
    cr_assert(ok.worst <= tol,
              "%s: worst relative error %.3e > %.1e at element %zu of %zu "
              "(analytic %.9g, numeric %.9g, floor %.3g)",
              what, ok.worst, tol, ok.worst_index, n, ok.analytic, ok.numeric, ok.floor_used);

    float *wrong = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        wrong[i] = analytic[i] * 1.01f;
    GradReport bad = compare_gradients(wrong, numeric, n, FLOOR_FRACTION, abs_floor);
    free(wrong);
    cr_assert(bad.worst > tol,
              "%s: a gradient 1%% off was accepted (worst %.3e <= tol %.1e): tolerance too loose",
              what, bad.worst, tol);
}

/* ---------------------------------------------------------------- numerical derivative */

typedef double (*Objective)(void *ctx);

/* D(h) for one float input; *x is restored. */
static double central_difference(float *x, double h, Objective objective, void *ctx)
{
    float saved = *x;
    float up = (float)((double)saved + h), down = (float)((double)saved - h);
    *x = up;
    double f_up = objective(ctx);
    *x = down;
    double f_down = objective(ctx);
    *x = saved;
    return (f_up - f_down) / ((double)up - (double)down);
}

/* D(h) = f' + h^2 f''' / 6 + O(h^4), so (4 D(h) - D(2h)) / 3 = f' + O(h^4). */
static double numeric_derivative(float *x, double h, Objective objective, void *ctx)
{
    double near = central_difference(x, h, objective, ctx);
    double far = central_difference(x, 2.0 * h, objective, ctx);
    return (4.0 * near - far) / 3.0;
}

static double *numeric_gradient(float *x, size_t n, double h, Objective objective, void *ctx)
{
    double *g = malloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        g[i] = numeric_derivative(&x[i], h, objective, ctx);
    return g;
}

static double projection(const float *R, const float *out, size_t n)
{
    double f = 0.0;
    for (size_t i = 0; i < n; i++)
        f += (double)R[i] * out[i];
    return f;
}

static float *random_floats(Rng *rng, size_t n, double mean, double std)
{
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(mean + std * rng_normal(rng));
    return x;
}

static float *filled_floats(size_t n, float value)
{
    float *x = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        x[i] = value;
    return x;
}

/* A sentinel for outputs documented as overwritten: if a kernel accumulated into them
 * instead, the gradient check would be off by this much. */
static const float OVERWRITE_SENTINEL = 7.0f;

/* The kernels' output contract, checked by running a backward a second time: outputs
 * that accumulate (+=) now hold twice their first value, outputs that are overwritten
 * hold exactly their first value. Twice up to rounding: the second pass's sums start from
 * the first value instead of from 0, so each addition rounds at a larger magnitude, and an
 * element whose terms cancel carries their rounding; judged against the tensor's largest
 * value (1e-5 of it), while an output overwritten instead misses by a whole first value. */
static void expect_accumulated(const char *what, const float *second, const float *first, size_t n)
{
    double largest = 0.0;
    for (size_t i = 0; i < n; i++)
        largest = fmax(largest, 2.0 * fabs(first[i]));
    for (size_t i = 0; i < n; i++) {
        double want = 2.0 * first[i];
        cr_assert(fabs(second[i] - want) <= 1e-5 * largest,
                  "%s must accumulate: element %zu is %.9g after two backwards, want 2 x %.9g",
                  what, i, second[i], first[i]);
    }
}

static void expect_overwritten(const char *what, const float *second, const float *first, size_t n)
{
    cr_assert(memcmp(second, first, n * sizeof(float)) == 0,
              "%s must be overwritten, not accumulated: a second backward changed it", what);
}

static float *snapshot_floats(const float *x, size_t n)
{
    float *copy = malloc(n * sizeof(float));
    memcpy(copy, x, n * sizeof(float));
    return copy;
}

/* ---------------------------------------------------------------- layernorm */

typedef struct {
    float *inp, *weight, *bias, *R, *out, *mean, *rstd;
    int N, C;
} LayerNormCase;

static double layernorm_objective(void *ctx)
{
    LayerNormCase *c = ctx;
    cpu_kernels.layernorm_forward(c->out, c->mean, c->rstd, c->inp, c->weight, c->bias, c->N, c->C);
    return projection(c->R, c->out, (size_t)c->N * c->C);
}

Test(gradcheck, layernorm)
{
    Rng rng;
    rng_seed(&rng, 101);
    /* C = 21: one group of LANES (16) plus a remainder in the fastmath reductions */
    LayerNormCase c = {.N = 4, .C = 21};
    size_t NC = (size_t)c.N * c.C;
    c.inp = random_floats(&rng, NC, 0.5, 1.0);
    c.weight = random_floats(&rng, (size_t)c.C, 1.0, 0.3);
    c.bias = random_floats(&rng, (size_t)c.C, 0.0, 0.3);
    c.R = random_floats(&rng, NC, 0.0, 1.0);
    c.out = filled_floats(NC, 0.0f);
    c.mean = filled_floats((size_t)c.N, 0.0f);
    c.rstd = filled_floats((size_t)c.N, 0.0f);

    layernorm_objective(&c); /* mean and rstd for backward */
    float *dinp = filled_floats(NC, 0.0f), *dweight = filled_floats((size_t)c.C, 0.0f);
    float *dbias = filled_floats((size_t)c.C, 0.0f);
    cpu_kernels.layernorm_backward(dinp, dweight, dbias, c.R, c.inp, c.weight, c.mean, c.rstd, c.N, c.C);

    double *n_inp = numeric_gradient(c.inp, NC, LAYER_H, layernorm_objective, &c);
    double *n_weight = numeric_gradient(c.weight, (size_t)c.C, LAYER_H, layernorm_objective, &c);
    double *n_bias = numeric_gradient(c.bias, (size_t)c.C, LAYER_H, layernorm_objective, &c);
    expect_gradients_match("layernorm dinp", dinp, n_inp, NC, LAYER_TOL, 0.0);
    expect_gradients_match("layernorm dweight", dweight, n_weight, (size_t)c.C, LAYER_TOL, 0.0);
    expect_gradients_match("layernorm dbias", dbias, n_bias, (size_t)c.C, LAYER_TOL, 0.0);

    float *first_inp = snapshot_floats(dinp, NC), *first_weight = snapshot_floats(dweight, (size_t)c.C);
    float *first_bias = snapshot_floats(dbias, (size_t)c.C);
    cpu_kernels.layernorm_backward(dinp, dweight, dbias, c.R, c.inp, c.weight, c.mean, c.rstd, c.N, c.C);
    expect_accumulated("layernorm dinp", dinp, first_inp, NC);
    expect_accumulated("layernorm dweight", dweight, first_weight, (size_t)c.C);
    expect_accumulated("layernorm dbias", dbias, first_bias, (size_t)c.C);
    free(first_inp); free(first_weight); free(first_bias);

    free(n_inp); free(n_weight); free(n_bias);
    free(dinp); free(dweight); free(dbias);
    free(c.inp); free(c.weight); free(c.bias); free(c.R); free(c.out); free(c.mean); free(c.rstd);
}

/* ---------------------------------------------------------------- matmul */

typedef struct {
    float *inp, *weight, *bias, *R, *out;
    int N, C, OC;
} MatmulCase;

static double matmul_objective(void *ctx)
{
    MatmulCase *c = ctx;
    cpu_kernels.matmul_forward(c->out, c->inp, c->weight, c->bias, c->N, c->C, c->OC);
    return projection(c->R, c->out, (size_t)c->N * c->OC);
}

/* Analytic gradients of one matmul case, with dinp pre-filled by the sentinel (overwrite)
 * and dweight, dbias zeroed (accumulate). */
static void matmul_analytic(const MatmulCase *c, float **dinp, float **dweight, float **dbias)
{
    *dinp = filled_floats((size_t)c->N * c->C, OVERWRITE_SENTINEL);
    *dweight = filled_floats((size_t)c->OC * c->C, 0.0f);
    *dbias = filled_floats((size_t)c->OC, 0.0f);
    cpu_kernels.matmul_backward(*dinp, *dweight, *dbias, c->R, c->inp, c->weight, c->N, c->C, c->OC);
}

static MatmulCase matmul_case(Rng *rng)
{
    MatmulCase c = {.N = 5, .C = 6, .OC = 7};
    c.inp = random_floats(rng, (size_t)c.N * c.C, 0.0, 1.0);
    c.weight = random_floats(rng, (size_t)c.OC * c.C, 0.0, 0.5);
    c.bias = random_floats(rng, (size_t)c.OC, 0.0, 0.5);
    c.R = random_floats(rng, (size_t)c.N * c.OC, 0.0, 1.0);
    c.out = filled_floats((size_t)c.N * c.OC, 0.0f);
    return c;
}

static void matmul_case_free(MatmulCase *c)
{
    free(c->inp); free(c->weight); free(c->bias); free(c->R); free(c->out);
}

Test(gradcheck, matmul)
{
    Rng rng;
    rng_seed(&rng, 202);
    MatmulCase c = matmul_case(&rng);
    size_t n_inp = (size_t)c.N * c.C, n_weight = (size_t)c.OC * c.C;
    float *dinp, *dweight, *dbias;
    matmul_analytic(&c, &dinp, &dweight, &dbias);

    double *g_inp = numeric_gradient(c.inp, n_inp, LAYER_H, matmul_objective, &c);
    double *g_weight = numeric_gradient(c.weight, n_weight, LAYER_H, matmul_objective, &c);
    double *g_bias = numeric_gradient(c.bias, (size_t)c.OC, LAYER_H, matmul_objective, &c);
    expect_gradients_match("matmul dinp", dinp, g_inp, n_inp, LAYER_TOL, 0.0);
    expect_gradients_match("matmul dweight", dweight, g_weight, n_weight, LAYER_TOL, 0.0);
    expect_gradients_match("matmul dbias", dbias, g_bias, (size_t)c.OC, LAYER_TOL, 0.0);

    float *first_inp = snapshot_floats(dinp, n_inp), *first_weight = snapshot_floats(dweight, n_weight);
    float *first_bias = snapshot_floats(dbias, (size_t)c.OC);
    cpu_kernels.matmul_backward(dinp, dweight, dbias, c.R, c.inp, c.weight, c.N, c.C, c.OC);
    expect_overwritten("matmul dinp", dinp, first_inp, n_inp);
    expect_accumulated("matmul dweight", dweight, first_weight, n_weight);
    expect_accumulated("matmul dbias", dbias, first_bias, (size_t)c.OC);
    free(first_inp); free(first_weight); free(first_bias);

    /* without a bias: forward must not read it, backward must accept dbias == NULL */
    float *bias = c.bias;
    c.bias = NULL;
    float *dinp2 = filled_floats(n_inp, OVERWRITE_SENTINEL), *dweight2 = filled_floats(n_weight, 0.0f);
    cpu_kernels.matmul_backward(dinp2, dweight2, NULL, c.R, c.inp, c.weight, c.N, c.C, c.OC);
    double *g_weight2 = numeric_gradient(c.weight, n_weight, LAYER_H, matmul_objective, &c);
    expect_gradients_match("matmul dweight no bias", dweight2, g_weight2, n_weight, LAYER_TOL, 0.0);
    cr_assert(memcmp(dinp2, dinp, n_inp * sizeof(float)) == 0, "dinp depends on the bias");
    c.bias = bias;

    free(g_inp); free(g_weight); free(g_bias); free(g_weight2);
    free(dinp); free(dweight); free(dbias); free(dinp2); free(dweight2);
    matmul_case_free(&c);
}

/* ---------------------------------------------------------------- attention */

typedef struct {
    float *qkv, *R, *out, *att, *scratch;
    int B, T, C, NH;
} AttentionCase;

static double attention_objective(void *ctx)
{
    AttentionCase *c = ctx;
    cpu_kernels.attention_forward(c->out, c->att, c->scratch, c->qkv, c->B, c->T, c->C, c->NH);
    return projection(c->R, c->out, (size_t)c->B * c->T * c->C);
}

/* The kernels get exactly the scratch kernels.h promises, and a guard after it that must
 * stay untouched. */
enum { SCRATCH_GUARD = 16 };

static void check_attention(AttentionCase c, uint64_t seed)
{
    Rng rng;
    rng_seed(&rng, seed);
    size_t BTC = (size_t)c.B * c.T * c.C, scratch_floats = attention_scratch_floats(c.T, c.C, c.NH);
    c.qkv = random_floats(&rng, 3 * BTC, 0.0, 1.0); /* scores of O(1): softmax far from uniform */
    c.R = random_floats(&rng, BTC, 0.0, 1.0);
    c.out = filled_floats(BTC, 0.0f);
    c.att = filled_floats((size_t)c.B * c.NH * c.T * c.T, 0.0f);
    c.scratch = filled_floats(scratch_floats + SCRATCH_GUARD, OVERWRITE_SENTINEL);

    attention_objective(&c);
    float *dqkv = filled_floats(3 * BTC, OVERWRITE_SENTINEL);
    cpu_kernels.attention_backward(dqkv, c.scratch, c.R, c.qkv, c.att, c.B, c.T, c.C, c.NH);

    double *g_qkv = numeric_gradient(c.qkv, 3 * BTC, LAYER_H, attention_objective, &c);
    expect_gradients_match("attention dqkv", dqkv, g_qkv, 3 * BTC, LAYER_TOL, 0.0);
    float *first_qkv = snapshot_floats(dqkv, 3 * BTC);
    cpu_kernels.attention_backward(dqkv, c.scratch, c.R, c.qkv, c.att, c.B, c.T, c.C, c.NH);
    expect_overwritten("attention dqkv", dqkv, first_qkv, 3 * BTC);
    free(first_qkv);

    /* causality: the last position's key and value influence nothing but the last output
     * row, so zeroing R there must give them exactly zero gradient */
    for (int b = 0; b < c.B; b++)
        for (int ch = 0; ch < c.C; ch++)
            c.R[((size_t)b * c.T + c.T - 1) * c.C + ch] = 0.0f;
    cpu_kernels.attention_backward(dqkv, c.scratch, c.R, c.qkv, c.att, c.B, c.T, c.C, c.NH);
    for (int b = 0; b < c.B; b++)
        for (int ch = c.C; ch < 3 * c.C; ch++) {
            float g = dqkv[((size_t)b * c.T + c.T - 1) * 3 * c.C + ch];
            cr_assert(g == 0.0f, "batch %d: last position's k/v channel %d has gradient %g "
                      "from earlier outputs (attention is not causal)", b, ch - c.C, g);
        }
    for (size_t i = scratch_floats; i < scratch_floats + SCRATCH_GUARD; i++)
        cr_assert(c.scratch[i] == OVERWRITE_SENTINEL, "attention wrote past its scratch of %zu floats, at %zu",
                  scratch_floats, i);

    free(g_qkv); free(dqkv); free(c.scratch);
    free(c.qkv); free(c.R); free(c.out); free(c.att);
}

Test(gradcheck, attention_causal)
{
    check_attention((AttentionCase){.B = 2, .T = 5, .C = 8, .NH = 2}, 303);
}

/* a head of 8 channels over 3 positions: the transposed keys (C/NH x T) are larger than a
 * T x T square */
Test(gradcheck, attention_with_heads_wider_than_the_sequence)
{
    check_attention((AttentionCase){.B = 2, .T = 3, .C = 16, .NH = 2}, 304);
}

static bool same_bits(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

/* The CPU computes each row of scores only as far as its block of queries reaches (kernels.h:
 * the zeros past it are att's own, from alloc). So nothing of att past those edges, nor of
 * the scratch, may be read: with NaN there instead of zeros, forward and backward give the
 * same bits, and the probabilities up to each edge, the mask's zeros included, are the same.
 * T = 40: a block of 32 queries and one of 8. */
Test(gradcheck, attention_reads_nothing_past_its_blocks)
{
    enum { B = 2, T = 40, C = 64, NH = 2, BLOCK = 32 };
    size_t BTC = (size_t)B * T * C, BHTT = (size_t)B * NH * T * T, scratch = attention_scratch_floats(T, C, NH);
    Rng rng;
    rng_seed(&rng, 305);
    float *qkv = random_floats(&rng, 3 * BTC, 0.0, 1.0), *dout = random_floats(&rng, BTC, 0.0, 1.0);
    float *out[2], *att[2], *dqkv[2];
    for (int run = 0; run < 2; run++) { /* run 0 on zeros, as from alloc; run 1 on NaN */
        float fill = run == 0 ? 0.0f : NAN;
        float *work = filled_floats(scratch, fill);
        out[run] = filled_floats(BTC, fill);
        att[run] = filled_floats(BHTT, fill);
        dqkv[run] = filled_floats(3 * BTC, fill);
        cpu_kernels.attention_forward(out[run], att[run], work, qkv, B, T, C, NH);
        cpu_kernels.attention_backward(dqkv[run], work, dout, qkv, att[run], B, T, C, NH);
        free(work);
    }
    for (size_t i = 0; i < BTC; i++)
        cr_assert(same_bits(out[1][i], out[0][i]), "out[%zu]: %.9g on NaN past the blocks, %.9g on zeros",
                  i, out[1][i], out[0][i]);
    for (size_t i = 0; i < 3 * BTC; i++)
        cr_assert(same_bits(dqkv[1][i], dqkv[0][i]),
                  "dqkv[%zu]: %.9g on NaN past the blocks, %.9g on zeros", i, dqkv[1][i], dqkv[0][i]);
    for (size_t row = 0; row < (size_t)B * NH * T; row++) {
        size_t t = row % T, edge = (t / BLOCK + 1) * BLOCK < T ? (t / BLOCK + 1) * BLOCK : T;
        for (size_t j = 0; j < edge; j++)
            cr_assert(same_bits(att[1][row * T + j], att[0][row * T + j]),
                      "att row %zu (query %zu), column %zu: %.9g on NaN past the blocks, %.9g on zeros", row, t, j,
                      att[1][row * T + j], att[0][row * T + j]);
    }
    for (int run = 0; run < 2; run++) {
        free(out[run]); free(att[run]); free(dqkv[run]);
    }
    free(qkv); free(dout);
}

/* ---------------------------------------------------------------- gelu */

typedef struct {
    float *inp, *R, *out, *slope; /* slope: where forward takes inp and leaves its slope */
    size_t n;
} GeluCase;

static double gelu_objective(void *ctx)
{
    GeluCase *c = ctx;
    memcpy(c->slope, c->inp, c->n * sizeof(float));
    cpu_kernels.gelu_forward(c->out, c->slope, c->n);
    return projection(c->R, c->out, c->n);
}

Test(gradcheck, gelu)
{
    Rng rng;
    rng_seed(&rng, 404);
    GeluCase c = {.n = 61};
    c.inp = malloc(c.n * sizeof(float));
    for (size_t i = 0; i < c.n; i++) /* a grid over [-5, 5], nudged off round values */
        c.inp[i] = (float)(-5.0 + 10.0 * (double)i / (double)(c.n - 1) + 0.013);
    c.R = random_floats(&rng, c.n, 0.0, 1.0);
    c.out = filled_floats(c.n, 0.0f);
    c.slope = filled_floats(c.n, 0.0f);

    float *dinout = malloc(c.n * sizeof(float));
    memcpy(dinout, c.R, c.n * sizeof(float));
    gelu_objective(&c);
    cpu_kernels.gelu_backward(dinout, c.slope, c.n);

    double *g = numeric_gradient(c.inp, c.n, LAYER_H, gelu_objective, &c);
    expect_gradients_match("gelu", dinout, g, c.n, LAYER_TOL, 0.0);

    free(g); free(dinout); free(c.inp); free(c.R); free(c.out); free(c.slope);
}

/* ---------------------------------------------------------------- softmax cross-entropy */

typedef struct {
    float *logits, *work;
    const int *targets;
    int N, V;
} CrossEntropyCase;

/* f = the mean loss the forward returns (it is already a float: no R needed, or R = 1). */
static double crossentropy_objective(void *ctx)
{
    CrossEntropyCase *c = ctx;
    memcpy(c->work, c->logits, (size_t)c->N * c->V * sizeof(float));
    return cpu_kernels.softmax_crossentropy_forward(c->work, c->targets, c->N, c->V);
}

/* The forward returns the mean loss as a float: ~2, so it is rounded by up to 1.2e-7
 * (half an ulp), while d(mean loss)/d(logit) = (p - y) / N is ~0.2 at most here. That
 * rounding is the whole noise: with h = 2e-2 it is ~1e-5 in the quotient, 6e-3 of the
 * floor (1% of the largest element). The loss is smooth on the scale of 1 in every logit
 * (its derivatives are moments of p), so h = 0.1 costs little truncation after Richardson
 * extrapolation and brings the noise down 5x: worst err measured 9.6e-4 over 8 seeds
 * (2.1e-3 at h = 5e-2, 6.1e-3 at h = 2e-2), under LAYER_TOL. */
#define CE_H 1e-1

Test(gradcheck, softmax_crossentropy)
{
    Rng rng;
    rng_seed(&rng, 505);
    /* V = 19: one group of LANES (16) plus a remainder in the fastmath sum */
    CrossEntropyCase c = {.N = 4, .V = 19};
    size_t NV = (size_t)c.N * c.V;
    int targets[4] = {0, 3, 18, 3};
    c.targets = targets;
    c.logits = random_floats(&rng, NV, 0.0, 1.5);
    c.work = filled_floats(NV, 0.0f);

    float *dlogits = malloc(NV * sizeof(float));
    memcpy(dlogits, c.logits, NV * sizeof(float));
    float loss = cpu_kernels.softmax_crossentropy_forward(dlogits, targets, c.N, c.V);
    /* the loss itself, from a double log-sum-exp */
    double want_loss = 0.0;
    for (int n = 0; n < c.N; n++) {
        const float *row = c.logits + (size_t)n * c.V;
        double max = row[0], sum = 0.0;
        for (int j = 1; j < c.V; j++)
            max = fmax(max, row[j]);
        for (int j = 0; j < c.V; j++)
            sum += exp(row[j] - max);
        want_loss += (log(sum) + max - row[targets[n]]) / c.N;
    }
    cr_assert(fabs(loss - want_loss) <= 1e-6 * want_loss, "mean loss %.9g, want %.9g", loss, want_loss);
    cpu_kernels.softmax_crossentropy_backward(dlogits, targets, c.N, c.V, 1.0f / (float)c.N);

    double *g = numeric_gradient(c.logits, NV, CE_H, crossentropy_objective, &c);
    expect_gradients_match("softmax_crossentropy", dlogits, g, NV, LAYER_TOL, 0.0);

    free(g); free(dlogits); free(c.logits); free(c.work);
}

/* ---------------------------------------------------------------- encoder */

typedef struct {
    float *wte, *wpe, *R, *out;
    const int *tokens;
    int B, T, C;
} EncoderCase;

static double encoder_objective(void *ctx)
{
    EncoderCase *c = ctx;
    cpu_kernels.encoder_forward(c->out, c->tokens, c->wte, c->wpe, c->B, c->T, c->C);
    return projection(c->R, c->out, (size_t)c->B * c->T * c->C);
}

Test(gradcheck, encoder)
{
    Rng rng;
    rng_seed(&rng, 606);
    enum { V = 10, MAXT = 6 };
    /* token 4 appears three times (its rows must sum), tokens 1, 5, 8 never (gradient 0);
     * T = 4 < maxT so the last two wpe rows get gradient 0 too */
    const int tokens[2 * 4] = {4, 0, 4, 9, 2, 4, 7, 3};
    EncoderCase c = {.B = 2, .T = 4, .C = 6, .tokens = tokens};
    size_t BTC = (size_t)c.B * c.T * c.C, n_wte = (size_t)V * c.C, n_wpe = (size_t)MAXT * c.C;
    c.wte = random_floats(&rng, n_wte, 0.0, 1.0);
    c.wpe = random_floats(&rng, n_wpe, 0.0, 1.0);
    c.R = random_floats(&rng, BTC, 0.0, 1.0);
    c.out = filled_floats(BTC, 0.0f);

    float *dwte = filled_floats(n_wte, 0.0f), *dwpe = filled_floats(n_wpe, 0.0f);
    cpu_kernels.encoder_backward(dwte, dwpe, c.R, tokens, c.B, c.T, c.C);

    double *g_wte = numeric_gradient(c.wte, n_wte, LAYER_H, encoder_objective, &c);
    double *g_wpe = numeric_gradient(c.wpe, n_wpe, LAYER_H, encoder_objective, &c);
    expect_gradients_match("encoder dwte", dwte, g_wte, n_wte, LAYER_TOL, 0.0);
    expect_gradients_match("encoder dwpe", dwpe, g_wpe, n_wpe, LAYER_TOL, 0.0);
    float *first_wte = snapshot_floats(dwte, n_wte), *first_wpe = snapshot_floats(dwpe, n_wpe);
    cpu_kernels.encoder_backward(dwte, dwpe, c.R, tokens, c.B, c.T, c.C);
    expect_accumulated("encoder dwte", dwte, first_wte, n_wte);
    expect_accumulated("encoder dwpe", dwpe, first_wpe, n_wpe);
    for (size_t i = 0; i < n_wte; i++) /* back to one backward for the checks below */
        dwte[i] = first_wte[i];
    for (size_t i = 0; i < n_wpe; i++)
        dwpe[i] = first_wpe[i];
    free(first_wte); free(first_wpe);
    for (int ch = 0; ch < c.C; ch++) {
        cr_assert(dwte[1 * c.C + ch] == 0.0f && dwte[5 * c.C + ch] == 0.0f, "unused token got a gradient");
        cr_assert(dwpe[4 * c.C + ch] == 0.0f && dwpe[5 * c.C + ch] == 0.0f, "unused position got a gradient");
    }

    free(g_wte); free(g_wpe); free(dwte); free(dwpe);
    free(c.wte); free(c.wpe); free(c.R); free(c.out);
}

/* ---------------------------------------------------------------- the checks can fail */

/* A classic LayerNorm backward bug: forgetting that the variance depends on the input
 * (the xhat * mean(dxhat * xhat) term). Written here, not taken from the kernels. */
static void layernorm_backward_missing_variance_term(float *dinp, const float *dout, const float *inp,
                                                     const float *weight, const float *mean,
                                                     const float *rstd, int N, int C)
{
    for (int n = 0; n < N; n++) {
        double sum_dxhat = 0.0;
        for (int ch = 0; ch < C; ch++)
            sum_dxhat += dout[n * C + ch] * weight[ch];
        for (int ch = 0; ch < C; ch++)
            dinp[n * C + ch] += rstd[n] * (float)(dout[n * C + ch] * weight[ch] - sum_dxhat / C);
        (void)inp; (void)mean;
    }
}

Test(gradcheck, the_comparison_catches_wrong_gradients)
{
    Rng rng;
    rng_seed(&rng, 707);
    MatmulCase c = matmul_case(&rng);
    size_t n_weight = (size_t)c.OC * c.C;
    float *dinp, *dweight, *dbias;
    matmul_analytic(&c, &dinp, &dweight, &dbias);
    double *numeric = numeric_gradient(c.weight, n_weight, LAYER_H, matmul_objective, &c);

    GradReport right = compare_gradients(dweight, numeric, n_weight, FLOOR_FRACTION, 0.0);
    cr_assert(right.worst <= LAYER_TOL, "the correct gradient failed: %.3e", right.worst);

    /* a "backward" 1% off everywhere */
    float *wrong = malloc(n_weight * sizeof(float));
    for (size_t i = 0; i < n_weight; i++)
        wrong[i] = dweight[i] * 1.01f;
    GradReport scaled = compare_gradients(wrong, numeric, n_weight, FLOOR_FRACTION, 0.0);
    cr_assert(scaled.worst > LAYER_TOL && scaled.worst < 0.011,
              "1%% error everywhere: worst %.3e, want about 1e-2", scaled.worst);

    /* one element 1% off among many correct ones: every element is checked */
    memcpy(wrong, dweight, n_weight * sizeof(float));
    size_t largest = 0;
    for (size_t i = 1; i < n_weight; i++)
        largest = fabsf(dweight[i]) > fabsf(dweight[largest]) ? i : largest;
    size_t victim = (largest + n_weight / 2) % n_weight;
    wrong[victim] = dweight[victim] + 0.01f * fabsf(dweight[largest]);
    GradReport single = compare_gradients(wrong, numeric, n_weight, FLOOR_FRACTION, 0.0);
    cr_assert(single.worst > LAYER_TOL && single.worst_index == victim,
              "one wrong element: worst %.3e at %zu, want > %.1e at %zu",
              single.worst, single.worst_index, LAYER_TOL, victim);

    /* a NaN is never accepted */
    wrong[victim] = NAN;
    cr_assert(compare_gradients(wrong, numeric, n_weight, FLOOR_FRACTION, 0.0).worst > LAYER_TOL, "NaN accepted");

    /* a plausible but wrong LayerNorm backward */
    LayerNormCase ln = {.N = 3, .C = 8};
    size_t NC = (size_t)ln.N * ln.C;
    ln.inp = random_floats(&rng, NC, 0.5, 1.0);
    ln.weight = random_floats(&rng, (size_t)ln.C, 1.0, 0.3);
    ln.bias = random_floats(&rng, (size_t)ln.C, 0.0, 0.3);
    ln.R = random_floats(&rng, NC, 0.0, 1.0);
    ln.out = filled_floats(NC, 0.0f);
    ln.mean = filled_floats((size_t)ln.N, 0.0f);
    ln.rstd = filled_floats((size_t)ln.N, 0.0f);
    layernorm_objective(&ln);
    float *dinp_wrong = filled_floats(NC, 0.0f);
    layernorm_backward_missing_variance_term(dinp_wrong, ln.R, ln.inp, ln.weight, ln.mean, ln.rstd, ln.N, ln.C);
    double *n_inp = numeric_gradient(ln.inp, NC, LAYER_H, layernorm_objective, &ln);
    GradReport ln_report = compare_gradients(dinp_wrong, n_inp, NC, FLOOR_FRACTION, 0.0);
    cr_assert(ln_report.worst > LAYER_TOL, "LayerNorm backward without the variance term passed (%.3e)",
              ln_report.worst);

    free(n_inp); free(dinp_wrong);
    free(ln.inp); free(ln.weight); free(ln.bias); free(ln.R); free(ln.out); free(ln.mean); free(ln.rstd);
    free(wrong); free(numeric); free(dinp); free(dweight); free(dbias);
    matmul_case_free(&c);
}

/* ---------------------------------------------------------------- the whole model */


/* The GPT-2 initialisation (std 0.02) gives gradients of ~1e-4 on this model, too close
 * to the float noise of the loss for a finite-difference check. So: keep the init's
 * structure but make every weight matrix 10x larger (std 0.2), and move the LayerNorm
 * weights and all biases off their special init values of 1 and 0, so that no term of the
 * backward can hide behind a weight of 1 or a bias of 0. wte padding rows stay 0. */
static void make_weights_checkable(GPT *m, Rng *rng)
{
    const GPTConfig *cfg = &m->cfg;
    for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++)
        for (int layer = 0; layer < (tensor_is_per_layer((TensorKind)kind) ? cfg->num_layers : 1); layer++) {
            Range r = tensor_range(cfg, (TensorKind)kind, layer);
            float *x = m->params + r.offset;
            int is_ln_weight = kind == TENSOR_LN1W || kind == TENSOR_LN2W || kind == TENSOR_LNFW;
            int is_bias = kind == TENSOR_LN1B || kind == TENSOR_QKVB || kind == TENSOR_ATTPROJB ||
                          kind == TENSOR_LN2B || kind == TENSOR_FCB || kind == TENSOR_FCPROJB ||
                          kind == TENSOR_LNFB;
            size_t count = kind == TENSOR_WTE ? (size_t)cfg->vocab_size * cfg->channels : r.count;
            for (size_t i = 0; i < count; i++) {
                if (is_ln_weight)
                    x[i] = (float)(1.0 + 0.2 * rng_normal(rng));
                else if (is_bias)
                    x[i] = (float)(0.1 * rng_normal(rng));
                else
                    x[i] *= 10.0f;
            }
        }
}

/* Why these numbers (whole model).
 * The loss comes out of ~20 float layers: perturbing one weight changes the rounding of
 * every activation after it, so the loss carries noise of ~2e-7 (1e-7 relative) however
 * it is summed (measured: accumulating -log p in double from the probabilities does not
 * reduce it). In the quotient that is ~2e-7 / h: 4e-5 at h = 5e-3, 1.5e-5 at h = 1.2e-2.
 * With weights of std 0.2 the truncation error of the Richardson quotient, O(h^4), is
 * the larger term from h ~ 1.5e-2 on (it reached 2e-2 of one attprojw element at h = 2e-2
 * with std 0.3 weights). h = 1.2e-2 balances the two. The gradients span 1e-5..1e-1, so
 * those below MODEL_ABS_FLOOR = 1e-2 are judged absolutely, at tol * floor = 5e-5 (~3x
 * the noise); those above, relatively, at MODEL_TOL = 5e-3 (a 1% error is still caught
 * in every tensor, which the test asserts). Measured worst err: 1.6e-3 for this test's
 * draw, 1.7e-3..2.0e-3 over 12 other token and weight draws, 1.6e-3..2.1e-3 with the
 * OpenBLAS kernels for Haswell, Sandybridge, Prescott and SkylakeX. */
#define MODEL_H 1.2e-2
#define MODEL_TOL 5e-3
#define MODEL_ABS_FLOOR 1e-2

static double model_objective(void *ctx)
{
    return gpt_forward(ctx, tiny_inputs, tiny_targets);
}

/* Keeps unit 0's gradients as they are when unit L+1 is declared ready: the LM head's
 * share of the tied wte gradient without the embedding's - what a strategy would send
 * if it treated wte as final too early. */
typedef struct {
    GPT *model;
    float *early_unit0;
} EarlySnapshot;

static void snapshot_unit0_at_head(RunContext *run, int unit)
{
    EarlySnapshot *snap = run->state;
    if (unit != snap->model->cfg.num_layers + 1)
        return;
    Range r = unit_range(&snap->model->cfg, 0);
    memcpy(snap->early_unit0, snap->model->grads + r.offset, r.count * sizeof(float));
}

Test(gradcheck, whole_model)
{
    GPTConfig cfg = tiny_model_config();
    GPT m;
    char err[256];
    cr_assert_eq(gpt_create(&m, &cfg, &cpu_kernels, err, sizeof err), 0, "%s", err);
    gpt_init_weights(&m, 1234);
    Rng rng;
    rng_seed(&rng, 808);
    make_weights_checkable(&m, &rng);
    cr_assert_eq(gpt_set_batch(&m, TINY_B, TINY_T, err, sizeof err), 0, "%s", err);

    Range unit0 = unit_range(&cfg, 0);
    EarlySnapshot snap = {&m, malloc(unit0.count * sizeof(float))};
    RunContext run = {.model = &m, .state = &snap};
    m.hooks = (GPTHooks){.run = &run, .grads_ready = snapshot_unit0_at_head};
    float loss = gpt_forward(&m, tiny_inputs, tiny_targets);
    cr_assert(isfinite(loss) && loss > 0.0f, "loss %g", loss);
    gpt_zero_grad(&m);
    gpt_backward(&m);
    m.hooks = (GPTHooks){0};
    float *analytic = malloc(m.num_params * sizeof(float));
    memcpy(analytic, m.grads, m.num_params * sizeof(float));

    int tensors_checked = 0;
    double worst_overall = 0.0;
    for (int unit = 0; unit < gpt_num_units(&cfg); unit++) {
        int first, end;
        unit_kinds(&cfg, unit, &first, &end);
        for (int kind = first; kind < end; kind++) {
            Range r = tensor_range(&cfg, (TensorKind)kind, unit - 1);
            size_t count = r.count;
            if (kind == TENSOR_WTE) {
                /* padding rows: no part of the model reads them, so exactly 0 */
                size_t real = (size_t)cfg.vocab_size * cfg.channels;
                for (size_t i = real; i < count; i++)
                    cr_assert(analytic[r.offset + i] == 0.0f, "wte padding row %zu has gradient %g",
                              i / cfg.channels, analytic[r.offset + i]);
                count = real;
            }
            /* every element: the model has ~2,000 real parameters, a few ms of forwards each */
            double *numeric = numeric_gradient(m.params + r.offset, count, MODEL_H, model_objective, &m);
            char what[64];
            snprintf(what, sizeof what, "model unit %d %s", unit, tensor_name((TensorKind)kind));
            expect_gradients_match(what, analytic + r.offset, numeric, count, MODEL_TOL, MODEL_ABS_FLOOR);
            GradReport rep = compare_gradients(analytic + r.offset, numeric, count, FLOOR_FRACTION, MODEL_ABS_FLOOR);
            worst_overall = fmax(worst_overall, rep.worst);
            if (kind == TENSOR_WTE || kind == TENSOR_WPE) {
                /* the check would catch a wte gradient that missed the embedding's share
                 * (and wpe's, which is nothing but that share) */
                const float *early = snap.early_unit0 + (r.offset - unit0.offset);
                GradReport early_rep = compare_gradients(early, numeric, count, FLOOR_FRACTION, MODEL_ABS_FLOOR);
                cr_assert(early_rep.worst > 10 * MODEL_TOL, "%s without the embedding backward passed (%.3e)",
                          tensor_name((TensorKind)kind), early_rep.worst);
            }
            free(numeric);
            tensors_checked++;
        }
    }
    cr_assert_eq(tensors_checked, 2 + 12 * cfg.num_layers + 2);
    cr_log_info("gradcheck whole model: worst err %.2e over %d tensors", worst_overall, tensors_checked);

    /* the finite differences left the parameters as they were */
    cr_assert(gpt_forward(&m, tiny_inputs, tiny_targets) == loss, "parameters were not restored");

    free(analytic);
    free(snap.early_unit0);
    gpt_destroy(&m);
}
