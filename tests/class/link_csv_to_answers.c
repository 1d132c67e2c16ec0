
/* A dishonest submission: at exit it replaces the file its --csv names with a symbolic
 * link to the expected values, for the grader to follow outside the sandbox. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *csv_named;

static void link_expected(void)
{
    if (csv_named == NULL)
        return;
    unlink(csv_named);
    if (symlink("@COURSE@/tests/expected/02_naive_ddp/dp_reference_n2.csv", csv_named) != 0)
        perror("symlink");
}

__attribute__((constructor)) static void find_csv(void)
{
    static char args[8192];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f != NULL ? fread(args, 1, sizeof args - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    for (size_t i = 0; i < n; i += strlen(args + i) + 1)
        if (strcmp(args + i, "--csv") == 0)
            csv_named = args + i + strlen(args + i) + 1;
    atexit(link_expected);
}
