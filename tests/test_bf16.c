/* bf16 conversion (bf16.h and the CPU kernels) against its definition, worked out here in
 * double: the bf16 nearest to x, ties to the one with an even last bit, infinity past the
 * largest finite bf16 by half an ulp or more (IEEE rounding), and a NaN for a NaN. The
 * candidates are the two bf16 that bracket x (cut off, and one further from zero), so the
 * bit tricks of float_to_bf16 are checked by distances, not by the same tricks. And the CPU's
 * matmuls on 16-bit operands, bf16 and fp16, against products of the rounded values summed
 * in double. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels.h"

static float from_bits(uint32_t bits)
{
    union { uint32_t bits; float value; } view = {.bits = bits};
    return view.value;
}

/* What a bf16 stands for when rounding to it: infinity's place is 2^128, where the next
 * binade would begin, as IEEE's overflow rule has it. */
static double place_of(uint16_t candidate)
{
    if ((candidate & 0x7fffu) == 0x7f80u)
        return (candidate & 0x8000u) ? -0x1p128 : 0x1p128;
    return bf16_to_float(candidate);
}

static uint16_t nearest_by_distance(float x)
{
    uint16_t toward_zero = (uint16_t)(float_bits(x) >> 16), away = (uint16_t)(toward_zero + 1);
    double low = fabs((double)x - place_of(toward_zero)), high = fabs((double)x - place_of(away));
    if (low != high)
        return low < high ? toward_zero : away;
    return (toward_zero & 1u) ? away : toward_zero;
}

static void check_one(uint32_t bits)
{
    float x = from_bits(bits);
    bf16 got = float_to_bf16(x);
    if (isnan(x)) {
        cr_assert(isnan(bf16_to_float(got)), "NaN bits %08x became %04x, not a NaN", bits, got);
        return;
    }
    uint16_t want = (float_bits(x) & 0xffffu) == 0 ? (uint16_t)(bits >> 16) : nearest_by_distance(x);
    cr_assert_eq(got, want, "%a (bits %08x): got bf16 %04x, the nearest is %04x", (double)x, bits, got, want);
}

Test(bf16, every_bf16_comes_back_unchanged)
{
    for (uint32_t b = 0; b <= 0xffffu; b++) {
        float value = bf16_to_float((bf16)b);
        cr_assert_eq(float_bits(value), b << 16, "bf16 %04x widened to bits %08x", b, float_bits(value));
        if (!isnan(value))
            cr_assert_eq(float_to_bf16(value), (bf16)b, "bf16 %04x came back as %04x", b, float_to_bf16(value));
    }
}

/* Every float whose low 16 bits are one of a spread of patterns: the halfway point and its
 * neighbours (ties both ways), the smallest and largest remainders, and some in between,
 * over every sign, exponent and top mantissa (subnormals, the largest finite, the NaNs). */
Test(bf16, floats_round_to_the_nearest_bf16_ties_to_even)
{
    const uint32_t low_bits[] = {0x0000, 0x0001, 0x1234, 0x7fff, 0x8000, 0x8001, 0xabcd, 0xffff};
    for (uint32_t high = 0; high <= 0xffffu; high++)
        for (size_t k = 0; k < sizeof low_bits / sizeof low_bits[0]; k++)
            check_one(high << 16 | low_bits[k]);
}

Test(bf16, the_named_cases)
{
    cr_assert_eq(float_to_bf16(1.0f + 0x1p-8f), float_to_bf16(1.0f), "a tie below an even bf16 goes down");
    cr_assert_eq(bf16_to_float(float_to_bf16(1.0f + 0x1p-7f + 0x1p-8f)), 1.0f + 0x1p-6f,
                 "a tie above an odd bf16 goes up");
    cr_assert(isinf(bf16_to_float(float_to_bf16(3.4e38f))), "past the largest bf16 (3.39e38) by half an ulp: inf");
    cr_assert_eq(bf16_to_float(float_to_bf16(-0.0f)), 0.0f);
    cr_assert(signbit(bf16_to_float(float_to_bf16(-0.0f))), "-0 keeps its sign");
    cr_assert(isinf(bf16_to_float(float_to_bf16(-INFINITY))) && bf16_to_float(float_to_bf16(-INFINITY)) < 0);
    cr_assert(isnan(bf16_to_float(float_to_bf16(from_bits(0x7f800001u)))), "a NaN with only its lowest bit set");
}

