/* Lesson 06: gradient accumulation. `mpiexec -n N 06_grad_accum train --accum K [flags]`
 * The global batch (--batch) stays what it is: each rank runs its share as K micro-batches. */
#include <stddef.h>

#include "grad_accum.h"
#include "lesson.h"

static AccumOptions options = {.buckets = {.bucket_mb = 1.0}, .accum = 2};

static const Flag accum_flags[] = {
    {"accum", FLAG_INT, offsetof(AccumOptions, accum), "micro-batches per optimizer step (K)", 1, 1 << 20, 0},
    {"bucket-mb", FLAG_FLOAT, offsetof(AccumOptions, buckets.bucket_mb), "most gradient MB (10^6 bytes) per bucket", 0, 1e9, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static int configure(TrainConfig *cfg, const void *lesson_options, char *err, size_t err_len)
{
    (void)err;
    (void)err_len;
    const AccumOptions *accum_options = lesson_options;
    cfg->accum_steps = accum_options->accum;
    return 0;
}

static const Lesson lesson = {
    .name = "06_grad_accum",
    .title = "gradient accumulation: K micro-batches per step, buckets all-reduced during the last one's backward",
    .strategy = &grad_accum,
    .flags = {"accumulation", accum_flags, &options},
    .configure = configure,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
