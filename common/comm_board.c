/* The board of ranks and the accounting every backend shares: each rank's place in its
 * communication, kept where the ranks of its host can read it, so that a rank that has
 * waited too long, or meets a rank that has ended, can say what every rank was doing; the
 * failures and the statistics of the calls. Below the communicator's entry points
 * (comm.c) and its backends (comm_mpi.c, cuda/comm_nccl.c), which call it; it calls none of
 * them. */
#include "comm_board.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "signal_safe.h"
#include "timer.h"
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
    comm->span = (CallSpan){operation, is_wait ? TRACK_WAIT : TRACK_COMM, {started, -1}, {now_seconds(), -1}};
    return comm_count(comm, started, bytes, collectives);
}

/* The call, with the slice its backend left in comm->span, which is then cleared. */
static void record(Comm *comm, CallEvent call)
{
    call.span = comm->span;
    events_call(&call);
    comm->span = (CallSpan){0};
}

void comm_record_call(Comm *comm, const char *op, const char *mode, size_t send_count, size_t recv_count,
                      const void *buffer, const void *source, long request, int done)
{
    record(comm, (CallEvent){op, mode, send_count, recv_count, buffer, request, done, {0}, -1, -1, source});
}

void comm_record_point_to_point(Comm *comm, const char *op, size_t send_count, int to, size_t recv_count, int from,
                                const void *buffer)
{
    record(comm, (CallEvent){op, CALL_BLOCKING, send_count, recv_count, buffer, -1, -1, {0}, to, from, NULL});
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

int comm_oversubscribed(const Comm *comm, int threads, char *out, size_t out_len)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN), ranks = comm->node_size > 0 ? comm->node_size : 1;
    out[0] = '\0';
    if (cores < 1 || ranks * threads <= cores)
        return 0;
    snprintf(out, out_len,
             "%ld rank(s) x %d thread(s) on this machine's %ld core(s): they take turns on the cores, so the "
             "times measure the scheduler more than the code",
             ranks, threads, cores);
    return 1;
}

void comm_set_wait_timeout(Comm *comm, double seconds)
{
    comm->wait_timeout = seconds;
    snprintf(comm->wait_timeout_text, sizeof comm->wait_timeout_text, "%g", seconds);
}

/* The reports below run inside signal handlers (watchdog.h, and the notice that a rank
 * ended): they format with safe_format and write with safe_write, nothing else. */

/* A process's state letter from /proc/PID/stat ('R' running, 'S' sleeping, 'T' stopped,
 * 'Z' ended...), or 0 when it is gone. */
