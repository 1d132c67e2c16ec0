/* AdamW, gradient-norm clipping and the learning-rate schedule against values worked out
 * here, in double, from the formulas (not from optimizer.c or kernels_cpu.c):
 *
 *   g = grad * grad_scale
 *   m = b1 m + (1 - b1) g          v = b2 v + (1 - b2) g^2
 *   mhat = m / (1 - b1^t)          vhat = v / (1 - b2^t)
 *   p -= lr (mhat / (sqrt(vhat) + eps) + wd p)     (decoupled weight decay)
 *
 * The kernel computes in float, so results are compared with a tolerance of a few float
 * ulps of the quantities involved; the mistakes these tests exist for (bias correction
 * off by a step, eps inside the sqrt, weight decay folded into the gradient, scale not
 * applied) move the results by 1e-3 or more of the update, far outside it. */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "optimizer.h"

enum { ADAM_N = 6 };

typedef struct {
    double p[ADAM_N], m[ADAM_N], v[ADAM_N];
} AdamByHand;

static void adamw_by_hand(AdamByHand *s, const float *grads, AdamWHyper hyper, double grad_scale, int t)
{
    double b1 = hyper.beta1, b2 = hyper.beta2;
    for (int i = 0; i < ADAM_N; i++) {
        double g = (double)grads[i] * grad_scale;
        s->m[i] = b1 * s->m[i] + (1.0 - b1) * g;
        s->v[i] = b2 * s->v[i] + (1.0 - b2) * g * g;
        double mhat = s->m[i] / (1.0 - pow(b1, t));
        double vhat = s->v[i] / (1.0 - pow(b2, t));
        s->p[i] -= (double)hyper.lr * (mhat / (sqrt(vhat) + (double)hyper.eps) + (double)hyper.weight_decay * s->p[i]);
    }
}

/* |got - want| within `ulps` float epsilons of `scale` */
static void expect_close(const char *what, int step, int i, double got, double want, double scale, double ulps)
{
    double tol = ulps * FLT_EPSILON * scale;
    cr_assert(fabs(got - want) <= tol, "step %d, %s[%d]: %.10g, want %.10g (|diff| %.3g > %.3g)",
              step, what, i, got, want, fabs(got - want), tol);
}

static void expect_state(const AdamW *opt, const float *params, const AdamByHand *hand, const float *p_before,
                         int step)
{
    for (int i = 0; i < ADAM_N; i++) {
        /* params: 4 ulps of p (its own rounding) plus 3e-5 of the update (float arithmetic
         * inside lr * (...)) */
        double update = fabs(p_before[i] - hand->p[i]);
        expect_close("param", step, i, params[i], hand->p[i], fabs(hand->p[i]) + 64.0 * update, 4.0);
        expect_close("m", step, i, opt->m[i], hand->m[i], fabs(hand->m[i]), 8.0);
        expect_close("v", step, i, opt->v[i], hand->v[i], fabs(hand->v[i]), 8.0);
        /* the test would see a 0.1% error in the update */
        cr_assert(update == 0.0 || 4.0 * FLT_EPSILON * (fabs(hand->p[i]) + 64.0 * update) < 1e-3 * update,
                  "element %d: tolerance too loose to see the update", i);
    }
}

