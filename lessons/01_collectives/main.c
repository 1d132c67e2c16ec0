/* Lesson 01: collective communication, measured the way nccl-tests measures it, and a
 * hand-written ring all-reduce beside the library's.
 *
 *   mpiexec -n 2 build/solutions/01_collectives -b 1M -e 64M -f 4 -c 1   (sizes in 2^20 bytes)
 *   mpiexec -n 2 build/solutions/01_collectives --table        (fixed sizes, one row each)
 *   mpiexec -n 3 build/solutions/01_collectives --verify-ring  (what grading runs, with --comm-log)
 *   mpiexec -n 2 build/solutions/01_collectives --progress -b 256K -e 4M -n 5  (a started collective)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "bench.h"
#include "comm.h"
#include "device.h"
#include "paths.h"
#include "run_logs.h"

static void usage(void)
{
    printf("usage: mpiexec -n N 01_collectives [flags]\n"
           "  measures the collectives as nccl-tests does, with its flag letters (-b -e -f -w -n -c -o), its\n"
           "  columns and its closing lines; --collective picks what nccl-tests picks by program name\n");
    bench_print_flags();
    printf("\nflags take --name value, --name=value, or -L value for those with a letter;\n"
           "on --device cuda the ring (a host-memory exercise) is left out;\n"
           "time = max over ranks of the mean per iteration; algbw = size / time;\n"
           "busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (reduce-scatter, all-gather), 1 (broadcast)\n");
}

/* Found out before any work, not after it: rank 0 writes the log and the CSV. */
static int outputs_writable(Comm *comm, const BenchOptions *opts)
{
    char err[512];
    double unwritable = comm_rank(comm) == 0 &&
                        (check_folder_writable(opts->comm_log_path, "--comm-log", err, sizeof err) != 0 ||
                         check_folder_writable(opts->csv_path, "--csv", err, sizeof err) != 0);
    if (unwritable == 0 && comm_rank(comm) == 0 && same_file(opts->comm_log_path, opts->csv_path)) {
        snprintf(err, sizeof err, "--csv and --comm-log name the same file %s", opts->csv_path);
        unwritable = 1;
    }
    if (unwritable)
        fprintf(stderr, "01_collectives: %s\n", err);
    comm_check(comm, comm_max_double(comm, &unwritable));
    return unwritable == 0;
}

int main(int argc, char **argv)
{
    char err[512];
    Comm *comm = comm_init(&argc, &argv, err, sizeof err);
    if (comm == NULL)
        return comm_init_failed("01_collectives", err);
    BenchOptions opts;
    int status = bench_parse(argc, argv, &opts, err, sizeof err);
    if (status != 0) {
        if (comm_rank(comm) == 0) {
            if (status > 0)
                usage();
            else
                fprintf(stderr, "01_collectives: %s\n", err);
        }
        comm_finalize(comm);
        return status > 0 ? 0 : 2;
    }
    opts.kernels = device_open(opts.device, opts.comm_backend, 0, 0, comm, err, sizeof err);
    if (opts.kernels == NULL) {
        if (comm_rank(comm) == 0)
            fprintf(stderr, "01_collectives: %s\n", err);
        comm_finalize(comm);
        return 1;
    }
    if (!outputs_writable(comm, &opts)) {
        comm_finalize(comm);
        return 2;
    }
    comm_set_wait_timeout(comm, opts.wait_timeout);
    run_logs_start(opts.comm_log_path != NULL, 0);
    int result;
    if (opts.verify_ring)
        result = verify_ring(comm, &opts);
    else if (opts.table)
        result = sizes_table(comm, &opts);
    else if (opts.progress)
        result = progress_table(comm, &opts);
    else
        result = run_benchmark(comm, &opts);
    if (opts.comm_log_path != NULL && run_logs_write_comm_log(comm, opts.comm_log_path, err, sizeof err) != 0) {
        fprintf(stderr, "01_collectives: %s\n", err);
        result = 1;
    }
    return comm_finalize(comm) != 0 && result == 0 ? 1 : result;
}
