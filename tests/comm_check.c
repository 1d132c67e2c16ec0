/* Run under mpiexec by test_comm.c: checks every communicator call against a serial
 * computation of what it must produce. Values are small integers, so sums are exact in
 * any order and results compare with ==. Prints one line per failure; exits 1 on any. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"

static int failures;

/* What rank r holds at element i before a collective: varied, signed, rank-dependent. */
static float value(int rank, size_t i)
{
    return (float)((long)((i * 7 + (size_t)rank * 13) % 101) - 50);
}

static void expect(Comm *comm, const char *what, size_t i, float got, float want)
{
    if (got != want && failures++ < 10)
        printf("rank %d: %s element %zu is %g, expected %g\n", comm_rank(comm), what, i, got, want);
}

static float serial_sum(int size, size_t i)
{
    float total = 0.0f;
    for (int r = 0; r < size; r++)
        total += value(r, i);
    return total;
}

static void check_all_reduce(Comm *comm, size_t count, ReduceOp op, int nonblocking)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    float *buffer = malloc(count * sizeof *buffer);
    for (size_t i = 0; i < count; i++)
        buffer[i] = value(rank, i);
    if (nonblocking) {
        CommRequest request = {0};
        comm_check(comm, comm_all_reduce_start(comm, buffer, count, op, &request));
        int done = 0;
        while (!done)
            comm_check(comm, comm_test(&request, &done));
        comm_check(comm, comm_wait(&request)); /* a finished request waits as a no-op */
    } else {
        comm_check(comm, comm_all_reduce(comm, buffer, count, op));
    }
    for (size_t i = 0; i < count; i++) {
        float want = serial_sum(size, i);
        if (op == REDUCE_AVG)
            want *= 1.0f / (float)size;
        expect(comm, nonblocking ? "all_reduce_start" : "all_reduce", i, buffer[i], want);
    }
    free(buffer);
}

static void check_reduce_scatter(Comm *comm, size_t block)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    float *send = malloc(block * size * sizeof *send), *recv = malloc(block * sizeof *recv);
    for (size_t i = 0; i < block * size; i++)
        send[i] = value(rank, i);
    comm_check(comm, comm_reduce_scatter(comm, send, recv, block, REDUCE_SUM));
    for (size_t i = 0; i < block; i++)
        expect(comm, "reduce_scatter", i, recv[i], serial_sum(size, rank * block + i));
    free(send);
    free(recv);
}

static void check_all_gather(Comm *comm, size_t block, int nonblocking)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    float *send = malloc(block * sizeof *send), *recv = calloc(block * size, sizeof *recv);
    for (size_t i = 0; i < block; i++)
        send[i] = value(rank, i);
    if (nonblocking) {
        CommRequest request = {0};
        comm_check(comm, comm_all_gather_start(comm, send, recv, block, &request));
        comm_check(comm, comm_wait(&request));
    } else {
        comm_check(comm, comm_all_gather(comm, send, recv, block));
    }
    for (int r = 0; r < size; r++)
        for (size_t i = 0; i < block; i++)
            expect(comm, nonblocking ? "all_gather_start" : "all_gather", r * block + i, recv[r * block + i],
                   value(r, i));
    free(send);
    free(recv);
}

/* The bf16 calls on the same values: their sums (at most 4 x 50) are integers bf16 holds
 * exactly, so they too are exact in any order; the average is the sum times 1/size, rounded
 * to bf16. */
