/* Lesson 01 exercise: all-reduce around a ring, from point-to-point messages only.
 *
 * When ring_all_reduce returns, every rank's buffer holds the element-wise sum of all
 * ranks' buffers. Each rank talks only to its two neighbours on the ring (it sends to one,
 * right say, and receives from the other), and no library collective does any of the
 * work. The ring works in two phases over N chunks of the buffer, one per rank, whose
 * sizes differ by at most one element (a chunk may even be empty):
 *   1. reduce-scatter: N-1 steps; afterwards each rank holds one chunk fully summed.
 *   2. all-gather: N-1 more steps; afterwards every rank holds every chunk fully summed.
 *
 * docs/01_collectives.md, "The ring", has the picture and the interfaces you can use
 * (common/comm.h, common/alloc.h); `make hint LESSON=01` gives a hint when you are stuck.
 * `make grade LESSON=01` runs your ring at 2, 3 and 4 ranks with uneven counts. */
#include "ring_allreduce.h"

int ring_all_reduce(Comm *comm, float *buffer, size_t count)
{
    (void)comm;
    (void)buffer;
    (void)count;
    /* TODO: the ring. Return 0, or -1 when a communicator call fails or working memory
     * cannot be had. */
    return 0;
}
