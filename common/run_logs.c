#include "run_logs.h"

#include <stdio.h>
#include <stdlib.h>

#include "comm_log.h"

void run_logs_start_comm_log(int keep)
{
    comm_log_keep(keep);
    mem_set_listener(comm_log_memory);
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
    comm_log_forget();
    return rank == 0 ? status : 0;
}