/* n values uniform in [-scale, scale] */
static void fill_uniform(float *x, size_t n, float scale)
{
    for (size_t i = 0; i < n; i++)
        x[i] = ((float)rand() / (float)RAND_MAX * 2.0f - 1.0f) * scale;
}

Test(bf16, the_cpu_kernels_round_and_widen_whole_arrays)
{
    enum { N = 1000 };
    float values[N], back[N];
    bf16 rounded[N];
    srand(7);
    fill_uniform(values, N, 500.0f);
    cpu_kernels.round_to_16(FORMAT_BF16, rounded, values, N);
    cpu_kernels.widen_16(FORMAT_BF16, back, rounded, N);
    for (int i = 0; i < N; i++) {
        cr_assert_eq(rounded[i], nearest_by_distance(values[i]), "element %d", i);
        cr_assert_eq(back[i], bf16_to_float(rounded[i]), "element %d", i);
        cr_assert_leq(fabsf(back[i] - values[i]), fabsf(values[i]) * 0x1p-8f, "within half a bf16 ulp");
    }
}

/* ---------------------------------------------------------------- matmuls on 16-bit operands */

enum { MM_N = 5, MM_C = 96, MM_OC = 7 };

static double value16(Format16 format, float x) { return float16_to_float(format, float_to_float16(format, x)); }

/* sum over k of a[k * a_step] x b[k * b_step], each rounded to the format, in double, and the
 * bound on an fp32 sum's error over the same terms: count x 2^-24 x the sum of their sizes */
static double dot16(Format16 format, const float *a, size_t a_step, const float *b, size_t b_step, int count,
                    double *bound)
{
    double sum = 0.0, sizes = 0.0;
    for (int k = 0; k < count; k++) {
        double term = value16(format, a[k * a_step]) * value16(format, b[k * b_step]);
        sum += term;
        sizes += fabs(term);
    }
    *bound = count * 0x1p-24 * sizes;
    return sum;
}

/* Also 1 when fp32 operands would have been off by more than the bound somewhere: the check
 * can tell 16-bit operands from fp32 ones. */
static int check_against(const char *what, float got, double want, double bound, double fp32_value)
{
    cr_assert_leq(fabs(got - want), bound + 1e-30, "%s: %.9g, 16-bit operands give %.9g (bound %.3g)", what, got,
                  want, bound);
    return fabs(fp32_value - want) > bound;
}

static void check_matmul_forward(Format16 format)
{
    static float inp[MM_N * MM_C], weight[MM_OC * MM_C], bias[MM_OC];
    static float out[MM_N * MM_OC], out_fp32[MM_N * MM_OC], operands[MM_N * MM_C + MM_OC * MM_C + MM_N * MM_OC];
    srand(11);
    fill_uniform(inp, MM_N * MM_C, 1.0f);
    fill_uniform(weight, MM_OC * MM_C, 1.0f);
    fill_uniform(bias, MM_OC, 1.0f);
    cpu_kernels.matmul_forward_16(format, out, inp, weight, bias, MM_N, MM_C, MM_OC, operands);
    cpu_kernels.matmul_forward(out_fp32, inp, weight, bias, MM_N, MM_C, MM_OC);
    int told_apart = 0;
    for (int n = 0; n < MM_N; n++)
        for (int o = 0; o < MM_OC; o++) {
            double bound, want = bias[o] + dot16(format, inp + n * MM_C, 1, weight + o * MM_C, 1, MM_C, &bound);
            told_apart |= check_against("out", out[n * MM_OC + o], want, bound + 0x1p-23, out_fp32[n * MM_OC + o]);
        }
    cr_assert(told_apart, "fp32 operands would pass this check too");
}

