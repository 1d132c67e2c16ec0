/* The NCCL backend: collectives on GPU buffers run on a communication stream of their own,
 * beside the compute stream. Nothing here blocks the host. A collective first makes its
 * stream wait for the compute queued so far (it reads what compute wrote); a request is an
 * event recorded on the communication stream after the collective, and waiting on it
 * makes the compute stream wait for that event. So compute that does not need the result
 * (the rest of backward, in the overlap and bucketing lessons) runs while NCCL moves data.
 *
 * Host buffers (the trainer's hashes, lesson 01 on host memory) still go through MPI. */
#include "comm_nccl.h"

#include <cuda_runtime_api.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_board.h"
#include "cuda_device.h"
#include "staging.h"
#include "timer.h"

static const CommOps nccl_ops;

typedef struct {
    ncclComm_t nccl;
    cudaStream_t stream;      /* collectives run here */
    cudaEvent_t compute_mark; /* the compute queued so far, which a collective reads */
    cudaEvent_t comm_mark;    /* a blocking collective's end, which compute waits for */
} NcclState;

static NcclState *state_of(Comm *comm)
{
    return comm->backend_state;
}

static int nccl_failed(Comm *comm, const char *operation, ncclResult_t result)
{
    char reason[256];
    snprintf(reason, sizeof reason, "NCCL: %s", ncclGetErrorString(result));
    return comm_fail(comm, operation, reason);
}

static int cuda_failed(Comm *comm, const char *operation, cudaError_t status)
{
    char reason[256];
    snprintf(reason, sizeof reason, "CUDA: %s", cudaGetErrorString(status));
    return comm_fail(comm, operation, reason);
}

#define NCCL_CALL(comm, operation, call)                                   \
    do {                                                                   \
        ncclResult_t result_ = (call);                                     \
        if (result_ != ncclSuccess)                                        \
            return nccl_failed((comm), (operation), result_);              \
    } while (0)

#define CUDA_CALL(comm, operation, call)                                   \
    do {                                                                   \
        cudaError_t status_ = (call);                                      \
        if (status_ != cudaSuccess)                                        \
            return cuda_failed((comm), (operation), status_);              \
    } while (0)

/* The collective's stream waits for the compute queued so far; begin marks, on that stream,
 * where the collective starts (the trace's communication track is timed there). */
static int after_compute(Comm *comm, const char *operation, TraceMark *begin)
{
    NcclState *state = state_of(comm);
    CUDA_CALL(comm, operation, cudaEventRecord(state->compute_mark, cuda_compute_stream()));
    CUDA_CALL(comm, operation, cudaStreamWaitEvent(state->stream, state->compute_mark, 0));
    *begin = events_now_on(state->stream);
    return 0;
}

/* Where the collective just queued ends on its stream. Marked before the event that
 * others wait for, so that whatever waits for the collective waits for the mark too. */
static TraceMark collective_end(Comm *comm)
{
    return events_now_on(state_of(comm)->stream);
}

/* A collective is queued: its slice runs from begin to end on its stream (comm_record_call
 * records it with the call), and the call is counted. */
static int queued(Comm *comm, const char *operation, TraceMark begin, TraceMark end, double started, double bytes,
                  int collectives)
{
    comm->span = (CallSpan){operation, TRACK_COMM, begin, end};
    return comm_count(comm, started, bytes, collectives);
}

/* The end of a blocking call: compute queued from now on waits for the collectives queued
 * so far, and the call is counted. */
static int compute_waits(Comm *comm, const char *operation, TraceMark begin, double started, double bytes,
                         int collectives)
{
    NcclState *state = state_of(comm);
    TraceMark end = collective_end(comm);
    CUDA_CALL(comm, operation, cudaEventRecord(state->comm_mark, state->stream));
    CUDA_CALL(comm, operation, cudaStreamWaitEvent(cuda_compute_stream(), state->comm_mark, 0));
    return queued(comm, operation, begin, end, started, bytes, collectives);
}

static int on_gpu(const void *a, const void *b)
{
    return is_gpu_buffer(a) && (b == NULL || is_gpu_buffer(b));
}

static ncclDataType_t nccl_type(CommType type)
{
    return type == COMM_BF16 ? ncclBfloat16 : type == COMM_FP16 ? ncclFloat16 : ncclFloat;
}

/* Over one rank an average is the sum: and NCCL before 2.29.7 leaves the last elements of a
 * one-rank ncclAvg unwritten (its issue 1950; seen here as lesson 07's gradient norm NaN and
 * lessons 08 and 09's gradients wrong at 1 rank on an H200), so one rank always sums. */
static ncclRedOp_t nccl_op(const Comm *comm, ReduceOp op)
{
    return op == REDUCE_AVG && comm->size > 1 ? ncclAvg : ncclSum;
}

