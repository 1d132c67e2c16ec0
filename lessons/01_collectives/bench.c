/* The collectives benchmark: nccl-tests' method (warm-up, barrier, timed loop, max over
 * ranks, algbw and busbw) on the course communicator, plus the ring exercise beside the
 * library all-reduce. */
#include "bench.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "events.h"
#include "device.h"
#include "paths.h"
#include "ring_allreduce.h"
#include "timer.h"
#include "watchdog.h"

/* ---------------------------------------------------------------- flags */

/* nccl-tests' letters and names where it has the flag, with its meaning. */
#define OPT(field) offsetof(BenchOptions, field)
static const Flag bench_flags[] = {
    {"minbytes", FLAG_BYTES, OPT(min_bytes), "smallest message; K, M, G = 2^10, 2^20, 2^30 bytes", 4, 16.0 * (1 << 30), 'b'},
    {"maxbytes", FLAG_BYTES, OPT(max_bytes), "largest message", 4, 16.0 * (1 << 30), 'e'},
    {"stepfactor", FLAG_INT, OPT(factor), "multiply the size by this each row", 2, 1024, 'f'},
    {"warmup_iters", FLAG_INT, OPT(warmup), "warm-up iterations per size", 0, 1000000, 'w'},
    {"iters", FLAG_INT, OPT(iters), "timed iterations per size", 1, 1000000, 'n'},
    {"check", FLAG_INT, OPT(check), "check results and count wrong elements (0 or 1)", 0, 1, 'c'},
    {"op", FLAG_STRING, OPT(op), "reduction: sum (the only one the course's collectives do)", 0, 0, 'o'},
    {"collective", FLAG_STRING, OPT(collective),
     "all_reduce, reduce_scatter, all_gather, broadcast, ring (yours, beside all_reduce) or all", 0, 0, 0},
    {"csv", FLAG_STRING, OPT(csv_path), "also write the rows as CSV (rank 0)", 0, 0, 0},
    {"comm-log", FLAG_STRING, OPT(comm_log_path), "write every rank's communicator calls as CSV (docs/grading.md)", 0, 0,
     0},
    {"device", FLAG_STRING, OPT(device), "where the buffers live: cpu, or cuda (a make CUDA=1 build)", 0, 0, 0},
    {"comm", FLAG_STRING, OPT(comm_backend), "auto, mpi or nccl; auto = nccl on GPUs when each rank has its own", 0, 0,
     0},
    {"wait-timeout", FLAG_DOUBLE, OPT(wait_timeout),
     "end the run if a rank waits longer for the others in one call, saying what each was doing (seconds; 0 = never)",
     0, 1e9, 0},
    {"table", FLAG_SWITCH, OPT(table), "fixed sizes, a row each: backend, workers, size (1, 10, 100, 1000 MB), seconds",
     0, 1, 0},
    {"verify-ring", FLAG_SWITCH, OPT(verify_ring), "check the ring all-reduce against exact sums on uneven counts", 0,
     1, 0},
    {"progress", FLAG_SWITCH, OPT(progress),
     "how far a started all_reduce and all_gather get while the rank computes and tests them, and the time inside "
     "the tests (-n repeats a row)",
     0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static BenchOptions bench_defaults(void)
{
    return (BenchOptions){.min_bytes = 1 << 20, .max_bytes = 64 << 20, .factor = 4, .warmup = 5, .iters = 20,
                          .check = 1, .op = "sum", .collective = "all", .device = "cpu", .comm_backend = "auto",
                          .wait_timeout = 30};
}

void bench_print_flags(void)
{
    BenchOptions defaults = bench_defaults();
    FlagSet set = {"flags (defaults in brackets; nccl-tests' letters where it has the flag)", bench_flags, &defaults};
    cli_print_help(&set, 1);
}

/* ---------------------------------------------------------------- operations */


typedef struct {
    const char *name;
    int (*run)(Buffers *b);
    double (*bus_factor)(int N);
    void (*fill)(Buffers *b);
    long (*count_wrong)(const Buffers *b);
    const char *redop; /* "sum", or "none" for an operation that adds nothing */
    int root;          /* the rank it starts from, or -1 when it has none */
    int in_place;      /* the result overwrites the input (the course's communicator has one form of each) */
} Operation;

/* Small integers: exact under any summation order. */
static float value(int rank, size_t i) { return (float)((long)((i * 7 + (size_t)rank * 13) % 101) - 50); }

static float summed(int N, size_t i)
{
    float total = 0.0f;
    for (int r = 0; r < N; r++)
        total += value(r, i);
    return total;
}

static size_t block(const Buffers *b) { return b->count / (size_t)comm_size(b->comm); }

static int run_all_reduce(Buffers *b) { return comm_all_reduce(b->comm, b->send, b->count, REDUCE_SUM); }
/* The ring's calls sit between two marks in the communication log, so grading can see that
 * it moves its chunks with sends and receives only. */
static int run_ring(Buffers *b)
{
    events_mark("ring_start", -1, b->send, b->count);
    int status = ring_all_reduce(b->comm, b->send, b->count);
    events_mark("ring_end", -1, b->send, b->count);
    return status;
}
static int run_reduce_scatter(Buffers *b) { return comm_reduce_scatter(b->comm, b->send, b->recv, block(b), REDUCE_SUM); }
static int run_all_gather(Buffers *b) { return comm_all_gather(b->comm, b->send, b->recv, block(b)); }
static int run_broadcast(Buffers *b) { return comm_broadcast(b->comm, b->send, b->count, 0); }

static double factor_all_reduce(int N) { return 2.0 * (N - 1) / N; }
static double factor_scatter_gather(int N) { return (double)(N - 1) / N; }
static double factor_one(int N) { (void)N; return 1.0; }

static void fill_own(Buffers *b)
{
    int rank = comm_rank(b->comm);
    for (size_t i = 0; i < b->count; i++)
        b->host_send[i] = value(rank, i);
}

static long wrong_sums(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < b->count; i++)
        wrong += b->host_send[i] != summed(comm_size(b->comm), i);
    return wrong;
}

static long wrong_scattered(const Buffers *b)
{
    long wrong = 0;
    size_t first = (size_t)comm_rank(b->comm) * block(b);
    for (size_t i = 0; i < block(b); i++)
        wrong += b->host_recv[i] != summed(comm_size(b->comm), first + i);
    return wrong;
}

static long wrong_gathered(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < block(b) * comm_size(b->comm); i++)
        wrong += b->host_recv[i] != value((int)(i / block(b)), i % block(b));
    return wrong;
}

