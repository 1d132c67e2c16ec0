/* Lesson 02: naive DDP. `mpiexec -n N 02_naive_ddp train [flags]` */
#include "lesson.h"
#include "naive_ddp.h"

static const Lesson lesson = {
    .name = "02_naive_ddp",
    .title = "naive DDP: broadcast at start, one blocking all-reduce per parameter tensor",
    .strategy = &naive_ddp,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
