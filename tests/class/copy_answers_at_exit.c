
/* A dishonest submission: at exit it copies the expected values over the file its --csv
 * names, looking for them where the course keeps them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *csv_named;

static void copy_expected(void)
{
    const char *places[] = {"tests/expected/02_naive_ddp/dp_reference_n2.csv",
                            "@COURSE@/tests/expected/02_naive_ddp/dp_reference_n2.csv"};
    for (int i = 0; i < 2 && csv_named != NULL; i++) {
        FILE *in = fopen(places[i], "r");
        if (in == NULL)
            continue;
        FILE *out = fopen(csv_named, "w");
        char buffer[4096];
        size_t n;
        while (out != NULL && (n = fread(buffer, 1, sizeof buffer, in)) > 0)
            fwrite(buffer, 1, n, out);
        fclose(in);
        if (out != NULL)
            fclose(out);
        return;
    }
}

/* What follows --csv on the command line, from /proc: the lesson's own main is given. */
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
    atexit(copy_expected);
}
