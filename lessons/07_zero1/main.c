/* Lesson 07: ZeRO-1, optimizer state sharded. `mpiexec -n N 07_zero1 train [flags]` */
#include "lesson.h"
#include "zero1.h"

static const Lesson lesson = {
    .name = "07_zero1",
    .title = "ZeRO-1: AdamW state sharded; gradients reduce-scattered, parameters all-gathered",
    .strategy = {.name = "zero1", .setup = zero1_setup, .start = zero1_start, .optimizer_step = zero1_optimizer_step, .stop = zero1_stop},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
