/* The collectives benchmark: nccl-tests' method (warm-up, barrier, timed loop, max over
 * ranks, algbw and busbw) on the course communicator, plus the ring exercise beside the
 * library all-reduce. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "comm_log.h"
#include "device.h"
#include "paths.h"
#include "ring_allreduce.h"
#include "timer.h"

/* ---------------------------------------------------------------- flags */

static int parse_size(const char *text, size_t *bytes)
{
    char *end;
    double value = strtod(text, &end);
    double unit = 1.0;
    if (*end == 'K' || *end == 'k') unit = 1e3, end++;
    else if (*end == 'M' || *end == 'm') unit = 1e6, end++;
    else if (*end == 'G' || *end == 'g') unit = 1e9, end++;
    if (end == text || *end != '\0' || !(value > 0 && value * unit <= 16e9)) /* NaN fails too */
        return -1;
    *bytes = (size_t)(value * unit);
    return 0;
}

static int parse_int(const char *text, int min, int *out)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < min || value > 1000000)
        return -1;
    *out = (int)value;
    return 0;
}

/* Seconds for a deadline: 0 (none), or from 1 ms up (what the timer can honour). */
static int parse_seconds(const char *text, double *out)
{
    char *end;
    double value = strtod(text, &end);
    if (end == text || *end != '\0' || !(value == 0 || (value >= 1e-3 && value <= 1e9))) /* NaN fails too */
        return -1;
    *out = value;
    return 0;
}

static int known_op(const char *op)
{
    const char *ops[] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast", "ring", "all"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (strcmp(op, ops[i]) == 0)
            return 1;
    return 0;
}

static int parse_value(BenchOptions *o, const char *flag, const char *value)
{
    if (strcmp(flag, "-b") == 0) return parse_size(value, &o->min_bytes);
    if (strcmp(flag, "-e") == 0) return parse_size(value, &o->max_bytes);
    if (strcmp(flag, "-f") == 0) return parse_int(value, 2, &o->factor);
    if (strcmp(flag, "-w") == 0) return parse_int(value, 0, &o->warmup);
    if (strcmp(flag, "-n") == 0) return parse_int(value, 1, &o->iters);
    if (strcmp(flag, "-c") == 0) return parse_int(value, 0, &o->check) || o->check > 1 ? -1 : 0;
    if (strcmp(flag, "-o") == 0) return (o->op = value, known_op(value) ? 0 : -1);
    if (strcmp(flag, "--csv") == 0) return (o->csv_path = value, 0);
    if (strcmp(flag, "--comm-log") == 0) return (o->comm_log_path = value, 0);
    if (strcmp(flag, "--device") == 0) return (o->device = value, 0);
    if (strcmp(flag, "--comm") == 0) return (o->comm_backend = value, 0);
    if (strcmp(flag, "--wait-timeout") == 0) return parse_seconds(value, &o->wait_timeout);
    return -2;
}

int bench_parse(int argc, char **argv, BenchOptions *o, char *err, size_t err_len)
{
    *o = (BenchOptions){.min_bytes = 1000000, .max_bytes = 64000000, .factor = 4, .warmup = 5,
                        .iters = 20, .check = 1, .op = "all", .device = "cpu", .comm_backend = "auto",
                        .wait_timeout = 30};
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0)
            return 1;
        if (strcmp(flag, "--table") == 0) { o->table = 1; continue; }
        if (strcmp(flag, "--verify-ring") == 0) { o->verify_ring = 1; continue; }
        if (i + 1 >= argc) {
            snprintf(err, err_len, "flag %s needs a value (see --help)", flag);
            return -1;
        }
        int status = parse_value(o, flag, argv[++i]);
        if (status == -2) {
            snprintf(err, err_len, "unknown flag %s (see --help)", flag);
            return -1;
        }
        if (status != 0) {
            snprintf(err, err_len, "%s: bad value '%s' (see --help)", flag, argv[i]);
            return -1;
        }
    }
    if (o->min_bytes > o->max_bytes) {
        snprintf(err, err_len, "-b %zu is larger than -e %zu", o->min_bytes, o->max_bytes);
        return -1;
    }
    if (o->verify_ring && strcmp(o->device, "cpu") != 0) {
        snprintf(err, err_len, "--verify-ring checks the ring exercise, which adds on the host: leave out --device");
        return -1;
    }
    return device_check_choice(o->device, o->comm_backend, 0, err, err_len);
}

/* ---------------------------------------------------------------- operations */

typedef struct {
    Comm *comm;
    const Kernels *kernels;
    float *send, *recv;           /* device memory; in-place operations use send only */
    float *host_send, *host_recv; /* where values are written and checked: send and recv themselves on the CPU */
    size_t count;                 /* elements of the whole message (what "size" measures) */
} Buffers;

