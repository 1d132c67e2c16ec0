/* Lesson 03: flat DDP. `mpiexec -n N 03_flat_ddp train [--copy-tensors] [flags]` */
#include <stddef.h>

#include "flat_ddp.h"
#include "lesson.h"

static FlatOptions options;

static const Flag flat_flags[] = {
    {"copy-tensors", FLAG_SWITCH, offsetof(FlatOptions, copy_tensors),
     "pack the tensors into one buffer and unpack after (the cost of flattening separate tensors)", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static const Lesson lesson = {
    .name = "03_flat_ddp",
    .title = "flat DDP: one all-reduce over the whole flat gradient buffer",
    .strategy = {.name = "flat_ddp", .setup = flat_ddp_setup, .start = flat_ddp_start, .before_step = flat_ddp_before_step,
                 .stop = flat_ddp_stop},
    .flags = {"flattening", flat_flags, &options},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
