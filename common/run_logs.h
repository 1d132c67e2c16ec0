/* The files a run writes from its record of events (events.h): the communication log and
 * the timeline, every rank's events gathered to rank 0 over the communicator and written
 * there. It sits above the record, its two writers (comm_log.h, trace.h) and the
 * communicator, so that the record itself only records. */
#ifndef DTC_RUN_LOGS_H
#define DTC_RUN_LOGS_H

#include <stddef.h>

#include "comm.h"

/* Starts this process's record of events for a run: the allocator tells it of every change
 * from here on (its listener); with keep it holds every event until written, not only the
 * current step's; with memory_track it notes the bytes in use at every change (a trace's
 * memory track, which starts here, set-up included). */
void run_logs_start(int keep, int memory_track);

/* Every rank's events to rank 0, which writes them to path as one CSV, rank by rank, then
 * forgets them. A collective: every rank calls it. Returns 0, or -1 with a one-line reason
 * on rank 0. A log missing a rank's events would read as a rank that did nothing, so the
 * file is written only when every rank has its whole log and rank 0 room to collect them. */
int run_logs_write_comm_log(Comm *comm, const char *path, char *err, size_t err_len);

/* Every rank writes its timeline (dir/rank_R.json) where it runs and sends its events to
 * rank 0, which writes dir/merged.json: no shared file system needed. A collective; returns
 * 0, or -1 with a one-line reason; says where the files are unless quiet. */
int run_logs_write_trace(Comm *comm, const char *dir, int quiet, char *err, size_t err_len);

#endif
