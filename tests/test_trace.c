/* --trace: the timeline files Perfetto opens. The writer on known events, and a real 2-rank
 * run: every event has the fields the trace-event format needs, each rank's file names its
 * rank, and the merged file holds both ranks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "alloc.h"
#include "shell.h"
#include "comm_log.h"
#include "events.h"
#include "run_logs.h"
#include "trace.h"

static char dir[64];

static void make_dir(void) { cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "trace")); }
static void remove_dir(void) { shell_remove_dir(dir); }

TestSuite(trace, .init = make_dir, .fini = remove_dir, .timeout = 300);

static char *read_file(const char *path)
{
    static char text[1 << 20];
    cr_assert_geq(files_read_into(path, text, sizeof text), 0, "%s is missing or larger than %zu bytes", path,
                  sizeof text - 1);
    return text;
}

/* A slice recorded once in the record of events, and the timeline written from it. */
static void slice(TraceTrack track, const char *name, int unit, double begin, double end)
{
    events_span(track, name, unit, (TraceMark){begin, -1}, (TraceMark){end, -1});
}

Test(trace, the_writer_puts_each_event_on_its_track_in_microseconds)
{
    char err[256], path[128];
    run_logs_start(1, 0);
    cr_assert_eq(trace_start(dir, 3, 4, 0.0, NULL, err, sizeof err), 0, "%s", err);
    cr_assert(trace_enabled());
    slice(TRACK_COMPUTE, "forward", 2, 1.0, 1.0005);
    slice(TRACK_COMM, "all_reduce", -1, 1.25, 1.5);
    slice(TRACK_WAIT, "wait", -1, 2.0, 2.000001);
    cr_assert_eq(trace_finish(err, sizeof err), 0, "%s", err);
    cr_assert(!trace_enabled());
    events_forget();
    snprintf(path, sizeof path, "%s/rank_3.json", dir);
    const char *text = read_file(path);
    cr_expect_not_null(strstr(text, "{\"ph\":\"X\",\"pid\":3,\"tid\":0,\"cat\":\"compute\",\"name\":\"forward unit 2\","
                                    "\"ts\":1000000.000,\"dur\":500.000"), "%s", text);
    cr_expect_not_null(strstr(text, "\"tid\":1,\"cat\":\"communication\",\"name\":\"all_reduce\",\"ts\":1250000.000,"
                                    "\"dur\":250000.000"), "%s", text);
    cr_expect_not_null(strstr(text, "\"tid\":2,\"cat\":\"waits\",\"name\":\"wait\",\"ts\":2000000.000,\"dur\":1.000"),
                       "%s", text);
    cr_expect_not_null(strstr(text, "\"distributedInfo\":{\"rank\":3,\"world_size\":4}"), "%s", text);
    cr_expect_not_null(strstr(text, "\"name\":\"thread_name\",\"args\":{\"name\":\"communication\"}"), "%s", text);
}

/* The log and the timeline come from the same events: a unit's marks are the log's rows and
 * its slice, a call is the log's row and its slice on the communication track, and what the
 * timeline alone shows (a slice of its own) is no row of the log. */
