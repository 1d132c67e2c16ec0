/* Lesson 01, designed otherwise than the reference: the ring turns left (each rank sends to
 * rank - 1 and receives from rank + 1); the first count % N chunks take the extra element;
 * each step is a blocking send and a blocking receive, even ranks sending first and odd ranks
 * receiving first, so that no cycle of ranks all waits in a send (at odd N rank N-1 and rank
 * 0 are both even, and the odd ranks between them break the cycle); and an empty chunk is
 * neither sent nor received, which both ends know from the same split. */
#include "ring_allreduce.h"

#include "alloc.h"

typedef struct {
    size_t offset, count;
} Span;

static Span span_of_chunk(size_t count, int chunk, int ranks)
{
    size_t base = count / (size_t)ranks, extra = count % (size_t)ranks, i = (size_t)chunk;
    return (Span){i * base + (i < extra ? i : extra), base + (i < extra ? 1 : 0)};
}

static int modulo(int value, int ranks) { return ((value % ranks) + ranks) % ranks; }

/* One step: out goes to the left neighbour, in comes from the right one; an empty side is
 * skipped. */
static int step(Comm *comm, const float *out, size_t out_count, float *in, size_t in_count)
{
    int rank = comm_rank(comm), ranks = comm_size(comm);
    int left = modulo(rank - 1, ranks), right = modulo(rank + 1, ranks);
    int send_first = rank % 2 == 0;
    for (int half = 0; half < 2; half++) {
        int sending = (half == 0) == send_first;
        if (sending && out_count > 0 && comm_send(comm, out, out_count, left) != 0)
            return -1;
        if (!sending && in_count > 0 && comm_recv(comm, in, in_count, right) != 0)
            return -1;
    }
    return 0;
}

int ring_all_reduce(Comm *comm, float *buffer, size_t count)
{
    int rank = comm_rank(comm), ranks = comm_size(comm);
    if (ranks == 1)
        return 0;
    size_t widest = span_of_chunk(count, 0, ranks).count;
    float *arrived = mem_alloc((widest > 0 ? widest : 1) * sizeof(float), MEM_COMM);
    if (arrived == NULL)
        return -1;
    int status = 0;
    /* reduce-scatter: chunk rank + s leaves, chunk rank + s + 1 arrives and is added; rank
     * ends holding chunk rank - 1 summed */
    for (int s = 0; s < ranks - 1 && status == 0; s++) {
        Span out = span_of_chunk(count, modulo(rank + s, ranks), ranks);
        Span in = span_of_chunk(count, modulo(rank + s + 1, ranks), ranks);
        status = step(comm, buffer + out.offset, out.count, arrived, in.count);
        for (size_t i = 0; status == 0 && i < in.count; i++)
            buffer[in.offset + i] += arrived[i];
    }
    /* all-gather: the summed chunks travel left, each landing in place */
    for (int s = 0; s < ranks - 1 && status == 0; s++) {
        Span out = span_of_chunk(count, modulo(rank - 1 + s, ranks), ranks);
        Span in = span_of_chunk(count, modulo(rank + s, ranks), ranks);
        status = step(comm, buffer + out.offset, out.count, buffer + in.offset, in.count);
    }
    mem_free(arrived);
    return status;
}
