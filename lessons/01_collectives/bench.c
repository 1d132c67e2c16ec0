/* The collectives benchmark: nccl-tests' method (warm-up, barrier, timed loop, max over
 * ranks, algbw and busbw) on the course communicator, plus the ring exercise beside the
 * library all-reduce. */
#include "bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
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
    if (end == text || *end != '\0' || value <= 0 || value * unit > 16e9)
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
    return -2;
}

int bench_parse(int argc, char **argv, BenchOptions *o, char *err, size_t err_len)
{
    *o = (BenchOptions){.min_bytes = 1000000, .max_bytes = 64000000, .factor = 4, .warmup = 5,
                        .iters = 20, .check = 1, .op = "all"};
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
    return 0;
}

/* ---------------------------------------------------------------- operations */

typedef struct {
    Comm *comm;
    float *send, *recv; /* in-place operations use send only */
    size_t count;       /* elements of the whole message (what "size" measures) */
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
static int run_ring(Buffers *b) { return ring_all_reduce(b->comm, b->send, b->count); }
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
        b->send[i] = value(rank, i);
}

static long wrong_sums(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < b->count; i++)
        wrong += b->send[i] != summed(comm_size(b->comm), i);
    return wrong;
}

static long wrong_scattered(const Buffers *b)
{
    long wrong = 0;
    size_t first = (size_t)comm_rank(b->comm) * block(b);
    for (size_t i = 0; i < block(b); i++)
        wrong += b->recv[i] != summed(comm_size(b->comm), first + i);
    return wrong;
}

static long wrong_gathered(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < block(b) * comm_size(b->comm); i++)
        wrong += b->recv[i] != value((int)(i / block(b)), i % block(b));
    return wrong;
}

static long wrong_broadcast(const Buffers *b)
{
    long wrong = 0;
    for (size_t i = 0; i < b->count; i++)
        wrong += b->send[i] != value(0, i);
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
    comm_check(b->comm, comm_barrier(b->comm));
    double start = now_seconds();
    for (int i = 0; i < iters; i++)
        comm_check(b->comm, op->run(b));
    double seconds = (now_seconds() - start) / iters;
    comm_check(b->comm, comm_max_double(b->comm, &seconds));
    return seconds;
}

static long check_operation(const Operation *op, Buffers *b)
{
    op->fill(b);
    comm_check(b->comm, op->run(b));
    double wrong = (double)op->count_wrong(b);
    comm_check(b->comm, comm_sum_double(b->comm, &wrong));
    return (long)wrong;
}

static Measurement measure(Comm *comm, const Operation *op, size_t bytes, const BenchOptions *opts)
{
    int N = comm_size(comm);
    size_t count = bytes / sizeof(float) / (size_t)N * (size_t)N; /* whole blocks per rank */
    Buffers b = {comm, mem_alloc(count * sizeof(float), MEM_COMM), mem_alloc(count * sizeof(float), MEM_COMM), count};
    if (b.send == NULL || b.recv == NULL) {
        fprintf(stderr, "01_collectives: rank %d out of memory for %zu bytes\n", comm_rank(comm), bytes);
        exit(1);
    }
    op->fill(&b);
    Measurement m = {.bytes = count * sizeof(float), .wrong = -1};
    m.seconds = time_operation(op, &b, opts->warmup, opts->iters);
    m.algbw = (double)m.bytes / m.seconds / 1e9;
    m.busbw = m.algbw * op->bus_factor(N);
    if (opts->check)
        m.wrong = check_operation(op, &b);
    mem_free(b.send);
    mem_free(b.recv);
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

static void print_row(FILE *csv, const char *name, const Measurement *m, double library_busbw, int N)
{
    char wrong[24] = "-", ratio[24] = "";
    if (m->wrong >= 0)
        snprintf(wrong, sizeof wrong, "%ld", m->wrong);
    if (library_busbw > 0)
        snprintf(ratio, sizeof ratio, "%.2f", m->busbw / library_busbw);
    printf("%-15s %12zu %12zu %12.1f %10.3f %10.3f %8s %8s\n", name, m->bytes, m->bytes / sizeof(float),
           1e6 * m->seconds, m->algbw, m->busbw, wrong, ratio);
    if (csv != NULL)
        fprintf(csv, "mpi,%d,%s,%zu,%.9g,%.6f,%.6f,%s,%s\n", N, name, m->bytes, m->seconds, m->algbw,
                m->busbw, m->wrong >= 0 ? wrong : "", ratio);
}

static FILE *open_csv(Comm *comm, const BenchOptions *opts)
{
    if (opts->csv_path == NULL || comm_rank(comm) != 0)
        return NULL;
    FILE *csv = fopen(opts->csv_path, "w");
    if (csv == NULL) {
        fprintf(stderr, "01_collectives: --csv %s: cannot open for writing\n", opts->csv_path);
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
        if (!wanted)
            continue;
        Measurement m = measure(comm, op, bytes, opts);
        if (strcmp(op->name, "all_reduce") == 0)
            library_busbw = m.busbw;
        if (m.wrong > 0)
            *total_wrong += m.wrong;
        if (rank == 0)
            print_row(csv, op->name, &m, strcmp(op->name, "ring") == 0 ? library_busbw : 0.0, N);
    }
}

int run_benchmark(Comm *comm, const BenchOptions *opts)
{
    FILE *csv = open_csv(comm, opts);
    if (comm_rank(comm) == 0) {
        printf("# 01_collectives: backend %s, %d ranks, warm-up %d, iterations %d, check %s\n",
               comm_backend_name(comm), comm_size(comm), opts->warmup, opts->iters, opts->check ? "on" : "off");
        printf("# time: mean per iteration, max over ranks; GB/s = 10^9 bytes/s; ratio: ring busbw / library busbw\n");
        printf("%-15s %12s %12s %12s %10s %10s %8s %8s\n", "op", "bytes", "floats", "time_us",
               "algbw", "busbw", "#wrong", "ratio");
    }
    long total_wrong = 0;
    for (size_t bytes = opts->min_bytes; bytes <= opts->max_bytes; bytes *= (size_t)opts->factor)
        run_size(comm, opts, bytes, csv, &total_wrong);
    if (csv != NULL)
        fclose(csv);
    if (comm_rank(comm) == 0 && opts->check)
        printf("# %s: %ld wrong elements in all\n", total_wrong == 0 ? "OK" : "ERRORS", total_wrong);
    return total_wrong == 0 ? 0 : 1;
}

/* Seed 003's table: one row per size for this world size; run it under several -n. */
int seed_table(Comm *comm, const BenchOptions *opts)
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
int verify_ring(Comm *comm)
{
    static const size_t counts[] = {1, 2, 3, 5, 17, 1000, 65537, 262147};
    const Operation *ring = find_operation("ring");
    long total_wrong = 0;
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        Buffers b = {comm, mem_alloc(counts[i] * sizeof(float), MEM_COMM), NULL, counts[i]};
        double wrong = (double)check_operation(ring, &b);
        mem_free(b.send);
        total_wrong += (long)wrong;
        if (comm_rank(comm) == 0)
            printf("%s ring all-reduce, %d ranks, %zu floats: %ld wrong elements\n",
                   wrong == 0 ? "PASS" : "FAIL", comm_size(comm), counts[i], (long)wrong);
    }
    return total_wrong == 0 ? 0 : 1;
}