Test(trace, the_log_and_the_timeline_are_written_from_one_record)
{
    char err[256], path[128];
    run_logs_start(1, 0);
    cr_assert_eq(trace_start(dir, 0, 1, 0.0, NULL, err, sizeof err), 0, "%s", err);
    TraceMark began = events_mark_begin("forward_start", 4, NULL, 10);
    events_mark_end("forward_end", 4, began, "forward");
    events_call(&(CallEvent){"all_reduce", CALL_BLOCKING, 6, 6, NULL, -1, -1,
                             {"all_reduce", TRACK_COMM, {5.0, -1}, {5.5, -1}}, -1, -1, NULL});
    slice(TRACK_COMPUTE, "data", -1, 6.0, 6.5);
    size_t length = 0;
    int whole = 0;
    char *rows = comm_log_rows(7, &length, &whole);
    cr_assert_not_null(rows);
    cr_expect(whole);
    cr_assert_eq(trace_finish(err, sizeof err), 0, "%s", err);
    events_forget();
    cr_expect_not_null(strstr(rows, "7,0,0.000,0,0,forward_start,4,,10,"), "%s", rows);
    cr_expect_not_null(strstr(rows, ",forward_end,4,,"), "%s", rows);
    cr_expect_not_null(strstr(rows, "7,2,"), "%s", rows);
    cr_expect_not_null(strstr(rows, ",blocking,,all_reduce,6,6,,,,forward_end 4,,,,,\n"), "%s", rows);
    cr_expect_null(strstr(rows, "data"), "a slice of the timeline's own is a row of the log:\n%s", rows);
    cr_expect_null(strstr(rows, "7,3,"), "%s", rows);
    free(rows);
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    const char *text = read_file(path);
    cr_expect_not_null(strstr(text, "\"name\":\"forward unit 4\""), "%s", text);
    cr_expect_not_null(strstr(text, "\"name\":\"all_reduce\",\"ts\":5000000.000,\"dur\":500000.000"), "%s", text);
    cr_expect_not_null(strstr(text, "\"name\":\"data\",\"ts\":6000000.000"), "%s", text);
    cr_expect_null(strstr(text, "forward_start"), "a mark is no slice of its own:\n%s", text);
}

/* The number after "key": in line, or -1 when the line has no such key. */
static double json_number(const char *line, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\":", key);
    const char *at = strstr(line, quoted);
    return at != NULL ? strtod(at + strlen(quoted), NULL) : -1;
}

/* Allocations and frees (set-up included: the memory track starts before the trace) come out as one
 * counter, a series per kind the run used; a counter of the code's own adds up its changes. */
Test(trace, the_allocators_history_and_the_counters_are_counter_tracks)
{
    char err[256], path[128];
    run_logs_start(1, 1);
    void *params = mem_alloc(1000000, MEM_PARAMS);
    cr_assert_eq(trace_start(dir, 0, 1, 0.0, NULL, err, sizeof err), 0, "%s", err);
    void *grads = mem_alloc(2000000, MEM_GRADS);
    events_count("in use (MB)", 2.5);
    events_count("in use (MB)", -1.0);
    mem_free(grads);
    cr_assert_eq(trace_finish(err, sizeof err), 0, "%s", err);
    mem_free(params);
    mem_set_listener(NULL);
    events_forget();
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    const char *text = read_file(path);
    const char *memory[] = {"\"args\":{\"parameters\":1.000000,\"gradients\":0.000000}",
                            "\"args\":{\"parameters\":1.000000,\"gradients\":2.000000}",
                            "\"args\":{\"parameters\":1.000000,\"gradients\":0.000000}"};
    const char *at = text;
    for (int i = 0; i < 3; i++) {
        at = strstr(at, "{\"ph\":\"C\",\"pid\":0,\"name\":\"memory (MB)\",\"ts\":");
        cr_assert_not_null(at, "memory sample %d is missing:\n%s", i, text);
        cr_expect_eq(strncmp(strstr(at, "\"args\""), memory[i], strlen(memory[i])), 0, "sample %d:\n%s", i, text);
        at = strchr(at, '\n');
    }
    cr_expect_null(strstr(at, "\"name\":\"memory (MB)\""), "more memory samples than changes:\n%s", text);
    at = strstr(text, "\"name\":\"in use (MB)\"");
    cr_assert_not_null(at, "%s", text);
    cr_expect_float_eq(json_number(at, "value"), 2.5, 1e-9);
    at = strstr(at + 1, "\"name\":\"in use (MB)\"");
    cr_assert_not_null(at, "%s", text);
    cr_expect_float_eq(json_number(at, "value"), 1.5, 1e-9);
}

/* A ZeRO-3 run's memory track ends at the model state the run reports, kind by kind, and its
 * gathered parameters are in use one unit at a time: each acquire's bytes back to 0 at its release. */