static int nccl_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    if (!on_gpu(buffer, NULL))
        return mpi_ops.all_reduce(comm, buffer, count, op);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "all_reduce", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "all_reduce", ncclAllReduce(buffer, buffer, count, ncclFloat, nccl_op(comm, op),
                                                state_of(comm)->nccl, state_of(comm)->stream));
    return compute_waits(comm, "all_reduce", begin, started, 2 * buffer_bytes(count, COMM_FLOAT), 1);
}

/* A request's backend handle: the event that marks its collective's end. */
static int start_request(Comm *comm, const char *operation, CommRequest *request)
{
    cudaEvent_t *done = malloc(sizeof *done);
    if (done == NULL)
        return comm_fail(comm, operation, "out of memory");
    cudaError_t status = cudaEventCreateWithFlags(done, cudaEventDisableTiming);
    if (status == cudaSuccess)
        status = cudaEventRecord(*done, state_of(comm)->stream);
    if (status != cudaSuccess) {
        free(done);
        return cuda_failed(comm, operation, status);
    }
    request->backend = done;
    request->started_by = &nccl_ops;
    request->active = 1;
    return 0;
}

static int nccl_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request)
{
    if (!on_gpu(buffer, NULL))
        return mpi_ops.all_reduce_start(comm, buffer, count, op, request);
    request->average = 0; /* ncclAvg averages on the GPU; nothing is left for the finish */
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "all_reduce_start", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "all_reduce_start", ncclAllReduce(buffer, buffer, count, ncclFloat, nccl_op(comm, op),
                                                      state_of(comm)->nccl, state_of(comm)->stream));
    TraceMark end = collective_end(comm);
    if (start_request(comm, "all_reduce_start", request) != 0)
        return -1;
    return queued(comm, "all_reduce_start", begin, end, started, 2 * buffer_bytes(count, COMM_FLOAT), 1);
}

static int nccl_all_gather_start(Comm *comm, const void *send, void *recv, size_t send_count, CommType type,
                                 CommRequest *request)
{
    if (!on_gpu(send, recv))
        return mpi_ops.all_gather_start(comm, send, recv, send_count, type, request);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "all_gather_start", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "all_gather_start", ncclAllGather(send, recv, send_count, nccl_type(type), state_of(comm)->nccl,
                                                      state_of(comm)->stream));
    TraceMark end = collective_end(comm);
    if (start_request(comm, "all_gather_start", request) != 0)
        return -1;
    return queued(comm, "all_gather_start", begin, end, started, buffer_bytes(send_count * comm->size, type), 1);
}

/* Requests MPI started (host buffers) carry MPI's handle, not an event. */
static int is_mpi_request(const CommRequest *request)
{
    return request->started_by == &mpi_ops;
}

static int check_async_error(Comm *comm, const char *operation)
{
    ncclResult_t async_result = ncclSuccess;
    NCCL_CALL(comm, operation, ncclCommGetAsyncError(state_of(comm)->nccl, &async_result));
    if (async_result != ncclSuccess)
        return nccl_failed(comm, operation, async_result);
    return 0;
}

static int finish_request(CommRequest *request, const char *operation)
{
    Comm *comm = request->comm;
    cudaEvent_t *done = request->backend;
    cudaError_t status = cudaStreamWaitEvent(cuda_compute_stream(), *done, 0);
    cudaEventDestroy(*done); /* released by CUDA once the event completes */
    free(done);
    request->backend = NULL;
    request->active = 0;
    if (status != cudaSuccess)
        return cuda_failed(comm, operation, status);
    return check_async_error(comm, operation);
}

static int nccl_wait(CommRequest *request)
{
    if (is_mpi_request(request))
        return mpi_ops.wait(request);
    double started = now_seconds();
    if (finish_request(request, "wait") != 0)
        return -1;
    return comm_count(request->comm, started, 0, 0); /* the GPU's wait shows as compute idle */
}

static int nccl_test(CommRequest *request, int *done)
{
    if (is_mpi_request(request))
        return mpi_ops.test(request, done);
    double started = now_seconds();
    cudaError_t status = cudaEventQuery(*(cudaEvent_t *)request->backend);
    if (status != cudaSuccess && status != cudaErrorNotReady)
        return cuda_failed(request->comm, "test", status);
    *done = status == cudaSuccess;
    if (*done && finish_request(request, "test") != 0)
        return -1;
    return comm_count(request->comm, started, 0, 0);
}

