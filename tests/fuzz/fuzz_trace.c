/* The trace analyzer's reader (tools/analyze_traces.c, its own main renamed) on any bytes:
 * a trace's breakdown and its first step's memory rows, or a one-line refusal, never a crash;
 * and everything freed with the analyzer's own functions, so a list it forgets leaks here. */
#define _GNU_SOURCE
#include "fuzz_input.h"

static FILE *refusals; /* /dev/null: the reader's one-line refusals are expected here */
#define TRACE_COMPLAINTS refusals
#define main analyze_traces_main
#include "../../tools/analyze_traces.c"
#undef main

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    refusals = fopen("/dev/null", "w");
    return refusals != NULL ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    TraceFile trace = {0};
    if (load_trace(path, &trace) == 0) {
        RankTrace rank = {0};
        if (read_rank(&trace, &rank) == 0) {
            breakdown(&rank);
            rank_trace_free(&rank);
        }
        char err[256];
        Timeline first_step = {"fuzz", &trace, 1, 1}; /* memory.csv's rows of step 1, to /dev/null */
        memory_rank(refusals, &first_step, 0, err, sizeof err);
        trace_file_free(&trace);
    }
    close(fd);
    return 0;
}