static void check_bf16(Comm *comm, size_t block)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    bf16 *send = malloc(block * size * sizeof *send), *recv = calloc(block * size, sizeof *recv);
    for (ReduceOp op = REDUCE_SUM; op <= REDUCE_AVG; op++) {
        for (size_t i = 0; i < block * size; i++)
            send[i] = float_to_bf16(value(rank, i));
        comm_check(comm, comm_reduce_scatter_bf16(comm, send, recv, block, op));
        for (size_t i = 0; i < block; i++) {
            float sum = serial_sum(size, rank * block + i);
            float want = op == REDUCE_AVG ? bf16_to_float(float_to_bf16(sum * (1.0f / (float)size))) : sum;
            expect(comm, "reduce_scatter_bf16", i, bf16_to_float(recv[i]), want);
        }
    }
    for (int nonblocking = 0; nonblocking <= 1; nonblocking++) {
        CommRequest request = {0};
        if (nonblocking) {
            comm_check(comm, comm_all_gather_bf16_start(comm, send, recv, block, &request));
            comm_check(comm, comm_wait(&request));
        } else {
            comm_check(comm, comm_all_gather_bf16(comm, send, recv, block));
        }
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < block; i++)
                expect(comm, "all_gather_bf16", r * block + i, bf16_to_float(recv[r * block + i]), value(r, i));
    }
    free(send);
    free(recv);
}

/* A bf16 sum is rounded to the nearest bf16, ties to even: 1 + 2^-7 (an odd last bit) plus
 * 2^-8 lies halfway, and must become 1 + 2^-6, not 1 + 2^-7 (cut off) or a float bf16 cannot
 * hold. The other ranks add zeros, which round nothing. */
static void check_bf16_rounding(Comm *comm)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    if (size < 2)
        return;
    bf16 *send = calloc((size_t)size, sizeof *send), recv = 0;
    float mine = rank == 0 ? 1.0f + 0x1p-7f : rank == 1 ? 0x1p-8f : 0.0f;
    send[0] = float_to_bf16(mine);
    comm_check(comm, comm_reduce_scatter_bf16(comm, send, &recv, 1, REDUCE_SUM));
    expect(comm, "reduce_scatter_bf16 rounding", 0, rank == 0 ? bf16_to_float(recv) : 0.0f,
           rank == 0 ? 1.0f + 0x1p-6f : 0.0f);
    free(send);
}

static void check_broadcast_and_ring(Comm *comm, size_t count)
{
    int rank = comm_rank(comm), size = comm_size(comm), root = size - 1;
    float *buffer = malloc(count * sizeof *buffer), *incoming = malloc(count * sizeof *incoming);
    for (size_t i = 0; i < count; i++)
        buffer[i] = value(rank, i);
    comm_check(comm, comm_broadcast(comm, buffer, count, root));
    for (size_t i = 0; i < count; i++)
        expect(comm, "broadcast", i, buffer[i], value(root, i));
    /* one step of a ring: send own values right, receive the left neighbour's */
    for (size_t i = 0; i < count; i++)
        buffer[i] = value(rank, i);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    comm_check(comm, comm_sendrecv(comm, buffer, count, right, incoming, count, left));
    for (size_t i = 0; i < count; i++)
        expect(comm, "sendrecv", i, incoming[i], value(left, i));
    free(buffer);
    free(incoming);
}

static void check_send_recv(Comm *comm, size_t count)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    if (size < 2)
        return;
    float *buffer = malloc(count * sizeof *buffer);
    if (rank == 0) {
        for (size_t i = 0; i < count; i++)
            buffer[i] = value(0, i);
        comm_check(comm, comm_send(comm, buffer, count, 1));
    } else if (rank == 1) {
        comm_check(comm, comm_recv(comm, buffer, count, 0));
        for (size_t i = 0; i < count; i++)
            expect(comm, "send/recv", i, buffer[i], value(0, i));
    }
    free(buffer);
}

/* The traffic the loop in main must have recorded: per count, four all-reduces (each 2n
 * floats), a reduce-scatter and two all-gathers (n * size floats each) and a broadcast (n
 * floats), then two bf16 reduce-scatters and two bf16 all-gathers (n * size at 2 bytes);
 * 12 collectives. Then the rounding check's bf16 reduce-scatter of one element each. */