static long wrong_broadcast(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < b->count; i++)
        wrong += b->host_send[i] != value(0, i);
    return wrong;
}

static const Operation operations[] = {
    {"all_reduce", run_all_reduce, factor_all_reduce, fill_own, wrong_sums, "sum", -1, 1},
    {"ring", run_ring, factor_all_reduce, fill_own, wrong_sums, "sum", -1, 1},
    {"reduce_scatter", run_reduce_scatter, factor_scatter_gather, fill_own, wrong_scattered, "sum", -1, 0},
    {"all_gather", run_all_gather, factor_scatter_gather, fill_own, wrong_gathered, "none", -1, 0},
    {"broadcast", run_broadcast, factor_one, fill_own, wrong_broadcast, "none", 0, 1},
};

/* ---------------------------------------------------------------- measuring */

typedef struct {
    size_t bytes;
    double seconds, algbw, busbw;
    long wrong; /* -1 when not checked */
} Measurement;

/* Mean seconds per iteration, the max over ranks: a collective ends when its slowest rank does. */
static double time_operation(const Operation *op, Buffers *b, int warmup, int iters)
{
    for (int i = 0; i < warmup; i++)
        comm_check(b->comm, op->run(b));
    b->kernels->synchronize();
    comm_check(b->comm, comm_barrier(b->comm));
    double start = now_seconds();
    for (int i = 0; i < iters; i++)
        comm_check(b->comm, op->run(b));
    b->kernels->synchronize(); /* NCCL only queues the work */
    double seconds = (now_seconds() - start) / iters;
    comm_check(b->comm, comm_max_double(b->comm, &seconds));
    return seconds;
}

/* On a GPU the values cross to the device before the operation and back after it. */
static int on_gpu(const Buffers *b) { return b->host_send != b->send; }

static void fill_buffers(const Operation *op, Buffers *b)
{
    op->fill(b);
    if (on_gpu(b))
        b->kernels->to_device(b->send, b->host_send, b->count * sizeof(float));
}

