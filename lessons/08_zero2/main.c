/* Lesson 08: ZeRO-2, optimizer state and gradients sharded. `mpiexec -n N 08_zero2 train [flags]` */
#include "lesson.h"
#include "zero2.h"

static const Lesson lesson = {
    .name = "08_zero2",
    .title = "ZeRO-2: gradients reduce-scattered unit by unit during backward; no full gradient buffer",
    .strategy = &zero2,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