static void check_matmul_backward(Format16 format)
{
    static float inp[MM_N * MM_C], weight[MM_OC * MM_C], dout[MM_N * MM_OC];
    static float dinp[MM_N * MM_C], dweight[MM_OC * MM_C], dbias[MM_OC];
    static float dinp_fp32[MM_N * MM_C], dweight_fp32[MM_OC * MM_C], dbias_fp32[MM_OC];
    static float operands[MM_N * MM_C + MM_OC * MM_C + MM_N * MM_OC];
    srand(12);
    fill_uniform(inp, MM_N * MM_C, 1.0f);
    fill_uniform(weight, MM_OC * MM_C, 1.0f);
    fill_uniform(dout, MM_N * MM_OC, 1.001f); /* most not 16-bit values */
    cpu_kernels.matmul_backward_16(format, dinp, dweight, dbias, dout, inp, weight, MM_N, MM_C, MM_OC, operands);
    cpu_kernels.matmul_backward(dinp_fp32, dweight_fp32, dbias_fp32, dout, inp, weight, MM_N, MM_C, MM_OC);
    int dinp_apart = 0, dweight_apart = 0;
    for (int n = 0; n < MM_N; n++)
        for (int c = 0; c < MM_C; c++) {
            double bound, want = dot16(format, dout + n * MM_OC, 1, weight + c, MM_C, MM_OC, &bound);
            dinp_apart |= check_against("dinp", dinp[n * MM_C + c], want, bound, dinp_fp32[n * MM_C + c]);
        }
    for (int o = 0; o < MM_OC; o++)
        for (int c = 0; c < MM_C; c++) {
            double bound, want = dot16(format, dout + o, MM_OC, inp + c, MM_C, MM_N, &bound);
            dweight_apart |= check_against("dweight", dweight[o * MM_C + c], want, bound, dweight_fp32[o * MM_C + c]);
        }
    cr_assert(dinp_apart && dweight_apart, "fp32 operands would pass this check too");
    /* the bias gradient sums dout as it is, in fp32, as the fp32 kernel does */
    for (int o = 0; o < MM_OC; o++)
        cr_assert_eq(dbias[o], dbias_fp32[o], "dbias[%d]: %.9g, the fp32 dout's sum is %.9g", o, dbias[o],
                     dbias_fp32[o]);
}

Test(bf16, the_cpu_matmuls_multiply_bf16_operands_and_sum_in_fp32)
{
    check_matmul_forward(FORMAT_BF16);
}

Test(bf16, the_cpu_matmul_backward_rounds_its_operands_but_not_the_bias_gradient)
{
    check_matmul_backward(FORMAT_BF16);
}

Test(bf16, the_cpu_matmuls_multiply_fp16_operands_and_sum_in_fp32)
{
    check_matmul_forward(FORMAT_FP16);
}

Test(bf16, the_cpu_matmul_backward_rounds_fp16_operands_but_not_the_bias_gradient)
{
    check_matmul_backward(FORMAT_FP16);
}

/* ---------------------------------------------------------------- attention on 16-bit operands */

/* T = 40: a block of 32 queries and a part-block of 8; two heads of 32. */
enum { AT_B = 2, AT_T = 40, AT_C = 64, AT_NH = 2, AT_HS = AT_C / AT_NH, AT_N = AT_B * AT_T };
enum { AT_QKV = AT_N * 3 * AT_C, AT_Y = AT_N * AT_C, AT_ATT = AT_B * AT_NH * AT_T * AT_T };

typedef struct {
    float qkv[AT_QKV], dout[AT_Y], att[AT_ATT], out[AT_Y], dqkv[AT_QKV];
    float qkv16[AT_QKV], att_fp32[AT_ATT], out_fp32[AT_Y], dqkv_fp32[AT_QKV];
    float scratch[AT_T * AT_T], operands[4 * AT_N * AT_C + AT_ATT];
} AttentionRun;

