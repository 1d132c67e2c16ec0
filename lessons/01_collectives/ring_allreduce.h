#ifndef LESSON01_RING_ALLREDUCE_H
#define LESSON01_RING_ALLREDUCE_H

#include <stddef.h>

#include "comm.h"

/* Sums buffer (count floats) over all ranks, in place, using only point-to-point
 * messages around a ring. Returns 0, or -1 when a communicator call fails (comm_error(comm)
 * then says which) or working memory cannot be had. */
int ring_all_reduce(Comm *comm, float *buffer, size_t count);

#endif
