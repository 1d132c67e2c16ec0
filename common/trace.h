/* Per-rank timelines in Chrome's trace-event format, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open. A run with --trace DIR records, on this process:
 *   compute        a slice per optimizer step ("step#N") holding forward and backward of every
 *                  unit, data loading and the optimizer step
 *   communication  every communicator call that starts or does a collective
 *   waits          every wait on / test of a non-blocking collective
 *   memory (MB)    the tracking allocator's bytes in use by kind, at every allocation and
 *                  free since the run began (set-up included; alloc.h's history)
 * and any counter the code keeps with trace_count,
 * and writes DIR/rank_R.json per rank, where the rank runs, then DIR/merged.json with a
 * process per rank, where rank 0 runs (the ranks' events come to it over MPI).
 *
 * Recording goes to one trace per process (trace_start makes it current), so the model and
 * the communicator record without being handed a trace; with none started, trace_record
 * costs one branch. Times are seconds on the monotonic clock (timer.h), moved onto rank 0's:
 * every machine's monotonic clock starts at its own boot. */
#ifndef DTC_TRACE_H
#define DTC_TRACE_H

#include <stddef.h>

typedef enum { TRACK_COMPUTE, TRACK_COMM, TRACK_WAIT, NUM_TRACKS } TraceTrack;

/* Before a run: dir exists as a folder this process can write into (created if missing),
 * and the trace files it will hold there (rank_R.json, merged.json) are regular files or
 * absent. Returns 0, or -1 with "--trace DIR: ..." naming the problem. */
int trace_check_dir(const char *dir, int world, char *err, size_t err_len);

/* Starts recording for this rank into dir (created if missing); clock_offset is added to
 * every time written (comm_clock_offset: rank 0's clock). Returns 0, or -1 with a reason. */
int trace_start(const char *dir, int rank, int world, double clock_offset, char *err, size_t err_len);
int trace_enabled(void);

/* One complete event; name must be a string that lives for the whole run (a literal);
 * unit >= 0 is appended to it ("forward unit 3"), or to a name ending in '#' as the number
 * alone ("step#7": the slice of one optimizer step, as PyTorch's profiler has ProfilerStep#7). */
void trace_record(TraceTrack track, const char *name, int unit, double start_seconds, double end_seconds);

/* A span whose end decides its name: trace_begin marks where one starts on track (one open
 * span per track), trace_end records it from there to here (trace_mark). Both cost a branch when no trace
 * is recording. The model marks each unit's computation this way. */
void trace_begin(TraceTrack track);
void trace_end(TraceTrack track, const char *name, int unit);

/* Where the events' times come from. On the CPU (and by default) the host's clock: an event
 * is when the rank's one thread did the work. A GPU queues work and runs it later, on
 * streams side by side, so its trace is timed there: a mark is a marker queued on a stream,
 * whose time is read once the device has passed it (trace_settle), and the compute and
 * communication tracks show when the GPU computed and when it communicated. */
typedef struct TraceDeviceClock {
    int (*mark)(void *stream);     /* queues a marker on stream (NULL: the compute stream): its number, or -1 */
    double (*seconds)(int marker); /* when the device passed it, on the host's monotonic clock */
    void (*forget)(void);          /* every marker was read: numbers start again, and the clock re-anchors */
} TraceDeviceClock;

/* Times this process's trace, once started, on the device from now on (NULL: on the host). */
void trace_use_device_clock(const TraceDeviceClock *clock);

/* A moment: the host's time, and on a device clock the marker that will say when the
 * device got there. Costs a branch when no trace is recording. */
typedef struct {
    double seconds;
    int marker; /* -1: seconds is the time */
} TraceMark;
TraceMark trace_mark(void);               /* on the compute stream */
TraceMark trace_mark_on(void *stream);    /* on a stream of the device's own (NCCL's) */
void trace_span(TraceTrack track, const char *name, int unit, TraceMark start, TraceMark end);

/* Reads the time of every marker queued so far; the device must be past them all (after
 * Kernels.synchronize). The trainer calls it at the end of each step. */
void trace_settle(void);

/* The counters' names, as the trace and its readers (tools/analyze_traces) spell them. */
#define TRACE_MEMORY_COUNTER "memory (MB)"
#define TRACE_GATHERED_COUNTER "parameters gathered, in use (MB)"

/* Adds delta to the counter named (a literal), now; Perfetto draws each counter as a track
 * of its own. Costs a branch when no trace is recording. */
void trace_count(const char *name, double delta);

/* This rank's lines of the merged trace (malloc'd; the caller frees it), before trace_finish;
 * NULL when memory runs out. */
char *trace_lines(size_t *length);

/* Writes dir/rank_R.json and stops recording. Returns 0, or -1 with a reason. */
int trace_finish(char *err, size_t err_len);

/* Rank 0: dir/merged.json from every rank's trace_lines, in rank order. */
int trace_write_merged(const char *dir, int world, const char *lines, size_t length, char *err, size_t err_len);

#endif