Test(trace, a_zero3_run_shows_its_memory_by_kind_and_each_gathered_unit)
{
    char command[512], output[4096], path[128];
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 build/solutions/09_zero3 train --config tiny --steps 2 --trace %s "
             "--summary %s/summary.csv",
             dir, dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    char summary[4096];
    snprintf(summary, sizeof summary, "%s", read_file(path));
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    const char *text = read_file(path), *last = NULL, *memory = "\"name\":\"memory (MB)\"";
    for (const char *at = strstr(text, memory); at != NULL; at = strstr(at + 1, memory))
        last = at;
    cr_assert_not_null(last, "no memory track:\n%s", text);
    cr_expect_float_eq(json_number(last, "parameters"), files_csv_figure(summary, "params_mb"), 1e-6, "%s",
                       summary);
    cr_expect_float_eq(json_number(last, "gradients"), files_csv_figure(summary, "grads_mb"), 1e-6, "%s", summary);
    cr_expect_float_eq(json_number(last, "adamw_m") + json_number(last, "adamw_v"),
                       files_csv_figure(summary, "adam_mb"), 1e-6, "%s", summary);
    cr_expect_float_eq(json_number(last, "activations") + json_number(last, "backward_scratch"),
                       files_csv_figure(summary, "activations_mb"), 1e-6, "%s", summary);
    const char *gathered = "\"name\":\"parameters gathered, in use (MB)\"";
    int samples = 0;
    for (const char *at = strstr(text, gathered); at != NULL; at = strstr(at + 1, gathered), samples++) {
        double value = json_number(at, "value");
        if (samples % 2 == 0)
            cr_expect_gt(value, 0, "acquire %d gathers nothing", samples / 2);
        else
            cr_expect_float_eq(value, 0, 1e-9, "release %d leaves %g MB in use", samples / 2, value);
    }
    cr_expect_gt(samples, 2 * 2 * 2, "%d samples: fewer than an acquire and a release per pass and step", samples);
    cr_expect_eq(samples % 2, 0);
}

/* Every complete event line carries ph, pid, tid, name, ts and dur. */
static int count_events(const char *text, int *malformed)
{
    int events = 0;
    *malformed = 0;
    for (const char *line = strstr(text, "{\"ph\":\"X\""); line != NULL; line = strstr(line + 1, "{\"ph\":\"X\"")) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        char event[512];
        snprintf(event, sizeof event, "%.*s", (int)length, line);
        const char *keys[] = {"\"pid\":", "\"tid\":", "\"name\":", "\"ts\":", "\"dur\":"};
        for (int k = 0; k < 5; k++)
            if (strstr(event, keys[k]) == NULL)
                (*malformed)++;
        events++;
    }
    return events;
}

Test(trace, a_two_rank_run_writes_per_rank_and_merged_timelines)
{
    char command[512], output[4096], path[128];
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 build/solutions/05_bucketed_ddp train --config reference --steps 3 "
             "--bucket-mb 0.1 --trace %s > /dev/null",
             dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    int per_rank = 0;
    for (int rank = 0; rank < 2; rank++) {
        snprintf(path, sizeof path, "%s/rank_%d.json", dir, rank);
        const char *text = read_file(path);
        int malformed, events = count_events(text, &malformed);
        cr_expect_gt(events, 3 * 2 * 4, "rank %d has %d events", rank, events); /* 3 steps x fwd/bwd x 4 units */
        cr_expect_eq(malformed, 0);
        char rank_info[64];
        snprintf(rank_info, sizeof rank_info, "\"distributedInfo\":{\"rank\":%d,", rank);
        cr_expect_not_null(strstr(text, rank_info));
        cr_expect_not_null(strstr(text, "\"name\":\"backward unit 2\""));
        cr_expect_not_null(strstr(text, "\"name\":\"all_reduce_start\""));
        cr_expect_not_null(strstr(text, "\"cat\":\"waits\",\"name\":\"wait\""));
        per_rank += events;
    }
    snprintf(path, sizeof path, "%s/merged.json", dir);
    int malformed, merged = count_events(read_file(path), &malformed);
    cr_expect_eq(merged, per_rank);
    cr_expect_eq(malformed, 0);
    static const char *const files[] = {"rank_0.json", "rank_1.json", "merged.json"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(command, sizeof command, "python3 -m json.tool %s/%s > /dev/null", dir, files[i]);
        cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s is not valid JSON: %s", files[i], output);
    }
}

