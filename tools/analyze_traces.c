/* Reads the per-rank timelines that --trace writes (DIR/rank_R.json) and prints, per rank
 * and per step, where the time went:
 *   compute       time some compute event was running
 *   comm exposed  time in communication (calls and waits) while no compute ran
 *   comm overlap  time in communication while compute also ran (another stream or thread)
 *   idle          the rest of the span: the counted steps' slices when the steps are
 *                 marked, else from the first to the last event
 *   overlap %     comm overlap / all communication time
 * and the count and total time of each communication call.
 * A trace marked "timing":"host" (the CPU backend's) was timed on the rank's one thread: a
 * compute span that encloses a communication call (ZeRO's optimizer step) was not computing
 * during the call, so the call's time is taken out of compute and overlap there is always 0.
 * A trace marked "timing":"device" (a GPU's) was timed on the device's streams, which run side
 * by side: only a blocking collective is taken out of a compute span that encloses it, since
 * the compute stream waited for it; a started one (all_reduce_start) overlaps what it may.
 * Writes DIR/summary.csv and
 * DIR/summary.html (the tables and an inline SVG bar per rank), each whole or not at all: into
 * a temporary file beside it, renamed into place once complete, so a failed run leaves the
 * previous file as it was.
 *
 *   analyze_traces DIR [--timeline STEP]
 *
 * --timeline also writes DIR/timeline.csv (rank,track,start_ms,end_ms,name): every event of
 * optimizer step STEP (1-based), each rank's times from the start of its own step, so ranks on
 * machines whose clocks differ still line up; the course report draws it. And DIR/memory.csv
 * (rank,time_ms, MB in use of each kind of the tracking allocator, gathered_mb): the trace's
 * counters over the same step, a row where the step begins, two at each change (before and
 * after: the values hold between changes) and one where it ends. Both are written whole the
 * same way; a step that a rank lacks is refused (status 2) before anything is printed.
 *
 * The traces are read with cJSON (Debian's libcjson), so any valid formatting of one is
 * accepted (pretty-printed, on one line, as a JSON tool rewrote it), and a file that is not
 * JSON, or not a trace that --trace wrote, is refused with one line.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "grow.h"
#include "paths.h"
#include "summary.h"
#include "trace.h"

enum { MAX_RANKS = 64, MAX_OPS = 32 };

/* Where the reader says why it refuses a file (the fuzzer, tests/fuzz/, sends it elsewhere). */
#ifndef TRACE_COMPLAINTS
#define TRACE_COMPLAINTS stderr
#endif

typedef struct {
    double start, end; /* microseconds */
} Interval;

typedef struct {
    Interval *items;
    size_t count, capacity;
} Intervals;

typedef struct {
    char name[128];
    long calls;
    double total_us;
} OpStats;

typedef struct {
    Intervals compute, comm;
    Intervals blocking; /* a device-timed trace's blocking collectives: the compute stream waited for them */
    double first, last;
    double span;     /* the time the figures are per step of: the counted steps, or first to last event */
    long steps;
    int warmup;      /* steps marked in the trace and left out, as the run's summary leaves them out */
    int host_timing;
    OpStats ops[MAX_OPS];
    int num_ops;
} RankTrace;

/* What a rank's figures hold, freed; the lists are empty after. */
static void rank_trace_free(RankTrace *r)
{
    Intervals *lists[] = {&r->compute, &r->comm, &r->blocking};
    for (size_t i = 0; i < sizeof lists / sizeof *lists; i++) {
        free(lists[i]->items);
        *lists[i] = (Intervals){0};
    }
}

static int add(Intervals *list, double start, double end)
{
    Interval *items = grow_for_one(list->items, &list->capacity, list->count, sizeof *items, 1024);
    if (items == NULL)
        return -1;
    list->items = items;
    list->items[list->count++] = (Interval){start, end};
    return 0;
}

static int by_start(const void *a, const void *b)
{
    const Interval *x = a, *y = b;
    return (x->start > y->start) - (x->start < y->start);
}

static double total_length(const Intervals *list)
{
    double total = 0.0;
    for (size_t i = 0; i < list->count; i++)
        total += list->items[i].end - list->items[i].start;
    return total;
}

