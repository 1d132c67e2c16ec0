/* The communicator: the MPI world underneath every backend, and the entry points of comm.h,
 * which log each call and hand the data-moving ones to the backend's table. MPI is the
 * backend until comm_use_nccl (CUDA builds) swaps in NCCL. What the backends share with it
 * (the board of ranks, the statistics, the failures) is comm_board.c, below both. */
#include "comm_board.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "rank_supervisor.h"
#include "timer.h"
#include "signal_safe.h"
#include "watchdog.h"

/* The tasks a launcher asked for, from its environment (0 when none says), the variable that
 * says so in *named, and whether this task is the launcher's first. */
static long tasks_asked(const char **named, int *first)
{
    static const char *const sizes[][2] = {{"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"},
                                           {"PMI_SIZE", "PMI_RANK"},
                                           {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        const char *size = getenv(sizes[i][0]), *index = getenv(sizes[i][1]);
        if (size != NULL && atol(size) > 0) {
            *named = sizes[i][0];
            *first = index == NULL || atol(index) == 0;
            return atol(size);
        }
    }
    return 0;
}

/* A launcher that started several tasks which MPI sees one by one (srun without a PMI that
 * this MPI speaks, or another MPI's mpirun) would have each train alone, and all write the
 * same files: -1, with how to launch in err on the first task (and "" on the others, so
 * that it is said once). */
static int refuse_lone_tasks(const Comm *comm, char *err, size_t err_len)
{
    const char *named = NULL;
    int first = 0;
    long asked = tasks_asked(&named, &first);
    if (comm->size != 1 || asked < 2)
        return 0;
    snprintf(err, err_len, "%s", "");
    if (first)
        snprintf(err, err_len, "the launcher started %ld tasks (%s=%ld), but MPI started each alone: each would run "
                 "by itself and write the same files; launch with this MPI's mpiexec -n %ld, or under Slurm with "
                 "srun --mpi=pmi2 (srun --mpi=list shows what yours offers), or salloc then mpiexec",
                 asked, named, asked, asked);
    return -1;
}

Comm *comm_init(int *argc, char ***argv, char *err, size_t err_len)
{
    Comm *comm = calloc(1, sizeof *comm);
    if (comm == NULL) {
        snprintf(err, err_len, "out of memory starting the communicator");
        return NULL;
    }
    comm->ops = &mpi_ops;
    comm->supervised = rank_supervise(); /* before MPI starts: the parent never gets here */
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
    if (comm->we_initialised_mpi && refuse_lone_tasks(comm, err, err_len) != 0) {
        MPI_Finalize();
        free(comm);
        return NULL;
    }
    MPI_Comm_split_type(comm->world, MPI_COMM_TYPE_SHARED, comm->rank, MPI_INFO_NULL, &comm->node);
    MPI_Comm_rank(comm->node, &comm->local_rank);
    int first_on_host = comm->local_rank == 0;
    MPI_Allreduce(&first_on_host, &comm->hosts, 1, MPI_INT, MPI_SUM, comm->world);
    comm_board_join(comm);
    return comm;
}

int comm_init_failed(const char *program, const char *err)
{
    if (err[0] != '\0')
        fprintf(stderr, "%s: %s\n", program, err);
    return 2;
}

/* MPI_Finalize's deadline's report: the run is over, but MPI's clean-up is stuck. */
static int report_finalize(int fd, const void *context)
{
    const Comm *comm = context;
    char line[320];
    safe_format(line, sizeof line, "rank %d: MPI_Finalize has not returned after %s s (--wait-timeout): MPI's "
                "clean-up is stuck after the run (MPICH 4.0 over UCX's TCP can hang here when ranks share a "
                "host); ending\n", comm->rank, comm->wait_timeout_text);
    safe_write(fd, line);
    return 1;
}

/* MPI_Finalize, bounded by the wait deadline. Between hosts, MPICH 4.0 over UCX's TCP can
 * hang in it (a rank that has closed its connections waits in a barrier while a peer still
 * waits for it to answer), so ranks that are each alone on their host, having met in the
 * barrier at exit with all their traffic done, end without it: the launcher takes that as a
 * normal end. Ranks that share a host must finalize, or the launcher ends the ones still
 * exiting. */
static void finalize_mpi(Comm *comm)
{
    fflush(NULL); /* whatever happens next, the output is out */
    if (comm->hosts > 1 && comm->hosts == comm->size)
        return;
    if (comm->size > 1 && comm->wait_timeout > 0)
        watchdog_arm(DEADLINE_WAIT, comm->wait_timeout, report_finalize, comm);
    MPI_Finalize();
    watchdog_disarm(DEADLINE_WAIT);
}

int comm_finalize(Comm *comm)
{
    if (comm == NULL)
        return 0;
    if (comm->size > 1) { /* every rank's traffic done before any starts MPI's clean-up */
        comm_begin_wait(comm, "barrier at exit", 0);
        MPI_Barrier(comm->world);
        comm_end_wait(comm);
    }
    comm_board_leave(comm);
    int status = comm->ops->release != NULL ? comm->ops->release(comm) : 0;
    if (status != 0) {
        fprintf(stderr, "%s\n", comm->error);
        fflush(stderr);
    }
    MPI_Comm_free(&comm->node);
    if (comm->we_initialised_mpi)
        finalize_mpi(comm);
    free(comm);
    return status;
}

int comm_rank(const Comm *comm) { return comm->rank; }
int comm_size(const Comm *comm) { return comm->size; }
int comm_local_rank(const Comm *comm) { return comm->local_rank; }
int comm_local_size(const Comm *comm) { return comm->node_size; }
const char *comm_backend_name(const Comm *comm) { return comm->ops->name; }
const char *comm_error(const Comm *comm) { return comm->error; }

void comm_check(Comm *comm, int status)
{
    if (status == 0)
        return;
    if (comm->size > 1 && comm_board_peer_ends(comm))
        comm_board_report_ended_rank(comm); /* the call failed because a rank had ended: that is the news */
    fprintf(stderr, "%s\n", comm->error);
    fflush(stderr);
    /* mpiexec forwards a rank's output through a pipe, and tearing the job down on MPI_Abort
     * can drop what is still in it: the line above first gets a moment to pass */
    nanosleep(&(struct timespec){.tv_nsec = 200 * 1000 * 1000}, NULL);
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

/* A blocking call's wait is over when it returns; then it goes in the log, with the buffer
 * its result lands in and the one it sends from. */
static int end_blocking(Comm *comm, const char *op, size_t send_count, size_t recv_count, const void *buffer,
                        const void *source, int status)
{
    comm_end_wait(comm);
    comm_record_call(comm, op, CALL_BLOCKING, send_count, recv_count, buffer, source, -1, -1);
    return status;
}

int comm_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    comm_begin_wait(comm, "all_reduce", 1);
    return end_blocking(comm, "all_reduce", count, count, buffer, buffer,
                        comm->ops->all_reduce(comm, buffer, count, op));
}

/* A started request gets its name in the log. */
static int log_start(const char *op, CommRequest *request, size_t send_count, size_t recv_count, const void *source,
                     int status)
{
    request->log_id = events_new_request();
    request->op = op;
    comm_record_call(request->comm, op, CALL_START, send_count, recv_count, request->buffer, source, request->log_id,
                     -1);
    return status;
}

int comm_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request)
{
    if (refuse_active(comm, "all_reduce_start", request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = buffer, .count = count, .average = op == REDUCE_AVG};
    comm_board_note_start(comm, "all_reduce_start"); /* its place in the order, no wait */
    return log_start("all_reduce", request, count, count, buffer,
                     comm->ops->all_reduce_start(comm, buffer, count, op, request));
}

/* op names the call in the log ("all_gather", "all_gather_bf16"); started is what the board
 * shows ("all_gather_start"). */
static int start_all_gather(Comm *comm, const char *op, const char *started, const void *send, void *recv,
                            size_t send_count, CommType type, CommRequest *request)
{
    if (refuse_active(comm, started, request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = recv, .count = send_count * comm->size};
    comm_board_note_start(comm, started);
    return log_start(op, request, send_count, request->count, send,
                     comm->ops->all_gather_start(comm, send, recv, send_count, type, request));
}

int comm_all_gather_start(Comm *comm, const float *send, float *recv, size_t send_count, CommRequest *request)
{
    return start_all_gather(comm, "all_gather", "all_gather_start", send, recv, send_count, COMM_FLOAT, request);
}

/* The element type of a 16-bit format, and the name the log gives its calls. */
static CommType type16(Format16 format)
{
    return format == FORMAT_FP16 ? COMM_FP16 : COMM_BF16;
}

int comm_all_gather_16_start(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t send_count,
                             CommRequest *request)
{
    int fp16 = format == FORMAT_FP16;
    return start_all_gather(comm, fp16 ? "all_gather_fp16" : "all_gather_bf16",
                            fp16 ? "all_gather_fp16_start" : "all_gather_bf16_start", send, recv, send_count,
                            type16(format), request);
}

int comm_wait(CommRequest *request)
{
    if (!request->active)
        return 0;
    char what[sizeof((PeerState *)NULL)->op];
    snprintf(what, sizeof what, "wait for %s", request->op);
    comm_begin_wait(request->comm, what, 0);
    int status = request->comm->ops->wait(request);
    comm_end_wait(request->comm);
    comm_record_call(request->comm, request->op, CALL_WAIT, 0, 0, request->buffer, NULL, request->log_id, 1);
    return status;
}

int comm_test(CommRequest *request, int *done)
{
    *done = !request->active;
    if (*done)
        return 0;
    int status = request->comm->ops->test(request, done);
    comm_record_call(request->comm, request->op, CALL_TEST, 0, 0, request->buffer, NULL, request->log_id, *done);
    return status;
}

static int reduce_scatter(Comm *comm, const char *name, const void *send, void *recv, size_t recv_count,
                          CommType type, ReduceOp op)
{
    comm_begin_wait(comm, name, 1);
    return end_blocking(comm, name, recv_count * comm->size, recv_count, recv, send,
                        comm->ops->reduce_scatter(comm, send, recv, recv_count, type, op));
}

int comm_reduce_scatter(Comm *comm, const float *send, float *recv, size_t recv_count, ReduceOp op)
{
    return reduce_scatter(comm, "reduce_scatter", send, recv, recv_count, COMM_FLOAT, op);
}

int comm_reduce_scatter_16(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t recv_count,
                           ReduceOp op)
{
    return reduce_scatter(comm, format == FORMAT_FP16 ? "reduce_scatter_fp16" : "reduce_scatter_bf16", send, recv,
                          recv_count, type16(format), op);
}

static int all_gather(Comm *comm, const char *name, const void *send, void *recv, size_t send_count, CommType type)
{
    comm_begin_wait(comm, name, 1);
    return end_blocking(comm, name, send_count, send_count * comm->size, recv, send,
                        comm->ops->all_gather(comm, send, recv, send_count, type));
}

int comm_all_gather(Comm *comm, const float *send, float *recv, size_t send_count)
{
    return all_gather(comm, "all_gather", send, recv, send_count, COMM_FLOAT);
}

int comm_all_gather_16(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t send_count)
{
    return all_gather(comm, format == FORMAT_FP16 ? "all_gather_fp16" : "all_gather_bf16", send, recv, send_count,
                      type16(format));
}

int comm_broadcast(Comm *comm, float *buffer, size_t count, int root)
{
    comm_begin_wait(comm, "broadcast", 1);
    return end_blocking(comm, "broadcast", count, count, buffer, buffer,
                        comm->ops->broadcast(comm, buffer, count, root));
}

int comm_sendrecv(Comm *comm, const float *send, size_t send_count, int to,
                  float *recv, size_t recv_count, int from)
{
    comm_begin_wait(comm, "sendrecv", 1);
    int status = comm->ops->sendrecv(comm, send, send_count, to, recv, recv_count, from);
    comm_end_wait(comm);
    comm_record_point_to_point(comm, "sendrecv", send_count, to, recv_count, from, recv);
    return status;
}

/* Bookkeeping stays on MPI whatever the backend: these are host doubles. */
static int mpi_all_reduce_double(Comm *comm, const char *name, double *value, MPI_Op op)
{
    comm_begin_wait(comm, name, 1);
    int status = end_blocking(comm, name, 1, 1, NULL, NULL, MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, op, comm->world));
    if (status == MPI_SUCCESS)
        return 0;
    char reason[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, reason, &length);
    return comm_fail(comm, op == MPI_MAX ? "max" : "sum", reason);
}

int comm_max_double(Comm *comm, double *value) { return mpi_all_reduce_double(comm, "max_double", value, MPI_MAX); }

int comm_sum_double(Comm *comm, double *value) { return mpi_all_reduce_double(comm, "sum_double", value, MPI_SUM); }

/* What comm_all_ok says, after the step's name, on a rank that did not fail itself. */
static const char FAILED_ELSEWHERE[] = " failed on another rank";

int comm_all_ok(Comm *comm, int failed, const char *step, char *err, size_t err_len)
{
    double failures = failed != 0;
    if (comm_sum_double(comm, &failures) != 0) {
        snprintf(err, err_len, "%s", comm_error(comm));
        return 0;
    }
    if (failures > 0 && !failed)
        snprintf(err, err_len, "%s%s", step, FAILED_ELSEWHERE);
    return failures == 0;
}

int comm_failed_elsewhere(const char *err)
{
    size_t length = strlen(err), tail = strlen(FAILED_ELSEWHERE);
    return length >= tail && strcmp(err + length - tail, FAILED_ELSEWHERE) == 0;
}

/* ---------------------------------------------------------------- bookkeeping on MPI */

int comm_gather_text(Comm *comm, const char *text, size_t length, int ready, char **all, size_t *total)
{
    int *lengths = comm->rank == 0 ? calloc((size_t)comm->size, sizeof *lengths) : NULL;
    int *offsets = comm->rank == 0 ? calloc((size_t)comm->size, sizeof *offsets) : NULL;
    int mine = ready && length <= INT_MAX && (comm->rank != 0 || (lengths != NULL && offsets != NULL));
    int all_ready = 0, status = -1;
    MPI_Allreduce(&mine, &all_ready, 1, MPI_INT, MPI_MIN, comm->world);
    if (all_ready) {
        int sent = (int)length;
        MPI_Gather(&sent, 1, MPI_INT, lengths, 1, MPI_INT, 0, comm->world);
        long sum = 0;
        for (int r = 0; comm->rank == 0 && r < comm->size; r++) {
            offsets[r] = (int)sum;
            sum += lengths[r];
        }
        int ok = sum <= INT_MAX && (comm->rank != 0 || (*all = malloc((size_t)sum + 1)) != NULL);
        MPI_Bcast(&ok, 1, MPI_INT, 0, comm->world);
        if (ok) {
            MPI_Gatherv(text, sent, MPI_CHAR, *all, lengths, offsets, MPI_CHAR, 0, comm->world);
            if (comm->rank == 0) {
                (*all)[sum] = '\0';
                *total = (size_t)sum;
            }
            status = 0;
        }
    }
    free(lengths);
    free(offsets);
    return status;
}

/* One exchange with rank 0: rank 0's clock at the middle of it, less this rank's. */
static double clock_exchange(Comm *comm, double *round_trip)
{
    double sent = now_seconds(), theirs = 0;
    MPI_Send(&sent, 1, MPI_DOUBLE, 0, 0, comm->world);
    MPI_Recv(&theirs, 1, MPI_DOUBLE, 0, 0, comm->world, MPI_STATUS_IGNORE);
    double received = now_seconds();
    *round_trip = received - sent;
    return theirs - (sent + received) / 2;
}

enum { CLOCK_EXCHANGES = 16 };

double comm_clock_offset(Comm *comm)
{
    comm_begin_wait(comm, "clock_offset", 1);
    double best = 0, shortest = -1;
    if (comm->rank == 0) {
        for (int r = 1; r < comm->size; r++)
            for (int k = 0; k < CLOCK_EXCHANGES; k++) {
                double ignored, now;
                MPI_Recv(&ignored, 1, MPI_DOUBLE, r, 0, comm->world, MPI_STATUS_IGNORE);
                now = now_seconds();
                MPI_Send(&now, 1, MPI_DOUBLE, r, 0, comm->world);
            }
    } else {
        for (int k = 0; k < CLOCK_EXCHANGES; k++) {
            double round_trip, offset = clock_exchange(comm, &round_trip);
            if (shortest < 0 || round_trip < shortest) { /* the least delayed exchange says most */
                shortest = round_trip;
                best = offset;
            }
        }
    }
    comm_end_wait(comm);
    return best;
}
