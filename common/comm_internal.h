/* What the communicator's backends share: the Comm itself and the table of operations a
 * backend supplies. Only comm*.c files include this; lessons see comm.h alone. */
#ifndef DTC_COMM_INTERNAL_H
#define DTC_COMM_INTERNAL_H

#include <mpi.h>

#include "comm.h"
#include "events.h"
#include "peer_state.h"

/* What the elements of a collective's buffers are: floats, or bf16 or fp16 (float16.h) for
 * the mixed-precision calls. Only the gathers and the reduce-scatter move 16-bit elements. */
typedef enum { COMM_FLOAT, COMM_BF16, COMM_FP16 } CommType;

static inline size_t element_bytes(CommType type)
{
    return type == COMM_FLOAT ? sizeof(float) : sizeof(bits16);
}

/* The 16-bit format of a type that is not COMM_FLOAT. */
static inline Format16 comm_format16(CommType type)
{
    return type == COMM_FP16 ? FORMAT_FP16 : FORMAT_BF16;
}

/* The data-moving calls of comm.h, one table per backend. The MPI world stays underneath
 * every backend: it launched the ranks, bootstraps the others and carries the trainer's
 * double-precision bookkeeping. */
typedef struct {
    const char *name;
    int (*all_reduce)(Comm *comm, float *buffer, size_t count, ReduceOp op);
    int (*all_reduce_start)(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request);
    int (*all_gather_start)(Comm *comm, const void *send, void *recv, size_t send_count, CommType type,
                            CommRequest *request);
    int (*wait)(CommRequest *request);
    int (*test)(CommRequest *request, int *done);
    int (*reduce_scatter)(Comm *comm, const void *send, void *recv, size_t recv_count, CommType type, ReduceOp op);
    int (*all_gather)(Comm *comm, const void *send, void *recv, size_t send_count, CommType type);
    int (*broadcast)(Comm *comm, float *buffer, size_t count, int root);
    int (*sendrecv)(Comm *comm, const float *send, size_t send_count, int to, float *recv, size_t recv_count,
                    int from);
    /* frees what the backend added to the Comm: 0, or -1 with comm->error set where its end
     * met a failure (an error of work nothing has waited for yet) */
    int (*release)(Comm *comm);
} CommOps;

struct Comm {
    const CommOps *ops;
    void *backend_state; /* the NCCL communicator and its stream, for instance */
    MPI_Comm world;
    MPI_Comm node; /* the ranks sharing this machine, for the local rank */
    int rank, size, local_rank;
    int hosts; /* machines the ranks run on */
    int we_initialised_mpi;
    CommStats stats;
    char error[MPI_MAX_ERROR_STRING + 256];
    double wait_timeout; /* seconds a call may wait for the other ranks; 0 = forever */
    char wait_timeout_text[32]; /* the same, as the flag gives it ("30"): for the reports, which
                                 * cannot format a double as %g inside a signal handler */
    MPI_Win board_window;
    PeerState *board;    /* every rank of this host's PeerState, by local rank; NULL if unshared */
    PeerState *own_board; /* the board of a rank alone on its host, not shared; or NULL */
    int node_size;
    PeerState *supervised; /* this rank's state again, for its parent (rank_supervisor.h); or NULL */
    CallSpan span; /* the last call's slice on the timeline, as its backend timed it (comm_record_call) */
};

extern const CommOps mpi_ops;

/* The bytes of count elements: a buffer's size, and the traffic comm_stats counts. */
static inline size_t buffer_bytes(size_t count, CommType type)
{
    return count * element_bytes(type);
}

#endif
