#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "rank_supervisor.h"
#include "signal_safe.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the parent says when its rank was killed: which rank, by what, and where it was. The
 * line goes out in one write: the ranks that remain speak at the same moment, to the same
 * output, and a line written in pieces would come out cut by theirs. */
static void report_killed(const PeerState *state, pid_t child, int signal_number)
{
    const char *rank = getenv("PMI_RANK");
    char where[256] = "", line[512];
    if (state->op[0] != '\0')
        snprintf(where, sizeof where, " at step %d, %s%s %s, its collective %ld, after %s", state->step,
                 state->in_call ? "in" : own_work(state), state->in_call ? "" : ", last in", state->op,
                 state->calls, state->where);
    snprintf(line, sizeof line, "rank %s (pid %d) was killed by signal %d (%s)%s\n", rank != NULL ? rank : "?",
             (int)child, signal_number, strsignal(signal_number), where);
    safe_write(STDERR_FILENO, line);
}

/* The parent's whole life: wait for the rank, speak if it was killed, end as it ended. */
static void wait_for_rank(const PeerState *state, pid_t child)
{
    signal(SIGUSR1, SIG_IGN); /* mpiexec's notice that a rank ended is for the rank itself */
    int status;
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR)
            _exit(1);
    if (WIFSIGNALED(status)) {
        report_killed(state, child, WTERMSIG(status));
        _exit(128 + WTERMSIG(status));
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

PeerState *rank_supervise(void)
{
    const char *size = getenv("PMI_SIZE");
    if (size == NULL || atoi(size) < 2)
        return NULL;
    PeerState *state = mmap(NULL, sizeof *state, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (state == MAP_FAILED)
        return NULL;
    memset(state, 0, sizeof *state);
    fflush(NULL); /* nothing buffered is written twice */
    pid_t child = fork();
    if (child < 0) {
        munmap(state, sizeof *state);
        return NULL; /* the rank runs unsupervised */
    }
    if (child > 0)
        wait_for_rank(state, child);
    return state;
}
