#include "comm_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events.h"
#include "paths.h"

static int is_call(const RunEvent *e) { return e->type == EVENT_CALL; }
/* A wait or test moves nothing of its own: its counts are the start's. */
static int has_counts(const RunEvent *e)
{
    return is_call(e) && strcmp(e->name, CALL_WAIT) != 0 && strcmp(e->name, CALL_TEST) != 0;
}
static int is_memory(const RunEvent *e) { return e->type == EVENT_BLOCK; }
/* The log's rows: marks, calls and blocks; the rest is the timeline's. */
static int is_logged(const RunEvent *e) { return e->seq >= 0; }

/* The elements a call moves: 16 bits for the calls named so (comm.h), floats for the rest. */
static size_t element_size(const RunEvent *e)
{
    return is_call(e) && comm_log_op_is_16bit(e->op) ? 2 : sizeof(float);
}

/* A buffer as kind#n+element: the n-th block of that kind, the element within it. */
static void write_place(FILE *out, const RunEvent *e, int found, int untracked, const MemBlockPlace *place)
{
    if (found)
        fprintf(out, "%s#%ld+%zu", mem_kind_name(place->kind), place->serial, place->offset / element_size(e));
    else if (untracked)
        fputs("untracked", out);
}

/* A number that is -1 where its column does not apply: an empty cell then. */
static void write_if_set(FILE *out, long value)
{
    if (value >= 0)
        fprintf(out, "%ld", value);
}

/* Empty cells where a column does not apply, so a spreadsheet filter shows what is there. */
static void write_event(FILE *out, int rank, const RunEvent *e, double origin)
{
    fprintf(out, "%d,%ld,%.3f,%d,%d,%s,", rank, e->seq, 1e3 * (e->time - origin), e->step, e->micro, e->name);
    if (e->unit >= 0)
        fprintf(out, "%d", e->unit);
    fprintf(out, ",%s,", is_call(e) ? e->op : "");
    if (has_counts(e) || (!is_call(e) && e->count > 0))
        fprintf(out, "%zu", e->count);
    fputc(',', out);
    if (has_counts(e))
        fprintf(out, "%zu", e->recv_count);
    fputc(',', out);
    write_place(out, e, e->has_place, e->untracked, &e->place);
    fputc(',', out);
    write_if_set(out, e->request);
    fputc(',', out);
    write_if_set(out, e->done);
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
    fputc(',', out);
    write_if_set(out, e->to);
    fputc(',', out);
    write_if_set(out, e->from);
    fputc(',', out);
    write_place(out, e, e->has_source, e->source_untracked, &e->source_place);
    fputc('\n', out);
}

char *comm_log_rows(int rank, size_t *length, int *whole)
{
    char *text = NULL;
    EventRecord record = events_record();
    *whole = record.whole;
    FILE *out = open_memstream(&text, length);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < record.count; i++)
        if (is_logged(&record.events[i]))
            write_event(out, rank, &record.events[i], record.origin);
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