/* Sorts and merges overlapping intervals in place; returns their total length. */
static double merge(Intervals *list)
{
    if (list->count > 1) /* qsort of an empty list may not be handed a NULL array */
        qsort(list->items, list->count, sizeof *list->items, by_start);
    size_t kept = 0;
    for (size_t i = 0; i < list->count; i++) {
        Interval next = list->items[i];
        if (kept > 0 && next.start <= list->items[kept - 1].end) {
            if (next.end > list->items[kept - 1].end)
                list->items[kept - 1].end = next.end;
        } else {
            list->items[kept++] = next;
        }
    }
    list->count = kept;
    return total_length(list);
}

/* Removes from merged list a every stretch that merged list b covers. */
static int subtract(Intervals *a, const Intervals *b)
{
    Intervals kept = {0};
    size_t j = 0;
    for (size_t i = 0; i < a->count; i++) {
        double start = a->items[i].start, end = a->items[i].end;
        while (j < b->count && b->items[j].end <= start)
            j++;
        for (size_t k = j; k < b->count && b->items[k].start < end; k++) {
            if (b->items[k].start > start && add(&kept, start, b->items[k].start) != 0)
                return -1;
            if (b->items[k].end > start)
                start = b->items[k].end;
        }
        if (end > start && add(&kept, start, end) != 0)
            return -1;
    }
    free(a->items);
    *a = kept;
    return 0;
}

/* Length of the intersection of two merged lists. */
static double intersection(const Intervals *a, const Intervals *b)
{
    double total = 0.0;
    size_t i = 0, j = 0;
    while (i < a->count && j < b->count) {
        double start = a->items[i].start > b->items[j].start ? a->items[i].start : b->items[j].start;
        double end = a->items[i].end < b->items[j].end ? a->items[i].end : b->items[j].end;
        if (end > start)
            total += end - start;
        if (a->items[i].end < b->items[j].end)
            i++;
        else
            j++;
    }
    return total;
}

static void count_op(RankTrace *r, const char *name, double dur)
{
    for (int i = 0; i < r->num_ops; i++)
        if (strcmp(r->ops[i].name, name) == 0) {
            r->ops[i].calls++;
            r->ops[i].total_us += dur;
            return;
        }
    if (r->num_ops == MAX_OPS)
        return;
    OpStats *op = &r->ops[r->num_ops++];
    snprintf(op->name, sizeof op->name, "%s", name);
    op->calls = 1;
    op->total_us = dur;
}

/* One complete ("X") event of a trace: its track (0 = compute), name and time in us. */
typedef struct {
    int tid;
    char name[128];
    double ts, dur;
} Event;

/* The counters memory.csv holds: the allocator's kinds (the series of "memory (MB)"), then
 * the parameters a ZeRO-3 unit has gathered and is using. */
enum { SERIES_GATHERED = MEM_NUM_KINDS, NUM_SERIES };

/* One value of one counter series from ts (us) on. */
typedef struct {
    double ts, mb;
    int series;
} Sample;

/* One rank's trace file, parsed. */
typedef struct {
    Event *events;
    size_t count;
    Sample *samples;
    size_t num_samples;
    int world;       /* distributedInfo.world_size: the run's ranks */
    int host_timing; /* otherData.timing is "host" */
} TraceFile;

static char *read_whole(const char *path, size_t *length)
{
    FILE *in = fopen(path, "rb");
    if (in == NULL)
        return NULL;
    size_t capacity = 1 << 16, used = 0, got;
    char *text = malloc(capacity);
    while (text != NULL && (got = fread(text + used, 1, capacity - used, in)) > 0) {
        used += got;
        if (used == capacity) {
            char *grown = realloc(text, capacity *= 2);
            if (grown == NULL)
                free(text);
            text = grown;
        }
    }
    fclose(in);
    *length = used;
    return text;
}

static double number_in(const cJSON *object, const char *key, int *missing)
{
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
    *missing |= !cJSON_IsNumber(item);
    return cJSON_IsNumber(item) ? item->valuedouble : 0.0;
}

static int series_named(const char *name)
{
    for (int kind = 0; kind < MEM_NUM_KINDS; kind++)
        if (strcmp(name, mem_kind_name((MemKind)kind)) == 0)
            return kind;
    return -1;
}

