/* The MPI backend: every collective on host memory, through MPICH. A GPU buffer is copied
 * to a pinned host view around the call (staging.h), which is slow but lets several ranks
 * share one GPU, so the multi-rank lessons can be tested on a machine with one. The staging
 * copies count as communication time: on a shared GPU they are what communication costs. */
#include "comm_board.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "float16.h"
#include "staging.h"
#include "sum16.h"
#include "timer.h"

/* Records a failed MPI call as one line naming the operation and the rank. A message cut
 * short (MPI_ERR_TRUNCATE) is what ranks whose calls do not match get: that is said first,
 * with this rank's place in the order of collectives, and MPI's own error stack left out. */
static int fail(Comm *comm, const char *operation, int mpi_status)
{
    char reason[MPI_MAX_ERROR_STRING];
    int length = 0, error_class = MPI_ERR_OTHER;
    if (MPI_Error_string(mpi_status, reason, &length) != MPI_SUCCESS)
        snprintf(reason, sizeof reason, "MPI error %d", mpi_status);
    MPI_Error_class(mpi_status, &error_class);
    if (error_class != MPI_ERR_TRUNCATE)
        return comm_fail(comm, operation, reason);
    char mismatch[256];
    long place = comm->board != NULL ? comm->board[comm->local_rank].calls : 0;
    snprintf(mismatch, sizeof mismatch,
             "MPI: message truncated: its collective %ld does not match another rank's (another call there, or this "
             "one with another count: are the calls made in the same order, with the same counts, on every rank?)",
             place);
    return comm_fail(comm, operation, mismatch);
}

static int check_count(Comm *comm, const char *operation, size_t count)
{
    if (count <= (size_t)INT_MAX)
        return 0;
    snprintf(comm->error, sizeof comm->error, "%s on rank %d: %zu elements is more than one MPI call carries",
             operation, comm->rank, count);
    return -1;
}

static int open_view(Comm *comm, const char *operation, HostView *view, const void *buffer, size_t bytes,
                     int copy_in)
{
    if (host_view_open(view, buffer, bytes, copy_in) == 0)
        return 0;
    return comm_fail(comm, operation, staging_failure());
}

/* Closes a view, writing it back to its GPU buffer when copy_out; -1 with the reason when
 * that copy failed. */
static int close_view(Comm *comm, const char *operation, HostView *view, int copy_out)
{
    if (host_view_close(view, copy_out) == 0)
        return 0;
    return comm_fail(comm, operation, staging_failure());
}

#define MPI_CALL(comm, operation, call)                      \
    do {                                                     \
        int mpi_status_ = (call);                            \
        if (mpi_status_ != MPI_SUCCESS)                      \
            return fail((comm), (operation), mpi_status_);   \
    } while (0)

static void scale(float *buffer, size_t count, float factor)
{
    for (size_t i = 0; i < count; i++)
        buffer[i] *= factor;
}

static void scale_elements(void *buffer, size_t count, CommType type, float factor)
{
    if (type == COMM_FLOAT)
        scale(buffer, count, factor);
    else
        sum16_scale(comm_format16(type), buffer, count, factor);
}

/* MPI has no bf16 or fp16: their elements travel as 16-bit words, and sums go through an
 * operation of our own per format (sum16.h), which rounds each partial sum to the format,
 * as a 16-bit reduction on a GPU does. */
static MPI_Op sums_16[2] = {MPI_OP_NULL, MPI_OP_NULL}; /* by Format16, made when first used */

static MPI_Datatype mpi_type(CommType type)
{
    return type == COMM_FLOAT ? MPI_FLOAT : MPI_UINT16_T;
}

/* The sum for a type; MPI_OP_NULL (and the reason in comm's error) when MPI could not make
 * a 16-bit one. */
static MPI_Op sum_op(Comm *comm, const char *operation, CommType type)
{
    if (type == COMM_FLOAT)
        return MPI_SUM;
    Format16 format = comm_format16(type);
    if (sums_16[format] == MPI_OP_NULL) {
        int status = MPI_Op_create(format == FORMAT_FP16 ? sum16_mpi_fp16 : sum16_mpi_bf16, 1, &sums_16[format]);
        if (status != MPI_SUCCESS) {
            fail(comm, operation, status);
            return MPI_OP_NULL;
        }
    }
    return sums_16[format];
}