Test(adamw, two_steps_match_the_formulas)
{
    AdamWHyper hyper = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
    /* a plain weight, a negative one, one with no gradient (decay only), a large gradient,
     * a tiny gradient where eps matters (g = 1e-9 vs eps = 1e-8: eps inside the sqrt would
     * change the step about 9,000x), and a zero weight with a gradient (no decay) */
    const float p0[ADAM_N] = {0.5f, -1.0f, 2.0f, 0.25f, 0.75f, 0.0f};
    const float g1[ADAM_N] = {0.1f, -0.2f, 0.0f, 3.0f, 2e-9f, -0.05f};
    const float g2[ADAM_N] = {-0.3f, -0.1f, 0.0f, 1.0f, 2e-9f, 0.4f};

    AdamW opt;
    char err[256];
    cr_assert_eq(adamw_create(&opt, ADAM_N, &cpu_kernels, err, sizeof err), 0, "%s", err);
    cr_assert_eq(opt.step, 0);
    for (int i = 0; i < ADAM_N; i++)
        cr_assert(opt.m[i] == 0.0f && opt.v[i] == 0.0f, "moments start at 0");

    float params[ADAM_N], before[ADAM_N];
    memcpy(params, p0, sizeof params);
    AdamByHand hand;
    for (int i = 0; i < ADAM_N; i++) {
        hand.p[i] = p0[i];
        hand.m[i] = hand.v[i] = 0.0;
    }

    /* step 1 with clipping: the gradients are scaled by 0.5 before anything else */
    memcpy(before, params, sizeof before);
    adamw_step(&opt, params, g1, hyper, 0.5f);
    adamw_by_hand(&hand, g1, hyper, 0.5, 1);
    cr_assert_eq(opt.step, 1);
    expect_state(&opt, params, &hand, before, 1);
    /* worked out fully for element 0: g = 0.05, mhat = 0.05, vhat = 0.0025,
     * p = 0.5 - 0.01 (0.05 / (0.05 + 1e-8) + 0.1 * 0.5) */
    double p_elem0 = 0.5 - 0.01 * (0.05 / (0.05 + 1e-8) + 0.05);
    cr_assert(fabs(params[0] - p_elem0) <= 1e-7, "element 0 after step 1: %.9g, want %.9g", params[0], p_elem0);
    /* decoupled decay: no gradient, so the weight only shrinks by lr * wd */
    cr_assert(fabs(params[2] - 2.0 * (1.0 - 0.01 * 0.1)) <= 2e-7, "decay-only weight: %.9g", params[2]);

    /* step 2, no clipping: bias corrections 1 - b1^2 = 0.19 and 1 - b2^2 = 0.0975 */
    memcpy(before, params, sizeof before);
    adamw_step(&opt, params, g2, hyper, 1.0f);
    adamw_by_hand(&hand, g2, hyper, 1.0, 2);
    cr_assert_eq(opt.step, 2);
    expect_state(&opt, params, &hand, before, 2);

    adamw_destroy(&opt);
}

Test(adamw, state_covers_only_its_range)
{
    /* one shard: an optimizer over 3 elements must not touch the 4th */
    AdamWHyper hyper = {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f};
    float params[4] = {1.0f, 1.0f, 1.0f, 1.0f};
    const float grads[4] = {1.0f, -1.0f, 2.0f, 5.0f};
    AdamW opt;
    char err[256];
    cr_assert_eq(adamw_create(&opt, 3, &cpu_kernels, err, sizeof err), 0, "%s", err);
    adamw_step(&opt, params, grads, hyper, 1.0f);
    /* first step, no decay: p -= lr * g / (|g| + eps), i.e. lr * sign(g) */
    cr_assert(fabsf(params[0] - 0.9f) <= 1e-6f && fabsf(params[1] - 1.1f) <= 1e-6f && fabsf(params[2] - 0.9f) <= 1e-6f,
              "first step should move each weight by lr against its gradient's sign: %g %g %g",
              params[0], params[1], params[2]);
    cr_assert(params[3] == 1.0f, "element past the range changed to %g", params[3]);
    adamw_destroy(&opt);
}

/* A step whose gradient is not finite (--skip-nonfinite) is no step: after one taken in
 * pieces with a NaN scale, the state is bit for bit what it was, and the next step is the
 * second one the formulas take, not the third. */