static int by_time(const void *a, const void *b)
{
    const Sample *x = a, *y = b;
    return (x->ts > y->ts) - (x->ts < y->ts);
}

/* A counter event's values into t->samples: every kind of "memory (MB)", the value of the
 * gathered parameters' counter; other counters are not read. -1 when one is not a number. */
static int take_counter(const cJSON *e, TraceFile *t)
{
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name"), *args = cJSON_GetObjectItemCaseSensitive(e, "args");
    int missing = !cJSON_IsString(name) || !cJSON_IsObject(args);
    double ts = number_in(e, "ts", &missing);
    if (missing || !(fabs(ts) <= 1e18))
        return -1;
    int memory = strcmp(name->valuestring, TRACE_MEMORY_COUNTER) == 0;
    if (!memory && strcmp(name->valuestring, TRACE_GATHERED_COUNTER) != 0)
        return 0;
    const cJSON *arg;
    int taken[NUM_SERIES] = {0}; /* a key given twice counts once: at most NUM_SERIES samples an event */
    cJSON_ArrayForEach(arg, args) {
        int series = memory ? series_named(arg->string) : strcmp(arg->string, "value") == 0 ? SERIES_GATHERED : -1;
        if (series < 0 || taken[series]++)
            continue;
        if (!cJSON_IsNumber(arg) || !(fabs(arg->valuedouble) <= 1e18))
            return -1;
        t->samples[t->num_samples++] = (Sample){ts, arg->valuedouble, series};
    }
    return 0;
}

/* The complete events of a parsed trace into t; -1 with the reason printed. */
static int take_events(const char *path, const cJSON *events, TraceFile *t)
{
    t->events = calloc((size_t)cJSON_GetArraySize(events) + 1, sizeof *t->events);
    t->samples = calloc((size_t)cJSON_GetArraySize(events) * NUM_SERIES + 1, sizeof *t->samples);
    if (t->events == NULL || t->samples == NULL) {
        fprintf(TRACE_COMPLAINTS, "analyze_traces: out of memory reading %s\n", path);
        return -1;
    }
    int index = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, events) {
        const cJSON *ph = cJSON_GetObjectItemCaseSensitive(e, "ph");
        index++;
        if (cJSON_IsString(ph) && strcmp(ph->valuestring, "C") == 0 && take_counter(e, t) != 0) {
            fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: counter event %d has no name, ts or args, or a value "
                                      "that is not a number\n", path, index);
            return -1;
        }
        if (!cJSON_IsString(ph) || strcmp(ph->valuestring, "X") != 0)
            continue;
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
        int missing = !cJSON_IsString(name);
        Event *out = &t->events[t->count];
        double track = number_in(e, "tid", &missing);
        out->ts = number_in(e, "ts", &missing);
        out->dur = number_in(e, "dur", &missing);
        if (missing) {
            fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: event %d has no tid, name, ts or dur\n", path, index);
            return -1;
        }
        /* written so that NaN fails too */
        if (!(track >= 0 && track <= 1e6) || !(fabs(out->ts) <= 1e18) || !(out->dur >= 0 && out->dur <= 1e18)) {
            fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: event %d has a track, start or duration out of range\n",
                    path, index);
            return -1;
        }
        out->tid = (int)track;
        snprintf(out->name, sizeof out->name, "%s", name->valuestring);
        t->count++;
    }
    return 0;
}

static void trace_file_free(TraceFile *t)
{
    free(t->events);
    free(t->samples);
    *t = (TraceFile){0};
}

/* Reads one rank's trace; -1 with one line printed when it is missing, not JSON, or not a
 * trace --trace wrote (traceEvents, otherData.timing "host" or "device", distributedInfo.world_size). A trace
 * refused part-way holds nothing: what was read of it is freed. */