static int release_mpi(Comm *comm)
{
    (void)comm;
    for (int format = 0; format < 2; format++)
        if (sums_16[format] != MPI_OP_NULL)
            MPI_Op_free(&sums_16[format]);
    return 0;
}

static int mpi_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    double started = now_seconds();
    HostView view;
    if (check_count(comm, "all_reduce", count) != 0 ||
        open_view(comm, "all_reduce", &view, buffer, buffer_bytes(count, COMM_FLOAT), 1) != 0)
        return -1;
    int status = MPI_Allreduce(MPI_IN_PLACE, view.host, (int)count, MPI_FLOAT, MPI_SUM, comm->world);
    if (status == MPI_SUCCESS && op == REDUCE_AVG)
        scale(view.host, count, 1.0f / (float)comm->size);
    if (close_view(comm, "all_reduce", &view, status == MPI_SUCCESS) != 0)
        return -1;
    if (status != MPI_SUCCESS)
        return fail(comm, "all_reduce", status);
    return comm_account(comm, "all_reduce", started, 2 * buffer_bytes(count, COMM_FLOAT), 1);
}

/* A request in flight: the MPI handle and the host views it reads and fills. */
typedef struct {
    MPI_Request handle;
    HostView send, recv;
} Pending;

static Pending *new_pending(Comm *comm, const char *operation)
{
    Pending *pending = calloc(1, sizeof *pending);
    if (pending == NULL)
        comm_fail(comm, operation, "out of memory");
    return pending;
}

static void drop_pending(Pending *pending)
{
    host_view_close(&pending->send, 0);
    host_view_close(&pending->recv, 0);
    free(pending);
}

static int mpi_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request)
{
    double started = now_seconds();
    (void)op; /* the average is taken when the request finishes (request->average) */
    if (check_count(comm, "all_reduce_start", count) != 0)
        return -1;
    Pending *pending = new_pending(comm, "all_reduce_start");
    if (pending == NULL)
        return -1;
    if (open_view(comm, "all_reduce_start", &pending->recv, buffer, buffer_bytes(count, COMM_FLOAT), 1) != 0) {
        free(pending);
        return -1;
    }
    int status = MPI_Iallreduce(MPI_IN_PLACE, pending->recv.host, (int)count, MPI_FLOAT, MPI_SUM, comm->world,
                                &pending->handle);
    if (status != MPI_SUCCESS) {
        drop_pending(pending);
        return fail(comm, "all_reduce_start", status);
    }
    request->backend = pending;
    request->started_by = &mpi_ops;
    request->active = 1;
    return comm_account(comm, "all_reduce_start", started, 2 * buffer_bytes(count, COMM_FLOAT), 1);
}

/* A gather in place: this rank's block already sits at its place in recv, as NCCL allows;
 * MPI takes it from there when told so (MPI_IN_PLACE), and refuses the two overlapping. */
static int gathers_in_place(const Comm *comm, const void *send, const void *recv, size_t send_count, CommType type)
{
    return (const char *)send == (const char *)recv + (size_t)comm->rank * buffer_bytes(send_count, type);
}

static int mpi_all_gather_start(Comm *comm, const void *send, void *recv, size_t send_count, CommType type,
                                CommRequest *request)
{
    double started = now_seconds();
    if (check_count(comm, "all_gather_start", send_count) != 0)
        return -1;
    Pending *pending = new_pending(comm, "all_gather_start");
    if (pending == NULL)
        return -1;
    int in_place = gathers_in_place(comm, send, recv, send_count, type);
    if ((!in_place &&
         open_view(comm, "all_gather_start", &pending->send, send, buffer_bytes(send_count, type), 1) != 0) ||
        open_view(comm, "all_gather_start", &pending->recv, recv, buffer_bytes(send_count * comm->size, type),
                  in_place) != 0) {
        drop_pending(pending);
        return -1;
    }
    int status = MPI_Iallgather(in_place ? MPI_IN_PLACE : pending->send.host, (int)send_count, mpi_type(type),
                                pending->recv.host, (int)send_count, mpi_type(type), comm->world, &pending->handle);
    if (status != MPI_SUCCESS) {
        drop_pending(pending);
        return fail(comm, "all_gather_start", status);
    }
    request->backend = pending;
    request->started_by = &mpi_ops;
    request->active = 1;
    return comm_account(comm, "all_gather_start", started, buffer_bytes(send_count * comm->size, type), 1);
}

