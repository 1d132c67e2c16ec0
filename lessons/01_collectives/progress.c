/* --progress: how far a started collective gets while the rank computes. Each row starts an
 * all-reduce (or all-gather), computes for a while in K equal gaps with a test after each,
 * then waits for it: the wait's time is what the compute and the tests did not move. NCCL
 * moves a started collective on its own stream, so the wait is short at any K; MPI without a
 * progress thread moves it only inside MPI calls, so the wait shrinks with the number of
 * tests, and the time inside the tests (also measured) is what moving it took from the
 * rank's own core. tools/predict.py fits the steps such a collective needs from these rows
 * (docs/scale.md, "How a started collective moves"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "device.h"
#include "timer.h"

/* The compute between tests, as the tests' multiple of the collective's own time: long enough
 * to hide it twice over when it moves on its own; the tests, as often as a backward pass's
 * hooks call the communicator (a few) up to far more often. */
static const double compute_multiples[] = {1.5, 3.0};
static const int test_counts[] = {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32};

typedef struct {
    const char *name;
    int (*start)(Comm *comm, float *send, float *recv, size_t count, CommRequest *request);
} Started;

static int start_all_reduce(Comm *comm, float *send, float *recv, size_t count, CommRequest *request)
{
    (void)recv;
    return comm_all_reduce_start(comm, send, count, REDUCE_SUM, request);
}

static int start_all_gather(Comm *comm, float *send, float *recv, size_t count, CommRequest *request)
{
    return comm_all_gather_start(comm, send, recv, count / (size_t)comm_size(comm), request);
}

static const Started started_ops[] = {{"all_reduce", start_all_reduce}, {"all_gather", start_all_gather}};

/* Compute that makes no communicator call: the core busy until the clock says. */
static void compute_for(double seconds)
{
    double end = now_seconds() + seconds;
    while (now_seconds() < end) {
    }
}

typedef struct {
    const Started *op;
    Buffers b;
} Row;

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of x[0..n), n >= 1 (x is left sorted). */
static double median_of(double *x, int n)
{
    qsort(x, (size_t)n, sizeof *x, by_value);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

/* Seconds the wait took after `compute` seconds of compute in `tests` gaps (none: one gap
 * and no test), and in *in_tests the seconds inside those tests together: each the median
 * over `reps` collectives (a lost packet's retransmission in one of them says nothing of how
 * the rest move), the max over ranks. */
static double wait_after(const Row *row, double compute, int tests, int reps, double *in_tests)
{
    double *waits = malloc((size_t)reps * 2 * sizeof *waits), *tested = waits + reps;
    if (waits == NULL) {
        fprintf(stderr, "01_collectives: out of memory for %d repeats\n", reps);
        exit(1);
    }
    for (int r = 0; r < reps; r++) {
        CommRequest request = {0};
        comm_check(row->b.comm, comm_barrier(row->b.comm));
        comm_check(row->b.comm, row->op->start(row->b.comm, row->b.send, row->b.recv, row->b.count, &request));
        int gaps = tests > 0 ? tests : 1;
        tested[r] = 0.0;
        for (int g = 0; g < gaps; g++) {
            compute_for(compute / gaps);
            int done;
            if (tests > 0) {
                double t0 = now_seconds();
                comm_check(row->b.comm, comm_test(&request, &done));
                tested[r] += now_seconds() - t0;
            }
        }
        double start = now_seconds();
        comm_check(row->b.comm, comm_wait(&request));
        waits[r] = now_seconds() - start;
    }
    double median = median_of(waits, reps);
    *in_tests = median_of(tested, reps);
    free(waits);
    comm_check(row->b.comm, comm_max_double(row->b.comm, &median));
    comm_check(row->b.comm, comm_max_double(row->b.comm, in_tests));
    return median;
}

static void measure_size(const Row *row, const BenchOptions *opts, FILE *csv)
{
    double in_tests;
    for (int w = 0; w < opts->warmup; w++)
        wait_after(row, 0.0, 0, 1, &in_tests);
    double alone = wait_after(row, 0.0, 0, opts->iters, &in_tests); /* started, then waited for at once */
    size_t bytes = row->b.count * sizeof(float);
    for (size_t m = 0; m < sizeof compute_multiples / sizeof compute_multiples[0]; m++)
        for (size_t k = 0; k < sizeof test_counts / sizeof test_counts[0]; k++) {
            double compute = compute_multiples[m] * alone;
            double wait = wait_after(row, compute, test_counts[k], opts->iters, &in_tests);
            if (comm_rank(row->b.comm) != 0)
                continue;
            printf("%14s %12zu %10.1f %10.1f %6d %10.1f %6.0f%% %10.1f\n", row->op->name, bytes, 1e6 * alone,
                   1e6 * compute, test_counts[k], 1e6 * wait, 100.0 * (1.0 - wait / alone), 1e6 * in_tests);
            if (csv != NULL)
                fprintf(csv, "%s,%d,%s,%zu,%.3f,%.3f,%d,%.3f,%.3f\n", comm_backend_name(row->b.comm),
                        comm_size(row->b.comm), row->op->name, bytes, 1e6 * alone, 1e6 * compute, test_counts[k],
                        1e6 * wait, 1e6 * in_tests);
        }
}

static int wanted(const BenchOptions *opts, const Started *op)
{
    return strcmp(opts->collective, "all") == 0 || strcmp(opts->collective, op->name) == 0;
}

int progress_table(Comm *comm, const BenchOptions *opts)
{
    OutputFile out;
    FILE *csv =
        bench_open_csv(comm, opts, &out, "backend,ranks,collective,size,alone_us,compute_us,tests,wait_us,tests_us");
    if (comm_rank(comm) == 0)
        printf("# 01_collectives --progress: backend %s, %d ranks, buffers on %s, warm-up %d, repeats %d\n"
               "# each collective started, then compute in `tests` equal gaps with a test after each, then waited\n"
               "# for; alone: waited for at once; times: the median, max over ranks; moved: 1 - wait / alone;\n"
               "# in tests: the time inside the tests together\n"
               "#%13s %12s %10s %10s %6s %10s %7s %10s\n",
               comm_backend_name(comm), comm_size(comm), device_label(opts->kernels), opts->warmup, opts->iters,
               "collective", "size (B)", "alone (us)", "compute", "tests", "wait (us)", "moved", "in tests");
    size_t N = (size_t)comm_size(comm);
    for (size_t bytes = opts->min_bytes; bytes <= opts->max_bytes; bytes *= (size_t)opts->factor)
        for (size_t i = 0; i < sizeof started_ops / sizeof started_ops[0]; i++) {
            if (!wanted(opts, &started_ops[i]))
                continue;
            size_t count = bytes / sizeof(float) / N * N; /* whole blocks per rank */
            Row row = {&started_ops[i], make_buffers(comm, opts->kernels, count, 1)};
            measure_size(&row, opts, csv);
            free_buffers(&row.b);
        }
    return bench_finish_csv(&out);
}
