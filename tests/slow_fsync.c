/* A slow disk on one rank: fsync there takes SLOW_FSYNC_SECONDS longer, on the rank named by
 * SLOW_FSYNC_RANK (matched against mpiexec's PMI_RANK). Preloaded (LD_PRELOAD) by the tests
 * of a rank that writes the run's outputs while the others wait for it longer than
 * --wait-timeout. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void wait_if_slow_rank(void)
{
    const char *rank = getenv("PMI_RANK"), *slow_rank = getenv("SLOW_FSYNC_RANK");
    const char *seconds = getenv("SLOW_FSYNC_SECONDS");
    if (rank == NULL || slow_rank == NULL || seconds == NULL || strcmp(rank, slow_rank) != 0)
        return;
    double delay = atof(seconds);
    struct timespec left = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) /* a timer's signal: sleep the rest */
        ;
}

int fsync(int fd)
{
    wait_if_slow_rank();
    int (*real_fsync)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real_fsync(fd);
}
