/* The board of ranks and the accounting every backend of the communicator shares
 * (comm_board.c). Below comm.c and the backends, which call it; only comm*.c files include
 * it. */
#ifndef DTC_COMM_BOARD_H
#define DTC_COMM_BOARD_H

#include "comm_internal.h"

/* Around every call that waits for the other ranks: marks this rank's place on the board
 * and holds the wait deadline (comm_set_wait_timeout) while it waits. */
void comm_begin_wait(Comm *comm, const char *op, int collective);
void comm_end_wait(Comm *comm);
/* A non-blocking call started: its place in the order of collectives, without a wait. */
void comm_board_note_start(Comm *comm, const char *op);

/* Records a one-line failure naming the operation and the rank; returns -1. */
int comm_fail(Comm *comm, const char *operation, const char *reason);

/* Every counted call opens with `double started = now_seconds();` and closes through here;
 * it is also the call's slice on the timeline (on the communication track; waits and tests
 * on their own), which comm_record_call then records with the call. */
int comm_account(Comm *comm, const char *operation, double started, double bytes, int collectives);
/* The same counting, leaving the call's slice to the backend: one that times its calls
 * where their work runs (NCCL, on its stream) sets comm->span itself, or leaves none. */
int comm_count(Comm *comm, double started, double bytes, int collectives);

/* A call in the record of events (events.h): the log's row, with the slice its backend
 * left in comm->span (then cleared). */
void comm_record_call(Comm *comm, const char *op, const char *mode, size_t send_count, size_t recv_count,
                      const void *buffer, const void *source, long request, int done);
/* The same for a blocking point-to-point call, with the ranks it sent to and received from
 * (-1: none), which the ring's rule reads. */
void comm_record_point_to_point(Comm *comm, const char *op, size_t send_count, int to, size_t recv_count, int from,
                                const void *buffer);

/* At comm_init: this rank's place on its host's board (shared memory between the host's
 * ranks, or memory of its own when alone), and the signals that say a rank has ended. */
void comm_board_join(Comm *comm);
/* At comm_finalize, every rank's traffic done: from here on a rank that ends has finished,
 * and the board is let go. */
void comm_board_leave(Comm *comm);

/* 1 when a rank of this host other than this one has ended or ends within a second. */
int comm_board_peer_ends(const Comm *comm);
/* This rank's line and every other rank's of the host, to stderr; then the rank ends
 * (status 3): the job cannot go on without the rank that ended. */
void comm_board_report_ended_rank(const Comm *comm);

#endif
