/* The communicator: what every backend shares (the MPI world underneath, the statistics,
 * the errors) and the entry points of comm.h, which hand the data-moving calls to the
 * backend's table. MPI is the backend until comm_use_nccl (CUDA builds) swaps in NCCL. */
#include "comm_internal.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm_log.h"
#include "rank_supervisor.h"
#include "timer.h"
#include "trace.h"
#include "watchdog.h"

int comm_fail(Comm *comm, const char *operation, const char *reason)
{
    snprintf(comm->error, sizeof comm->error, "%s failed on rank %d of %d: %s", operation, comm->rank,
             comm->size, reason);
    return -1;
}

int comm_count(Comm *comm, double started, double bytes, int collectives)
{
    comm->stats.seconds += now_seconds() - started;
    comm->stats.bytes += bytes;
    comm->stats.calls += collectives;
    return 0;
}

int comm_account(Comm *comm, const char *operation, double started, double bytes, int collectives)
{
    int is_wait = strcmp(operation, "wait") == 0 || strcmp(operation, "test") == 0;
    trace_record(is_wait ? TRACK_WAIT : TRACK_COMM, operation, -1, started, now_seconds());
    return comm_count(comm, started, bytes, collectives);
}

CommStats comm_stats(const Comm *comm)
{
    return comm->stats;
}

/* ---------------------------------------------------------------- waiting for the others */

/* This rank's PeerState, where the others of its host can read it. */
static void fill_own_state(Comm *comm, PeerState *mine)
{
    *mine = (PeerState){.rank = comm->rank, .pid = (int)getpid(), .since = now_seconds(), .op = "no call yet",
                        .where = "setup"};
}

/* The host's ranks share one PeerState each; without shared memory, no board. A rank alone
 * on its host keeps its own in memory of its own: no shared window, whose MPI clean-up can
 * hang MPI_Finalize between hosts (MPICH 4.0 over UCX's TCP). */
static void share_board(Comm *comm)
{
    MPI_Comm_size(comm->node, &comm->node_size);
    if (comm->node_size == 1) {
        comm->own_board = calloc(1, sizeof *comm->own_board);
        comm->board = comm->own_board;
        if (comm->board != NULL)
            fill_own_state(comm, comm->board);
        return;
    }
    PeerState *mine = NULL;
    if (MPI_Win_allocate_shared((MPI_Aint)sizeof(PeerState), (int)sizeof(PeerState), MPI_INFO_NULL, comm->node,
                                &mine, &comm->board_window) != MPI_SUCCESS)
        return;
    MPI_Aint size;
    int unit;
    if (MPI_Win_shared_query(comm->board_window, 0, &size, &unit, &comm->board) != MPI_SUCCESS) {
        MPI_Win_free(&comm->board_window);
        comm->board = NULL;
        return;
    }
    fill_own_state(comm, mine);
    MPI_Barrier(comm->node); /* every slot filled before anyone reads them */
}

void comm_describe_processes(const Comm *comm, char *out, size_t out_len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int p = 0; comm->board != NULL && p < comm->node_size && used < out_len; p++)
        used += (size_t)snprintf(out + used, out_len - used, "%srank %d = pid %d", p > 0 ? ", " : "",
                                 comm->board[p].rank, comm->board[p].pid);
    if (comm->board == NULL)
        used = (size_t)snprintf(out, out_len, "rank %d = pid %d", comm->rank, (int)getpid());
    if (comm->hosts > 1 && used < out_len)
        snprintf(out + used, out_len - used, "; %d rank(s) on %d other host(s)", comm->size - comm->node_size,
                 comm->hosts - 1);
}

void comm_set_wait_timeout(Comm *comm, double seconds)
{
    comm->wait_timeout = seconds;
}

/* A process's state letter from /proc/PID/stat ('R' running, 'S' sleeping, 'T' stopped,
 * 'Z' ended...), or 0 when it is gone. open and read only: this runs in a signal handler. */
static char process_state(int pid)
{
    char path[64], text[256];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    text[got > 0 ? got : 0] = '\0';
    const char *after_name = strrchr(text, ')'); /* "pid (name) S ..." */
    return after_name != NULL && after_name[1] == ' ' ? after_name[2] : '?';
}

