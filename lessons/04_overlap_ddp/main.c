/* Lesson 04: overlapping communication with backward. `mpiexec -n N 04_overlap_ddp train [flags]` */
#include "lesson.h"
#include "overlap_ddp.h"

static const Lesson lesson = {
    .name = "04_overlap_ddp",
    .title = "overlapped DDP: each unit's all-reduce starts from the backward hook, waited on before the step",
    .strategy = &overlap_ddp,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