static int load_trace(const char *path, TraceFile *t)
{
    size_t length = 0;
    char *text = read_whole(path, &length);
    if (text == NULL) {
        fprintf(TRACE_COMPLAINTS, "analyze_traces: cannot read %s\n", path);
        return -1;
    }
    cJSON *root = cJSON_ParseWithLength(text, length);
    int status = -1;
    if (root == NULL) {
        const char *stop = cJSON_GetErrorPtr();
        fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: not JSON (the parser stopped at byte %ld of %zu)\n", path,
                stop != NULL && stop >= text && stop <= text + length ? (long)(stop - text) : 0L, length);
    } else {
        const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
        const cJSON *timing = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "otherData"),
                                                               "timing");
        const cJSON *world = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(root, "distributedInfo"), "world_size");
        if (!cJSON_IsArray(events) || !cJSON_IsString(timing) || !cJSON_IsNumber(world) || world->valueint < 1)
            fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: not a trace that --trace wrote (it needs traceEvents, "
                            "otherData.timing and distributedInfo.world_size)\n", path);
        else if (strcmp(timing->valuestring, "host") != 0 && strcmp(timing->valuestring, "device") != 0)
            fprintf(TRACE_COMPLAINTS, "analyze_traces: %s: otherData.timing is \"%.40s\", not \"host\" or \"device\": "
                            "it cannot say how the tracks were timed\n", path, timing->valuestring);
        else if ((status = take_events(path, events, t)) == 0) {
            /* the counters are written one after another, each in order of its own: in time order */
            qsort(t->samples, t->num_samples, sizeof *t->samples, by_time);
            t->world = world->valueint;
            t->host_timing = strcmp(timing->valuestring, "host") == 0;
        }
        cJSON_Delete(root);
    }
    free(text);
    if (status != 0)
        trace_file_free(t);
    return status;
}

/* The trainer marks each optimizer step with a slice "step#N" on the compute track, as
 * PyTorch's profiler marks ProfilerStep#N. */
static int is_step_slice(const Event *e) { return e->tid == 0 && strncmp(e->name, "step#", 5) == 0; }

/* Whether ts falls in one of the sorted step slices after the first `skip`. */
static int in_counted_step(const Intervals *steps, int skip, double ts)
{
    size_t low = 0, high = steps->count; /* the first slice starting after ts */
    while (low < high) {
        size_t mid = (low + high) / 2;
        if (steps->items[mid].start <= ts)
            low = mid + 1;
        else
            high = mid;
    }
    return low > (size_t)skip && ts < steps->items[low - 1].end;
}

/* A collective on the communication track that the compute after it waits for: not a
 * started one (all_reduce_start) and not a wait. */
static int is_blocking_collective(const Event *e)
{
    size_t length = strlen(e->name);
    return e->tid == 1 && !(length >= 6 && strcmp(e->name + length - 6, "_start") == 0);
}

/* The step slices of a trace, sorted by start; none in a trace that marks no steps. */
static Intervals step_slices(const TraceFile *t)
{
    Intervals steps = {0};
    for (size_t i = 0; i < t->count; i++)
        if (is_step_slice(&t->events[i]) && add(&steps, t->events[i].ts, t->events[i].ts + t->events[i].dur) != 0) {
            fprintf(stderr, "analyze_traces: out of memory\n");
            exit(1);
        }
    if (steps.count > 1)
        qsort(steps.items, steps.count, sizeof *steps.items, by_start);
    return steps;
}

/* One event into the rank's lists: compute, or communication (and a device-timed trace's
 * blocking collectives beside it). -1 when out of memory. */
static int take_event(RankTrace *r, const Event *e)
{
    if (e->tid == 0) {
        r->steps += strcmp(e->name, "optimizer step") == 0;
        return add(&r->compute, e->ts, e->ts + e->dur);
    }
    count_op(r, e->name, e->dur);
    if (!r->host_timing && is_blocking_collective(e) && add(&r->blocking, e->ts, e->ts + e->dur) != 0)
        return -1;
    return add(&r->comm, e->ts, e->ts + e->dur);
}

/* A trace that marks its steps is read over the steps after the warm-up ones, each event by
 * the step it starts in (validation, set-up and the end of the run are in none); one that
 * does not, over everything from its first event to its last. -1 when out of memory, with
 * nothing kept. */