static int nccl_reduce_scatter(Comm *comm, const void *send, void *recv, size_t recv_count, CommType type,
                               ReduceOp op)
{
    if (!on_gpu(send, recv))
        return mpi_ops.reduce_scatter(comm, send, recv, recv_count, type, op);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "reduce_scatter", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "reduce_scatter", ncclReduceScatter(send, recv, recv_count, nccl_type(type), nccl_op(comm, op),
                                                        state_of(comm)->nccl, state_of(comm)->stream));
    return compute_waits(comm, "reduce_scatter", begin, started, buffer_bytes(recv_count * comm->size, type), 1);
}

static int nccl_all_gather(Comm *comm, const void *send, void *recv, size_t send_count, CommType type)
{
    if (!on_gpu(send, recv))
        return mpi_ops.all_gather(comm, send, recv, send_count, type);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "all_gather", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "all_gather", ncclAllGather(send, recv, send_count, nccl_type(type), state_of(comm)->nccl,
                                                state_of(comm)->stream));
    return compute_waits(comm, "all_gather", begin, started, buffer_bytes(send_count * comm->size, type), 1);
}

static int nccl_broadcast(Comm *comm, float *buffer, size_t count, int root)
{
    if (!on_gpu(buffer, NULL))
        return mpi_ops.broadcast(comm, buffer, count, root);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "broadcast", &begin) != 0)
        return -1;
    NCCL_CALL(comm, "broadcast", ncclBroadcast(buffer, buffer, count, ncclFloat, root, state_of(comm)->nccl,
                                               state_of(comm)->stream));
    return compute_waits(comm, "broadcast", begin, started, buffer_bytes(count, COMM_FLOAT), 1);
}

static int nccl_sendrecv(Comm *comm, const float *send, size_t send_count, int to, float *recv, size_t recv_count,
                         int from)
{
    if (!on_gpu(send, recv))
        return mpi_ops.sendrecv(comm, send, send_count, to, recv, recv_count, from);
    NcclState *state = state_of(comm);
    double started = now_seconds();
    TraceMark begin;
    if (after_compute(comm, "sendrecv", &begin) != 0)
        return -1;
    /* one group: NCCL posts both halves together, so a ring of these cannot deadlock */
    NCCL_CALL(comm, "sendrecv", ncclGroupStart());
    ncclResult_t posted = ncclSend(send, send_count, ncclFloat, to, state->nccl, state->stream);
    if (posted == ncclSuccess)
        posted = ncclRecv(recv, recv_count, ncclFloat, from, state->nccl, state->stream);
    ncclResult_t ended = ncclGroupEnd(); /* the group closed whatever failed inside it */
    NCCL_CALL(comm, "sendrecv", posted);
    NCCL_CALL(comm, "sendrecv", ended);
    return compute_waits(comm, "sendrecv", begin, started, 0, 0);
}

static int nccl_release(Comm *comm)
{
    mpi_ops.release(comm); /* host buffers went through MPI, which may hold an operation */
    NcclState *state = state_of(comm);
    if (state == NULL)
        return 0;
    /* The stream's last work and NCCL's own end can report an error that no wait has seen:
     * a collective that failed on the GPU. It is the run's failure too, so it is said. */
    cudaError_t synced = cudaStreamSynchronize(state->stream);
    ncclResult_t destroyed = ncclCommDestroy(state->nccl);
    cudaEventDestroy(state->compute_mark);
    cudaEventDestroy(state->comm_mark);
    cudaStreamDestroy(state->stream);
    free(state);
    comm->backend_state = NULL;
    comm->ops = &mpi_ops;
    if (synced != cudaSuccess)
        return cuda_failed(comm, "the NCCL stream's last work", synced);
    return destroyed != ncclSuccess ? nccl_failed(comm, "ncclCommDestroy", destroyed) : 0;
}

static const CommOps nccl_ops = {
    .name = "nccl",
    .all_reduce = nccl_all_reduce,
    .all_reduce_start = nccl_all_reduce_start,
    .all_gather_start = nccl_all_gather_start,
    .wait = nccl_wait,
    .test = nccl_test,
    .reduce_scatter = nccl_reduce_scatter,
    .all_gather = nccl_all_gather,
    .broadcast = nccl_broadcast,
    .sendrecv = nccl_sendrecv,
    .release = nccl_release,
};

enum { BUS_ID_LEN = 32 };

/* Another local rank whose GPU has the same bus id as mine, or -1 (ids: one per local rank). */
static int local_rank_sharing(const char (*ids)[BUS_ID_LEN], int local_ranks, int mine)
{
    for (int other = 0; other < local_ranks; other++)
        if (other != mine && strcmp(ids[other], ids[mine]) == 0)
            return other;
    return -1;
}

/* Ranks are told apart by their GPUs' PCI bus ids, not by counting GPUs: a launcher that
 * sets CUDA_VISIBLE_DEVICES per rank shows each rank one GPU, its own. */
