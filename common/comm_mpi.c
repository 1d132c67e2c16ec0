/* The MPI backend of comm.h. */
#include "comm.h"

#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timer.h"
#include "trace.h"

struct Comm {
    MPI_Comm world;
    MPI_Comm node; /* the ranks sharing this machine, for the local rank */
    int rank, size, local_rank;
    int we_initialised_mpi;
    CommStats stats;
    char error[MPI_MAX_ERROR_STRING + 128];
};

/* Records a failed MPI call as one line naming the operation and the rank. */
static int fail(Comm *comm, const char *operation, int mpi_status)
{
    char reason[MPI_MAX_ERROR_STRING];
    int length = 0;
    if (MPI_Error_string(mpi_status, reason, &length) != MPI_SUCCESS)
        snprintf(reason, sizeof reason, "MPI error %d", mpi_status);
    snprintf(comm->error, sizeof comm->error, "%s failed on rank %d of %d: %s",
             operation, comm->rank, comm->size, reason);
    return -1;
}

static int check_count(Comm *comm, const char *operation, size_t count)
{
    if (count <= (size_t)INT_MAX)
        return 0;
    snprintf(comm->error, sizeof comm->error, "%s on rank %d: %zu elements is more than one MPI call carries",
             operation, comm->rank, count);
    return -1;
}

#define MPI_CALL(comm, operation, call)                      \
    do {                                                     \
        int mpi_status_ = (call);                            \
        if (mpi_status_ != MPI_SUCCESS)                      \
            return fail((comm), (operation), mpi_status_);   \
    } while (0)

/* Every counted call opens with `double started = now_seconds();` and closes through here;
 * with --trace it also lands on the communication track (waits and tests on their own). */
static int account(Comm *comm, const char *operation, double started, double bytes, int collectives)
{
    double ended = now_seconds();
    int is_wait = strcmp(operation, "wait") == 0 || strcmp(operation, "test") == 0;
    trace_record(is_wait ? TRACK_WAIT : TRACK_COMM, operation, -1, started, ended);
    comm->stats.seconds += ended - started;
    comm->stats.bytes += bytes;
    comm->stats.calls += collectives;
    return 0;
}

static double float_bytes(size_t count)
{
    return (double)count * sizeof(float);
}

CommStats comm_stats(const Comm *comm)
{
    return comm->stats;
}

Comm *comm_init(int *argc, char ***argv)
{
    Comm *comm = calloc(1, sizeof *comm);
    if (comm == NULL)
        return NULL;
    int initialised = 0;
    MPI_Initialized(&initialised);
    if (!initialised) {
        MPI_Init(argc, argv);
        comm->we_initialised_mpi = 1;
    }
    comm->world = MPI_COMM_WORLD;
    /* errors come back to us as status codes, so they can be reported clearly */
    MPI_Comm_set_errhandler(comm->world, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm->world, &comm->rank);
    MPI_Comm_size(comm->world, &comm->size);
    MPI_Comm_split_type(comm->world, MPI_COMM_TYPE_SHARED, comm->rank, MPI_INFO_NULL, &comm->node);
    MPI_Comm_rank(comm->node, &comm->local_rank);
    return comm;
}

void comm_finalize(Comm *comm)
{
    if (comm == NULL)
        return;
    MPI_Comm_free(&comm->node);
    if (comm->we_initialised_mpi)
        MPI_Finalize();
    free(comm);
}

int comm_rank(const Comm *comm) { return comm->rank; }
int comm_size(const Comm *comm) { return comm->size; }
int comm_local_rank(const Comm *comm) { return comm->local_rank; }
const char *comm_backend_name(const Comm *comm) { (void)comm; return "mpi"; }
const char *comm_error(const Comm *comm) { return comm->error; }

void comm_check(Comm *comm, int status)
{
    if (status == 0)
        return;
    fprintf(stderr, "%s\n", comm->error);
    fflush(stderr);
    MPI_Abort(comm->world, 1); /* ends every rank: none waits forever on this one */
}

static void scale(float *buffer, size_t count, float factor)
{
    for (size_t i = 0; i < count; i++)
        buffer[i] *= factor;
}

int comm_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    if (check_count(comm, "all_reduce", count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "all_reduce", MPI_Allreduce(MPI_IN_PLACE, buffer, (int)count, MPI_FLOAT, MPI_SUM, comm->world));
    if (op == REDUCE_AVG)
        scale(buffer, count, 1.0f / (float)comm->size);
    return account(comm, "all_reduce", started, 2 * float_bytes(count), 1);
}

static int refuse_active(Comm *comm, const char *operation, const CommRequest *request)
{
    if (!request->active)
        return 0;
    snprintf(comm->error, sizeof comm->error,
             "%s on rank %d: this request is still in flight; wait for it before reusing it", operation, comm->rank);
    return -1;
}

static MPI_Request *new_handle(Comm *comm, const char *operation)
{
    MPI_Request *handle = malloc(sizeof *handle);
    if (handle == NULL)
        snprintf(comm->error, sizeof comm->error, "%s on rank %d: out of memory", operation, comm->rank);
    return handle;
}