Test(adamw, a_step_with_a_gradient_that_is_not_finite_changes_nothing)
{
    AdamWHyper hyper = {.lr = 1e-2f, .beta1 = 0.9f, .beta2 = 0.95f, .eps = 1e-8f, .weight_decay = 0.1f};
    const float g1[ADAM_N] = {0.1f, -0.2f, 0.0f, 3.0f, 2e-9f, -0.05f};
    const float g2[ADAM_N] = {-0.3f, -0.1f, 0.0f, 1.0f, 2e-9f, 0.4f};
    float params[ADAM_N] = {0.5f, -1.0f, 2.0f, 0.25f, 0.75f, 0.0f}, before[ADAM_N], m[ADAM_N], v[ADAM_N];
    AdamByHand hand;
    for (int i = 0; i < ADAM_N; i++) {
        hand.p[i] = params[i];
        hand.m[i] = hand.v[i] = 0.0;
    }
    AdamW opt;
    char err[256];
    cr_assert_eq(adamw_create(&opt, ADAM_N, &cpu_kernels, err, sizeof err), 0, "%s", err);
    adamw_step(&opt, params, g1, hyper, 1.0f);
    adamw_by_hand(&hand, g1, hyper, 1.0, 1);
    memcpy(before, params, sizeof before);
    memcpy(m, opt.m, sizeof m);
    memcpy(v, opt.v, sizeof v);

    adamw_begin_step(&opt); /* in two pieces, as a ZeRO shard takes it */
    adamw_update_range(&opt, 0, params, g2, 3, hyper, clip_scale(NAN, 1.0f));
    adamw_update_range(&opt, 3, params + 3, g2 + 3, 3, hyper, clip_scale(INFINITY, 0.0f));
    cr_assert_eq(opt.step, 1, "a skipped step is not counted: step %d", opt.step);
    cr_assert(memcmp(params, before, sizeof before) == 0 && memcmp(opt.m, m, sizeof m) == 0 &&
              memcmp(opt.v, v, sizeof v) == 0, "a skipped step changed the parameters or moments");
    adamw_step(&opt, params, g2, hyper, clip_scale(0.5f, 1.0f));
    adamw_by_hand(&hand, g2, hyper, 1.0, 2);
    cr_assert_eq(opt.step, 2);
    expect_state(&opt, params, &hand, before, 2);
    adamw_destroy(&opt);
}

/* ---------------------------------------------------------------- norm and clipping */

Test(adamw, grad_norm_matches_hand_values)
{
    const float pythagoras[2] = {3.0f, -4.0f};
    cr_assert(grad_norm(&cpu_kernels, pythagoras, 2) == 5.0f, "norm of (3, -4): %g",
              grad_norm(&cpu_kernels, pythagoras, 2));

    /* 1..n scaled by 1e-3: sum of squares n (n + 1) (2n + 1) / 6 * 1e-6 */
    enum { N = 1000 };
    float *g = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++)
        g[i] = (float)(i + 1) * 1e-3f;
    double exact = 0.0;
    for (int i = 0; i < N; i++) /* the float values actually stored */
        exact += (double)g[i] * g[i];
    double formula = (double)N * (N + 1) * (2 * N + 1) / 6.0 * 1e-6;
    cr_assert(fabs(exact / formula - 1.0) < 1e-6, "hand sum %.9g vs formula %.9g", exact, formula);
    float norm = grad_norm(&cpu_kernels, g, N);
    cr_assert(fabs(norm - sqrt(exact)) <= 2.0 * FLT_EPSILON * sqrt(exact), "norm %.9g, want %.9g", norm, sqrt(exact));

    cr_assert(grad_norm(&cpu_kernels, g, 0) == 0.0f, "norm of nothing");
    free(g);
}

Test(adamw, clip_scale_cases)
{
    cr_assert(clip_scale(5.0f, 0.0f) == 1.0f, "max 0 turns clipping off");
    cr_assert(clip_scale(5.0f, -1.0f) == 1.0f, "negative max turns clipping off");
    cr_assert(clip_scale(0.5f, 1.0f) == 1.0f, "below the max: no scaling");
    cr_assert(clip_scale(1.0f, 1.0f) == 1.0f, "at the max: no scaling");
    cr_assert(clip_scale(0.0f, 1.0f) == 1.0f, "zero gradient");
    cr_assert(clip_scale(4.0f, 1.0f) == 0.25f, "above: max / norm, got %g", clip_scale(4.0f, 1.0f));
    float s = clip_scale(3.0f, 1.0f);
    cr_assert(fabs(s - 1.0 / 3.0) <= FLT_EPSILON, "max / norm = 1/3, got %.9g", s);
    cr_assert(isnan(clip_scale(NAN, 1.0f)) && isnan(clip_scale(INFINITY, 1.0f)) && isnan(clip_scale(NAN, 0.0f)),
              "a norm that is not finite gives no scale to step with, clipping on or off");
    cr_assert(isnan(clip_scale(0.5f, NAN)), "a NaN limit (a step the trainer skips) gives none either");

    /* scaled by it, the gradient's norm is the max */
    float g[3] = {2.0f, -6.0f, 3.0f}; /* norm 7 */
    float scale = clip_scale(grad_norm(&cpu_kernels, g, 3), 1.4f);
    for (int i = 0; i < 3; i++)
        g[i] *= scale;
    float clipped = grad_norm(&cpu_kernels, g, 3);
    cr_assert(fabsf(clipped - 1.4f) <= 4.0f * FLT_EPSILON, "norm after clipping %.9g, want 1.4", clipped);
}