static int read_rank(const TraceFile *t, RankTrace *r)
{
    Intervals steps = step_slices(t);
    r->warmup = steps.count > 0 ? summary_warmup_steps((int)steps.count) : 0;
    r->first = 1e300;
    r->last = -1e300;
    r->host_timing = t->host_timing;
    int status = 0;
    for (size_t i = 0; i < t->count && status == 0; i++) {
        const Event *e = &t->events[i];
        if (is_step_slice(e) || (steps.count > 0 && !in_counted_step(&steps, r->warmup, e->ts)))
            continue;
        if (e->ts < r->first)
            r->first = e->ts;
        if (e->ts + e->dur > r->last)
            r->last = e->ts + e->dur;
        status = take_event(r, e);
    }
    r->span = r->last > r->first ? r->last - r->first : 0.0;
    if (steps.count > 0) {
        r->span = 0.0;
        for (size_t k = (size_t)r->warmup; k < steps.count; k++)
            r->span += steps.items[k].end - steps.items[k].start;
    }
    free(steps.items);
    if (status != 0)
        rank_trace_free(r);
    return status;
}

typedef struct {
    double span, compute, exposed, overlap, idle, comm;
} Breakdown;

static Breakdown breakdown(RankTrace *r)
{
    Breakdown b;
    b.span = r->span;
    merge(&r->compute);
    b.comm = merge(&r->comm);
    merge(&r->blocking);
    if (subtract(&r->compute, r->host_timing ? &r->comm : &r->blocking) != 0) {
        fprintf(stderr, "analyze_traces: out of memory\n");
        exit(1);
    }
    b.compute = total_length(&r->compute);
    b.overlap = intersection(&r->compute, &r->comm);
    b.exposed = b.comm - b.overlap;
    b.idle = b.span - b.compute - b.exposed;
    return b;
}

static double per_step(double us, long steps)
{
    return us / 1e3 / (steps > 0 ? steps : 1); /* ms */
}

static void write_csv(FILE *out, RankTrace *ranks, Breakdown *b, int n)
{
    fprintf(out, "rank,steps,compute_ms,comm_exposed_ms,comm_overlap_ms,idle_ms,compute_pct,non_compute_pct,"
                 "idle_pct,overlap_pct,comm_calls,comm_ms\n");
    for (int r = 0; r < n; r++) {
        long calls = 0;
        for (int i = 0; i < ranks[r].num_ops; i++)
            calls += ranks[r].ops[i].calls;
        double span = b[r].span > 0 ? b[r].span : 1.0;
        long s = ranks[r].steps;
        fprintf(out, "%d,%ld,%.4f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f,%.2f,%ld,%.4f\n", r, s, per_step(b[r].compute, s),
                per_step(b[r].exposed, s), per_step(b[r].overlap, s), per_step(b[r].idle, s),
                100 * b[r].compute / span, 100 * (span - b[r].compute) / span, 100 * b[r].idle / span,
                b[r].comm > 0 ? 100 * b[r].overlap / b[r].comm : 0.0, calls, per_step(b[r].comm, s));
    }
}

static void write_html(FILE *out, RankTrace *ranks, Breakdown *b, int n)
{
    fprintf(out, "<!doctype html><html><head><meta charset=\"utf-8\"><title>trace summary</title></head><body>\n"
                 "<h1>Where the time went, per rank and step</h1>\n<table border=\"1\"><tr><th>rank</th>"
                 "<th>compute ms</th><th>exposed comm ms</th><th>overlapped comm ms</th><th>idle ms</th>"
                 "<th>overlap %%</th></tr>\n");
    for (int r = 0; r < n; r++) {
        long s = ranks[r].steps;
        fprintf(out, "<tr><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.1f</td></tr>\n", r,
                per_step(b[r].compute, s), per_step(b[r].exposed, s), per_step(b[r].overlap, s),
                per_step(b[r].idle, s), b[r].comm > 0 ? 100 * b[r].overlap / b[r].comm : 0.0);
    }
    fprintf(out, "</table>\n<h2>Communication calls, per rank (counted steps)</h2>\n<table border=\"1\"><tr><th>rank</th>"
                 "<th>call</th><th>calls</th><th>total ms</th><th>ms per call</th></tr>\n");
    for (int r = 0; r < n; r++)
        for (int i = 0; i < ranks[r].num_ops; i++) {
            const OpStats *op = &ranks[r].ops[i];
            fprintf(out, "<tr><td>%d</td><td>%s</td><td>%ld</td><td>%.3f</td><td>%.4f</td></tr>\n", r, op->name,
                    op->calls, op->total_us / 1e3, op->total_us / 1e3 / (double)op->calls);
        }
    fprintf(out, "</table>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"%d\">\n", 40 + 30 * n);
    const char *colours[] = {"#4878d0", "#d65f5f", "#ee854a", "#cccccc"};
    const char *labels[] = {"compute", "exposed comm", "overlapped comm", "idle"};
    for (int r = 0; r < n; r++) {
        double parts[4] = {b[r].compute, b[r].exposed, b[r].overlap, b[r].idle}, x = 60;
        double span = b[r].span > 0 ? b[r].span : 1.0;
        fprintf(out, "<text x=\"0\" y=\"%d\">rank %d</text>\n", 20 + 30 * r, r);
        for (int p = 0; p < 4; p++) {
            double width = 560 * (parts[p] > 0 ? parts[p] : 0) / span;
            fprintf(out, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"20\" fill=\"%s\"><title>%s</title></rect>\n",
                    x, 5 + 30 * r, width, colours[p], labels[p]);
            x += width;
        }
    }
    for (int p = 0; p < 4; p++)
        fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s</text>\n", 60 + 140 * p, 30 + 30 * n, colours[p], labels[p]);
    fprintf(out, "</svg>\n</body></html>\n");
}

