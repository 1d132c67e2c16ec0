#ifndef LESSON01_BENCH_H
#define LESSON01_BENCH_H

#include <stddef.h>

#include "comm.h"
#include "kernels.h"

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

/* 0 = run; 1 = help was asked for; -1 = bad flag (err says which). */
int bench_parse(int argc, char **argv, BenchOptions *opts, char *err, size_t err_len);
/* The flags and their defaults, for --help. */
void bench_print_flags(void);
int run_benchmark(Comm *comm, const BenchOptions *opts);
int sizes_table(Comm *comm, const BenchOptions *opts);
int verify_ring(Comm *comm, const BenchOptions *opts);
/* --progress (progress.c): how far a started collective gets while the rank computes. */
int progress_table(Comm *comm, const BenchOptions *opts);

#endif