static void check_stats(Comm *comm, const size_t *counts, int num_counts)
{
    int size = comm_size(comm);
    double want_bytes = 0.0;
    for (int c = 0; c < num_counts; c++)
        want_bytes += 4.0 * counts[c] * (4 * 2 + 3 * size + 1) + 2.0 * counts[c] * 4 * size;
    long want_calls = 12L * num_counts + (size > 1);
    want_bytes += size > 1 ? 2.0 * size : 0.0;
    CommStats stats = comm_stats(comm);
    if ((stats.calls != want_calls || stats.bytes != want_bytes || !(stats.seconds > 0.0)) && failures++ < 10)
        printf("rank %d: stats say %ld calls, %.0f bytes, %g s; expected %ld calls, %.0f bytes, > 0 s\n",
               comm_rank(comm), stats.calls, stats.bytes, stats.seconds, want_calls, want_bytes);
}

/* Starting over a request still in flight must be refused (its result would be lost). */
static void check_request_reuse(Comm *comm)
{
    float buffer[4] = {1, 2, 3, 4};
    CommRequest request = {0};
    comm_check(comm, comm_all_reduce_start(comm, buffer, 4, REDUCE_SUM, &request));
    int status = comm_all_reduce_start(comm, buffer, 4, REDUCE_SUM, &request);
    if ((status != -1 || strstr(comm_error(comm), "still in flight") == NULL) && failures++ < 10)
        printf("rank %d: restarting an active request returned %d with '%s'\n", comm_rank(comm), status,
               comm_error(comm));
    comm_check(comm, comm_wait(&request));
}

/* A failing MPI call must come back as -1 with a line naming the operation and rank. */
static void check_error_reporting(Comm *comm)
{
    float x = 1.0f;
    int status = comm_send(comm, &x, 1, comm_size(comm)); /* no such rank */
    if ((status != -1 || strstr(comm_error(comm), "send failed on rank") == NULL) && failures++ < 10)
        printf("rank %d: a send to a missing rank returned %d with '%s'\n", comm_rank(comm), status,
               comm_error(comm));
}

int main(int argc, char **argv)
{
    char err[512];
    Comm *comm = comm_init(&argc, &argv, err, sizeof err);
    if (comm == NULL)
        return comm_init_failed("comm_check", err);
    const size_t counts[] = {1, 7, 1000, 100003}; /* uneven: not multiples of any size */
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        check_all_reduce(comm, counts[c], REDUCE_SUM, 0);
        check_all_reduce(comm, counts[c], REDUCE_AVG, 0);
        check_all_reduce(comm, counts[c], REDUCE_SUM, 1);
        check_all_reduce(comm, counts[c], REDUCE_AVG, 1);
        check_reduce_scatter(comm, counts[c]);
        check_all_gather(comm, counts[c], 0);
        check_all_gather(comm, counts[c], 1);
        check_broadcast_and_ring(comm, counts[c]);
        check_send_recv(comm, counts[c]);
        check_bf16(comm, counts[c]);
    }
    check_bf16_rounding(comm);
    check_stats(comm, counts, (int)(sizeof counts / sizeof counts[0]));
    check_error_reporting(comm);
    check_request_reuse(comm);
    double slowest = (double)comm_rank(comm);
    comm_check(comm, comm_max_double(comm, &slowest));
    if (slowest != comm_size(comm) - 1 && failures++ < 10)
        printf("rank %d: max over ranks is %g\n", comm_rank(comm), slowest);
    comm_check(comm, comm_barrier(comm));
    int all_failures = failures;
    float f = (float)all_failures;
    comm_check(comm, comm_all_reduce(comm, &f, 1, REDUCE_SUM));
    if (comm_rank(comm) == 0)
        printf("comm_check: world size %d, %s\n", comm_size(comm), f == 0.0f ? "all correct" : "FAILURES");
    comm_finalize(comm);
    return f == 0.0f ? 0 : 1;
}