static void print_summary(RankTrace *ranks, Breakdown *b, int n)
{
    if (ranks[0].warmup > 0)
        printf("per step over steps %d-%ld of each rank: the first %d are warm-up, left out as the run's summary "
               "leaves them out\n", ranks[0].warmup + 1, ranks[0].warmup + ranks[0].steps, ranks[0].warmup);
    printf("%-5s %6s %11s %11s %11s %9s %9s\n", "rank", "steps", "compute ms", "exposed ms", "overlap ms", "idle ms",
           "overlap%");
    for (int r = 0; r < n; r++) {
        long s = ranks[r].steps;
        printf("%-5d %6ld %11.3f %11.3f %11.3f %9.3f %9.1f\n", r, s, per_step(b[r].compute, s),
               per_step(b[r].exposed, s), per_step(b[r].overlap, s), per_step(b[r].idle, s),
               b[r].comm > 0 ? 100 * b[r].overlap / b[r].comm : 0.0);
        for (int i = 0; i < ranks[r].num_ops; i++)
            printf("        %-18s %7ld calls %10.3f ms\n", ranks[r].ops[i].name, ranks[r].ops[i].calls,
                   ranks[r].ops[i].total_us / 1e3);
    }
}

/* What summary.csv and summary.html are written from. */
typedef struct {
    RankTrace *ranks;
    Breakdown *breakdowns;
    int count;
} Analysis;

/* 0, or -1 with "PATH: write failed" once a write to out has failed. */
static int check_written(FILE *out, const char *path, char *err, size_t err_len)
{
    if (!ferror(out))
        return 0;
    snprintf(err, err_len, "%s: write failed", path);
    return -1;
}

static int write_summary_csv(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const Analysis *a = what;
    write_csv(out, a->ranks, a->breakdowns, a->count);
    return check_written(out, path, err, err_len);
}

static int write_summary_html(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const Analysis *a = what;
    write_html(out, a->ranks, a->breakdowns, a->count);
    return check_written(out, path, err, err_len);
}

/* DIR/NAME through write, whole or not at all; 1 with one line printed when it fails. */
static int write_output(const char *dir, const char *name, FileWriter write, const void *what)
{
    char path[1200], err[1400];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (write_file_atomically(path, write, what, err, sizeof err) != 0) {
        fprintf(stderr, "analyze_traces: %s\n", err);
        return 1;
    }
    return 0;
}

static int write_outputs(const char *dir, RankTrace *ranks, Breakdown *b, int n)
{
    Analysis analysis = {ranks, b, n};
    if (write_output(dir, "summary.csv", write_summary_csv, &analysis) != 0)
        return 1;
    return write_output(dir, "summary.html", write_summary_html, &analysis);
}

/* Finds optimizer step `step` of one rank: it begins where the previous optimizer step ended
 * (the first at the rank's first event) and ends with its own optimizer step. */
