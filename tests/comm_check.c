/* Run under mpiexec by test_comm.c: checks every communicator call against a serial
 * computation of what it must produce. Values are small integers, so sums are exact in
 * any order and results compare with ==. Prints one line per failure; exits 1 on any. */
#include <math.h>
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

/* An all-gather in place, blocking and not: each rank's block already at its place in recv
 * (the send buffer is that block), the others land around it. */
static void check_all_gather_in_place(Comm *comm, size_t block)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
        float *recv = calloc(block * size, sizeof *recv), *mine = recv + (size_t)rank * block;
        for (size_t i = 0; i < block; i++)
            mine[i] = value(rank, i);
        CommRequest request = {0};
        if (nonblocking)
            comm_check(comm, comm_all_gather_start(comm, mine, recv, block, &request));
        else
            comm_check(comm, comm_all_gather(comm, mine, recv, block));
        comm_check(comm, comm_wait(&request));
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < block; i++)
                expect(comm, "all_gather in place", r * block + i, recv[r * block + i], value(r, i));
        free(recv);
    }
}

/* The 16-bit calls of a format on the same values: their sums (at most 4 x 50) are integers
 * bf16 and fp16 hold exactly, so they too are exact in any order; the average is the sum
 * times 1/size, rounded to the format. */
static void check_16bit(Comm *comm, Format16 format, size_t block)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    char scattered[32], gathered[32];
    snprintf(scattered, sizeof scattered, "reduce_scatter_%s", format16_name(format));
    snprintf(gathered, sizeof gathered, "all_gather_%s", format16_name(format));
    bits16 *send = malloc(block * size * sizeof *send), *recv = calloc(block * size, sizeof *recv);
    for (ReduceOp op = REDUCE_SUM; op <= REDUCE_AVG; op++) {
        for (size_t i = 0; i < block * size; i++)
            send[i] = float_to_float16(format, value(rank, i));
        comm_check(comm, comm_reduce_scatter_16(comm, format, send, recv, block, op));
        for (size_t i = 0; i < block; i++) {
            float sum = serial_sum(size, rank * block + i);
            float want = op == REDUCE_AVG ? float16_to_float(format, float_to_float16(format, sum * (1.0f / (float)size))) : sum;
            expect(comm, scattered, i, float16_to_float(format, recv[i]), want);
        }
    }
    for (int nonblocking = 0; nonblocking <= 1; nonblocking++) {
        CommRequest request = {0};
        if (nonblocking) {
            comm_check(comm, comm_all_gather_16_start(comm, format, send, recv, block, &request));
            comm_check(comm, comm_wait(&request));
        } else {
            comm_check(comm, comm_all_gather_16(comm, format, send, recv, block));
        }
        for (int r = 0; r < size; r++)
            for (size_t i = 0; i < block; i++)
                expect(comm, gathered, r * block + i, float16_to_float(format, recv[r * block + i]), value(r, i));
    }
    free(send);
    free(recv);
}

/* Rank 0's value and rank 1's summed in the format by a one-element reduce-scatter (the
 * other ranks add zeros, which change nothing): what rank 0 receives. */
static float sum_of_two(Comm *comm, Format16 format, float mine0, float mine1)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    bits16 *send = calloc((size_t)size, sizeof *send), recv = 0;
    send[0] = float_to_float16(format, rank == 0 ? mine0 : rank == 1 ? mine1 : 0.0f);
    comm_check(comm, comm_reduce_scatter_16(comm, format, send, &recv, 1, REDUCE_SUM));
    free(send);
    return rank == 0 ? float16_to_float(format, recv) : 0.0f;
}

/* A 16-bit sum is rounded to the nearest value of the format, ties to even: 1 plus an odd
 * last bit (2^-7 in bf16, 2^-10 in fp16) plus half a last bit lies halfway, and must become
 * 1 + two last bits, not 1 + one (cut off) or a float the format cannot hold. And an fp16
 * sum past 65504 is infinity, what loss scaling watches for. */
static void check_16bit_rounding(Comm *comm)
{
    int rank = comm_rank(comm);
    if (comm_size(comm) < 2)
        return;
    float got = sum_of_two(comm, FORMAT_BF16, 1.0f + 0x1p-7f, 0x1p-8f);
    expect(comm, "reduce_scatter_bf16 rounding", 0, got, rank == 0 ? 1.0f + 0x1p-6f : 0.0f);
    got = sum_of_two(comm, FORMAT_FP16, 1.0f + 0x1p-10f, 0x1p-11f);
    expect(comm, "reduce_scatter_fp16 rounding", 0, got, rank == 0 ? 1.0f + 0x1p-9f : 0.0f);
    got = sum_of_two(comm, FORMAT_FP16, 40000.0f, 30000.0f);
    expect(comm, "reduce_scatter_fp16 overflow", 0, got, rank == 0 ? INFINITY : 0.0f);
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
 * floats), then per 16-bit format two reduce-scatters and two all-gathers (n * size at 2
 * bytes); 16 collectives. Then the rounding checks' three reduce-scatters of one 16-bit
 * element each. */
static void check_stats(Comm *comm, const size_t *counts, int num_counts)
{
    int size = comm_size(comm);
    double want_bytes = 0.0;
    for (int c = 0; c < num_counts; c++)
        want_bytes += 4.0 * counts[c] * (4 * 2 + 3 * size + 1) + 2 * 2.0 * counts[c] * 4 * size;
    long want_calls = 16L * num_counts + 3 * (size > 1);
    want_bytes += size > 1 ? 3 * 2.0 * size : 0.0;
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
        check_16bit(comm, FORMAT_BF16, counts[c]);
        check_16bit(comm, FORMAT_FP16, counts[c]);
    }
    check_16bit_rounding(comm);
    check_stats(comm, counts, (int)(sizeof counts / sizeof counts[0]));
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++)
        check_all_gather_in_place(comm, counts[c]);
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
    return comm_finalize(comm) == 0 && f == 0.0f ? 0 : 1;
}