static long check_operation(const Operation *op, Buffers *b)
{
    fill_buffers(op, b);
    comm_check(b->comm, op->run(b));
    if (on_gpu(b)) {
        b->kernels->to_host(b->host_send, b->send, b->count * sizeof(float));
        if (b->recv != NULL)
            b->kernels->to_host(b->host_recv, b->recv, b->count * sizeof(float));
    }
    double wrong = (double)op->count_wrong(b);
    comm_check(b->comm, comm_sum_double(b->comm, &wrong));
    return (long)wrong;
}

/* A host mirror of a device buffer (the buffer itself on the CPU). */
static float *host_side(const Kernels *kernels, float *device_buffer, size_t count)
{
    if (device_buffer == NULL || kernels == &cpu_kernels)
        return device_buffer;
    return mem_alloc(count * sizeof(float), MEM_DATA); /* host memory: not the device budget */
}

Buffers make_buffers(Comm *comm, const Kernels *kernels, size_t count, int with_recv)
{
    Buffers b = {comm, kernels, kernels->alloc(count * sizeof(float), MEM_COMM),
                 with_recv ? kernels->alloc(count * sizeof(float), MEM_COMM) : NULL, NULL, NULL, count};
    b.host_send = host_side(kernels, b.send, count);
    b.host_recv = host_side(kernels, b.recv, count);
    if (b.send == NULL || b.host_send == NULL || (with_recv && (b.recv == NULL || b.host_recv == NULL))) {
        fprintf(stderr, "01_collectives: rank %d out of memory for %zu bytes\n", comm_rank(comm),
                count * sizeof(float));
        exit(1);
    }
    return b;
}

void free_buffers(Buffers *b)
{
    if (on_gpu(b)) {
        mem_free(b->host_send);
        mem_free(b->host_recv);
    }
    b->kernels->free(b->send);
    b->kernels->free(b->recv);
}

static Measurement measure(Comm *comm, const Operation *op, size_t bytes, const BenchOptions *opts)
{
    int N = comm_size(comm);
    size_t count = bytes / sizeof(float) / (size_t)N * (size_t)N; /* whole blocks per rank */
    Buffers b = make_buffers(comm, opts->kernels, count, 1);
    fill_buffers(op, &b);
    Measurement m = {.bytes = count * sizeof(float), .wrong = -1};
    m.seconds = time_operation(op, &b, opts->warmup, opts->iters);
    m.algbw = (double)m.bytes / m.seconds / 1e9;
    m.busbw = m.algbw * op->bus_factor(N);
    if (opts->check)
        m.wrong = check_operation(op, &b);
    free_buffers(&b);
    return m;
}

/* ---------------------------------------------------------------- reporting */

static const Operation *find_operation(const char *name)
{
    for (size_t i = 0; i < sizeof operations / sizeof operations[0]; i++)
        if (strcmp(operations[i].name, name) == 0)
            return &operations[i];
    return NULL;
}

/* What the flags cannot say alone. */
static int check_options(const BenchOptions *o, char *err, size_t err_len)
{
    if (strcmp(o->op, "sum") != 0)
        snprintf(err, err_len, "-o %s: the course's collectives sum; -o sum is the only reduction", o->op);
    else if (strcmp(o->collective, "all") != 0 && find_operation(o->collective) == NULL)
        snprintf(err, err_len, "--collective %s: not one of all_reduce, reduce_scatter, all_gather, broadcast, ring, all",
                 o->collective);
    else if (o->min_bytes > o->max_bytes)
        snprintf(err, err_len, "-b %zu is larger than -e %zu", o->min_bytes, o->max_bytes);
    else if (watchdog_check_seconds("--wait-timeout", o->wait_timeout, err, err_len) != 0)
        return -1;
    else if (o->table + o->verify_ring + o->progress > 1)
        snprintf(err, err_len, "--table, --verify-ring and --progress are three runs: give one of them");
    else if (o->progress && strcmp(o->collective, "all") != 0 && strcmp(o->collective, "all_reduce") != 0 &&
             strcmp(o->collective, "all_gather") != 0)
        snprintf(err, err_len, "--progress --collective %s: only all_reduce and all_gather are started and tested",
                 o->collective);
    else if (o->verify_ring && strcmp(o->device, "cpu") != 0)
        snprintf(err, err_len, "--verify-ring checks the ring exercise, which adds on the host: leave out --device");
    else
        return 0;
    return -1;
}