static int find_step(const TraceFile *t, int step, double *begin, double *end)
{
    int seen = 0;
    double first = 1e300;
    for (size_t i = 0; i < t->count && seen < step; i++) {
        const Event *e = &t->events[i];
        if (e->ts < first)
            first = e->ts;
        if (e->tid == 0 && strcmp(e->name, "optimizer step") == 0 && ++seen >= step - 1)
            *(seen == step - 1 ? begin : end) = e->ts + e->dur;
    }
    if (step == 1)
        *begin = first;
    return seen == step ? 0 : -1;
}

/* What timeline.csv is written from: optimizer step `step` of every rank's trace. */
typedef struct {
    const char *dir;
    const TraceFile *files;
    int ranks, step;
} Timeline;

/* Where the timeline's step begins and ends on one rank; -1 with the reason when it has fewer steps. */
static int step_bounds(const Timeline *timeline, int rank, double *begin, double *end, char *err, size_t err_len)
{
    if (find_step(&timeline->files[rank], timeline->step, begin, end) == 0)
        return 0;
    snprintf(err, err_len, "--timeline %d: %s/rank_%d.json has fewer steps", timeline->step, timeline->dir, rank);
    return -1;
}

static int timeline_rank(FILE *out, const Timeline *timeline, int rank, char *err, size_t err_len)
{
    double begin = 0, end = 0;
    const TraceFile *t = &timeline->files[rank];
    if (step_bounds(timeline, rank, &begin, &end, err, err_len) != 0)
        return -1;
    for (size_t i = 0; i < t->count; i++) {
        const Event *e = &t->events[i];
        if (e->ts >= begin && e->ts < end && !is_step_slice(e))
            fprintf(out, "%d,%d,%.4f,%.4f,%s\n", rank, e->tid, (e->ts - begin) / 1e3, (e->ts + e->dur - begin) / 1e3,
                    e->name);
    }
    return 0;
}

/* A rank with fewer steps fails the whole file: half a timeline would draw as a wrong picture,
 * and the writer then leaves any earlier timeline.csv as it was. */
static int write_timeline_csv(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const Timeline *timeline = what;
    fprintf(out, "rank,track,start_ms,end_ms,name\n");
    for (int r = 0; r < timeline->ranks; r++)
        if (timeline_rank(out, timeline, r, err, err_len) != 0)
            return -1;
    return check_written(out, path, err, err_len);
}

static void write_memory_row(FILE *out, int rank, double ms, const double *mb)
{
    fprintf(out, "%d,%.4f", rank, ms);
    for (int s = 0; s < NUM_SERIES; s++)
        fprintf(out, ",%.6f", mb[s]);
    fputc('\n', out);
}

/* The counters of one rank over the step: what they held when it began (the samples before it,
 * replayed), then each change inside it. A trace without counters gives no rows. */
static int memory_rank(FILE *out, const Timeline *timeline, int rank, char *err, size_t err_len)
{
    double begin = 0, end = 0, mb[NUM_SERIES] = {0};
    const TraceFile *t = &timeline->files[rank];
    if (step_bounds(timeline, rank, &begin, &end, err, err_len) != 0)
        return -1;
    if (t->num_samples == 0)
        return 0;
    size_t i = 0;
    for (; i < t->num_samples && t->samples[i].ts < begin; i++)
        mb[t->samples[i].series] = t->samples[i].mb;
    write_memory_row(out, rank, 0.0, mb);
    for (; i < t->num_samples && t->samples[i].ts < end; i++) {
        if (mb[t->samples[i].series] == t->samples[i].mb)
            continue; /* a memory sample carries every kind: most of them as they were */
        double ms = (t->samples[i].ts - begin) / 1e3;
        write_memory_row(out, rank, ms, mb);
        mb[t->samples[i].series] = t->samples[i].mb;
        write_memory_row(out, rank, ms, mb);
    }
    write_memory_row(out, rank, (end - begin) / 1e3, mb);
    return 0;
}

static int write_memory_csv(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    const Timeline *timeline = what;
    fprintf(out, "rank,time_ms");
    for (int kind = 0; kind < MEM_NUM_KINDS; kind++)
        fprintf(out, ",%s_mb", mem_kind_name((MemKind)kind));
    fprintf(out, ",gathered_mb\n");
    for (int r = 0; r < timeline->ranks; r++)
        if (memory_rank(out, timeline, r, err, err_len) != 0)
            return -1;
    return check_written(out, path, err, err_len);
}

