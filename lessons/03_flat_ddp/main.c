/* Lesson 03: flat DDP. `mpiexec -n N 03_flat_ddp train [--copy-tensors] [flags]` */
#include <stddef.h>
#include <stdio.h>

#include "flat_ddp.h"
#include "lesson.h"

static FlatOptions options;

static const Flag flat_flags[] = {
    {"copy-tensors", FLAG_SWITCH, offsetof(FlatOptions, copy_tensors),
     "pack the tensors into one buffer and unpack after (the cost of flattening separate tensors)", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

void flat_ddp_report_copies(const RunContext *run, double seconds, long steps)
{
    if (comm_rank(run->comm) == 0 && steps > 0)
        printf("copy in/out (--copy-tensors): %.3f ms per step on rank 0, %ld steps\n", 1e3 * seconds / steps, steps);
}

static const Lesson lesson = {
    .name = "03_flat_ddp",
    .title = "flat DDP: one all-reduce over the whole flat gradient buffer",
    .strategy = &flat_ddp,
    .flags = {"flattening", flat_flags, &options},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
