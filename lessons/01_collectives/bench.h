#ifndef LESSON01_BENCH_H
#define LESSON01_BENCH_H

#include <stddef.h>
#include <stdio.h>

#include "comm.h"
#include "kernels.h"
#include "paths.h"

typedef struct {
    size_t min_bytes, max_bytes;
    int factor, warmup, iters, check;
    const char *op;         /* -o: the reduction, as nccl-tests names it; the course's collectives sum */
    const char *collective; /* one collective, or "all" */
    const char *csv_path;
    const char *comm_log_path; /* --comm-log: every rank's communicator calls as CSV */
    int table, verify_ring, progress;
    const char *device;       /* --device: where the buffers live, cpu or cuda */
    const char *comm_backend; /* --comm: auto, mpi or nccl */
    double wait_timeout;      /* --wait-timeout: seconds a call may wait for the other ranks; 0 = forever */
    const Kernels *kernels;   /* the opened device (set after parsing) */
} BenchOptions;

/* A message's buffers on the device the run uses: send, and recv when asked for (an in-place
 * operation uses send only), with their host mirrors (send and recv themselves on the CPU). */
typedef struct {
    Comm *comm;
    const Kernels *kernels;
    float *send, *recv;           /* device memory; in-place operations use send only */
    float *host_send, *host_recv; /* where values are written and checked: send and recv themselves on the CPU */
    size_t count;                 /* elements of the whole message (what "size" measures) */
} Buffers;

/* 0 = run; 1 = help was asked for; -1 = bad flag (err says which). */
int bench_parse(int argc, char **argv, BenchOptions *opts, char *err, size_t err_len);
/* The flags and their defaults, for --help. */
void bench_print_flags(void);
int run_benchmark(Comm *comm, const BenchOptions *opts);
int sizes_table(Comm *comm, const BenchOptions *opts);
int verify_ring(Comm *comm, const BenchOptions *opts);
/* Ends the program (status 1) when a rank runs out of memory. */
Buffers make_buffers(Comm *comm, const Kernels *kernels, size_t count, int with_recv);
void free_buffers(Buffers *b);
/* --csv on rank 0 (NULL elsewhere, or without --csv), its header line written; the file is
 * renamed into place by bench_finish_csv (0, or 1 after saying why). */
FILE *bench_open_csv(Comm *comm, const BenchOptions *opts, OutputFile *out, const char *header);
int bench_finish_csv(OutputFile *out);
/* --progress (progress.c): how far a started collective gets while the rank computes. */
int progress_table(Comm *comm, const BenchOptions *opts);

#endif
