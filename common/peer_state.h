/* What one rank says of itself on its host's board (comm_board.h), and what its supervising
 * parent reads back (rank_supervisor.h): plain data, with no dependencies. */
#ifndef DTC_PEER_STATE_H
#define DTC_PEER_STATE_H

/* One rank's place in its communication, kept in memory the ranks of a host share, so that
 * a rank that has waited too long can say what the others were doing. */
typedef struct {
    int rank;
    int pid;         /* its process, whose state the others can read in /proc */
    int in_call;     /* inside a call that waits for the other ranks */
    long calls;      /* collectives begun (blocking or started), in order */
    int step;
    char op[32];     /* the call it is in, or last left */
    char where[48];  /* the model's or the trainer's last mark then */
    double since;    /* when it entered or left that call (monotonic seconds) */
    char alone[40];  /* the work of its own the others wait for (comm_begin_alone), or "" */
} PeerState;

/* What a rank out of any call is doing: "in its own work", or what it marked. */
static inline const char *own_work(const PeerState *state)
{
    return state->alone[0] != '\0' ? state->alone : "in its own work";
}

#endif