/* What one other rank of the host was doing, beside this one's call. */
static void describe_peer(char *line, size_t len, const PeerState *me, const PeerState *peer, double now)
{
    char state = process_state(peer->pid);
    if (state == 0 || state == 'Z' || state == 'X')
        snprintf(line, len, "  rank %d (pid %d): has ended (%s%s %s, its collective %ld, at step %d after %s)\n",
                 peer->rank, peer->pid, peer->in_call ? "in" : own_work(peer), peer->in_call ? "" : ", last in",
                 peer->op, peer->calls, peer->step, peer->where);
    else if (state == 'T' || state == 't')
        snprintf(line, len, "  rank %d (pid %d): stopped (a signal, or a debugger) %s%s, its collective %ld, at "
                 "step %d after %s; ended now, as mpiexec would\n", peer->rank, peer->pid,
                 peer->in_call ? "in " : "", peer->in_call ? peer->op : own_work(peer), peer->calls, peer->step,
                 peer->where);
    else if (peer->in_call && peer->calls == me->calls)
        snprintf(line, len, "  rank %d: waiting too, in %s (its collective %ld)\n", peer->rank, peer->op, peer->calls);
    else if (peer->in_call)
        snprintf(line, len, "  rank %d: waiting in %s, its collective %ld, at step %d after %s: not this one "
                 "(collectives started in different orders?)\n", peer->rank, peer->op, peer->calls, peer->step,
                 peer->where);
    else
        snprintf(line, len, "  rank %d: in no call for %.1f s (it last left %s, its collective %ld, at step %d "
                 "after %s): stuck in its own work, or stopped\n", peer->rank, now - peer->since, peer->op,
                 peer->calls, peer->step, peer->where);
}

/* A rank of this host stopped by a signal cannot end itself, and mpiexec -disable-auto-cleanup
 * would leave it holding the job: the rank that reports ends it, as mpiexec's clean-up would. */
static void end_stopped_peers(const Comm *comm)
{
    for (int p = 0; p < comm->node_size; p++) {
        char state = process_state(comm->board[p].pid);
        if (p != comm->local_rank && (state == 'T' || state == 't'))
            kill(comm->board[p].pid, SIGKILL);
    }
}

/* Every other rank of this host, a line each, after this rank's own line. */
static void describe_peers(int fd, const Comm *comm, double now)
{
    const PeerState *me = &comm->board[comm->local_rank];
    char line[512];
    ssize_t written = 0;
    int all_waiting = 1;
    for (int p = 0; p < comm->node_size; p++)
        if (p != comm->local_rank) {
            const PeerState *peer = &comm->board[p];
            describe_peer(line, sizeof line, me, peer, now);
            written = write(fd, line, strlen(line));
            char state = process_state(peer->pid);
            all_waiting &= peer->in_call && state != 0 && state != 'T' && state != 't' && state != 'Z';
        }
    if (all_waiting && comm->node_size > 1) {
        snprintf(line, sizeof line, "  every rank here is waiting: the collectives they started did not match "
                 "(were they started in the same order on every rank?)\n");
        written = write(fd, line, strlen(line));
    }
    if (comm->node_size < comm->size) {
        snprintf(line, sizeof line, "  (%d rank(s) on other hosts: not seen from here)\n", comm->size - comm->node_size);
        written = write(fd, line, strlen(line));
    }
    (void)written;
}

/* "rank R: WHAT in OP, its collective N, at step S after WHERE, WHY:" */
static void describe_self(char *line, size_t len, const Comm *comm, const char *what, const char *why)
{
    const PeerState *me = &comm->board[comm->local_rank];
    if (me->in_call)
        snprintf(line, len, "rank %d: %s in %s, its collective %ld, at step %d after %s, %s:\n", comm->rank, what,
                 me->op, me->calls, me->step, me->where, why);
    else
        snprintf(line, len, "rank %d: %s %s (it last left %s, its collective %ld) at step %d after %s, %s:\n",
                 comm->rank, what, own_work(me), me->op, me->calls, me->step, me->where, why);
}

/* 1 when a rank of this host other than this one is running, out of any call, in work of its
 * own that the others wait for (comm_begin_alone). */
static int peer_works_alone(const Comm *comm)
{
    for (int p = 0; p < comm->node_size; p++) {
        const PeerState *peer = &comm->board[p];
        char state = process_state(peer->pid);
        if (p != comm->local_rank && peer->alone[0] != '\0' && !peer->in_call &&
            (state == 'R' || state == 'S' || state == 'D'))
            return 1;
    }
    return 0;
}

/* The wait deadline's report: this rank's call, then every other rank of its host; or
 * nothing, while a peer works alone for the others (the wait is a healthy one). It runs in
 * the signal handler just before the process ends (watchdog.h). */