/* Row t of head h of sequence b: its q (part 0), k (1) or v (2), and its dy. */
static const float *head_part(const float *qkv, int b, int h, int t, int part)
{
    return qkv + (size_t)(b * AT_T + t) * 3 * AT_C + part * AT_C + h * AT_HS;
}
static const float *head_dy(const float *dout, int b, int h, int t)
{
    return dout + (size_t)(b * AT_T + t) * AT_C + h * AT_HS;
}
static const float *probabilities(const float *att, int b, int h, int t)
{
    return att + ((size_t)(b * AT_NH + h) * AT_T + t) * AT_T;
}

static AttentionRun *attention_run(Format16 format)
{
    AttentionRun *run = calloc(1, sizeof *run);
    cr_assert(run != NULL);
    srand(13);
    fill_uniform(run->qkv, AT_QKV, 2.0f);
    fill_uniform(run->dout, AT_Y, 1.001f); /* most not 16-bit values */
    for (int i = 0; i < AT_QKV; i++)
        run->qkv16[i] = (float)value16(format, run->qkv[i]);
    cpu_kernels.attention_forward_16(format, run->out, run->att, run->scratch, run->qkv, AT_B, AT_T, AT_C, AT_NH,
                                     run->operands);
    cpu_kernels.attention_backward_16(format, run->dqkv, run->scratch, run->dout, run->qkv, run->att, AT_B, AT_T, AT_C,
                                      AT_NH, run->operands);
    /* fp32 kernels on the rounded q, k and v: the same scores, then p . v on fp32 p */
    cpu_kernels.attention_forward(run->out_fp32, run->att_fp32, run->scratch, run->qkv16, AT_B, AT_T, AT_C, AT_NH);
    cpu_kernels.attention_backward(run->dqkv_fp32, run->scratch, run->dout, run->qkv, run->att, AT_B, AT_T, AT_C,
                                   AT_NH);
    return run;
}

/* The probabilities come from q and k rounded, the softmax in fp32: those of the fp32 kernel
 * given the rounded q and k, bit for bit. out = p . v on both rounded. */
static void check_attention_forward16(Format16 format)
{
    AttentionRun *run = attention_run(format);
    for (int i = 0; i < AT_ATT; i++)
        cr_assert(run->att[i] == run->att_fp32[i], "att[%d]: %.9g, the fp32 softmax of the rounded q.k is %.9g", i,
                  run->att[i], run->att_fp32[i]);
    int told_apart = 0;
    for (int b = 0; b < AT_B; b++)
        for (int h = 0; h < AT_NH; h++)
            for (int t = 0; t < AT_T; t++)
                for (int i = 0; i < AT_HS; i++) {
                    double bound, want = dot16(format, probabilities(run->att, b, h, t), 1,
                                               head_part(run->qkv, b, h, 0, 2) + i, 3 * AT_C, t + 1, &bound);
                    size_t at = (size_t)(b * AT_T + t) * AT_C + h * AT_HS + i;
                    told_apart |= check_against("out", run->out[at], want, bound, run->out_fp32[at]);
                }
    cr_assert(told_apart, "fp32 probabilities would pass this check too");
    free(run);
}

/* d(scores) of row t of a head, in double from dy and v rounded and the fp32 p, and a bound
 * on how far an fp32 computation of each may be from it (generous: four times the sums'
 * worst rounding). */
static void exact_dscores(Format16 format, const AttentionRun *run, int b, int h, int t, double *ds, double *err)
{
    const float *p = probabilities(run->att, b, h, t), *dy = head_dy(run->dout, b, h, t);
    double scale = 1.0 / sqrt((double)AT_HS), dp[AT_T], dp_err[AT_T], dot = 0.0, dot_size = 0.0;
    for (int j = 0; j <= t; j++) {
        double sizes;
        dp[j] = dot16(format, dy, 1, head_part(run->qkv, b, h, j, 2), 1, AT_HS, &sizes);
        dp_err[j] = sizes;
        dot += p[j] * dp[j];
        dot_size += p[j] * (fabs(dp[j]) + dp_err[j]);
    }
    for (int j = 0; j <= t; j++) {
        ds[j] = scale * p[j] * (dp[j] - dot);
        err[j] = 4.0 * scale * p[j] * (dp_err[j] + (t + 2) * 0x1p-24 * dot_size + 0x1p-22 * (fabs(dp[j]) + fabs(dot)));
    }
}

