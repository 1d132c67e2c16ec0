#include "comm_log.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "paths.h"
#include "timer.h"

typedef struct {
    double time;
    const char *event;       /* a mark's name, a call's mode, "alloc" or "free" */
    const char *op;          /* a call's operation; NULL otherwise */
    const char *where_event; /* a call's position: the last mark before it */
    long seq, request;
    int step, micro, unit, where_unit, done;
    int has_place, untracked; /* the buffer found among the live blocks, or given but not found */
    size_t count, recv_count, bytes;
    MemBlockPlace place;     /* the buffer, resolved when recorded (it may be freed later) */
} LogEvent;

/* Bookkeeping outside the tracking allocator: the log is not the model's memory. */
static struct {
    LogEvent *events;
    size_t count, capacity, dropped; /* dropped: events lost to a failed allocation */
    long next_seq, next_request;
    int keep, step, micro, where_unit;
    const char *where_event;
    double origin;
} log_state = {.where_event = "setup", .where_unit = -1};

void comm_log_keep(int keep)
{
    log_state.keep = keep;
}

size_t comm_log_length(void)
{
    return log_state.count;
}

long comm_log_new_request(void)
{
    return log_state.next_request++;
}

/* A new event with the position filled in; NULL when out of memory (the log loses an
 * event, the run goes on). */
static LogEvent *append(const char *event, const void *buffer)
{
    LogEvent *events = grow_for_one(log_state.events, &log_state.capacity, log_state.count, sizeof *events, 1024);
    if (events == NULL) {
        log_state.dropped++;
        return NULL;
    }
    log_state.events = events;
    double now = now_seconds();
    if (log_state.next_seq == 0)
        log_state.origin = now;
    LogEvent *e = &log_state.events[log_state.count++];
    *e = (LogEvent){.time = now - log_state.origin, .event = event, .seq = log_state.next_seq++,
                    .request = -1, .done = -1, .step = log_state.step, .micro = log_state.micro, .unit = -1,
                    .where_event = log_state.where_event, .where_unit = log_state.where_unit};
    e->has_place = buffer != NULL && mem_block_find(buffer, &e->place);
    e->untracked = buffer != NULL && !e->has_place;
    return e;
}

int comm_log_where(char *mark, size_t mark_len)
{
    if (log_state.where_unit >= 0)
        snprintf(mark, mark_len, "%s %d", log_state.where_event, log_state.where_unit);
    else
        snprintf(mark, mark_len, "%s", log_state.where_event);
    return log_state.step;
}

void comm_log_step(int step)
{
    if (!log_state.keep)
        log_state.count = 0;
    log_state.step = step;
    log_state.micro = 0;
    comm_log_mark("step_start", -1, NULL, 0);
}

void comm_log_micro(int micro)
{
    log_state.micro = micro;
}

void comm_log_mark(const char *event, int unit, const void *buffer, size_t count)
{
    LogEvent *e = append(event, buffer);
    if (e != NULL) {
        e->unit = unit;
        e->count = count;
    }
    log_state.where_event = event;
    log_state.where_unit = unit;
}

void comm_log_call(const char *op, const char *mode, size_t send_count, size_t recv_count, const void *buffer,
                   long request, int done)
{
    LogEvent *e = append(mode, buffer);
    if (e == NULL)
        return;
    e->op = op;
    e->count = send_count;
    e->recv_count = recv_count;
    e->request = request;
    e->done = done;
}

void comm_log_memory(const char *event, const void *ptr, size_t bytes, MemKind kind)
{
    LogEvent *e = append(event, ptr);
    if (e == NULL)
        return;
    e->bytes = bytes;
    e->place.kind = kind;
}

/* ---------------------------------------------------------------- writing */

static int is_call(const LogEvent *e) { return e->op != NULL; }
/* A wait or test moves nothing of its own: its counts are the start's. */
static int has_counts(const LogEvent *e)
{
    return is_call(e) && strcmp(e->event, LOG_WAIT) != 0 && strcmp(e->event, LOG_TEST) != 0;
}
static int is_memory(const LogEvent *e) { return strcmp(e->event, "alloc") == 0 || strcmp(e->event, "free") == 0; }

/* The elements a call moves: 16 bits for the calls named so (comm.h), floats for the rest. */
static size_t element_size(const LogEvent *e)
{
    return is_call(e) && comm_log_op_is_16bit(e->op) ? 2 : sizeof(float);
}

static void write_place(FILE *out, const LogEvent *e)
{
    if (e->has_place)
        fprintf(out, "%s#%ld+%zu", mem_kind_name(e->place.kind), e->place.serial, e->place.offset / element_size(e));
    else if (e->untracked)
        fputs("untracked", out);
}

/* Empty cells where a column does not apply, so a spreadsheet filter shows what is there. */
static void write_event(FILE *out, int rank, const LogEvent *e)
{
    fprintf(out, "%d,%ld,%.3f,%d,%d,%s,", rank, e->seq, 1e3 * e->time, e->step, e->micro, e->event);
    if (e->unit >= 0)
        fprintf(out, "%d", e->unit);
    fprintf(out, ",%s,", is_call(e) ? e->op : "");
    if (has_counts(e) || (!is_call(e) && e->count > 0))
        fprintf(out, "%zu", e->count);
    fputc(',', out);
    if (has_counts(e))
        fprintf(out, "%zu", e->recv_count);
    fputc(',', out);
    write_place(out, e);
    fputc(',', out);
    if (e->request >= 0)
        fprintf(out, "%ld", e->request);
    fputc(',', out);
    if (e->done >= 0)
        fprintf(out, "%d", e->done);
    fputc(',', out);
    if (is_call(e)) {
        fprintf(out, "%s", e->where_event);
        if (e->where_unit >= 0)
            fprintf(out, " %d", e->where_unit);
    }
    fputc(',', out);
    if (is_memory(e))
        fprintf(out, "%s,%zu", mem_kind_name(e->place.kind), e->bytes);
    else
        fputc(',', out);
    fputc('\n', out);
}

char *comm_log_rows(int rank, size_t *length, int *whole)
{
    char *text = NULL;
    *whole = log_state.dropped == 0;
    FILE *out = open_memstream(&text, length);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < log_state.count; i++)
        write_event(out, rank, &log_state.events[i]);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

typedef struct {
    const char *rows;
    size_t length;
} LogText;

/* The CSV header: the column names of comm_log.h, in order. */
static int write_header(FILE *out)
{
    for (int c = 0; c < LOG_NUM_COLUMNS; c++)
        if (fprintf(out, "%s%s", LOG_COLUMNS[c], c + 1 < LOG_NUM_COLUMNS ? "," : "\n") < 0)
            return -1;
    return 0;
}

static int write_rows(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const LogText *text = what;
    if (write_header(out) != 0 || fwrite(text->rows, 1, text->length, out) != text->length) {
        snprintf(err, err_len, "--comm-log %s: cannot write the file", path);
        return -1;
    }
    return 0;
}

int comm_log_write_rows(const char *path, const char *rows, size_t length, char *err, size_t err_len)
{
    LogText text = {rows, length};
    return write_file_atomically(path, write_rows, &text, err, err_len);
}

void comm_log_forget(void)
{
    log_state.count = 0;
    log_state.dropped = 0;
}
