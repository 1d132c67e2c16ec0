
/* A submission that tries to write where it must not: the course it was built in, the
 * instructor's course, another student's submission, and a file outside its folder. Each
 * attempt that works leaves a marker the test looks for. */
#include <stdio.h>

__attribute__((constructor)) static void write_everywhere(void)
{
    const char *targets[] = {"common/marker_from_a_submission", "lessons/02_naive_ddp/naive_ddp.c",
                             "@COURSE@/common/marker_from_a_submission", "@COURSE@/tests/expected/02_naive_ddp.checks",
                             "@SUBMISSIONS@/alice/marker_from_a_submission", "/var/tmp/marker_from_a_submission"};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        FILE *f = fopen(targets[i], "a");
        if (f != NULL) {
            fputs("written by a submission\n", f);
            fclose(f);
        }
    }
}
