#include "trace.h"

#include "events.h"
#include "paths.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Room for a file's path in the trace folder: trace_check_dir refuses a folder whose files'
 * paths do not fit, so no path is ever cut short. */
enum { TRACE_PATH_MAX = 4096 };

/* The timeline being written; its events are the record's (events.h). */
static struct {
    int active, rank, world;
    double clock_offset; /* added to every time: rank 0's clock (comm_clock_offset) */
    char path[TRACE_PATH_MAX];
} trace;

static const char *const track_names[NUM_TRACKS] = {"compute", "communication", "waits"};

int trace_enabled(void)
{
    return trace.active;
}

int trace_check_dir(const char *dir, int world, char *err, size_t err_len)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "--trace %s: cannot create the folder (%s)", dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
        snprintf(err, err_len, "--trace %s: not a folder this run can write into", dir);
        return -1;
    }
    char path[TRACE_PATH_MAX];
    for (int rank = -1; rank < world; rank++) {
        int length = rank < 0 ? snprintf(path, sizeof path, "%s/merged.json", dir)
                              : snprintf(path, sizeof path, "%s/rank_%d.json", dir, rank);
        if (length < 0 || (size_t)length >= sizeof path) {
            snprintf(err, err_len, "--trace: the folder's path is too long (%zu characters)", strlen(dir));
            return -1;
        }
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, err_len, "--trace %s: %s exists and is not a regular file", dir, path);
            return -1;
        }
    }
    return 0;
}

int trace_start(const char *dir, int rank, int world, double clock_offset, const struct TraceDeviceClock *clock,
                char *err, size_t err_len)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "--trace %s: cannot create the folder (%s)", dir, strerror(errno));
        return -1;
    }
    snprintf(trace.path, sizeof trace.path, "%s/rank_%d.json", dir, rank);
    trace.rank = rank;
    trace.world = world;
    trace.clock_offset = clock_offset;
    trace.active = 1;
    events_time_spans(clock);
    return 0;
}

/* One slice per line, on rank 0's clock. */
static void write_slice(FILE *out, const RunEvent *e, int rank)
{
    fprintf(out, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"name\":\"%s", rank, (int)e->track,
            track_names[e->track], e->span);
    size_t length = strlen(e->span);
    if (e->unit >= 0) /* "forward unit 3"; a name ending in '#' takes the number itself: "step#7" */
        fprintf(out, length > 0 && e->span[length - 1] == '#' ? "%d" : " unit %d", e->unit);
    fprintf(out, "\",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"rank\":%d}},\n",
            1e6 * (e->begin.seconds + trace.clock_offset), 1e6 * (e->end.seconds - e->begin.seconds), rank);
}

static void write_counter(FILE *out, int rank, const RunEvent *e)
{
    fprintf(out, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"args\":{\"value\":%.6f}},\n", rank,
            e->name, 1e6 * (e->time + trace.clock_offset), e->value);
}

/* The bytes in use as one counter with a series per kind: each sample carries every kind
 * seen in the run, so that Perfetto and chrome://tracing can stack them. */
static void write_memory(FILE *out, int rank, const EventRecord *record)
{
    int seen[MEM_NUM_KINDS] = {0};
    double megabytes[MEM_NUM_KINDS] = {0};
    for (size_t i = 0; i < record->count; i++)
        if (record->events[i].type == EVENT_IN_USE)
            seen[record->events[i].place.kind] = 1;
    for (size_t i = 0; i < record->count; i++) {
        const RunEvent *e = &record->events[i];
        if (e->type != EVENT_IN_USE)
            continue;
        megabytes[e->place.kind] = e->bytes / 1e6;
        fprintf(out, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"" TRACE_MEMORY_COUNTER "\",\"ts\":%.3f,\"args\":{", rank,
                1e6 * (e->time + trace.clock_offset));
        const char *separator = "";
        for (int kind = 0; kind < MEM_NUM_KINDS; kind++)
            if (seen[kind]) {
                fprintf(out, "%s\"%s\":%.6f", separator, mem_kind_name((MemKind)kind), megabytes[kind]);
                separator = ",";
            }
        fprintf(out, "}},\n");
    }
}

/* Every event of this rank the timeline shows, after its metadata: the slices, the
 * counters, then the memory track. */
static void write_events(FILE *out, int rank)
{
    EventRecord record = events_record();
    for (size_t i = 0; i < record.count; i++)
        if (record.events[i].span != NULL)
            write_slice(out, &record.events[i], rank);
    for (size_t i = 0; i < record.count; i++)
        if (record.events[i].type == EVENT_COUNT)
            write_counter(out, rank, &record.events[i]);
    write_memory(out, rank, &record);
}

static void write_metadata(FILE *out, int rank)
{
    fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"rank %d\"}},\n", rank, rank);
    fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%d}},\n", rank,
            rank);
    for (int t = 0; t < NUM_TRACKS; t++)
        fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}},\n",
                rank, t, track_names[t]);
}

/* "host" when every event was timed on the rank's one thread, "device" when the compute and
 * communication tracks were timed on the device's streams (see tools/analyze_traces.c). */
static const char *timing(void)
{
    return events_record().timing_device ? "device" : "host";
}

/* JSON allows no comma after an array's last element: a final metadata entry without one
 * closes the array, so every event line can end in a comma. */
static void write_footer(FILE *out, int rank, int world)
{
    fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_labels\",\"args\":{\"labels\":\"dtc\"}}\n", rank);
    fprintf(out, "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"timing\":\"%s\"},\n"
                 "\"distributedInfo\":{\"rank\":%d,\"world_size\":%d}}\n", timing(), rank, world);
}

static int write_rank_trace(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    (void)what;
    fprintf(out, "{\"traceEvents\":[\n");
    write_metadata(out, trace.rank);
    write_events(out, trace.rank);
    write_footer(out, trace.rank, trace.world);
    if (ferror(out)) {
        snprintf(err, err_len, "--trace: writing %s failed", path);
        return -1;
    }
    return 0;
}

int trace_finish(char *err, size_t err_len)
{
    if (!trace.active)
        return 0;
    events_stop_spans();
    trace.active = 0;
    return write_file_atomically(trace.path, write_rank_trace, NULL, err, err_len);
}

char *trace_lines(size_t *length)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, length);
    if (out == NULL)
        return NULL;
    write_metadata(out, trace.rank);
    write_events(out, trace.rank);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

typedef struct {
    const char *lines;
    size_t length;
    int world;
} MergedTrace;

static int write_merged(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const MergedTrace *merged = what;
    fprintf(out, "{\"traceEvents\":[\n");
    fwrite(merged->lines, 1, merged->length, out);
    fprintf(out, "{\"ph\":\"M\",\"pid\":0,\"name\":\"process_labels\",\"args\":{\"labels\":\"dtc\"}}\n");
    fprintf(out, "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"timing\":\"%s\"},\n"
                 "\"distributedInfo\":{\"world_size\":%d}}\n", timing(), merged->world);
    if (ferror(out)) {
        snprintf(err, err_len, "--trace: writing %s failed", path);
        return -1;
    }
    return 0;
}

int trace_write_merged(const char *dir, int world, const char *lines, size_t length, char *err, size_t err_len)
{
    char path[TRACE_PATH_MAX];
    snprintf(path, sizeof path, "%s/merged.json", dir);
    MergedTrace merged = {lines, length, world};
    return write_file_atomically(path, write_merged, &merged, err, err_len);
}
