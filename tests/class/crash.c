
/* A submission that crashes before training (a segmentation fault). */
#include <signal.h>

__attribute__((constructor)) static void crash(void)
{
    raise(SIGSEGV);
}
