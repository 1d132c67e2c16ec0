/* Per-rank timelines in Chrome's trace-event format, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open. A run with --trace DIR records, on this process:
 *   compute        forward and backward of every unit, data loading, the optimizer step
 *   communication  every communicator call that starts or does a collective
 *   waits          every wait on / test of a non-blocking collective
 * and writes DIR/rank_R.json per rank, then DIR/merged.json with a process per rank.
 *
 * Recording goes to one trace per process (trace_start makes it current), so the model and
 * the communicator record without being handed a trace; with none started, trace_record
 * costs one branch. Times are seconds on the monotonic clock (timer.h), which every rank of
 * one machine shares. */
#ifndef DTC_TRACE_H
#define DTC_TRACE_H

#include <stddef.h>

typedef enum { TRACK_COMPUTE, TRACK_COMM, TRACK_WAIT, NUM_TRACKS } TraceTrack;

/* Before a run: dir exists as a folder this process can write into (created if missing),
 * and the trace files it will hold there (rank_R.json, merged.json) are regular files or
 * absent. Returns 0, or -1 with "--trace DIR: ..." naming the problem. */
int trace_check_dir(const char *dir, int world, char *err, size_t err_len);

/* Starts recording for this rank into dir (created if missing). Returns 0, or -1 with a
 * reason. */
int trace_start(const char *dir, int rank, int world, char *err, size_t err_len);
int trace_enabled(void);

/* One complete event; name must be a string that lives for the whole run (a literal);
 * unit >= 0 is appended to it ("forward unit 3"). */
void trace_record(TraceTrack track, const char *name, int unit, double start_seconds, double end_seconds);

/* Writes dir/rank_R.json and stops recording. Returns 0, or -1 with a reason. */
int trace_finish(char *err, size_t err_len);

/* Rank 0, once every rank has finished: dir/merged.json from the per-rank files. */
int trace_merge(const char *dir, int world, char *err, size_t err_len);

#endif