static int report_wait(int fd, const void *context)
{
    const Comm *comm = context;
    char line[512], what[64];
    const char *why = "for a rank that did not come";
    snprintf(what, sizeof what, "waited %g s (--wait-timeout)", comm->wait_timeout);
    if (comm->board == NULL) {
        snprintf(line, sizeof line, "rank %d: %s in a call %s\n", comm->rank, what, why);
        ssize_t written = write(fd, line, strlen(line));
        (void)written;
        return 1;
    }
    if (peer_works_alone(comm))
        return 0;
    describe_self(line, sizeof line, comm, what, why);
    ssize_t written = write(fd, line, strlen(line));
    (void)written;
    describe_peers(fd, comm, now_seconds());
    end_stopped_peers(comm);
    return 1;
}

/* ---------------------------------------------------------------- a rank that ends */

static const Comm *notified_comm; /* the communicator on_rank_ended reports on */

/* 1 when a rank of this host other than this one has ended. */
static int peer_has_ended(const Comm *comm)
{
    for (int p = 0; comm->board != NULL && p < comm->node_size; p++) {
        char state = process_state(comm->board[p].pid);
        if (p != comm->local_rank && (state == 0 || state == 'Z' || state == 'X'))
            return 1;
    }
    return 0;
}

/* This rank's line and every other rank's, when one of them has ended before MPI_Finalize
 * (killed, crashed, or exited on its own); then this rank ends too (status 3): the job
 * cannot go on without it. */
static void report_ended_rank(const Comm *comm)
{
    char line[512];
    const char *why = "when a rank ended: it ends too";
    if (comm->board == NULL)
        snprintf(line, sizeof line, "rank %d: %s\n", comm->rank, why);
    else
        describe_self(line, sizeof line, comm, "was", why);
    ssize_t written = write(STDERR_FILENO, line, strlen(line));
    (void)written;
    if (comm->board != NULL) {
        describe_peers(STDERR_FILENO, comm, now_seconds());
        end_stopped_peers(comm);
    }
    _exit(3);
}

/* 1 when a rank of this host other than this one has ended or ends within a second: news
 * of an end (a notice, a failed call) can come before /proc shows it. */
