/* Per-rank timelines in Chrome's trace-event format, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open, written from this process's record of events (events.h). A run
 * with --trace DIR shows, on this process:
 *   compute        a slice per optimizer step ("step#N") holding forward and backward of every
 *                  unit, data loading and the optimizer step
 *   communication  every communicator call that starts or does a collective
 *   waits          every wait on / test of a non-blocking collective
 *   memory (MB)    the tracking allocator's bytes in use by kind, at every allocation and
 *                  free since the run began (set-up included)
 * and any counter the code keeps with events_count,
 * and writes DIR/rank_R.json per rank, where the rank runs, then DIR/merged.json with a
 * process per rank, where rank 0 runs (the ranks' events come to it over MPI: run_logs.h).
 *
 * Times are seconds on the monotonic clock (timer.h), moved onto rank 0's: every machine's
 * monotonic clock starts at its own boot. */
#ifndef DTC_TRACE_H
#define DTC_TRACE_H

#include <stddef.h>

struct TraceDeviceClock; /* events.h */

/* Before a run: dir exists as a folder this process can write into (created if missing),
 * and the trace files it will hold there (rank_R.json, merged.json) are regular files or
 * absent. Returns 0, or -1 with "--trace DIR: ..." naming the problem. */
int trace_check_dir(const char *dir, int world, char *err, size_t err_len);

/* Starts the timeline of this rank into dir (created if missing): the record of events takes
 * its slices from now on, timed on clock (NULL: the host's; a GPU's trace is timed on the
 * GPU); clock_offset is added to every time written (comm_clock_offset: rank 0's clock).
 * Returns 0, or -1 with a reason. */
int trace_start(const char *dir, int rank, int world, double clock_offset, const struct TraceDeviceClock *clock,
                char *err, size_t err_len);
int trace_enabled(void);

/* The counters' names, as the trace and its readers (tools/analyze_traces) spell them. */
#define TRACE_MEMORY_COUNTER "memory (MB)"
#define TRACE_GATHERED_COUNTER "parameters gathered, in use (MB)"

/* This rank's lines of the merged trace (malloc'd; the caller frees it), before trace_finish;
 * NULL when memory runs out. */
char *trace_lines(size_t *length);

/* Writes dir/rank_R.json and stops recording. Returns 0, or -1 with a reason. */
int trace_finish(char *err, size_t err_len);

/* Rank 0: dir/merged.json from every rank's trace_lines, in rank order. */
int trace_write_merged(const char *dir, int world, const char *lines, size_t length, char *err, size_t err_len);

#endif
