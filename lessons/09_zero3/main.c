/* Lesson 09: ZeRO-3, parameters sharded too. `mpiexec -n N 09_zero3 train [--no-prefetch] [flags]` */
#include <stddef.h>

#include "lesson.h"
#include "zero3.h"

static Zero3Options options;

static const Flag zero3_flags[] = {
    {"no-prefetch", FLAG_SWITCH, offsetof(Zero3Options, no_prefetch),
     "gather each unit only when it is needed (no all-gather of the next unit while this one computes)", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static const Lesson lesson = {
    .name = "09_zero3",
    .title = "ZeRO-3: parameters sharded too; each unit all-gathered before use, the next one prefetched",
    .strategy = &(const Strategy){.name = "zero3", .model_storage = zero3_model_storage, .setup = zero3_setup, .start = zero3_start, .acquire_params = zero3_acquire_params,
                 .release_params = zero3_release_params, .unit_grads = zero2_unit_grads,
                 .grads_ready = zero2_grads_ready, .optimizer_step = zero3_optimizer_step,
                 .gather_params = zero3_gather_params, .gather_optimizer = zero1_gather_optimizer,
                 .load_optimizer = zero1_load_optimizer, .stop = zero3_stop},
    .flags = {"ZeRO-3", zero3_flags, &options},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