static int peer_ends(const Comm *comm)
{
    struct timespec pause = {0, 50 * 1000 * 1000};
    for (int tries = 0; tries < 20; tries++) {
        if (peer_has_ended(comm))
            return 1;
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* mpiexec started with -disable-auto-cleanup tells the ranks that remain, with SIGUSR1,
 * that one has ended. Without that flag it kills every rank at once and says it alone. */
static void on_rank_ended(int signal_number)
{
    (void)signal_number;
    peer_ends(notified_comm);
    report_ended_rank(notified_comm);
}

/* The transport can abort first, on finding its peer's memory gone: when a rank of this
 * host has ended, that is the news; any other abort goes on as one. */
static void on_abort(int signal_number)
{
    if (peer_ends(notified_comm))
        report_ended_rank(notified_comm);
    signal(signal_number, SIG_DFL);
    raise(signal_number);
}

static void notice_ended_ranks(const Comm *comm)
{
    if (comm->size < 2)
        return;
    notified_comm = comm;
    struct sigaction action = {0};
    action.sa_handler = on_rank_ended;
    sigaction(SIGUSR1, &action, NULL);
    action.sa_handler = on_abort;
    sigaction(SIGABRT, &action, NULL);
}

/* The rank's parent reads its state when the rank is killed (rank_supervisor.h). */
static void share_with_parent(Comm *comm)
{
    if (comm->supervised != NULL && comm->board != NULL)
        *comm->supervised = comm->board[comm->local_rank];
}

/* This rank's place on the board as it enters a call: `collective` counts it in the order
 * of collectives (a wait or test is not one). */
static void note_call(Comm *comm, const char *op, int collective, int waits)
{
    if (comm->board == NULL)
        return;
    PeerState *me = &comm->board[comm->local_rank];
    me->calls += collective;
    snprintf(me->op, sizeof me->op, "%s", op);
    me->step = comm_log_where(me->where, sizeof me->where);
    me->since = now_seconds();
    me->in_call = waits;
    share_with_parent(comm);
}

void comm_begin_wait(Comm *comm, const char *op, int collective)
{
    note_call(comm, op, collective, 1);
    if (comm->wait_timeout > 0 && comm->size > 1)
        watchdog_arm(DEADLINE_WAIT, comm->wait_timeout, report_wait, comm);
}

void comm_begin_alone(Comm *comm, const char *what)
{
    if (comm->board == NULL)
        return;
    PeerState *me = &comm->board[comm->local_rank];
    snprintf(me->alone, sizeof me->alone, "%s", what);
    share_with_parent(comm);
}

void comm_end_alone(Comm *comm)
{
    if (comm->board == NULL)
        return;
    comm->board[comm->local_rank].alone[0] = '\0';
    share_with_parent(comm);
}

void comm_end_wait(Comm *comm)
{
    if (comm->board != NULL) {
        comm->board[comm->local_rank].in_call = 0;
        comm->board[comm->local_rank].since = now_seconds();
        share_with_parent(comm);
    }
    watchdog_disarm(DEADLINE_WAIT);
}

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
    share_board(comm);
    notice_ended_ranks(comm);
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
    snprintf(line, sizeof line, "rank %d: MPI_Finalize has not returned after %g s (--wait-timeout): MPI's clean-up "
             "is stuck after the run (MPICH 4.0 over UCX's TCP can hang here when ranks share a host); ending\n",
             comm->rank, comm->wait_timeout);
    ssize_t written = write(fd, line, strlen(line));
    (void)written;
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

void comm_finalize(Comm *comm)
{
    if (comm == NULL)
        return;
    if (comm->size > 1) { /* every rank's traffic done before any starts MPI's clean-up */
        comm_begin_wait(comm, "barrier at exit", 0);
        MPI_Barrier(comm->world);
        comm_end_wait(comm);
    }
    signal(SIGUSR1, SIG_IGN); /* from here on, a rank that ends has finished */
    signal(SIGABRT, SIG_DFL);
    if (comm->ops->release != NULL)
        comm->ops->release(comm);
    if (comm->own_board != NULL)
        free(comm->own_board);
    else if (comm->board != NULL)
        MPI_Win_free(&comm->board_window);
    MPI_Comm_free(&comm->node);
    if (comm->we_initialised_mpi)
        finalize_mpi(comm);
    free(comm);
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
    if (comm->size > 1 && peer_ends(comm))
        report_ended_rank(comm); /* the call failed because a rank had ended: that is the news */
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

/* A blocking call's wait is over when it returns; then it goes in the log. */
static int end_blocking(Comm *comm, const char *op, size_t send_count, size_t recv_count, const void *buffer,
                        int status)
{
    comm_end_wait(comm);
    comm_log_call(op, LOG_BLOCKING, send_count, recv_count, buffer, -1, -1);
    return status;
}

int comm_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op)
{
    comm_begin_wait(comm, "all_reduce", 1);
    return end_blocking(comm, "all_reduce", count, count, buffer,
                        comm->ops->all_reduce(comm, buffer, count, op));
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
    note_call(comm, "all_reduce_start", 1, 0); /* its place in the order, no wait */
    return log_start("all_reduce", request, count, count, comm->ops->all_reduce_start(comm, buffer, count, op, request));
}

/* op names the call in the log ("all_gather", "all_gather_bf16"); started is what the board
 * shows ("all_gather_start"). */
static int start_all_gather(Comm *comm, const char *op, const char *started, const void *send, void *recv,
                            size_t send_count, CommType type, CommRequest *request)
{
    if (refuse_active(comm, started, request) != 0)
        return -1;
    *request = (CommRequest){.comm = comm, .buffer = recv, .count = send_count * comm->size};
    note_call(comm, started, 1, 0);
    return log_start(op, request, send_count, request->count,
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

static int reduce_scatter(Comm *comm, const char *name, const void *send, void *recv, size_t recv_count,
                          CommType type, ReduceOp op)
{
    comm_begin_wait(comm, name, 1);
    return end_blocking(comm, name, recv_count * comm->size, recv_count, recv,
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
    return end_blocking(comm, name, send_count, send_count * comm->size, recv,
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
    return end_blocking(comm, "broadcast", count, count, buffer,
                        comm->ops->broadcast(comm, buffer, count, root));
}

int comm_sendrecv(Comm *comm, const float *send, size_t send_count, int to,
                  float *recv, size_t recv_count, int from)
{
    comm_begin_wait(comm, "sendrecv", 1);
    return end_blocking(comm, "sendrecv", send_count, recv_count, recv,
                        comm->ops->sendrecv(comm, send, send_count, to, recv, recv_count, from));
}

/* Bookkeeping stays on MPI whatever the backend: these are host doubles. */
static int mpi_all_reduce_double(Comm *comm, const char *name, double *value, MPI_Op op)
{
    comm_begin_wait(comm, name, 1);
    int status = end_blocking(comm, name, 1, 1, NULL, MPI_Allreduce(MPI_IN_PLACE, value, 1, MPI_DOUBLE, op, comm->world));
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