/* Adds a d(scores) times an operand, both rounded, to *sum, and to *bound what it may be off
 * by: the fp32 sum's rounding, and the distance between the two values a d(scores) within
 * err of a point where the rounding changes may take (0 for most). */
static void add_dscore_term(Format16 format, double ds, double err, float operand, double *sum, double *bound)
{
    double x = value16(format, operand);
    double either = fabs(value16(format, (float)(ds - err)) - value16(format, (float)(ds + err)));
    *sum += value16(format, (float)ds) * x;
    *bound += fabs(ds * x) * (AT_T * 0x1p-24 + 0x1p-23) + either * fabs(x);
}

/* dv sums p and dy rounded; dq and dk, d(scores) rounded (softmax backward in fp32 from the
 * fp32 p) times k and q rounded. A d(scores) that a last-bit difference could round either
 * way is allowed both. */
static void check_attention_backward16(Format16 format)
{
    AttentionRun *run = attention_run(format);
    int dv_apart = 0, dq_apart = 0;
    static double ds[AT_T][AT_T], ds_err[AT_T][AT_T];
    for (int b = 0; b < AT_B; b++)
        for (int h = 0; h < AT_NH; h++) {
            for (int t = 0; t < AT_T; t++)
                exact_dscores(format, run, b, h, t, ds[t], ds_err[t]);
            for (int j = 0; j < AT_T; j++)
                for (int i = 0; i < AT_HS; i++) {
                    size_t at = (size_t)(b * AT_T + j) * 3 * AT_C + h * AT_HS + i;
                    double bound, want = dot16(format, probabilities(run->att, b, h, j) + j, AT_T,
                                               head_dy(run->dout, b, h, j) + i, AT_C, AT_T - j, &bound);
                    dv_apart |=
                        check_against("dv", run->dqkv[at + 2 * AT_C], want, bound, run->dqkv_fp32[at + 2 * AT_C]);
                    double dq = 0.0, dq_bound = 0.0, dk = 0.0, dk_bound = 0.0;
                    for (int u = 0; u <= j; u++) /* dq_j = sum over u <= j of ds_ju k_u */
                        add_dscore_term(format, ds[j][u], ds_err[j][u], head_part(run->qkv, b, h, u, 1)[i], &dq,
                                        &dq_bound);
                    for (int u = j; u < AT_T; u++) /* dk_j = sum over u >= j of ds_uj q_u */
                        add_dscore_term(format, ds[u][j], ds_err[u][j], head_part(run->qkv, b, h, u, 0)[i], &dk,
                                        &dk_bound);
                    dq_apart |= check_against("dq", run->dqkv[at], dq, dq_bound, run->dqkv_fp32[at]);
                    check_against("dk", run->dqkv[at + AT_C], dk, dk_bound, run->dqkv_fp32[at + AT_C]);
                }
        }
    cr_assert(dv_apart && dq_apart, "fp32 operands would pass this check too");
    free(run);
}

Test(bf16, the_cpu_attention_multiplies_bf16_operands_and_keeps_its_softmax_in_fp32)
{
    check_attention_forward16(FORMAT_BF16);
}

Test(bf16, the_cpu_attention_backward_rounds_p_dy_and_dscores_to_bf16)
{
    check_attention_backward16(FORMAT_BF16);
}

Test(bf16, the_cpu_attention_multiplies_fp16_operands_and_keeps_its_softmax_in_fp32)
{
    check_attention_forward16(FORMAT_FP16);
}

Test(bf16, the_cpu_attention_backward_rounds_p_dy_and_dscores_to_fp16)
{
    check_attention_backward16(FORMAT_FP16);
}