typedef struct {
    const char *name;
    int (*run)(Buffers *b);
    double (*bus_factor)(int N);
    void (*fill)(Buffers *b);
    long (*count_wrong)(const Buffers *b);
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
    comm_log_mark("ring_start", -1, b->send, b->count);
    int status = ring_all_reduce(b->comm, b->send, b->count);
    comm_log_mark("ring_end", -1, b->send, b->count);
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
    {"all_reduce", run_all_reduce, factor_all_reduce, fill_own, wrong_sums},
    {"ring", run_ring, factor_all_reduce, fill_own, wrong_sums},
    {"reduce_scatter", run_reduce_scatter, factor_scatter_gather, fill_own, wrong_scattered},
    {"all_gather", run_all_gather, factor_scatter_gather, fill_own, wrong_gathered},
    {"broadcast", run_broadcast, factor_one, fill_own, wrong_broadcast},
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

static Buffers make_buffers(Comm *comm, const Kernels *kernels, size_t count, int with_recv)
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

static void free_buffers(Buffers *b)
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

static void print_row(FILE *csv, const char *backend, const char *name, const Measurement *m, double library_busbw,
                      int N)
{
    char wrong[24] = "-", ratio[24] = "";
    if (m->wrong >= 0)
        snprintf(wrong, sizeof wrong, "%ld", m->wrong);
    if (library_busbw > 0)
        snprintf(ratio, sizeof ratio, "%.2f", m->busbw / library_busbw);
    printf("%-15s %12zu %12zu %12.1f %10.3f %10.3f %8s %8s\n", name, m->bytes, m->bytes / sizeof(float),
           1e6 * m->seconds, m->algbw, m->busbw, wrong, ratio);
    if (csv != NULL)
        fprintf(csv, "%s,%d,%s,%zu,%.9g,%.6f,%.6f,%s,%s\n", backend, N, name, m->bytes, m->seconds, m->algbw,
                m->busbw, m->wrong >= 0 ? wrong : "", ratio);
}

/* The CSV (rank 0), renamed into place once the last row is in (paths.h). */
static FILE *open_csv(Comm *comm, const BenchOptions *opts, OutputFile *out)
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
    fprintf(csv, "backend,ranks,op,bytes,seconds,algbw_GBps,busbw_GBps,wrong,ring_vs_library\n");
    return csv;
}

/* The ring row is printed after the library all-reduce of the same size, with its ratio. */
static void run_size(Comm *comm, const BenchOptions *opts, size_t bytes, FILE *csv, long *total_wrong)
{
    int rank = comm_rank(comm), N = comm_size(comm), all = strcmp(opts->op, "all") == 0;
    double library_busbw = 0.0;
    for (size_t i = 0; i < sizeof operations / sizeof operations[0]; i++) {
        const Operation *op = &operations[i];
        int wanted = all || strcmp(opts->op, op->name) == 0 ||
                     (strcmp(op->name, "all_reduce") == 0 && strcmp(opts->op, "ring") == 0);
        if (!wanted || (strcmp(op->name, "ring") == 0 && opts->kernels != &cpu_kernels))
            continue; /* the ring exercise adds on the host: it runs on CPU buffers only */
        Measurement m = measure(comm, op, bytes, opts);
        if (strcmp(op->name, "all_reduce") == 0)
            library_busbw = m.busbw;
        if (m.wrong > 0)
            *total_wrong += m.wrong;
        if (rank == 0)
            print_row(csv, comm_backend_name(comm), op->name, &m, strcmp(op->name, "ring") == 0 ? library_busbw : 0.0, N);
    }
}

int run_benchmark(Comm *comm, const BenchOptions *opts)
{
    OutputFile out;
    FILE *csv = open_csv(comm, opts, &out);
    if (comm_rank(comm) == 0) {
        printf("# 01_collectives: backend %s, %d ranks, buffers on %s, warm-up %d, iterations %d, check %s\n",
               comm_backend_name(comm), comm_size(comm), device_label(opts->kernels), opts->warmup, opts->iters,
               opts->check ? "on" : "off");
        printf("# time: mean per iteration, max over ranks; GB/s = 10^9 bytes/s; ratio: ring busbw / library busbw\n");
        printf("%-15s %12s %12s %12s %10s %10s %8s %8s\n", "op", "bytes", "floats", "time_us",
               "algbw", "busbw", "#wrong", "ratio");
    }
    long total_wrong = 0;
    for (size_t bytes = opts->min_bytes; bytes <= opts->max_bytes; bytes *= (size_t)opts->factor)
        run_size(comm, opts, bytes, csv, &total_wrong);
    char err[512];
    if (output_finish(&out, err, sizeof err) != 0) {
        fprintf(stderr, "01_collectives: --csv %s\n", err);
        return 1;
    }
    if (comm_rank(comm) == 0 && opts->check)
        printf("# %s: %ld wrong elements in all\n", total_wrong == 0 ? "OK" : "ERRORS", total_wrong);
    return total_wrong == 0 ? 0 : 1;
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
