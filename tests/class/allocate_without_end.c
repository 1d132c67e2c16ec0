
/* A submission that allocates without end, touching what it gets: the sandbox's memory
 * limit stops it. */
#include <stdlib.h>
#include <string.h>

__attribute__((constructor)) static void allocate_without_end(void)
{
    for (;;) {
        char *block = malloc(64 << 20);
        if (block == NULL)
            abort();
        memset(block, 1, 64 << 20);
    }
}
