
/* A submission that writes a huge file into the folder it may write: the sandbox's file
 * size limit stops it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void write_a_huge_file(void)
{
    static char args[8192], block[1 << 20];
    FILE *f = fopen("/proc/self/cmdline", "r");
    size_t n = f != NULL ? fread(args, 1, sizeof args - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    for (size_t i = 0; i < n; i += strlen(args + i) + 1)
        if (strcmp(args + i, "--csv") == 0) {
            FILE *out = fopen(args + i + strlen(args + i) + 1, "w");
            while (out != NULL && fwrite(block, 1, sizeof block, out) == sizeof block)
                ;
        }
}