static int finish_request(CommRequest *request, const char *operation)
{
    Pending *pending = request->backend;
    if (request->average)
        scale(pending->recv.host, request->count, 1.0f / (float)request->comm->size);
    host_view_close(&pending->send, 0);
    int status = close_view(request->comm, operation, &pending->recv, 1);
    free(pending);
    request->backend = NULL;
    request->active = 0;
    return status;
}

static int mpi_wait(CommRequest *request)
{
    Pending *pending = request->backend;
    double started = now_seconds();
    MPI_CALL(request->comm, "wait", MPI_Wait(&pending->handle, MPI_STATUS_IGNORE));
    if (finish_request(request, "wait") != 0)
        return -1;
    return comm_account(request->comm, "wait", started, 0, 0);
}

static int mpi_test(CommRequest *request, int *done)
{
    Pending *pending = request->backend;
    double started = now_seconds();
    MPI_CALL(request->comm, "test", MPI_Test(&pending->handle, done, MPI_STATUS_IGNORE));
    if (*done && finish_request(request, "test") != 0)
        return -1;
    return comm_account(request->comm, "test", started, 0, 0);
}

static int mpi_reduce_scatter(Comm *comm, const void *send, void *recv, size_t recv_count, CommType type,
                              ReduceOp op)
{
    double started = now_seconds();
    HostView send_view, recv_view;
    MPI_Op sum = sum_op(comm, "reduce_scatter", type);
    if (sum == MPI_OP_NULL || check_count(comm, "reduce_scatter", recv_count) != 0 ||
        open_view(comm, "reduce_scatter", &send_view, send, buffer_bytes(recv_count * comm->size, type), 1) != 0)
        return -1;
    if (open_view(comm, "reduce_scatter", &recv_view, recv, buffer_bytes(recv_count, type), 0) != 0) {
        host_view_close(&send_view, 0);
        return -1;
    }
    int status = MPI_Reduce_scatter_block(send_view.host, recv_view.host, (int)recv_count, mpi_type(type), sum,
                                          comm->world);
    if (status == MPI_SUCCESS && op == REDUCE_AVG)
        scale_elements(recv_view.host, recv_count, type, 1.0f / (float)comm->size);
    host_view_close(&send_view, 0);
    if (close_view(comm, "reduce_scatter", &recv_view, status == MPI_SUCCESS) != 0)
        return -1;
    if (status != MPI_SUCCESS)
        return fail(comm, "reduce_scatter", status);
    return comm_account(comm, "reduce_scatter", started, buffer_bytes(recv_count * comm->size, type), 1);
}

static int mpi_all_gather(Comm *comm, const void *send, void *recv, size_t send_count, CommType type)
{
    double started = now_seconds();
    HostView send_view = {0}, recv_view;
    int in_place = gathers_in_place(comm, send, recv, send_count, type);
    if (check_count(comm, "all_gather", send_count) != 0 ||
        (!in_place && open_view(comm, "all_gather", &send_view, send, buffer_bytes(send_count, type), 1) != 0))
        return -1;
    if (open_view(comm, "all_gather", &recv_view, recv, buffer_bytes(send_count * comm->size, type), in_place) != 0) {
        host_view_close(&send_view, 0);
        return -1;
    }
    int status = MPI_Allgather(in_place ? MPI_IN_PLACE : send_view.host, (int)send_count, mpi_type(type),
                               recv_view.host, (int)send_count, mpi_type(type), comm->world);
    host_view_close(&send_view, 0);
    if (close_view(comm, "all_gather", &recv_view, status == MPI_SUCCESS) != 0)
        return -1;
    if (status != MPI_SUCCESS)
        return fail(comm, "all_gather", status);
    return comm_account(comm, "all_gather", started, buffer_bytes(send_count * comm->size, type), 1);
}

static int mpi_broadcast(Comm *comm, float *buffer, size_t count, int root)
{
    double started = now_seconds();
    HostView view;
    if (check_count(comm, "broadcast", count) != 0 ||
        open_view(comm, "broadcast", &view, buffer, buffer_bytes(count, COMM_FLOAT), comm->rank == root) != 0)
        return -1;
    int status = MPI_Bcast(view.host, (int)count, MPI_FLOAT, root, comm->world);
    if (close_view(comm, "broadcast", &view, status == MPI_SUCCESS && comm->rank != root) != 0)
        return -1;
    if (status != MPI_SUCCESS)
        return fail(comm, "broadcast", status);
    return comm_account(comm, "broadcast", started, buffer_bytes(count, COMM_FLOAT), 1);
}

