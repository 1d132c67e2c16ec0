/* The communication log: the marks, communicator calls and allocator blocks of this
 * process's record of events (events.h), in order, each with where training was at that
 * moment (the step, the micro-batch, and the model's last mark: which unit's forward or
 * backward had last started or ended, or whose gradients had last become final). A lesson's
 * schedule (which collectives, when, relative to the model's units) and its memory are graded
 * from it (docs/grading.md), and `--comm-log FILE` writes it as CSV so a student can put
 * their schedule next to the reference's (the columns: docs/grading.md, "The communication
 * log"). This is its writer: it returns the rows, and gathering the ranks' rows into one file
 * is run_logs.h's. */
#ifndef DTC_COMM_LOG_H
#define DTC_COMM_LOG_H

#include <stddef.h>
#include <string.h>

/* The log's CSV columns, in order (docs/grading.md, "The communication log"): comm_log.c
 * writes them under these names, and the grader's check_schedule reads them by these
 * indices, so the two cannot disagree. */
enum {
    LOG_COLUMN_RANK, LOG_COLUMN_SEQ, LOG_COLUMN_TIME_MS, LOG_COLUMN_STEP, LOG_COLUMN_MICRO, LOG_COLUMN_EVENT,
    LOG_COLUMN_UNIT, LOG_COLUMN_OP, LOG_COLUMN_COUNT, LOG_COLUMN_RECV_COUNT, LOG_COLUMN_BUFFER, LOG_COLUMN_REQUEST,
    LOG_COLUMN_DONE, LOG_COLUMN_WHERE, LOG_COLUMN_KIND, LOG_COLUMN_BYTES, LOG_COLUMN_TO, LOG_COLUMN_FROM,
    LOG_COLUMN_SOURCE, LOG_NUM_COLUMNS
};
static const char *const LOG_COLUMNS[LOG_NUM_COLUMNS] = {
    [LOG_COLUMN_RANK] = "rank",     [LOG_COLUMN_SEQ] = "seq",       [LOG_COLUMN_TIME_MS] = "time_ms",
    [LOG_COLUMN_STEP] = "step",     [LOG_COLUMN_MICRO] = "micro",   [LOG_COLUMN_EVENT] = "event",
    [LOG_COLUMN_UNIT] = "unit",     [LOG_COLUMN_OP] = "op",         [LOG_COLUMN_COUNT] = "count",
    [LOG_COLUMN_RECV_COUNT] = "recv_count", [LOG_COLUMN_BUFFER] = "buffer", [LOG_COLUMN_REQUEST] = "request",
    [LOG_COLUMN_DONE] = "done",     [LOG_COLUMN_WHERE] = "where",   [LOG_COLUMN_KIND] = "kind",
    [LOG_COLUMN_BYTES] = "bytes",   [LOG_COLUMN_TO] = "to",         [LOG_COLUMN_FROM] = "from",
    [LOG_COLUMN_SOURCE] = "source",
};

/* The 16-bit calls of comm.h are logged as their float op with the format's name as a
 * suffix ("reduce_scatter_bf16", "all_gather_fp16"): 1 when op is one of them. */
static inline int comm_log_op_is_16bit(const char *op)
{
    size_t length = strlen(op);
    return length > 5 && (strcmp(op + length - 5, "_bf16") == 0 || strcmp(op + length - 5, "_fp16") == 0);
}

/* This process's marks, calls and blocks as CSV rows (no header), rank `rank` in its first column:
 * malloc'd, or NULL when out of memory; *whole says whether every event is in it (none was
 * lost to a failed allocation). */
char *comm_log_rows(int rank, size_t *length, int *whole);

/* Writes path, whole or not at all: the header, then `rows` (every rank's, in order).
 * Returns 0, or -1 with a one-line reason. */
int comm_log_write_rows(const char *path, const char *rows, size_t length, char *err, size_t err_len);

#endif
