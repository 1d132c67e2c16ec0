#include "run_logs.h"

#include <stdio.h>
#include <stdlib.h>

#include "comm_log.h"
#include "events.h"
#include "trace.h"

void run_logs_start(int keep, int memory_track)
{
    events_start(keep, memory_track);
    mem_set_listener(events_memory);
}

int run_logs_write_comm_log(Comm *comm, const char *path, char *err, size_t err_len)
{
    size_t length = 0, total = 0;
    int whole = 0, rank = comm_rank(comm);
    char *rows = comm_log_rows(rank, &length, &whole), *all = NULL;
    int status = comm_gather_text(comm, rows, length, rows != NULL && whole, &all, &total);
    if (rank == 0) {
        if (status != 0)
            snprintf(err, err_len, "--comm-log %s: out of memory collecting the ranks' logs", path);
        else
            status = comm_log_write_rows(path, all, total, err, err_len);
    }
    free(all);
    free(rows);
    events_forget();
    return rank == 0 ? status : 0;
}

int run_logs_write_trace(Comm *comm, const char *dir, int quiet, char *err, size_t err_len)
{
    size_t length = 0, total = 0;
    int rank = comm_rank(comm), world = comm_size(comm);
    char *lines = trace_lines(&length), *all = NULL;
    int status = trace_finish(err, err_len);
    if (comm_gather_text(comm, lines, length, lines != NULL && status == 0, &all, &total) != 0 && status == 0) {
        snprintf(err, err_len, "--trace %s: not every rank's trace could be collected", dir);
        status = -1;
    }
    if (status == 0 && rank == 0) {
        status = trace_write_merged(dir, world, all, total, err, err_len);
        if (status == 0 && !quiet)
            printf("trace: %s/rank_0..%d.json and %s/merged.json (open in ui.perfetto.dev)\n", dir, world - 1, dir);
    }
    free(lines);
    free(all);
    return status;
}