/* ---------------------------------------------------------------- learning rate */

static double schedule_by_hand(double lr, int step, int total, int warmup, double min_frac)
{
    if (step < warmup)
        return lr * (step + 1) / warmup;
    double progress = (double)(step - warmup) / (double)(total - warmup - 1);
    return lr * (min_frac + (1.0 - min_frac) * 0.5 * (1.0 + cos(3.14159265358979323846 * progress)));
}

Test(adamw, lr_schedule_warms_up_then_follows_a_cosine)
{
    const float lr = 6e-4f, min_frac = 0.1f;
    const int total = 100, warmup = 10;
    float prev = 0.0f;
    for (int step = 0; step < total; step++) {
        float got = lr_schedule(lr, step, total, warmup, min_frac);
        double want = schedule_by_hand(lr, step, total, warmup, min_frac);
        cr_assert(fabs(got - want) <= 2.0 * FLT_EPSILON * want, "step %d: lr %.9g, want %.9g", step, got, want);
        if (step < warmup)
            cr_assert(got > prev, "warm-up not increasing at step %d", step);
        else if (step > warmup)
            cr_assert(got <= prev, "decay not decreasing at step %d", step);
        prev = got;
    }
    /* the end points, one by one */
    cr_assert(fabs(lr_schedule(lr, 0, total, warmup, min_frac) - lr / 10.0) <= FLT_EPSILON * lr,
              "first warm-up step is lr / warmup");
    cr_assert(fabs(lr_schedule(lr, warmup - 1, total, warmup, min_frac) - lr) <= FLT_EPSILON * lr,
              "the warm-up reaches lr at step warmup - 1, got %.9g", lr_schedule(lr, warmup - 1, total, warmup, min_frac));
    cr_assert(fabs(lr_schedule(lr, warmup, total, warmup, min_frac) - lr) <= FLT_EPSILON * lr,
              "the decay starts from lr");
    float last = lr_schedule(lr, total - 1, total, warmup, min_frac);
    cr_assert(fabs(last - (double)lr * min_frac) <= FLT_EPSILON * lr * min_frac,
              "last step: %.9g, want min_lr_frac * lr = %.9g", last, (double)lr * min_frac);
    /* half way through the decay: the mean of lr and min lr */
    int middle_total = 2 * 10 + 1 + warmup; /* decay steps 0..20, middle at 10 */
    float middle = lr_schedule(lr, warmup + 10, middle_total, warmup, min_frac);
    cr_assert(fabs(middle - (double)lr * (1.0 + min_frac) / 2.0) <= 2.0 * FLT_EPSILON * lr,
              "middle of the decay: %.9g, want %.9g", middle, (double)lr * (1.0 + min_frac) / 2.0);
}

Test(adamw, lr_schedule_edge_cases)
{
    const float lr = 1e-3f;
    /* no warm-up: the first step already has the full lr, and min_frac 0 ends at 0 */
    cr_assert(fabsf(lr_schedule(lr, 0, 50, 0, 0.0f) - lr) <= FLT_EPSILON * lr, "no warm-up: step 0 at lr");
    cr_assert(fabsf(lr_schedule(lr, 49, 50, 0, 0.0f)) <= FLT_EPSILON * lr, "min_frac 0 ends at %g",
              lr_schedule(lr, 49, 50, 0, 0.0f));
    /* min_frac 1: constant after warm-up */
    for (int step = 5; step < 40; step++)
        cr_assert(fabsf(lr_schedule(lr, step, 40, 5, 1.0f) - lr) <= FLT_EPSILON * lr, "min_frac 1 at step %d", step);
    /* a warm-up of one step is no warm-up */
    cr_assert(fabsf(lr_schedule(lr, 0, 10, 1, 0.1f) - lr) <= FLT_EPSILON * lr, "warm-up of 1");
}