/* DIR/rank_0.json of a one-rank run: `events` (complete events, one a line) and the timing
 * mark `timing`, "host" (one thread) or a device's. */
static void write_rank_0_trace(const char *events, const char *timing)
{
    char path[128];
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    fprintf(out, "{\"traceEvents\":[\n%s{\"ph\":\"M\",\"pid\":0,\"name\":\"process_labels\",\"args\":"
                 "{\"labels\":\"dtc\"}}\n],\n\"otherData\":{\"timing\":\"%s\"},\"distributedInfo\":"
                 "{\"rank\":0,\"world_size\":1}}\n",
            events, timing);
    fclose(out);
}

/* A trace whose answer is known: compute [0,100] and [200,300] us (the step's optimizer at
 * [250,300]); a collective on the communication track at [50,150] (half of it under compute);
 * a wait at [300,350]. */
static void write_trace_with(const char *timing, const char *collective)
{
    char events[1024];
    snprintf(events, sizeof events,
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"forward unit 1\",\"ts\":0,\"dur\":100},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":1,\"cat\":\"communication\",\"name\":\"%s\",\"ts\":50,\"dur\":100},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"backward unit 1\",\"ts\":200,\"dur\":100},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"optimizer step\",\"ts\":250,\"dur\":50},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":2,\"cat\":\"waits\",\"name\":\"wait\",\"ts\":300,\"dur\":50},\n",
        collective);
    write_rank_0_trace(events, timing);
}

/* The known trace with a started collective, which a device's compute may overlap. */
static void write_known_trace(const char *timing)
{
    write_trace_with(timing, "all_reduce_start");
}

/* The analyzer on DIR, and the summary.csv it wrote, into output. */
static void analyze_known_trace(char *output, size_t output_len)
{
    char command[256], path[128];
    snprintf(command, sizeof command, "build/tools/analyze_traces %s > /dev/null", dir);
    cr_assert_eq(shell_output(command, output, output_len), 0, "%s", output);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    snprintf(output, output_len, "%s", read_file(path));
}

/* Streams that run side by side (a device's timing): span 350, compute 200, communication 150 of
 * which 50 overlapped and 100 exposed, idle 50, overlap 33.33%. */
Test(trace, the_analyzer_returns_the_known_breakdown)
{
    char path[128], output[4096];
    write_known_trace("device");
    analyze_known_trace(output, sizeof output);
    cr_expect_not_null(strstr(output, "\n0,1,0.2000,0.1000,0.0500,0.0500,57.14,42.86,14.29,33.33,2,0.1500\n"), "%s",
                       output);
    snprintf(path, sizeof path, "%s/summary.html", dir);
    const char *html = read_file(path);
    cr_expect_not_null(strstr(html, "<svg"));
    cr_expect_not_null(strstr(html, "<td>33.3</td>"), "%s", html);
    cr_expect_not_null(strstr(html, "<td>0</td><td>all_reduce_start</td><td>1</td><td>0.100</td>"), "%s", html);
}

/* Timed on one host thread: compute enclosing a call was waiting on it, so compute is
 * [0,50] + [200,300] = 150, communication 150 all exposed, idle 50, overlap 0. */
Test(trace, host_timing_takes_enclosed_calls_out_of_compute)
{
    char output[4096];
    write_known_trace("host");
    analyze_known_trace(output, sizeof output);
    cr_expect_not_null(strstr(output, "\n0,1,0.1500,0.1500,0.0000,0.0500,42.86,57.14,14.29,0.00,2,0.1500\n"), "%s",
                       output);
}

