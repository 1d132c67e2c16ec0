/* The communicator: what every backend shares (the MPI world underneath, the statistics,
 * the errors) and the entry points of comm.h, which hand the data-moving calls to the
 * backend's table. MPI is the backend until comm_use_nccl (CUDA builds) swaps in NCCL. */
#include "comm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_log.h"
#include "timer.h"
#include "trace.h"

int comm_fail(Comm *comm, const char *operation, const char *reason)
{
    snprintf(comm->error, sizeof comm->error, "%s failed on rank %d of %d: %s", operation, comm->rank,
             comm->size, reason);
    return -1;
}

int comm_account(Comm *comm, const char *operation, double started, double bytes, int collectives)
{
    double ended = now_seconds();
    int is_wait = strcmp(operation, "wait") == 0 || strcmp(operation, "test") == 0;
    trace_record(is_wait ? TRACK_WAIT : TRACK_COMM, operation, -1, started, ended);
    comm->stats.seconds += ended - started;
    comm->stats.bytes += bytes;
    comm->stats.calls += collectives;
    return 0;
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
    comm->ops = &mpi_ops;
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
    if (comm->ops->release != NULL)
        comm->ops->release(comm);
    MPI_Comm_free(&comm->node);
    if (comm->we_initialised_mpi)
        MPI_Finalize();
    free(comm);
}

int comm_rank(const Comm *comm) { return comm->rank; }
int comm_size(const Comm *comm) { return comm->size; }
int comm_local_rank(const Comm *comm) { return comm->local_rank; }
const char *comm_backend_name(const Comm *comm) { return comm->ops->name; }
const char *comm_error(const Comm *comm) { return comm->error; }

void comm_check(Comm *comm, int status)
{
    if (status == 0)
        return;
    fprintf(stderr, "%s\n", comm->error);
    fflush(stderr);
    MPI_Abort(comm->world, 1); /* ends every rank: none waits forever on this one */
}

/* A request still in flight would lose its result if restarted. */
static int refuse_active(Comm *comm, const char *operation, const CommRequest *request)
{
    if (!request->active)
        return 0;
    snprintf(comm->error, sizeof comm->error,
             "%s on rank %d: this request is still in flight; wait for it before reusing it", operation, comm->rank);
    return -1;
}

int comm_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    int status = comm->ops->all_reduce(comm, buffer, count, op);
    comm_log_call("all_reduce", LOG_BLOCKING, count, count, buffer, -1, -1);
    return status;
}

/* A started request gets its name in the log. */
static int log_start(const char *op, CommRequest *request, size_t send_count, size_t recv_count, int status)
{
    request->log_id = comm_log_new_request();
    request->op = op;
    comm_log_call(op, LOG_START, send_count, recv_count, request->buffer, request->log_id, -1);
    return status;
}

int comm_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request)
{
    if (refuse_active(comm, "all_reduce_start", request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = buffer, .count = count, .average = op == REDUCE_AVG};
    return log_start("all_reduce", request, count, count, comm->ops->all_reduce_start(comm, buffer, count, op, request));
}

int comm_all_gather_start(Comm *comm, const float *send, float *recv, size_t send_count, CommRequest *request)
{
    if (refuse_active(comm, "all_gather_start", request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = recv, .count = send_count * comm->size};
    return log_start("all_gather", request, send_count, request->count,
                     comm->ops->all_gather_start(comm, send, recv, send_count, request));
}

int comm_wait(CommRequest *request)
{
    if (!request->active)
        return 0;
    int status = request->comm->ops->wait(request);
    comm_log_call(request->op, LOG_WAIT, 0, 0, request->buffer, request->log_id, 1);
    return status;
}

int comm_test(CommRequest *request, int *done)
{
    *done = !request->active;
    if (*done)
        return 0;
    int status = request->comm->ops->test(request, done);
    comm_log_call(request->op, LOG_TEST, 0, 0, request->buffer, request->log_id, *done);
    return status;
}

int comm_reduce_scatter(Comm *comm, const float *send, float *recv, size_t recv_count, ReduceOp op)
{
    int status = comm->ops->reduce_scatter(comm, send, recv, recv_count, op);
    comm_log_call("reduce_scatter", LOG_BLOCKING, recv_count * comm->size, recv_count, recv, -1, -1);
    return status;
}

int comm_all_gather(Comm *comm, const float *send, float *recv, size_t send_count)
{
    int status = comm->ops->all_gather(comm, send, recv, send_count);
    comm_log_call("all_gather", LOG_BLOCKING, send_count, send_count * comm->size, recv, -1, -1);
    return status;
}

int comm_broadcast(Comm *comm, float *buffer, size_t count, int root)
{
    int status = comm->ops->broadcast(comm, buffer, count, root);
    comm_log_call("broadcast", LOG_BLOCKING, count, count, buffer, -1, -1);
    return status;
}

int comm_sendrecv(Comm *comm, const float *send, size_t send_count, int to,
                  float *recv, size_t recv_count, int from)
{
    int status = comm->ops->sendrecv(comm, send, send_count, to, recv, recv_count, from);
    comm_log_call("sendrecv", LOG_BLOCKING, send_count, recv_count, recv, -1, -1);
    return status;
}

/* Bookkeeping stays on MPI whatever the backend: these are host doubles. */
static int mpi_all_reduce_double(Comm *comm, const char *operation, double *value, MPI_Op op)
{
    int status = MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, op, comm->world);
    if (status == MPI_SUCCESS)
        return 0;
    char reason[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, reason, &length);
    return comm_fail(comm, operation, reason);
}

int comm_max_double(Comm *comm, double *value)
{
    int status = mpi_all_reduce_double(comm, "max", value, MPI_MAX);
    comm_log_call("max_double", LOG_BLOCKING, 1, 1, NULL, -1, -1);
    return status;
}

int comm_sum_double(Comm *comm, double *value)
{
    int status = mpi_all_reduce_double(comm, "sum", value, MPI_SUM);
    comm_log_call("sum_double", LOG_BLOCKING, 1, 1, NULL, -1, -1);
    return status;
}

int comm_all_ok(Comm *comm, int failed, const char *step, char *err, size_t err_len)
{
    double failures = failed != 0;
    if (comm_sum_double(comm, &failures) != 0) {
        snprintf(err, err_len, "%s", comm_error(comm));
        return 0;
    }
    if (failures > 0 && !failed)
        snprintf(err, err_len, "%s failed on another rank", step);
    return failures == 0;
}