/* On the MPI world whatever the backend: it moves no data, so no backend has anything to
 * add (a device's queued work is the caller's to synchronise first). */
int comm_barrier(Comm *comm)
{
    double started = now_seconds();
    comm_begin_wait(comm, "barrier", 1);
    int status = MPI_Barrier(comm->world);
    comm_end_wait(comm);
    MPI_CALL(comm, "barrier", status);
    status = comm_account(comm, "barrier", started, 0, 0);
    comm_record_call(comm, "barrier", CALL_BLOCKING, 0, 0, NULL, NULL, -1, -1);
    return status;
}

enum { POINT_TO_POINT_TAG = 7 };

/* Point to point stays on MPI and on host memory whatever the backend (the ring exercise
 * runs on host buffers): a GPU buffer is refused, not handed to an MPI that cannot read it. */
static int check_host_buffer(Comm *comm, const char *operation, const float *buffer)
{
    if (!is_gpu_buffer(buffer))
        return 0;
    return comm_fail(comm, operation, "a GPU buffer: send and recv move host memory only (over MPI)");
}

int comm_send(Comm *comm, const float *buffer, size_t count, int peer)
{
    if (check_count(comm, "send", count) != 0 || check_host_buffer(comm, "send", buffer) != 0)
        return -1;
    double started = now_seconds();
    comm_begin_wait(comm, "send", 1); /* a send nobody receives ends at --wait-timeout */
    int sent = MPI_Send(buffer, (int)count, MPI_FLOAT, peer, POINT_TO_POINT_TAG, comm->world);
    comm_end_wait(comm);
    MPI_CALL(comm, "send", sent);
    int status = comm_account(comm, "send", started, 0, 0);
    comm_record_point_to_point(comm, "send", count, peer, 0, -1, buffer);
    return status;
}

int comm_recv(Comm *comm, float *buffer, size_t count, int peer)
{
    if (check_count(comm, "recv", count) != 0 || check_host_buffer(comm, "recv", buffer) != 0)
        return -1;
    double started = now_seconds();
    comm_begin_wait(comm, "recv", 1); /* as a send */
    int received = MPI_Recv(buffer, (int)count, MPI_FLOAT, peer, POINT_TO_POINT_TAG, comm->world, MPI_STATUS_IGNORE);
    comm_end_wait(comm);
    MPI_CALL(comm, "recv", received);
    int status = comm_account(comm, "recv", started, 0, 0);
    comm_record_point_to_point(comm, "recv", 0, -1, count, peer, buffer);
    return status;
}

static int mpi_sendrecv(Comm *comm, const float *send, size_t send_count, int to, float *recv, size_t recv_count,
                        int from)
{
    double started = now_seconds();
    HostView send_view, recv_view;
    if (check_count(comm, "sendrecv", send_count) != 0 || check_count(comm, "sendrecv", recv_count) != 0 ||
        open_view(comm, "sendrecv", &send_view, send, buffer_bytes(send_count, COMM_FLOAT), 1) != 0)
        return -1;
    if (open_view(comm, "sendrecv", &recv_view, recv, buffer_bytes(recv_count, COMM_FLOAT), 0) != 0) {
        host_view_close(&send_view, 0);
        return -1;
    }
    int status = MPI_Sendrecv(send_view.host, (int)send_count, MPI_FLOAT, to, POINT_TO_POINT_TAG, recv_view.host,
                              (int)recv_count, MPI_FLOAT, from, POINT_TO_POINT_TAG, comm->world, MPI_STATUS_IGNORE);
    host_view_close(&send_view, 0);
    if (close_view(comm, "sendrecv", &recv_view, status == MPI_SUCCESS) != 0)
        return -1;
    if (status != MPI_SUCCESS)
        return fail(comm, "sendrecv", status);
    return comm_account(comm, "sendrecv", started, 0, 0);
}

const CommOps mpi_ops = {
    .name = "mpi",
    .all_reduce = mpi_all_reduce,
    .all_reduce_start = mpi_all_reduce_start,
    .all_gather_start = mpi_all_gather_start,
    .wait = mpi_wait,
    .test = mpi_test,
    .reduce_scatter = mpi_reduce_scatter,
    .all_gather = mpi_all_gather,
    .broadcast = mpi_broadcast,
    .sendrecv = mpi_sendrecv,
    .release = release_mpi,
};