/* On a device, the compute stream waits for a blocking collective (all_reduce): it comes out
 * of the compute that encloses it, as on the host, and overlaps nothing. */
Test(trace, device_timing_takes_blocking_collectives_out_of_compute)
{
    char output[4096];
    write_trace_with("device", "all_reduce");
    analyze_known_trace(output, sizeof output);
    cr_expect_not_null(strstr(output, "\n0,1,0.1500,0.1500,0.0000,0.0500,42.86,57.14,14.29,0.00,2,0.1500\n"), "%s",
                       output);
}

/* A trace that marks its steps (step#N, as the trainer writes): two steps, so the first is
 * warm-up (as in the run's summary) and left out with its slow 900 us of compute, and so is
 * the validation after the last step. Step 2 spans 400 us: compute [1000,1200] and the
 * optimizer [1200,1300], so 0.3 ms of compute and 0.1 ms idle per step. */
Test(trace, a_trace_that_marks_its_steps_is_read_over_the_steps_after_the_warm_up)
{
    char output[4096];
    write_rank_0_trace("{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"forward unit 1\",\"ts\":0,\"dur\":900},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"step#1\",\"ts\":0,\"dur\":1000},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"forward unit 1\",\"ts\":1000,\"dur\":200},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"optimizer step\",\"ts\":1200,\"dur\":100},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"step#2\",\"ts\":1000,\"dur\":400},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"name\":\"validation\",\"ts\":1500,\"dur\":500},\n",
                       "device");
    char command[256], path[128];
    snprintf(command, sizeof command, "build/tools/analyze_traces %s", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "per step over steps 2-2 of each rank: the first 1 are warm-up"), "%s", output);
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    snprintf(output, sizeof output, "%s", read_file(path));
    cr_expect_not_null(strstr(output, "\n0,1,0.3000,0.0000,0.0000,0.1000,75.00,25.00,25.00,0.00,0,0.0000\n"), "%s",
                       output);
}

