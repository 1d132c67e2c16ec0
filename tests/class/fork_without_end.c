
/* A submission that forks without end: the sandbox's process limit stops it, and the
 * run's time limit ends it. */
#include <unistd.h>

__attribute__((constructor)) static void fork_without_end(void)
{
    for (;;)
        fork();
}