static char process_state(int pid)
{
    char path[64], text[256];
    safe_format(path, sizeof path, "/proc/%d/stat", pid);
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
        safe_format(line, len, "  rank %d (pid %d): has ended (%s%s %s, its collective %ld, at step %d after %s)\n",
                 peer->rank, peer->pid, peer->in_call ? "in" : own_work(peer), peer->in_call ? "" : ", last in",
                 peer->op, peer->calls, peer->step, peer->where);
    else if (state == 'T' || state == 't')
        safe_format(line, len, "  rank %d (pid %d): stopped (a signal, or a debugger) %s%s, its collective %ld, at "
                 "step %d after %s; ended now, as mpiexec would\n", peer->rank, peer->pid,
                 peer->in_call ? "in " : "", peer->in_call ? peer->op : own_work(peer), peer->calls, peer->step,
                 peer->where);
    else if (peer->in_call && peer->calls == me->calls)
        safe_format(line, len, "  rank %d: waiting too, in %s (its collective %ld)\n", peer->rank, peer->op,
                    peer->calls);
    else if (peer->in_call)
        safe_format(line, len, "  rank %d: waiting in %s, its collective %ld, at step %d after %s: not this one "
                 "(collectives started in different orders?)\n", peer->rank, peer->op, peer->calls, peer->step,
                 peer->where);
    else
        safe_format(line, len, "  rank %d: in no call for %.1f s (it last left %s, its collective %ld, at step %d "
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

/* text added at the end of the report in out (out_len bytes in all), cut to fit */
static void append(char *out, size_t out_len, const char *text)
{
    size_t used = strlen(out);
    safe_format(out + used, out_len - used, "%s", text);
}

/* Every other rank of this host, a line each, added to the report in out after this rank's
 * own line. */
static void describe_peers(char *out, size_t out_len, const Comm *comm, double now)
{
    const PeerState *me = &comm->board[comm->local_rank];
    char line[512];
    /* NCCL's set-up (ncclCommInitRank) waits for every rank, in no order of collectives */
    int all_waiting = 1, joining_nccl = me->in_call && strncmp(me->op, "nccl", 4) == 0;
    int all_sending = me->in_call && strcmp(me->op, "send") == 0;
    int all_receiving = me->in_call && strcmp(me->op, "recv") == 0;
    for (int p = 0; p < comm->node_size; p++)
        if (p != comm->local_rank) {
            const PeerState *peer = &comm->board[p];
            describe_peer(line, sizeof line, me, peer, now);
            append(out, out_len, line);
            char state = process_state(peer->pid);
            all_waiting &= peer->in_call && state != 0 && state != 'T' && state != 't' && state != 'Z';
            joining_nccl &= strcmp(peer->op, me->op) == 0;
            all_sending &= strcmp(peer->op, "send") == 0;
            all_receiving &= strcmp(peer->op, "recv") == 0;
        }
    if (all_waiting && joining_nccl && comm->node_size > 1) {
        safe_format(line, sizeof line, "  every rank here is waiting in %s: NCCL cannot connect the ranks "
                    "(build/cuda/tools/doctor says why)\n", me->op);
        append(out, out_len, line);
    } else if (all_waiting && all_sending && comm->node_size > 1) {
        append(out, out_len, "  every rank here is waiting in a send, and none receives: a blocking send of a long "
                       "message returns only once its receive has started\n");
    } else if (all_waiting && all_receiving && comm->node_size > 1) {
        append(out, out_len, "  every rank here is waiting in a receive, and none sends\n");
    } else if (all_waiting && comm->node_size > 1) {
        append(out, out_len, "  every rank here is waiting: the collectives they started did not match "
                       "(were they started in the same order on every rank?)\n");
    }
    if (comm->node_size < comm->size) {
        safe_format(line, sizeof line, "  (%d rank(s) on other hosts: not seen from here)\n",
                    comm->size - comm->node_size);
        append(out, out_len, line);
    }
}

/* "rank R: WHAT in OP, its collective N, at step S after WHERE, WHY:" */
static void describe_self(char *line, size_t len, const Comm *comm, const char *what, const char *why)
{
    const PeerState *me = &comm->board[comm->local_rank];
    if (me->in_call)
        safe_format(line, len, "rank %d: %s in %s, its collective %ld, at step %d after %s, %s:\n", comm->rank, what,
                 me->op, me->calls, me->step, me->where, why);
    else
        safe_format(line, len, "rank %d: %s %s (it last left %s, its collective %ld) at step %d after %s, %s:\n",
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

/* A report of this rank and the others of its host goes out in one write: the other ranks,
 * and the parent of a rank that was killed, speak at the same moment to the same output, and
 * a report written in pieces would come out cut by theirs. Static, since it is made in a
 * signal handler, whose stack is no place for it. */
static char report[32768];

/* The wait deadline's report: this rank's call, then every other rank of its host; or
 * nothing, while a peer works alone for the others (the wait is a healthy one). It runs in
 * the signal handler just before the process ends (watchdog.h). */
static int report_wait(int fd, const void *context)
{
    const Comm *comm = context;
    char line[512], what[64];
    const char *why = "for a rank that did not come";
    safe_format(what, sizeof what, "waited %s s (--wait-timeout)", comm->wait_timeout_text);
    if (comm->board == NULL) {
        safe_format(line, sizeof line, "rank %d: %s in a call %s\n", comm->rank, what, why);
        safe_write(fd, line);
        return 1;
    }
    if (peer_works_alone(comm))
        return 0;
    describe_self(report, sizeof report, comm, what, why);
    describe_peers(report, sizeof report, comm, now_seconds());
    safe_write(fd, report);
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
void comm_board_report_ended_rank(const Comm *comm)
{
    const char *why = "when a rank ended: it ends too";
    if (comm->board == NULL) {
        safe_format(report, sizeof report, "rank %d: %s\n", comm->rank, why);
    } else {
        describe_self(report, sizeof report, comm, "was", why);
        describe_peers(report, sizeof report, comm, now_seconds());
    }
    safe_write(STDERR_FILENO, report);
    if (comm->board != NULL)
        end_stopped_peers(comm);
    _exit(3);
}

/* 1 when a rank of this host other than this one has ended or ends within a second: news
 * of an end (a notice, a failed call) can come before /proc shows it. */
int comm_board_peer_ends(const Comm *comm)
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
    comm_board_peer_ends(notified_comm);
    comm_board_report_ended_rank(notified_comm);
}

/* The transport can abort first, on finding its peer's memory gone: when a rank of this
 * host has ended, that is the news; any other abort goes on as one. */
static void on_abort(int signal_number)
{
    if (comm_board_peer_ends(notified_comm))
        comm_board_report_ended_rank(notified_comm);
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

void comm_board_join(Comm *comm)
{
    share_board(comm);
    notice_ended_ranks(comm);
}

void comm_board_leave(Comm *comm)
{
    signal(SIGUSR1, SIG_IGN);
    signal(SIGABRT, SIG_DFL);
    if (comm->own_board != NULL)
        free(comm->own_board);
    else if (comm->board != NULL)
        MPI_Win_free(&comm->board_window);
    comm->board = comm->own_board = NULL;
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
    me->step = events_where(me->where, sizeof me->where);
    me->since = now_seconds();
    me->in_call = waits;
    share_with_parent(comm);
}

void comm_board_note_start(Comm *comm, const char *op)
{
    note_call(comm, op, 1, 0);
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