/* A traced run marks each optimizer step with a slice on the compute track. */
Test(trace, a_run_marks_each_step_with_a_slice)
{
    char command[512], output[4096], path[128], steps[256] = "";
    snprintf(command, sizeof command, "build/solutions/00_single_device train --config tiny --steps 12 --trace %s/t",
             dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    snprintf(path, sizeof path, "%s/t/rank_0.json", dir);
    const char *mark = "\"tid\":0,\"cat\":\"compute\",\"name\":\"step#";
    for (const char *at = read_file(path); (at = strstr(at, mark)) != NULL; at += strlen(mark))
        snprintf(steps + strlen(steps), sizeof steps - strlen(steps), "%d ", atoi(at + strlen(mark)));
    cr_expect_str_eq(steps, "1 2 3 4 5 6 7 8 9 10 11 12 ");
}

/* --timeline STEP: the events of that step, from the end of the previous optimizer step. */
Test(trace, the_timeline_holds_one_step_from_its_start)
{
    char command[256], output[4096], path[128];
    write_known_trace("device");
    snprintf(command, sizeof command, "build/tools/analyze_traces %s --timeline 1", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    snprintf(path, sizeof path, "%s/timeline.csv", dir);
    snprintf(output, sizeof output, "%s", read_file(path));
    cr_expect_str_eq(output, "rank,track,start_ms,end_ms,name\n0,0,0.0000,0.1000,forward unit 1\n"
                             "0,1,0.0500,0.1500,all_reduce_start\n0,0,0.2000,0.3000,backward unit 1\n"
                             "0,0,0.2500,0.3000,optimizer step\n");
    snprintf(command, sizeof command, "build/tools/analyze_traces %s --timeline 2 2>&1", dir);
    cr_expect_neq(shell_output(command, output, sizeof output), 0, "a step the trace lacks must fail: %s", output);
    cr_expect_not_null(strstr(output, "fewer steps"), "%s", output);
}

/* memory.csv: the counters over step 1 (from the first event, 0 us, to the optimizer step's
 * end, 300 us). The memory sample before the step is replayed into its first row; each change
 * inside it gives a row before and after; the sample after the step is not read; a counter
 * of another name is not read. */
Test(trace, the_memory_over_one_step_holds_the_counters_from_before_it_and_each_change)
{
    char command[256], output[4096], path[128];
    write_rank_0_trace(
        "{\"ph\":\"C\",\"pid\":0,\"name\":\"memory (MB)\",\"ts\":-50,\"args\":{\"parameters\":1,\"gradients\":2}},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"forward unit 1\",\"ts\":0,\"dur\":100},\n"
        "{\"ph\":\"C\",\"pid\":0,\"name\":\"parameters gathered, in use (MB)\",\"ts\":20,\"args\":{\"value\":0.5}},\n"
        "{\"ph\":\"C\",\"pid\":0,\"name\":\"parameters gathered, in use (MB)\",\"ts\":80,\"args\":{\"value\":0}},\n"
        "{\"ph\":\"C\",\"pid\":0,\"name\":\"something else\",\"ts\":90,\"args\":{\"value\":7}},\n"
        "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"optimizer step\",\"ts\":250,\"dur\":50},\n"
        "{\"ph\":\"C\",\"pid\":0,\"name\":\"memory (MB)\",\"ts\":400,\"args\":{\"parameters\":3,\"gradients\":2}},\n",
        "host");
    snprintf(command, sizeof command, "build/tools/analyze_traces %s --timeline 1", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    snprintf(path, sizeof path, "%s/memory.csv", dir);
    cr_expect_str_eq(read_file(path),
                     "rank,time_ms,parameters_mb,gradients_mb,adamw_m_mb,adamw_v_mb,master_weights_mb,activations_mb,"
                     "backward_scratch_mb,data_mb,communication_mb,other_mb,gathered_mb\n"
                     "0,0.0000,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
                     "0,0.0200,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
                     "0,0.0200,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.500000\n"
                     "0,0.0800,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.500000\n"
                     "0,0.0800,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
                     "0,0.3000,1.000000,2.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n");
    write_rank_0_trace("{\"ph\":\"C\",\"pid\":0,\"name\":\"memory (MB)\",\"ts\":5,\"args\":{\"parameters\":\"a lot\"}},\n"
                       "{\"ph\":\"X\",\"pid\":0,\"tid\":0,\"cat\":\"compute\",\"name\":\"optimizer step\",\"ts\":0,\"dur\":5},\n",
                       "host");
    snprintf(command, sizeof command, "build/tools/analyze_traces %s", dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "%s", output);
    cr_expect_not_null(strstr(output, "rank_0.json: counter event 1 has no name, ts or args, or a value that is not "
                                      "a number\n"), "%s", output);
    cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line: %s", output);
}

/* A timeline that cannot be completed (a step the trace lacks) is refused in one line before
 * the tables, and the timeline.csv already there stays as it was: the report would otherwise
 * draw half a step. */
Test(trace, a_timeline_that_fails_leaves_the_previous_file_as_it_was)
{
    char command[512], output[4096];
    write_known_trace("device");
    char path[128];
    snprintf(path, sizeof path, "%s/timeline.csv", dir);
    cr_assert_eq(files_write(path, "the previous timeline\n"), 0);
    snprintf(command, sizeof command, "build/tools/analyze_traces %s --timeline 2", dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s", output);
    cr_expect_not_null(strstr(output, "fewer steps"), "%s", output);
    cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line: %s", output);
    cr_expect_str_eq(read_file(path), "the previous timeline\n");
    cr_assert_eq(files_list(dir, output, sizeof output), 0);
    cr_expect_null(strstr(output, ".tmp."), "a temporary file is left: %s", output);
}

/* The outputs land by rename, never by rewriting the file in place: a second name for the
 * previous summary.csv (a hard link) still holds the previous text, and after the run only the
 * finished files are in the folder, no temporary one. */
Test(trace, the_outputs_are_renamed_into_place_leaving_no_temporary_file)
{
    char command[512], output[4096], path[128];
    write_known_trace("device");
    char previous[128];
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    snprintf(previous, sizeof previous, "%s/previous.csv", dir);
    cr_assert_eq(files_write(path, "the previous summary\n"), 0);
    cr_assert_eq(link(path, previous), 0, "cannot link %s", path);
    snprintf(command, sizeof command, "build/tools/analyze_traces %s --timeline 1 > /dev/null", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_assert_eq(files_list(dir, output, sizeof output), 0);
    cr_expect_str_eq(output, "memory.csv\nprevious.csv\nrank_0.json\nsummary.csv\nsummary.html\ntimeline.csv\n");
    snprintf(path, sizeof path, "%s/previous.csv", dir);
    cr_expect_str_eq(read_file(path), "the previous summary\n", "summary.csv was rewritten in place");
    snprintf(path, sizeof path, "%s/summary.csv", dir);
    cr_expect_not_null(strstr(read_file(path), "\n0,1,0.2000,"), "summary.csv holds no new table");
}

/* Read by a JSON parser: the same trace pretty-printed or on one line gives the same table;
 * what is not JSON, not ours, or misses a rank is refused with one line and exit status 1. */
Test(trace, the_analyzer_reads_any_formatting_and_refuses_what_is_not_a_trace)
{
    char command[1024], output[8192], expected[4096];
    write_known_trace("host");
    analyze_known_trace(expected, sizeof expected);
    char path[128], pretty[160];
    snprintf(path, sizeof path, "%s/rank_0.json", dir);
    snprintf(pretty, sizeof pretty, "%s.pretty", path);
    snprintf(command, sizeof command, "python3 -m json.tool --indent 4 %s %s", path, pretty);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_assert_eq(rename(pretty, path), 0);
    analyze_known_trace(output, sizeof output);
    cr_expect_str_eq(output, expected, "pretty-printed");
    static const struct {
        const char *what, *text; /* the file's new text, or NULL to cut it to cut_to bytes */
        long cut_to;
        const char *reason;
    } bad[] = {
        {"empty", NULL, 0, "not JSON (the parser stopped at byte 0 of 0)"},
        {"cut at 200 bytes", NULL, 200, "not JSON"},
        {"another program's trace", "{\"traceEvents\":[],\"schemaVersion\":1}\n", 0, "not a trace that --trace wrote"},
        {"not JSON at all", "not json\n", 0, "not JSON"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_known_trace("host");
        cr_assert_eq(bad[i].text != NULL ? files_write(path, bad[i].text) : files_cut(path, bad[i].cut_to), 0);
        snprintf(command, sizeof command, "build/tools/analyze_traces %s", dir);
        cr_expect_eq(shell_output(command, output, sizeof output), 1, "%s: %s", bad[i].what, output);
        cr_expect_not_null(strstr(output, bad[i].reason), "%s: %s", bad[i].what, output);
        cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line: %s", output);
    }
    write_known_trace(" host"); /* neither timing: read as either, its figures would be wrong */
    snprintf(command, sizeof command, "build/tools/analyze_traces %s", dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "a timing --trace never writes: %s", output);
    cr_expect_not_null(strstr(output, "otherData.timing is \" host\""), "%s", output);
    write_known_trace("host"); /* says it is 1 of 2 ranks: rank_1.json is missing */
    char text[4096];
    snprintf(text, sizeof text, "%s", read_file(path));
    char *world_size = strstr(text, "\"world_size\":1");
    cr_assert_not_null(world_size);
    world_size[strlen("\"world_size\":")] = '2';
    cr_assert_eq(files_write(path, text), 0);
    snprintf(command, sizeof command, "build/tools/analyze_traces %s", dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "a missing rank: %s", output);
    cr_expect_not_null(strstr(output, "rank_1.json"), "%s", output);
}