int comm_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request)
{
    if (refuse_active(comm, "all_reduce_start", request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = buffer, .count = count, .average = op == REDUCE_AVG};
    if (check_count(comm, "all_reduce_start", count) != 0)
        return -1;
    double started = now_seconds();
    MPI_Request *handle = new_handle(comm, "all_reduce_start");
    if (handle == NULL)
        return -1;
    int status = MPI_Iallreduce(MPI_IN_PLACE, buffer, (int)count, MPI_FLOAT, MPI_SUM, comm->world, handle);
    if (status != MPI_SUCCESS) {
        free(handle);
        return fail(comm, "all_reduce_start", status);
    }
    request->backend = handle;
    request->active = 1;
    return account(comm, "all_reduce_start", started, 2 * float_bytes(count), 1);
}

int comm_all_gather_start(Comm *comm, const float *send, float *recv, size_t send_count, CommRequest *request)
{
    if (refuse_active(comm, "all_gather_start", request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = recv, .count = send_count * comm->size};
    if (check_count(comm, "all_gather_start", send_count) != 0)
        return -1;
    double started = now_seconds();
    MPI_Request *handle = new_handle(comm, "all_gather_start");
    if (handle == NULL)
        return -1;
    int status = MPI_Iallgather(send, (int)send_count, MPI_FLOAT, recv, (int)send_count, MPI_FLOAT, comm->world,
                                handle);
    if (status != MPI_SUCCESS) {
        free(handle);
        return fail(comm, "all_gather_start", status);
    }
    request->backend = handle;
    request->active = 1;
    return account(comm, "all_gather_start", started, float_bytes(send_count * comm->size), 1);
}

static void finish_request(CommRequest *request)
{
    free(request->backend);
    request->backend = NULL;
    request->active = 0;
    if (request->average)
        scale(request->buffer, request->count, 1.0f / (float)request->comm->size);
}

int comm_wait(CommRequest *request)
{
    if (!request->active)
        return 0;
    double started = now_seconds();
    MPI_CALL(request->comm, "wait", MPI_Wait(request->backend, MPI_STATUS_IGNORE));
    finish_request(request);
    return account(request->comm, "wait", started, 0, 0);
}

int comm_test(CommRequest *request, int *done)
{
    *done = !request->active;
    if (*done)
        return 0;
    double started = now_seconds();
    MPI_CALL(request->comm, "test", MPI_Test(request->backend, done, MPI_STATUS_IGNORE));
    if (*done)
        finish_request(request);
    return account(request->comm, "test", started, 0, 0);
}

int comm_reduce_scatter(Comm *comm, const float *send, float *recv, size_t recv_count, ReduceOp op)
{
    if (check_count(comm, "reduce_scatter", recv_count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "reduce_scatter",
             MPI_Reduce_scatter_block(send, recv, (int)recv_count, MPI_FLOAT, MPI_SUM, comm->world));
    if (op == REDUCE_AVG)
        scale(recv, recv_count, 1.0f / (float)comm->size);
    return account(comm, "reduce_scatter", started, float_bytes(recv_count * comm->size), 1);
}

int comm_all_gather(Comm *comm, const float *send, float *recv, size_t send_count)
{
    if (check_count(comm, "all_gather", send_count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "all_gather",
             MPI_Allgather(send, (int)send_count, MPI_FLOAT, recv, (int)send_count, MPI_FLOAT, comm->world));
    return account(comm, "all_gather", started, float_bytes(send_count * comm->size), 1);
}

int comm_broadcast(Comm *comm, float *buffer, size_t count, int root)
{
    if (check_count(comm, "broadcast", count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "broadcast", MPI_Bcast(buffer, (int)count, MPI_FLOAT, root, comm->world));
    return account(comm, "broadcast", started, float_bytes(count), 1);
}

int comm_barrier(Comm *comm)
{
    double started = now_seconds();
    MPI_CALL(comm, "barrier", MPI_Barrier(comm->world));
    return account(comm, "barrier", started, 0, 0);
}

enum { POINT_TO_POINT_TAG = 7 };

int comm_send(Comm *comm, const float *buffer, size_t count, int peer)
{
    if (check_count(comm, "send", count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "send", MPI_Send(buffer, (int)count, MPI_FLOAT, peer, POINT_TO_POINT_TAG, comm->world));
    return account(comm, "send", started, 0, 0);
}

int comm_recv(Comm *comm, float *buffer, size_t count, int peer)
{
    if (check_count(comm, "recv", count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "recv", MPI_Recv(buffer, (int)count, MPI_FLOAT, peer, POINT_TO_POINT_TAG, comm->world,
                                    MPI_STATUS_IGNORE));
    return account(comm, "recv", started, 0, 0);
}

int comm_sendrecv(Comm *comm, const float *send, size_t send_count, int to,
                  float *recv, size_t recv_count, int from)
{
    if (check_count(comm, "sendrecv", send_count) != 0 || check_count(comm, "sendrecv", recv_count) != 0)
        return -1;
    double started = now_seconds();
    MPI_CALL(comm, "sendrecv",
             MPI_Sendrecv(send, (int)send_count, MPI_FLOAT, to, POINT_TO_POINT_TAG, recv, (int)recv_count,
                          MPI_FLOAT, from, POINT_TO_POINT_TAG, comm->world, MPI_STATUS_IGNORE));
    return account(comm, "sendrecv", started, 0, 0);
}

int comm_max_double(Comm *comm, double *value)
{
    MPI_CALL(comm, "max", MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_MAX, comm->world));
    return 0;
}

int comm_sum_double(Comm *comm, double *value)
{
    MPI_CALL(comm, "sum", MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, MPI_SUM, comm->world));
    return 0;
}
