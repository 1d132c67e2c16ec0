/* The communication log: every call this process makes to the communicator, in order, with
 * where training was at that moment (the step, the micro-batch, and the model's last mark:
 * which unit's forward or backward had last started or ended, or whose gradients had last
 * become final), beside every allocation and free of the tracking allocator. A lesson's
 * schedule (which collectives, when, relative to the model's units) and its memory are
 * graded from it (docs/grading.md), and `--comm-log FILE` writes it as CSV so a student can
 * put their schedule next to the reference's (the columns: docs/grading.md, "The
 * communication log").
 *
 * It is always on: recording is a few stores per event. A run that does not write it keeps
 * only the current step's events, so memory stays flat however long the run. One log per
 * process, like the trace (trace.h): the model, the trainer and the communicator record
 * into it without being handed it, and the allocator's events reach it through the
 * listener the trainer installs (run_logs_start_comm_log). It only records and
 * returns its text: gathering the ranks' logs into one file is run_logs.h's. */
#ifndef DTC_COMM_LOG_H
#define DTC_COMM_LOG_H

#include <stddef.h>
#include <string.h>

#include "alloc.h"

/* The modes of a communicator call, in the log's `event` column. */
#define LOG_BLOCKING "blocking" /* a call that returns when its collective is done */
#define LOG_START "start"       /* a non-blocking collective started: request names it */
#define LOG_TEST "test"         /* done says whether it had finished */
#define LOG_WAIT "wait"

/* The log's CSV columns, in order (docs/grading.md, "The communication log"): comm_log.c
 * writes them under these names, and the grader's check_schedule reads them by these
 * indices, so the two cannot disagree. */
enum {
    LOG_COLUMN_RANK, LOG_COLUMN_SEQ, LOG_COLUMN_TIME_MS, LOG_COLUMN_STEP, LOG_COLUMN_MICRO, LOG_COLUMN_EVENT,
    LOG_COLUMN_UNIT, LOG_COLUMN_OP, LOG_COLUMN_COUNT, LOG_COLUMN_RECV_COUNT, LOG_COLUMN_BUFFER, LOG_COLUMN_REQUEST,
    LOG_COLUMN_DONE, LOG_COLUMN_WHERE, LOG_COLUMN_KIND, LOG_COLUMN_BYTES, LOG_NUM_COLUMNS
};
static const char *const LOG_COLUMNS[LOG_NUM_COLUMNS] = {
    [LOG_COLUMN_RANK] = "rank",     [LOG_COLUMN_SEQ] = "seq",       [LOG_COLUMN_TIME_MS] = "time_ms",
    [LOG_COLUMN_STEP] = "step",     [LOG_COLUMN_MICRO] = "micro",   [LOG_COLUMN_EVENT] = "event",
    [LOG_COLUMN_UNIT] = "unit",     [LOG_COLUMN_OP] = "op",         [LOG_COLUMN_COUNT] = "count",
    [LOG_COLUMN_RECV_COUNT] = "recv_count", [LOG_COLUMN_BUFFER] = "buffer", [LOG_COLUMN_REQUEST] = "request",
    [LOG_COLUMN_DONE] = "done",     [LOG_COLUMN_WHERE] = "where",   [LOG_COLUMN_KIND] = "kind",
    [LOG_COLUMN_BYTES] = "bytes",
};

/* The 16-bit calls of comm.h are logged as their float op with the format's name as a
 * suffix ("reduce_scatter_bf16", "all_gather_fp16"): 1 when op is one of them. */
static inline int comm_log_op_is_16bit(const char *op)
{
    size_t length = strlen(op);
    return length > 5 && (strcmp(op + length - 5, "_bf16") == 0 || strcmp(op + length - 5, "_fp16") == 0);
}

/* 1: keep every event until the log is written (run_logs.h); 0 (the default): forget them at
 * each step start. */
void comm_log_keep(int keep);

/* Where training is: the step (the trainer's mark: 1-based, as --csv counts; 0 is set-up)
 * and the micro-batch (the model's, at each forward: the backward passes it has added into
 * the gradients since they were zeroed). */
void comm_log_step(int step);
void comm_log_micro(int micro);

/* A point in the run, by name (a literal that lives for the whole run): the model marks
 * "forward_start", "forward_end", "backward_start", "backward_end" and "grads_ready" with
 * the unit (and for a start, the parameters it computes with; for grads_ready, the
 * gradients backward wrote); the trainer "step_start", "optimizer_start", "step_end",
 * "validate_start", "validate_end", "train_end"; a lesson may add its own (lesson 01:
 * "ring_start", "ring_end" with the count). unit -1 and buffer NULL when they do not apply. */
void comm_log_mark(const char *event, int unit, const void *buffer, size_t count);

/* A communicator call: op ("all_reduce", "reduce_scatter", ...), mode (LOG_BLOCKING ...),
 * the elements in this rank's send and receive buffers, the buffer the result lands in,
 * and for non-blocking calls the request id (comm_log_new_request) and, for a test,
 * whether it had finished. */
void comm_log_call(const char *op, const char *mode, size_t send_count, size_t recv_count, const void *buffer,
                   long request, int done);
long comm_log_new_request(void);

/* The tracking allocator's events: "alloc" or "free" (a MemListener). */
void comm_log_memory(const char *event, const void *ptr, size_t bytes, MemKind kind);

/* Where training is now, for messages: the step and the last mark ("grads_ready 3"). */
int comm_log_where(char *mark, size_t mark_len);

/* How many events are held now (for tests and the overhead benchmark). */
size_t comm_log_length(void);

/* This process's events as CSV rows (no header), rank `rank` in its first column:
 * malloc'd, or NULL when out of memory; *whole says whether every event is in it (none was
 * lost to a failed allocation). */
char *comm_log_rows(int rank, size_t *length, int *whole);

/* Writes path, whole or not at all: the header, then `rows` (every rank's, in order).
 * Returns 0, or -1 with a one-line reason. */
int comm_log_write_rows(const char *path, const char *rows, size_t length, char *err, size_t err_len);

/* Forgets every event: a second run in the same process starts a log of its own. */
void comm_log_forget(void);

#endif
