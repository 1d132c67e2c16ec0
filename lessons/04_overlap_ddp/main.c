/* Lesson 04: overlapping communication with backward. `mpiexec -n N 04_overlap_ddp train [flags]` */
#include "lesson.h"
#include "overlap_ddp.h"

static const Lesson lesson = {
    .name = "04_overlap_ddp",
    .title = "overlapped DDP: each unit's all-reduce starts from the backward hook, waited on before the step",
    .strategy = {.name = "overlap_ddp", .setup = overlap_ddp_setup, .start = overlap_ddp_start, .grads_ready = overlap_ddp_grads_ready,
                 .before_step = overlap_ddp_before_step, .stop = overlap_ddp_stop},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