int bench_parse(int argc, char **argv, BenchOptions *o, char *err, size_t err_len)
{
    *o = bench_defaults();
    FlagSet set = {"flags", bench_flags, o};
    if (cli_wants_help(argc, argv, 1, &set, 1))
        return 1;
    if (cli_parse(argc, argv, 1, &set, 1, err, err_len) != 0 || check_options(o, err, err_len) != 0)
        return -1;
    return device_check_choice(o->device, o->comm_backend, 0, err, err_len);
}

enum { NUM_OPERATIONS = sizeof operations / sizeof operations[0] };

/* Each collective's busbw over the sizes, for the closing averages. */
typedef struct {
    double busbw_sum[NUM_OPERATIONS];
    int rows[NUM_OPERATIONS];
    long wrong;
} Totals;

/* A row as nccl-tests prints one: size, count, type, redop, root, then time, algbw, busbw
 * and #wrong under out-of-place or in-place, whichever the operation is ("-" under the
 * other); the ring's row ends with its busbw over the library all-reduce's. */
static void print_row(FILE *csv, const char *backend, const Operation *op, const Measurement *m,
                      double library_busbw, int N)
{
    char wrong[24] = "-", ratio[24] = "", group[64];
    if (m->wrong >= 0)
        snprintf(wrong, sizeof wrong, "%ld", m->wrong);
    if (library_busbw > 0)
        snprintf(ratio, sizeof ratio, "%.2f", m->busbw / library_busbw);
    snprintf(group, sizeof group, "%10.1f %8.3f %8.3f %7s", 1e6 * m->seconds, m->algbw, m->busbw, wrong);
    const char *none = "         -        -        -       -";
    printf("%14s %12zu %12zu %6s %6s %5d %s %s%s%9s\n", op->name, m->bytes, m->bytes / sizeof(float), "float",
           op->redop, op->root, op->in_place ? none : group, op->in_place ? group : none, ratio[0] ? " " : "", ratio);
    if (csv != NULL)
        fprintf(csv, "%s,%d,%s,%zu,%zu,float,%s,%d,%d,%.3f,%.6f,%.6f,%s,%s\n", backend, N, op->name, m->bytes,
                m->bytes / sizeof(float), op->redop, op->root, op->in_place, 1e6 * m->seconds, m->algbw, m->busbw,
                m->wrong >= 0 ? wrong : "", ratio);
}

/* The CSV (rank 0) with its header line, renamed into place once the last row is in
 * (paths.h, bench_finish_csv). */
FILE *bench_open_csv(Comm *comm, const BenchOptions *opts, OutputFile *out, const char *header)
{
    char err[512];
    *out = (OutputFile){0};
    if (opts->csv_path == NULL || comm_rank(comm) != 0)
        return NULL;
    FILE *csv = output_open(out, opts->csv_path, err, sizeof err);
    if (csv == NULL) {
        fprintf(stderr, "01_collectives: --csv %s\n", err);
        exit(1);
    }
    fprintf(csv, "%s\n", header);
    return csv;
}

