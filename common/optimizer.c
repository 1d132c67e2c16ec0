#include "optimizer.h"

#include <math.h>
#include <stdio.h>

int adamw_create(AdamW *opt, size_t count, const Kernels *kernels, char *err, size_t err_len)
{
    opt->kernels = kernels;
    opt->count = count;
    opt->step = 0;
    opt->skipping = 0;
    opt->m = kernels->alloc(count * sizeof(float), MEM_ADAM_M);
    opt->v = kernels->alloc(count * sizeof(float), MEM_ADAM_V);
    if (opt->m == NULL || opt->v == NULL) {
        snprintf(err, err_len, "out of memory allocating AdamW state for %zu parameters", count);
        adamw_destroy(opt);
        return -1;
    }
    return 0;
}

void adamw_destroy(AdamW *opt)
{
    if (opt->kernels == NULL)
        return;
    opt->kernels->free(opt->m);
    opt->kernels->free(opt->v);
    opt->m = opt->v = NULL;
}

void adamw_begin_step(AdamW *opt)
{
    opt->step++;
    opt->skipping = 0;
}

void adamw_update_range(AdamW *opt, size_t first, float *params, const float *grads, size_t n,
                        AdamWHyper hyper, float grad_scale)
{
    if (!isfinite(grad_scale)) {
        if (!opt->skipping)
            opt->step--; /* the step begun is not taken */
        opt->skipping = 1;
        return;
    }
    opt->kernels->adamw_update(params, grads, opt->m + first, opt->v + first, n, hyper, grad_scale, opt->step);
}

void adamw_step(AdamW *opt, float *params, const float *grads, AdamWHyper hyper, float grad_scale)
{
    adamw_begin_step(opt);
    adamw_update_range(opt, 0, params, grads, opt->count, hyper, grad_scale);
}

float grad_norm(const Kernels *kernels, const float *grads, size_t count)
{
    return (float)sqrt(kernels->sum_of_squares(grads, count));
}

float clip_scale(float norm, float max_norm)
{
    if (!isfinite(norm) || isnan(max_norm))
        return NAN;
    if (max_norm <= 0.0f || norm <= max_norm)
        return 1.0f;
    return max_norm / norm;
}

float lr_schedule(float lr, int step, int total_steps, int warmup_steps, float min_lr_frac)
{
    if (step < warmup_steps)
        return lr * (float)(step + 1) / (float)warmup_steps;
    int decay_steps = total_steps - warmup_steps;
    if (decay_steps <= 1)
        return lr;
    double progress = (double)(step - warmup_steps) / (double)(decay_steps - 1);
    double cosine = 0.5 * (1.0 + cos(3.14159265358979323846 * progress));
    return (float)(lr * (min_lr_frac + (1.0 - min_lr_frac) * cosine));
}
