#include "trace.h"

#include "paths.h"
#include "timer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int unit;
    TraceTrack track;
    double start, end;
} TraceEvent;

/* Profiling bookkeeping lives outside the tracking allocator: it is not the model's memory. */
static struct {
    int active, rank, world;
    double clock_offset; /* added to every time: rank 0's clock (comm_clock_offset) */
    char path[1024];
    TraceEvent *events;
    size_t count, capacity;
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
    char path[1100];
    for (int rank = -1; rank < world; rank++) {
        if (rank < 0)
            snprintf(path, sizeof path, "%s/merged.json", dir);
        else
            snprintf(path, sizeof path, "%s/rank_%d.json", dir, rank);
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
            snprintf(err, err_len, "--trace %s: %s exists and is not a regular file", dir, path);
            return -1;
        }
    }
    return 0;
}

int trace_start(const char *dir, int rank, int world, double clock_offset, char *err, size_t err_len)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        snprintf(err, err_len, "--trace %s: cannot create the folder (%s)", dir, strerror(errno));
        return -1;
    }
    snprintf(trace.path, sizeof trace.path, "%s/rank_%d.json", dir, rank);
    trace.rank = rank;
    trace.world = world;
    trace.clock_offset = clock_offset;
    trace.count = 0;
    trace.active = 1;
    return 0;
}

void trace_record(TraceTrack track, const char *name, int unit, double start_seconds, double end_seconds)
{
    if (!trace.active)
        return;
    if (trace.count == trace.capacity) {
        size_t capacity = trace.capacity ? 2 * trace.capacity : 4096;
        TraceEvent *grown = realloc(trace.events, capacity * sizeof *grown);
        if (grown == NULL)
            return; /* a trace missing its tail beats a run that stops */
        trace.events = grown;
        trace.capacity = capacity;
    }
    trace.events[trace.count++] = (TraceEvent){name, unit, track, start_seconds, end_seconds};
}

static double span_started[NUM_TRACKS]; /* trace_begin's time, per track */

void trace_begin(TraceTrack track)
{
    if (trace_enabled())
        span_started[track] = now_seconds();
}

void trace_end(TraceTrack track, const char *name, int unit)
{
    if (trace_enabled())
        trace_record(track, name, unit, span_started[track], now_seconds());
}

/* One event per line, on rank 0's clock. */
static void write_event(FILE *out, const TraceEvent *e, int rank)
{
    fprintf(out, "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"cat\":\"%s\",\"name\":\"%s", rank, (int)e->track,
            track_names[e->track], e->name);
    size_t length = strlen(e->name);
    if (e->unit >= 0) /* "forward unit 3"; a name ending in '#' takes the number itself: "step#7" */
        fprintf(out, length > 0 && e->name[length - 1] == '#' ? "%d" : " unit %d", e->unit);
    fprintf(out, "\",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"rank\":%d}},\n", 1e6 * (e->start + trace.clock_offset),
            1e6 * (e->end - e->start), rank);
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

/* JSON allows no comma after an array's last element: a final metadata entry without one
 * closes the array, so every event line can end in a comma. "timing":"host" tells the
 * analyzer that every event was timed on the rank's one thread (see tools/analyze_traces.c). */
static void write_footer(FILE *out, int rank, int world)
{
    fprintf(out, "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_labels\",\"args\":{\"labels\":\"dtc\"}}\n", rank);
    fprintf(out, "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"timing\":\"host\"},\n"
                 "\"distributedInfo\":{\"rank\":%d,\"world_size\":%d}}\n", rank, world);
}

static int write_rank_trace(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    (void)what;
    fprintf(out, "{\"traceEvents\":[\n");
    write_metadata(out, trace.rank);
    for (size_t i = 0; i < trace.count; i++)
        write_event(out, &trace.events[i], trace.rank);
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
    trace.active = 0;
    int status = write_file_atomically(trace.path, write_rank_trace, NULL, err, err_len);
    free(trace.events);
    trace.events = NULL;
    trace.count = trace.capacity = 0;
    return status;
}

char *trace_lines(size_t *length)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, length);
    if (out == NULL)
        return NULL;
    write_metadata(out, trace.rank);
    for (size_t i = 0; i < trace.count; i++)
        write_event(out, &trace.events[i], trace.rank);
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
    fprintf(out, "],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"timing\":\"host\"},\n"
                 "\"distributedInfo\":{\"world_size\":%d}}\n", merged->world);
    if (ferror(out)) {
        snprintf(err, err_len, "--trace: writing %s failed", path);
        return -1;
    }
    return 0;
}

int trace_write_merged(const char *dir, int world, const char *lines, size_t length, char *err, size_t err_len)
{
    char path[1100];
    snprintf(path, sizeof path, "%s/merged.json", dir);
    MergedTrace merged = {lines, length, world};
    return write_file_atomically(path, write_merged, &merged, err, err_len);
}
