/* What the communicator's backends share: the Comm itself and the table of operations a
 * backend supplies. Only comm*.c files include this; lessons see comm.h alone. */
#ifndef DTC_COMM_INTERNAL_H
#define DTC_COMM_INTERNAL_H

#include <mpi.h>

#include "comm.h"

/* The data-moving calls of comm.h, one table per backend. The MPI world stays underneath
 * every backend: it launched the ranks, bootstraps the others and carries the trainer's
 * double-precision bookkeeping. */
typedef struct {
    const char *name;
    int (*all_reduce)(Comm *comm, float *buffer, size_t count, ReduceOp op);
    int (*all_reduce_start)(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request);
    int (*all_gather_start)(Comm *comm, const float *send, float *recv, size_t send_count, CommRequest *request);
    int (*wait)(CommRequest *request);
    int (*test)(CommRequest *request, int *done);
    int (*reduce_scatter)(Comm *comm, const float *send, float *recv, size_t recv_count, ReduceOp op);
    int (*all_gather)(Comm *comm, const float *send, float *recv, size_t send_count);
    int (*broadcast)(Comm *comm, float *buffer, size_t count, int root);
    int (*sendrecv)(Comm *comm, const float *send, size_t send_count, int to, float *recv, size_t recv_count,
                    int from);
    void (*release)(Comm *comm); /* frees what the backend added to the Comm */
} CommOps;

struct Comm {
    const CommOps *ops;
    void *backend_state; /* the NCCL communicator and its stream, for instance */
    MPI_Comm world;
    MPI_Comm node; /* the ranks sharing this machine, for the local rank */
    int rank, size, local_rank;
    int we_initialised_mpi;
    CommStats stats;
    char error[MPI_MAX_ERROR_STRING + 256];
};

extern const CommOps mpi_ops;

/* Records a one-line failure naming the operation and the rank; returns -1. */
int comm_fail(Comm *comm, const char *operation, const char *reason);

/* Every counted call opens with `double started = now_seconds();` and closes through here;
 * with --trace it also lands on the communication track (waits and tests on their own). */
int comm_account(Comm *comm, const char *operation, double started, double bytes, int collectives);

static inline double float_bytes(size_t count)
{
    return (double)count * sizeof(float);
}

#endif