/* A --timeline step that a rank lacks is bad input: refused in one line before anything is
 * printed or written. */
static int check_timeline_step(const char *dir, const TraceFile *files, int ranks, int step)
{
    Timeline timeline = {dir, files, ranks, step};
    char err[512];
    double begin, end;
    for (int r = 0; r < ranks; r++)
        if (step_bounds(&timeline, r, &begin, &end, err, sizeof err) != 0) {
            fprintf(stderr, "analyze_traces: %s\n", err);
            return 2;
        }
    return 0;
}

static int write_timeline(const char *dir, const TraceFile *files, int ranks, int step)
{
    Timeline timeline = {dir, files, ranks, step};
    if (write_output(dir, "timeline.csv", write_timeline_csv, &timeline) != 0)
        return 1;
    return write_output(dir, "memory.csv", write_memory_csv, &timeline);
}

/* Every rank's trace in DIR read and broken down; *n: the ranks read (each to be freed). 1 with
 * one line printed when a rank's trace is missing or refused, or memory runs out. */
static int read_ranks(const char *dir, TraceFile *files, RankTrace *ranks, Breakdown *b, int *n)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    if (load_trace(path, &files[0]) != 0)
        return 1;
    int world = files[0].world;
    if (world > MAX_RANKS) {
        fprintf(stderr, "analyze_traces: %s is from a run of %d ranks; at most %d are read\n", path, world, MAX_RANKS);
        trace_file_free(&files[0]);
        return 1;
    }
    for (int r = 0; r < world; r++) {
        snprintf(path, sizeof path, "%s/rank_%d.json", dir, r);
        if (r > 0 && load_trace(path, &files[r]) != 0) /* a missing rank is an error, not a smaller run */
            return 1;
        *n = r + 1;
        if (read_rank(&files[r], &ranks[r]) != 0) {
            fprintf(stderr, "analyze_traces: out of memory reading %s\n", path);
            return 1;
        }
        b[r] = breakdown(&ranks[r]);
    }
    return 0;
}

static int usage(FILE *out, int status)
{
    fprintf(out, "usage: analyze_traces DIR [--timeline STEP]   (DIR: the folder a run's --trace wrote)\n"
                 "  --timeline STEP  also write DIR/timeline.csv and DIR/memory.csv: the events and the memory\n"
                 "                   counters of optimizer step STEP (from 1)\n");
    return status;
}

typedef struct {
    int timeline_step; /* 0: none */
} Options;

static const Flag flags[] = {
    {"timeline", FLAG_INT, offsetof(Options, timeline_step),
     "also write DIR/timeline.csv and DIR/memory.csv: the events and the memory counters of optimizer step STEP "
     "(from 1)", 1, 1000000, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

int main(int argc, char **argv)
{
    if (argc == 2 && cli_is_help(argv[1]))
        return usage(stdout, 0);
    if (argc < 2 || strncmp(argv[1], "--", 2) == 0)
        return usage(stderr, 2);
    Options options = {0};
    FlagSet set = {"analysis", flags, &options};
    char err[256];
    if (cli_parse(argc, argv, 2, &set, 1, err, sizeof err) != 0) {
        fprintf(stderr, "analyze_traces: %s\n", err);
        return 2;
    }
    static RankTrace ranks[MAX_RANKS];
    static TraceFile files[MAX_RANKS];
    Breakdown b[MAX_RANKS];
    int n = 0, status = read_ranks(argv[1], files, ranks, b, &n);
    if (status == 0 && options.timeline_step > 0)
        status = check_timeline_step(argv[1], files, n, options.timeline_step);
    if (status == 0) {
        print_summary(ranks, b, n);
        status = write_outputs(argv[1], ranks, b, n);
    }
    if (status == 0 && options.timeline_step > 0)
        status = write_timeline(argv[1], files, n, options.timeline_step);
    for (int r = 0; r < n; r++) {
        rank_trace_free(&ranks[r]);
        trace_file_free(&files[r]);
    }
    return status;
}
