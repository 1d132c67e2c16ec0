/* The communication log of a whole run: every rank's records (comm_log.h) gathered to rank
 * 0 over the communicator and written there as one file. It sits above both, so that the
 * log itself only records. */
#ifndef DTC_RUN_LOGS_H
#define DTC_RUN_LOGS_H

#include <stddef.h>

#include "comm.h"

/* Starts this process's communication log for a run: the allocator tells it of every block
 * from here on (its listener), and with keep it holds every event until written, not only
 * the current step's. */
void run_logs_start_comm_log(int keep);

/* Every rank's events to rank 0, which writes them to path as one CSV, rank by rank, then
 * forgets them. A collective: every rank calls it. Returns 0, or -1 with a one-line reason
 * on rank 0. A log missing a rank's events would read as a rank that did nothing, so the
 * file is written only when every rank has its whole log and rank 0 room to collect them. */
int run_logs_write_comm_log(Comm *comm, const char *path, char *err, size_t err_len);

#endif
