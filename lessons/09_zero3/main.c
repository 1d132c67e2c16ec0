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
    .strategy = &zero3,
    .flags = {"ZeRO-3", zero3_flags, &options},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
