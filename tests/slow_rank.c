/* One slow rank, the one named by SLOW_RANK (matched against mpiexec's PMI_RANK). Preloaded
 * (LD_PRELOAD) by the tests:
 * - SLOW_FSYNC_SECONDS: a slow disk there, each fsync that much longer: a rank that writes
 *   the run's outputs while the others wait for it longer than --wait-timeout;
 * - SLOW_SGEMM_SECONDS: slow compute there, each OpenBLAS matrix product that much longer:
 *   the other ranks wait for it in their collectives, which is not exposed communication. */
#define _GNU_SOURCE
#include <cblas.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void wait_if_slow_rank(const char *seconds_variable)
{
    const char *rank = getenv("PMI_RANK"), *slow_rank = getenv("SLOW_RANK");
    const char *seconds = getenv(seconds_variable);
    if (rank == NULL || slow_rank == NULL || seconds == NULL || strcmp(rank, slow_rank) != 0)
        return;
    double delay = atof(seconds);
    struct timespec left = {(time_t)delay, (long)((delay - (double)(time_t)delay) * 1e9)};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) /* a timer's signal: sleep the rest */
        ;
}

int fsync(int fd)
{
    wait_if_slow_rank("SLOW_FSYNC_SECONDS");
    int (*real_fsync)(int) = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    return real_fsync(fd);
}

typedef void Sgemm(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, blasint, blasint, blasint, float,
                   const float *, blasint, const float *, blasint, float, float *, blasint);

void cblas_sgemm(enum CBLAS_ORDER order, enum CBLAS_TRANSPOSE trans_a, enum CBLAS_TRANSPOSE trans_b, blasint m,
                 blasint n, blasint k, float alpha, const float *a, blasint lda, const float *b, blasint ldb,
                 float beta, float *c, blasint ldc)
{
    wait_if_slow_rank("SLOW_SGEMM_SECONDS");
    Sgemm *real_sgemm = (Sgemm *)dlsym(RTLD_NEXT, "cblas_sgemm");
    real_sgemm(order, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
