#include "trace.h"

#include "alloc.h"
#include "grow.h"
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
    int start_marker, end_marker; /* a device clock's, until trace_settle reads them; else -1 */
} TraceEvent;

/* A counter's value from this time on. */
typedef struct {
    const char *name;
    double time, value;
} CounterSample;

enum { MAX_COUNTERS = 4 };

/* Profiling bookkeeping lives outside the tracking allocator: it is not the model's memory. */
static struct {
    int active, rank, world;
    double clock_offset; /* added to every time: rank 0's clock (comm_clock_offset) */
    char path[1024];
    TraceEvent *events;
    size_t count, capacity;
    CounterSample *samples, counters[MAX_COUNTERS]; /* counters: each one's latest */
    size_t num_samples, samples_capacity;
    const TraceDeviceClock *device_clock; /* NULL: the host's clock */
    size_t settled;                       /* events before this one hold times, not markers */
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
    trace.count = trace.num_samples = trace.settled = 0;
    trace.device_clock = NULL; /* the host's, until the device's is given (trace_use_device_clock) */
    memset(trace.counters, 0, sizeof trace.counters);
    trace.active = 1;
    return 0;
}

void trace_span(TraceTrack track, const char *name, int unit, TraceMark start, TraceMark end)
{
    if (!trace.active)
        return;
    TraceEvent *events = grow_for_one(trace.events, &trace.capacity, trace.count, sizeof *events, 4096);
    if (events == NULL)
        return; /* a trace missing its tail beats a run that stops */
    trace.events = events;
    trace.events[trace.count++] = (TraceEvent){name, unit, track, start.seconds, end.seconds, start.marker, end.marker};
}

void trace_record(TraceTrack track, const char *name, int unit, double start_seconds, double end_seconds)
{
    trace_span(track, name, unit, (TraceMark){start_seconds, -1}, (TraceMark){end_seconds, -1});
}

void trace_use_device_clock(const TraceDeviceClock *clock)
{
    if (!trace.active)
        return;
    trace.device_clock = clock;
    if (clock != NULL)
        clock->forget(); /* anchors it */
}

TraceMark trace_mark_on(void *stream)
{
    TraceMark mark = {0.0, -1};
    if (!trace.active)
        return mark;
    mark.seconds = now_seconds(); /* kept if the device has no marker left */
    if (trace.device_clock != NULL)
        mark.marker = trace.device_clock->mark(stream);
    return mark;
}

TraceMark trace_mark(void)
{
    return trace_mark_on(NULL);
}

/* A marker's time, read from the device clock. */
static void settle_time(double *seconds, int *marker)
{
    if (*marker >= 0)
        *seconds = trace.device_clock->seconds(*marker);
    *marker = -1;
}

void trace_settle(void)
{
    if (!trace.active || trace.device_clock == NULL)
        return;
    for (size_t i = trace.settled; i < trace.count; i++) {
        settle_time(&trace.events[i].start, &trace.events[i].start_marker);
        settle_time(&trace.events[i].end, &trace.events[i].end_marker);
    }
    trace.settled = trace.count;
    trace.device_clock->forget();
}

/* The counter's slot, or NULL when MAX_COUNTERS others have taken them all. */
static CounterSample *counter_named(const char *name)
{
    for (int i = 0; i < MAX_COUNTERS; i++)
        if (trace.counters[i].name == NULL || strcmp(trace.counters[i].name, name) == 0) {
            trace.counters[i].name = name;
            return &trace.counters[i];
        }
    return NULL;
}

void trace_count(const char *name, double delta)
{
    if (!trace.active)
        return;
    CounterSample *counter = counter_named(name);
    if (counter == NULL)
        return;
    CounterSample *samples = grow_for_one(trace.samples, &trace.samples_capacity, trace.num_samples, sizeof *samples,
                                          1024);
    if (samples == NULL)
        return;
    trace.samples = samples;
    counter->time = now_seconds();
    counter->value += delta;
    trace.samples[trace.num_samples++] = *counter;
}

static TraceMark span_started[NUM_TRACKS]; /* trace_begin's mark, per track */

void trace_begin(TraceTrack track)
{
    span_started[track] = trace_mark();
}

void trace_end(TraceTrack track, const char *name, int unit)
{
    trace_span(track, name, unit, span_started[track], trace_mark());
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

static void write_counter(FILE *out, int rank, const CounterSample *sample)
{
    fprintf(out, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"%s\",\"ts\":%.3f,\"args\":{\"value\":%.6f}},\n", rank,
            sample->name, 1e6 * (sample->time + trace.clock_offset), sample->value);
}

/* The allocator's history as one counter with a series per kind: each sample carries every
 * kind seen in the run, so that Perfetto and chrome://tracing can stack them. */
static void write_memory(FILE *out, int rank)
{
    size_t count = 0;
    const MemSample *history = mem_history(&count);
    int seen[MEM_NUM_KINDS] = {0};
    double megabytes[MEM_NUM_KINDS] = {0};
    for (size_t i = 0; i < count; i++)
        seen[history[i].kind] = 1;
    for (size_t i = 0; i < count; i++) {
        megabytes[history[i].kind] = history[i].in_use / 1e6;
        fprintf(out, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"" TRACE_MEMORY_COUNTER "\",\"ts\":%.3f,\"args\":{", rank,
                1e6 * (history[i].time + trace.clock_offset));
        const char *separator = "";
        for (int kind = 0; kind < MEM_NUM_KINDS; kind++)
            if (seen[kind]) {
                fprintf(out, "%s\"%s\":%.6f", separator, mem_kind_name((MemKind)kind), megabytes[kind]);
                separator = ",";
            }
        fprintf(out, "}},\n");
    }
}

/* Every event of this rank, after its metadata. */
static void write_events(FILE *out, int rank)
{
    for (size_t i = 0; i < trace.count; i++)
        write_event(out, &trace.events[i], rank);
    for (size_t i = 0; i < trace.num_samples; i++)
        write_counter(out, rank, &trace.samples[i]);
    write_memory(out, rank);
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
    return trace.device_clock != NULL ? "device" : "host";
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
    trace_settle();
    trace.active = 0;
    int status = write_file_atomically(trace.path, write_rank_trace, NULL, err, err_len);
    free(trace.events);
    free(trace.samples);
    trace.events = NULL;
    trace.samples = NULL;
    trace.count = trace.capacity = trace.num_samples = trace.samples_capacity = 0;
    return status;
}

char *trace_lines(size_t *length)
{
    trace_settle();
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
    char path[1100];
    snprintf(path, sizeof path, "%s/merged.json", dir);
    MergedTrace merged = {lines, length, world};
    return write_file_atomically(path, write_merged, &merged, err, err_len);
}
