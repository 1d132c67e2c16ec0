/* The elementwise math both devices share (scalar_math.h) and the CPU's row reductions
 * (fastmath.h), against the same formulas in double precision or added one element at a
 * time. */
#include <criterion/criterion.h>

#include <float.h>
#include <math.h>

#include "fastmath.h"
#include "rng.h"
#include "scalar_math.h"

/* GPT-2's GELU and its slope in double, in the form that keeps its accuracy everywhere:
 * (1 + tanh(u)) / 2 as 1 / (1 + e^(-2u)). */
static double gelu_reference(double x, double *slope)
{
    const double sqrt_2_over_pi = sqrt(2.0 / 3.14159265358979323846);
    double u = sqrt_2_over_pi * (x + 0.044715 * x * x * x);
    double e = exp(-2.0 * u), s = 1.0 / (1.0 + e);
    *slope = s + 2.0 * x * e * s * s * sqrt_2_over_pi * (1.0 + 3.0 * 0.044715 * x * x);
    return x * s;
}

/* Every float step of 1e-4 over [-10, 10]: where x is very negative, gelu(x) is a tiny
 * number that 0.5 x (1 + tanh(u)) would make by cancellation (wrong in every digit, or 0);
 * below -10 exp_poly's clamp at e^88 holds it near 1e-37. The slope changes sign near
 * x = -0.75, where it is judged against 1e-2 instead of itself. */
Test(scalar_math, gelu_and_its_slope_match_the_formula_in_double)
{
    double worst_value = 0.0, worst_slope = 0.0;
    float at_value = 0.0f, at_slope = 0.0f;
    for (int i = -100000; i <= 100000; i++) {
        float x = (float)i * 1e-4f;
        double slope, value = gelu_reference(x, &slope);
        double value_err = fabs(gelu_tanh_value(x) - value) / fmax(fabs(value), DBL_MIN);
        double slope_err = fabs(gelu_tanh_slope(x) - slope) / fmax(fabs(slope), 1e-2);
        if (value != 0.0 && !(value_err <= worst_value)) {
            worst_value = value_err;
            at_value = x;
        }
        if (!(slope_err <= worst_slope)) {
            worst_slope = slope_err;
            at_slope = x;
        }
    }
    /* exp_poly is within ~2 ulp; u at x = -10 is about -44, so e^(-2u) carries the
     * rounding of its argument, ~1e-5 relative there (measured worst: 9.9e-6) */
    cr_expect(worst_value <= 2e-5, "gelu: relative error %g at x = %g", worst_value, at_value);
    cr_expect(worst_slope <= 2e-5, "gelu slope: error %g at x = %g", worst_slope, at_slope);
}

/* Each reduction over lengths 1..70 (whole groups of LANES and every tail) against the
 * same lanes added one element at a time in plain order, and halves added as described. */
static float lanes_by_hand(const float *x, const float *y, int n)
{
    float acc[LANES] = {0};
    for (int i = 0; i < n; i++)
        acc[i % LANES] += y != NULL ? x[i] * y[i] : x[i];
    for (int half = LANES / 2; half > 0; half /= 2)
        for (int j = 0; j < half; j++)
            acc[j] += acc[j + half];
    return acc[0];
}

Test(scalar_math, reductions_add_in_their_lanes_whatever_the_length)
{
    Rng rng;
    rng_seed(&rng, 7);
    float x[70], y[70];
    for (int i = 0; i < 70; i++) {
        x[i] = (float)rng_normal(&rng) * 1e3f;
        y[i] = (float)rng_normal(&rng);
    }
    for (int n = 1; n <= 70; n++) {
        cr_expect_eq(sum_floats(x, n), lanes_by_hand(x, NULL, n), "sum_floats, n = %d", n);
        cr_expect_eq(dot_floats(x, y, n), lanes_by_hand(x, y, n), "dot_floats, n = %d", n);
        float largest = x[0];
        for (int i = 1; i < n; i++)
            largest = x[i] > largest ? x[i] : largest;
        cr_expect_eq(max_floats(x, n), largest, "max_floats, n = %d", n);
    }
}