int every_rank_has_own_gpu(Comm *comm, char *why, size_t why_len)
{
    int local_ranks = 0;
    MPI_Comm_size(comm->node, &local_ranks);
    char(*ids)[BUS_ID_LEN] = calloc((size_t)local_ranks, sizeof *ids);
    if (!comm_all_ok(comm, ids == NULL, "the GPU check", why, why_len)) {
        if (ids == NULL)
            snprintf(why, why_len, "out of memory on rank %d", comm->rank);
        free(ids);
        return 0;
    }
    char mine[BUS_ID_LEN] = "";
    int unknown = cuda_device_bus_id(mine, sizeof mine) != 0;
    MPI_Allgather(mine, BUS_ID_LEN, MPI_CHAR, ids, BUS_ID_LEN, MPI_CHAR, comm->node);
    int other = unknown ? -1 : local_rank_sharing((const char(*)[BUS_ID_LEN])ids, local_ranks, comm->local_rank);
    free(ids);
    if (unknown)
        snprintf(why, why_len, "rank %d cannot read its GPU's PCI bus id", comm->rank);
    else if (other >= 0)
        snprintf(why, why_len, "local rank %d uses GPU %s, as local rank %d does", comm->local_rank, mine, other);
    return comm_all_ok(comm, unknown || other >= 0, "the GPU check", why, why_len);
}

static int create_streams(NcclState *state, Comm *comm, char *err, size_t err_len)
{
    cudaError_t status = cudaStreamCreateWithFlags(&state->stream, cudaStreamNonBlocking);
    if (status == cudaSuccess)
        status = cudaEventCreateWithFlags(&state->compute_mark, cudaEventDisableTiming);
    if (status == cudaSuccess)
        status = cudaEventCreateWithFlags(&state->comm_mark, cudaEventDisableTiming);
    if (status == cudaSuccess)
        return 0;
    snprintf(err, err_len, "NCCL setup on rank %d: CUDA: %s", comm->rank, cudaGetErrorString(status));
    return -1;
}

static int join_nccl(NcclState *state, const ncclUniqueId *id, Comm *comm, char *err, size_t err_len)
{
    /* it waits for every rank to join: a peer that never does ends the run at --wait-timeout */
    comm_begin_wait(comm, "ncclCommInitRank", 1);
    ncclResult_t result = ncclCommInitRank(&state->nccl, comm->size, *id, comm->rank);
    comm_end_wait(comm);
    if (result == ncclSuccess)
        return 0;
    const char *detail = ncclGetLastError(NULL); /* NCCL's own account, when it kept one */
    snprintf(err, err_len, "ncclCommInitRank on rank %d: %s%s%s", comm->rank, ncclGetErrorString(result),
             detail != NULL && detail[0] != '\0' ? ": " : "", detail != NULL ? detail : "");
    return -1;
}

int comm_use_nccl(Comm *comm, char *err, size_t err_len)
{
    /* NCCL would refuse two ranks on one GPU only inside its collective init */
    char why[192];
    if (!every_rank_has_own_gpu(comm, why, sizeof why)) {
        snprintf(err, err_len,
                 "--comm nccl needs one GPU per rank: %s; start fewer ranks, give each rank its own GPU, "
                 "or use --comm mpi",
                 why);
        return -1;
    }
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed = comm->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess;
    if (failed)
        snprintf(err, err_len, "ncclGetUniqueId failed on rank 0");
    if (!comm_all_ok(comm, failed, "ncclGetUniqueId", err, err_len))
        return -1;
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, comm->world);
    NcclState *state = calloc(1, sizeof *state);
    if (state == NULL)
        snprintf(err, err_len, "NCCL setup on rank %d: out of memory", comm->rank);
    /* every rank must reach ncclCommInitRank, which waits for all of them, or none may */
    failed = state == NULL || create_streams(state, comm, err, err_len) != 0;
    if (!comm_all_ok(comm, failed, "NCCL setup", err, err_len) ||
        !comm_all_ok(comm, join_nccl(state, &id, comm, err, err_len) != 0, "ncclCommInitRank", err, err_len)) {
        free(state); /* a half-made state leaks its stream: the run ends here anyway */
        return -1;
    }
    comm->backend_state = state;
    comm->ops = &nccl_ops;
    return 0;
}

/* NCCL 2.9 changed the encoding: major*10000 + minor*100 + patch, before major*1000 + ... */
void nccl_version_text(int code, char *out, size_t len)
{
    if (code >= 10000)
        snprintf(out, len, "%d.%d.%d", code / 10000, (code / 100) % 100, code % 100);
    else
        snprintf(out, len, "%d.%d.%d", code / 1000, (code / 100) % 10, code % 100);
}
