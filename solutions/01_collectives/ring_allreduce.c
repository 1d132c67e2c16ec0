/* Lesson 01 reference solution: ring all-reduce = reduce-scatter + all-gather. */
#include "ring_allreduce.h"

#include "alloc.h"

typedef struct {
    size_t offset, count;
} Chunk;

/* Chunk i of N over count elements; sizes differ by at most one. */
static Chunk chunk(size_t count, int i, int N)
{
    size_t begin = (size_t)i * count / (size_t)N, end = (size_t)(i + 1) * count / (size_t)N;
    return (Chunk){begin, end - begin};
}

static int wrap(int i, int N) { return ((i % N) + N) % N; }

static int reduce_scatter_phase(Comm *comm, float *buffer, size_t count, float *incoming)
{
    int rank = comm_rank(comm), N = comm_size(comm);
    int right = wrap(rank + 1, N), left = wrap(rank - 1, N);
    for (int step = 0; step < N - 1; step++) {
        Chunk out = chunk(count, wrap(rank - step, N), N);
        Chunk in = chunk(count, wrap(rank - step - 1, N), N);
        if (comm_sendrecv(comm, buffer + out.offset, out.count, right, incoming, in.count, left) != 0)
            return -1;
        float *target = buffer + in.offset;
        for (size_t i = 0; i < in.count; i++)
            target[i] += incoming[i];
    }
    return 0; /* rank now holds the full sum of chunk rank + 1 */
}

static int all_gather_phase(Comm *comm, float *buffer, size_t count)
{
    int rank = comm_rank(comm), N = comm_size(comm);
    int right = wrap(rank + 1, N), left = wrap(rank - 1, N);
    for (int step = 0; step < N - 1; step++) {
        Chunk out = chunk(count, wrap(rank + 1 - step, N), N);
        Chunk in = chunk(count, wrap(rank - step, N), N);
        if (comm_sendrecv(comm, buffer + out.offset, out.count, right, buffer + in.offset, in.count, left) != 0)
            return -1;
    }
    return 0;
}

int ring_all_reduce(Comm *comm, float *buffer, size_t count)
{
    int N = comm_size(comm);
    if (N == 1)
        return 0;
    size_t largest = (count + (size_t)N - 1) / (size_t)N;
    float *incoming = mem_alloc((largest > 0 ? largest : 1) * sizeof(float), MEM_COMM);
    if (incoming == NULL)
        return -1;
    int status = reduce_scatter_phase(comm, buffer, count, incoming);
    if (status == 0)
        status = all_gather_phase(comm, buffer, count);
    mem_free(incoming);
    return status;
}