int bench_finish_csv(OutputFile *out)
{
    char err[512];
    if (output_finish(out, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "01_collectives: --csv %s\n", err);
    return 1;
}

static int wanted(const BenchOptions *opts, const Operation *op)
{
    if (strcmp(op->name, "ring") == 0 && opts->kernels != &cpu_kernels)
        return 0; /* the ring exercise adds on the host: it runs on CPU buffers only */
    return strcmp(opts->collective, "all") == 0 || strcmp(opts->collective, op->name) == 0 ||
           (strcmp(op->name, "all_reduce") == 0 && strcmp(opts->collective, "ring") == 0);
}

/* The ring row is printed after the library all-reduce of the same size, with its ratio. */
static void run_size(Comm *comm, const BenchOptions *opts, size_t bytes, FILE *csv, Totals *totals)
{
    int rank = comm_rank(comm), N = comm_size(comm);
    double library_busbw = 0.0;
    for (int i = 0; i < NUM_OPERATIONS; i++) {
        const Operation *op = &operations[i];
        if (!wanted(opts, op))
            continue;
        Measurement m = measure(comm, op, bytes, opts);
        if (strcmp(op->name, "all_reduce") == 0)
            library_busbw = m.busbw;
        if (m.wrong > 0)
            totals->wrong += m.wrong;
        totals->busbw_sum[i] += m.busbw;
        totals->rows[i]++;
        if (rank == 0)
            print_row(csv, comm_backend_name(comm), op, &m, strcmp(op->name, "ring") == 0 ? library_busbw : 0.0, N);
    }
}

static void print_header(Comm *comm, const BenchOptions *opts)
{
    printf("# 01_collectives: backend %s, %d ranks, buffers on %s, warm-up %d, iterations %d, check %s\n",
           comm_backend_name(comm), comm_size(comm), device_label(opts->kernels), opts->warmup, opts->iters,
           opts->check ? "on" : "off");
    char oversubscribed[192];
    if (comm_oversubscribed(comm, 1, oversubscribed, sizeof oversubscribed))
        printf("# note: %s\n", oversubscribed);
    printf("# time: mean per iteration, max over ranks; GB/s = 10^9 bytes/s; ring/lib: your ring's busbw over the "
           "library all-reduce's\n");
    printf("#%67s %37s\n", "out-of-place", "in-place");
    printf("#%13s %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s %9s\n", "collective", "size", "count",
           "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong",
           "ring/lib");
    printf("#%13s %12s %12s %6s %6s %5s %10s %8s %8s %7s %10s %8s %8s %7s\n", "", "(B)", "(elements)", "", "", "",
           "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

/* nccl-tests' closing lines: the wrong values, and the mean busbw (one per collective here). */
static void print_footer(const BenchOptions *opts, const Totals *totals)
{
    if (opts->check)
        printf("# Out of bounds values : %ld %s\n", totals->wrong, totals->wrong == 0 ? "OK" : "ERRORS");
    for (int i = 0; i < NUM_OPERATIONS; i++)
        if (totals->rows[i] > 0)
            printf("# Avg bus bandwidth    : %.4f (%s)\n", totals->busbw_sum[i] / totals->rows[i], operations[i].name);
}

int run_benchmark(Comm *comm, const BenchOptions *opts)
{
    OutputFile out;
    FILE *csv = bench_open_csv(comm, opts, &out,
                               "backend,ranks,collective,size,count,type,redop,root,in_place,time_us,algbw_GBps,"
                               "busbw_GBps,wrong,ring_vs_library");
    if (comm_rank(comm) == 0)
        print_header(comm, opts);
    Totals totals = {0};
    for (size_t bytes = opts->min_bytes; bytes <= opts->max_bytes; bytes *= (size_t)opts->factor)
        run_size(comm, opts, bytes, csv, &totals);
    if (bench_finish_csv(&out) != 0)
        return 1;
    if (comm_rank(comm) == 0)
        print_footer(opts, &totals);
    return totals.wrong == 0 ? 0 : 1;
}

/* The fixed-sizes table: one row per size for this world size; run it under several -n. */
int sizes_table(Comm *comm, const BenchOptions *opts)
{
    static const size_t sizes[] = {1000000, 10000000, 100000000, 1000000000};
    static const char *const labels[] = {"1MB", "10MB", "100MB", "1000MB"};
    const Operation *op = find_operation("all_reduce");
    BenchOptions quick = *opts;
    quick.check = 0;
    if (comm_rank(comm) == 0)
        printf("| Backend | Workers | Data Size | Time (s) |\n|---------|---------|-----------|---------------|\n");
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        /* the largest sizes take seconds per call: fewer iterations keep the table quick */
        quick.warmup = sizes[i] >= 100000000 ? 1 : opts->warmup;
        quick.iters = sizes[i] >= 100000000 ? 3 : opts->iters;
        Measurement m = measure(comm, op, sizes[i], &quick);
        if (comm_rank(comm) == 0)
            printf("| %s | %d | %s | %.6f |\n", comm_backend_name(comm), comm_size(comm), labels[i], m.seconds);
    }
    return 0;
}

/* Grading: the ring against the exact sums, on counts that do not divide by N. */
int verify_ring(Comm *comm, const BenchOptions *opts)
{
    static const size_t counts[] = {1, 2, 3, 5, 17, 1000, 65537, 262147};
    const Operation *ring = find_operation("ring");
    long total_wrong = 0;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        Buffers b = make_buffers(comm, opts->kernels, counts[i], 0);
        double wrong = (double)check_operation(ring, &b);
        free_buffers(&b);
        total_wrong += (long)wrong;
        if (comm_rank(comm) == 0)
            printf("%s ring all-reduce, %d ranks, %zu floats: %ld wrong elements\n",
                   wrong == 0 ? "PASS" : "FAIL", comm_size(comm), counts[i], (long)wrong);
    }
    return total_wrong == 0 ? 0 : 1;
}
