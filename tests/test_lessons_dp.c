/* The data-parallel and sharding lessons 02-10 end to end: each reference solution
 * reproduces the single-device run of the same global batch at 1, 2 and 4 ranks with
 * identical parameters on every rank (lesson 10, in bf16, within the drift from fp32 that
 * tests/tolerance.sh allows); the grader passes each solution and fails each skeleton
 * (test_grading.c fails the mistakes in tests/mutants/). These run the built programs from
 * the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "shell.h"

static const char *const dp_lessons[] = {"02_naive_ddp", "03_flat_ddp", "04_overlap_ddp", "05_bucketed_ddp",
                                         "06_grad_accum", "07_zero1", "08_zero2", "09_zero3",
                                         "10_mixed_precision"};
enum { NUM_DP_LESSONS = sizeof dp_lessons / sizeof dp_lessons[0] };

TestSuite(lessons_dp, .timeout = 600);

/* The lesson's run at `ranks` ranks and lesson 00's single device, both 8 steps of the
 * reference preset with validation at 4 and 8 (and the same shared_flags), must agree
 * within the tolerance (tests/scenarios/matches_lesson_00.sh); `where` is "" or that
 * script's --env FILE, for a cluster's launch. */
static void check_equivalence_launched(const char *where, const char *lesson, int ranks, const char *shared_flags,
                                       const char *flags)
{
    char command[1024], output[65536];
    snprintf(command, sizeof command, "tests/scenarios/matches_lesson_00.sh %s --both '%s' %s %d %s", where,
             shared_flags, lesson, ranks, flags);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 0, "%s at %d rank(s) %s %s does not match lesson 00:\n%s", lesson, ranks, flags, where,
                 output);
}

static void check_equivalence_with(const char *lesson, int ranks, const char *shared_flags, const char *flags)
{
    check_equivalence_launched("", lesson, ranks, shared_flags, flags);
}

static void check_equivalence(const char *lesson, int ranks, const char *flags)
{
    check_equivalence_with(lesson, ranks, "", flags);
}

static void check_lesson_at_1_2_4(const char *lesson, const char *flags)
{
    for (int ranks = 1; ranks <= 4; ranks *= 2)
        check_equivalence(lesson, ranks, flags);
}

/* `LESSON --help` lists the flags of train, its default mode, not only the modes. */
Test(lessons_dp, help_lists_the_flags_of_train)
{
    static const char *const lessons[] = {"02_naive_ddp", "05_bucketed_ddp", "07_zero1", "09_zero3"};
    for (size_t i = 0; i < sizeof lessons / sizeof *lessons; i++) {
        char command[256], output[1 << 14];
        snprintf(command, sizeof command, "build/solutions/%s --help", lessons[i]);
        cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s: %s", lessons[i], output);
        cr_expect_not_null(strstr(output, "  --csv S "), "%s --help has no --csv:\n%s", lessons[i], output);
        cr_expect_not_null(strstr(output, "  --wait-timeout X "), "%s --help:\n%s", lessons[i], output);
    }
}

Test(lessons_dp, naive_matches_single_device_at_1_2_4_ranks) { check_lesson_at_1_2_4("02_naive_ddp", ""); }
Test(lessons_dp, flat_matches_single_device_at_1_2_4_ranks)
{
    check_lesson_at_1_2_4("03_flat_ddp", "");
    check_equivalence("03_flat_ddp", 2, "--copy-tensors");
}
Test(lessons_dp, overlap_matches_single_device_at_1_2_4_ranks) { check_lesson_at_1_2_4("04_overlap_ddp", ""); }
Test(lessons_dp, bucketed_matches_single_device_at_1_2_4_ranks)
{
    check_lesson_at_1_2_4("05_bucketed_ddp", "--bucket-mb 0.1");
    check_equivalence("05_bucketed_ddp", 2, "--bucket-mb 0");
    check_equivalence("05_bucketed_ddp", 2, "--bucket-mb 1000");
}
Test(lessons_dp, grad_accum_matches_single_device_at_1_2_4_ranks)
{
    check_lesson_at_1_2_4("06_grad_accum", "--accum 2");
    check_equivalence("06_grad_accum", 2, "--accum 4 --bucket-mb 0.1");
}

/* Three ranks: no unit of the reference model divides by 3, so every shard is padded. */
Test(lessons_dp, zero1_matches_single_device_at_1_2_3_4_ranks)
{
    check_lesson_at_1_2_4("07_zero1", "");
    check_equivalence_with("07_zero1", 3, "--batch 6", "");
}

Test(lessons_dp, zero2_matches_single_device_at_1_2_3_4_ranks)
{
    check_lesson_at_1_2_4("08_zero2", "");
    check_equivalence_with("08_zero2", 3, "--batch 6", "");
}

Test(lessons_dp, zero3_matches_single_device_at_1_2_3_4_ranks)
{
    check_lesson_at_1_2_4("09_zero3", "");
    check_equivalence("09_zero3", 2, "--no-prefetch");
    check_equivalence_with("09_zero3", 3, "--batch 6", "");
}

/* bf16 drifts from fp32 a little at every world size, and the reduction's order (which
 * depends on the world size) moves it a little more: each stays within DRIFT_RTOL. */
Test(lessons_dp, mixed_precision_stays_near_single_device_fp32_at_1_2_3_4_ranks)
{
    check_lesson_at_1_2_4("10_mixed_precision", "");
    check_equivalence_with("10_mixed_precision", 3, "--batch 6", "");
}

/* Lesson 10's stages shard differently but sum the same bf16 values in the same
 * reduce-scatters: on one machine, ZeRO-1 and ZeRO-3 compute ZeRO-2's numbers bit for bit,
 * at 2 and 3 ranks. */
Test(lessons_dp, mixed_precision_stages_compute_the_same_numbers)
{
    char command[1024], output[8192];
    const char *const shapes[][2] = {{"2", ""}, {"3", "--batch 6"}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int stage = 1; stage <= 3; stage += 2) {
            snprintf(command, sizeof command, "dir=$(mktemp -d) && run() { mpiexec -n %s "
                     "build/solutions/10_mixed_precision train --config reference --gen-tokens 0 %s --stage $1 --csv "
                     "$dir/$1.csv >/dev/null; } && run 2 && run %d && build/tools/compare_runs $dir/2.csv $dir/%d.csv "
                     "--columns loss,grad_norm,val_loss --rtol 0; status=$?; rm -rf $dir; exit $status",
                     shapes[i][0], shapes[i][1], stage, stage);
            cr_expect_eq(shell_output(command, output, sizeof output), 0, "stage %d at %s ranks:\n%s", stage,
                         shapes[i][0], output);
        }
}

/* Per-rank model state, from the tracking allocator, within 5% of the ZeRO formulas. */
Test(lessons_dp, zero_model_state_matches_the_formulas_at_1_2_4_ranks)
{
    char output[8192];
    int status = shell_output("scripts/zero_memory.sh --check 1 2 4", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    cr_assert_not_null(strstr(output, "zero2      2        8.425        8.425"), "%s", output);
    cr_assert_not_null(strstr(output, "zero3      4"), "ZeRO-3 missing from the table:\n%s", output);
    cr_assert_not_null(strstr(output, "bf16z3     4"), "lesson 10 on ZeRO-3 missing from the table:\n%s", output);
}

/* The graded references themselves say the same as the single-device reference. */
Test(lessons_dp, expected_values_match_the_single_device_reference)
{
    char output[8192];
    int status = shell_output("tests/scenarios/expected_values_match_lesson_00.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
}

static int grade(const char *number, const char *binary, char *output, size_t len)
{
    return shell_grade(number, binary, output, len);
}

Test(lessons_dp, every_solution_passes_and_every_skeleton_fails_grading)
{
    char binary[256], output[65536];
    for (int i = 0; i < NUM_DP_LESSONS; i++) {
        const char *lesson = dp_lessons[i];
        char number[3] = {lesson[0], lesson[1], '\0'};
        snprintf(binary, sizeof binary, "build/solutions/%s", lesson);
        cr_expect_eq(grade(number, binary, output, sizeof output), 0, "solution %s:\n%s", lesson, output);
        snprintf(binary, sizeof binary, "build/lessons/%s", lesson);
        cr_expect_eq(grade(number, binary, output, sizeof output), 1, "skeleton %s:\n%s", lesson, output);
    }
}

Test(lessons_dp, a_batch_that_does_not_split_over_the_ranks_is_one_line_error)
{
    char output[4096];
    int status = shell_output("timeout 60 mpiexec -n 3 build/solutions/02_naive_ddp train --config reference", output,
                              sizeof output);
    cr_expect_neq(status, 0);
    cr_expect_not_null(strstr(output, "02_naive_ddp: --batch 8 does not split into 3 rank(s) x 1 micro-batch(es)\n"),
                       "%s", output);
    status = shell_output("build/solutions/06_grad_accum train --config reference --accum 3", output, sizeof output);
    cr_expect_neq(status, 0);
    cr_expect_not_null(strstr(output, "--batch 8 does not split into 1 rank(s) x 3 micro-batch(es) (--accum)\n"), "%s", output);
}

/* `07_zero1 plan` shows the plan the run uses: at 3 ranks unit 0 (20,480 floats on the
 * reference config) pads to 20,481, and rank 2 owns 6,826 real elements and 1 padding;
 * every unit's real elements, over its ranks, add up to the unit. */
Test(lessons_dp, zero1_plan_shows_each_ranks_part_of_each_unit)
{
    char output[16384];
    int status = shell_output("build/solutions/07_zero1 plan --config reference --ranks 3", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "[13654, 20481) 6826 real + 1 padding"), "%s", output);
    status = shell_output("tests/scenarios/zero1_plan_adds_up.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
}

/* A strategy's set-up that fails (here over --mem-limit, on every rank) stops every rank
 * before the strategy's first collective, with one line. */
Test(lessons_dp, a_strategy_that_cannot_allocate_stops_every_rank_with_one_line)
{
    char output[4096];
    int status = shell_output("timeout 60 mpiexec -n 2 build/solutions/03_flat_ddp train --config reference "
                              "--copy-tensors --mem-limit 6", output, sizeof output);
    cr_expect_eq(status, 1);
    cr_expect_str_eq(output, "03_flat_ddp: out of memory for the flattening buffer\n");
}

/* An output that cannot be written is reported before training, not after it. */
Test(lessons_dp, an_unwritable_summary_is_refused_before_training)
{
    char output[4096];
    int status = shell_output("build/solutions/09_zero3 train --config reference --summary /nonexistent/s.csv", output,
                              sizeof output);
    cr_expect_eq(status, 1);
    cr_expect_str_eq(output, "09_zero3: --summary /nonexistent/s.csv: there is no folder /nonexistent\n");
}

/* 05_bucketed_ddp at 2 ranks, SIGNAL sent to rank 1 after its first step
 * (tests/scenarios/signal_rank_1.sh): how the job ended, what it printed, and whether a rank
 * was left running; 0 when it failed within 60 s. */
static int signal_rank_1(const char *signal_name, char *output, size_t output_len)
{
    char command[256];
    snprintf(command, sizeof command, "tests/scenarios/signal_rank_1.sh %s", signal_name);
    return shell_output(command, output, output_len);
}

/* A rank that stops (SIGSTOP, as a hung machine would) ends the run within --wait-timeout,
 * and the rank left waiting says which one never came and what it last did. */
Test(lessons_dp, a_stopped_rank_ends_the_run_within_the_wait_timeout_naming_it)
{
    char output[16384];
    cr_expect_eq(signal_rank_1("STOP", output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "waited 2 s (--wait-timeout) in"), "%s", output);
    cr_expect_not_null(strstr(output, "): stopped (a signal, or a debugger) in "), "%s", output);
    cr_expect_null(strstr(output, "a rank was left running"), "%s", output);
}

/* A rank that is killed outright: its own line says which rank, by what and where it was,
 * and the rank that remains says so too and ends, instead of leaving the job to mpiexec's
 * banner alone. */
Test(lessons_dp, a_killed_rank_is_named_and_the_rank_that_remains_ends_saying_so)
{
    char output[16384];
    cr_expect_eq(signal_rank_1("KILL", output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "rank 1 (pid "), "%s", output);
    cr_expect_not_null(strstr(output, ") was killed by signal 9 (Killed) at step "), "%s", output);
    cr_expect_not_null(strstr(output, "when a rank ended: it ends too:\n  rank 1 (pid "), "%s", output);
    cr_expect_not_null(strstr(output, "): has ended ("), "%s", output);
    cr_expect_null(strstr(output, "a rank was left running"), "%s", output);
}

/* ---------------------------------------------------------------- across hosts */

/* The tests across hosts make their own suite, `cluster`: its network interfaces come and
 * go on this machine, and an MPI job starting beside them can find one gone (UCX: "No such
 * device"), so scripts/run_tests.sh runs the suite alone, after the rest. */
TestSuite(cluster, .timeout = 600);

/* A cluster of two hosts on this machine (scripts/cluster.sh), named after this process so
 * that no other run's cluster is touched; it needs root, to make network namespaces. */
static char cluster_name[16], cluster_why_not[256];

static void cluster_up(void)
{
    snprintf(cluster_name, sizeof cluster_name, "t%d", (int)getpid());
    char command[256];
    snprintf(command, sizeof command, "scripts/cluster.sh up --name %s --hosts 2 --link-gbit 10 2>&1",
             cluster_name);
    if (geteuid() != 0)
        snprintf(cluster_why_not, sizeof cluster_why_not, "a cluster of namespaces needs root");
    else if (shell_output(command, cluster_why_not, sizeof cluster_why_not) == 0)
        cluster_why_not[0] = '\0';
}

static void cluster_down(void)
{
    char command[256], output[1024];
    snprintf(command, sizeof command, "scripts/cluster.sh down --name %s", cluster_name);
    if (geteuid() == 0)
        shell_output(command, output, sizeof output);
}

/* Every data-parallel and ZeRO lesson reproduces lesson 00 with its two ranks on two hosts,
 * over TCP on the hosts' links, and the links carried the traffic. (One rank a host: with
 * more ranks, MPICH 4.0's clean-up over UCX's TCP can hang in MPI_Finalize, docs/cluster.md.) */
Test(cluster, every_lesson_reproduces_lesson_00_across_two_hosts, .init = cluster_up, .fini = cluster_down)
{
    if (cluster_why_not[0] != '\0')
        cr_skip_test("no cluster: %s", cluster_why_not);
    char where[256], command[512], output[16384];
    snprintf(where, sizeof where, "--env /run/dtc-cluster/%s/env", cluster_name);
    for (int i = 0; i < NUM_DP_LESSONS; i++)
        check_equivalence_launched(where, dp_lessons[i], 2, "", "");
    snprintf(command, sizeof command, "tests/scenarios/cluster_traffic.sh %s", cluster_name);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "2\n"), "each rank reaches the other over TCP on eth0:\n%s", output);
    long sent = 0;
    const char *line = strstr(output, "-host1  ");
    cr_assert_not_null(line, "%s", output);
    sscanf(strstr(line, "sent ") != NULL ? strstr(line, "sent ") : "", "sent %ld", &sent);
    /* at 2 ranks, each rank sends at least its whole gradient (482,304 bytes here) a step */
    long at_least = (long)NUM_DP_LESSONS * 8 * 482304;
    cr_expect_geq(sent, at_least, "host 1 sent %ld bytes on its link, fewer than the lessons' gradients (%ld):\n%s",
                  sent, at_least, output);
}

/* scripts/predict_cluster.sh on the tiny shape at one rate and 2 ranks: a row per
 * data-parallel lesson, with the three predictions and a measured step; a rate or a count of
 * ranks that is not one is refused, with one line, before any cluster is made. */
Test(cluster, predict_cluster_predicts_and_measures_every_lesson)
{
    if (geteuid() != 0)
        cr_skip_test("a cluster of namespaces needs root");
    char dir[64], command[512], path[128], rows[16][256], output[16384];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "predict_cluster"));
    snprintf(path, sizeof path, "%s/rows.csv", dir);
    snprintf(command, sizeof command, "scripts/predict_cluster.sh --gbit 10 --csv %s tiny 2>&1", path);
    int status = shell_output(command, output, sizeof output), lines = files_lines(path, rows, 16), measured = 0;
    for (int i = 1; i < lines && i < 16; i++) {
        double predicted[4], step, comm, exposed;
        measured += strncmp(rows[i], "tiny,10gbit,2,", 14) == 0 &&
                    sscanf(strchr(rows[i] + 14, ','), ",%lf,%lf,%lf,%lf,%lf,%lf,%lf", &predicted[0], &predicted[1],
                           &predicted[2], &predicted[3], &step, &comm, &exposed) == 7 &&
                    predicted[0] > 0 && predicted[0] <= predicted[1] + 1e-9 && step > 0 && exposed >= 0 &&
                    exposed <= comm + 0.01; /* the CSV's rounding */
    }
    shell_remove_dir(dir);
    cr_assert_eq(status, 0, "%s", output);
    cr_expect_str_eq(rows[0], "shape,network,ranks,lesson,async_ms,calls_ms,tests_ms,tests_exposed_ms,step_ms,"
                              "comm_ms,exposed_ms");
    cr_expect_eq(lines, 10, "expected a header and lessons 02-10:\n%s", output);
    cr_expect_eq(measured, 9, "every row predicted (async at most calls) and measured:\n%s", output);
    cr_expect_not_null(strstr(output, "| 04 overlap | "), "%s", output);
    cr_expect_eq(shell_output("scripts/predict_cluster.sh --gbit fast", output, sizeof output), 2);
    cr_expect_str_eq(output, "predict_cluster: --gbit: 'fast' is not a rate in Gbit/s\n");
    cr_expect_eq(shell_output("scripts/predict_cluster.sh --ranks '2 1'", output, sizeof output), 2);
    cr_expect_str_eq(output, "predict_cluster: --ranks: '1' is not a count of ranks from 2 to 16\n");
}

/* A trace across two hosts whose monotonic clocks differ by 1000 s (scripts/cluster_exec.sh),
 * each rank writing into its own working folder, as on machines that share no file system:
 * rank 0's merged trace holds both ranks, and their first events line up. */
Test(cluster, a_trace_across_two_hosts_lines_up_without_a_shared_folder, .init = cluster_up,
     .fini = cluster_down)
{
    if (cluster_why_not[0] != '\0')
        cr_skip_test("no cluster: %s", cluster_why_not);
    char command[256], output[8192];
    snprintf(command, sizeof command, "tests/scenarios/trace_across_hosts.sh %s", cluster_name);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "rank 0 wrote merged.json rank_0.json, rank 1 rank_1.json\n"), "%s", output);
    cr_expect_not_null(strstr(output, "2 ranks, first events within 0 s"), "%s", output);
}

/* 02_naive_ddp at 2 ranks with rank 0 on a disk `slow_seconds` slower at every fsync
 * (tests/scenarios/slow_rank_0.sh, `then` its --stop or ""): how the job ended, its output,
 * its files; the job's status. */
static int run_with_slow_rank_0(double slow_seconds, const char *then, char *output, size_t output_len)
{
    char command[256];
    snprintf(command, sizeof command, "tests/scenarios/slow_rank_0.sh %g %s", slow_seconds, then);
    return shell_output(command, output, output_len);
}

/* Rank 0 writes the checkpoints, the CSV and the communication log while the other rank
 * waits for it at the next collective: on a slow disk that takes longer than --wait-timeout,
 * and the run still ends well, since a rank working alone for the others is not a lost one. */
Test(lessons_dp, a_rank_writing_the_outputs_slowly_is_waited_for_past_the_wait_timeout)
{
    char output[16384];
    cr_expect_eq(run_with_slow_rank_0(2.5, "", output, sizeof output), 0, "%s", output);
    cr_expect_null(strstr(output, "--wait-timeout"), "%s", output);
    cr_expect_not_null(strstr(output, "saved checkpoint "), "%s", output);
    cr_expect_not_null(strstr(output, "comm.log\n"), "%s", output);
}

/* ...but a rank that stops while it works alone is still a lost one: the other rank ends the
 * run at its wait timeout, saying what the stopped rank was doing. */
Test(lessons_dp, a_rank_stopped_while_writing_the_outputs_ends_the_run)
{
    char output[16384];
    int status = run_with_slow_rank_0(60, "--stop", output, sizeof output);
    cr_expect_neq(status, 0, "%s", output);
    cr_expect_null(strstr(output, "saved "), "%s", output); /* ended in the first save's 60 s */
    cr_expect_not_null(strstr(output, "rank 1: waited 1 s (--wait-timeout) in "), "%s", output);
    cr_expect_not_null(strstr(output, "): stopped (a signal, or a debugger) saving the resume state, "), "%s", output);
}

/* A rank whose compute is slow (each matrix product 5 ms longer: tests/slow_rank.c) keeps
 * the other waiting in its collectives: the summary's comm time holds that wait, and its
 * exposed communication, the step beyond the slowest rank's compute, does not. The wait is
 * long beside what a busy 2-core machine adds to a collective (up to 20 ms a step seen). */
Test(lessons_dp, waiting_for_a_slow_rank_is_comm_time_but_not_exposed_communication)
{
    char dir[64], path[128], command[512], output[4096], summary[4096];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "slow_rank"));
    snprintf(command, sizeof command,
             "timeout 120 mpiexec -n 2 env LD_PRELOAD=\"$PWD/build/tests/slow_rank.so\" SLOW_RANK=1 "
             "SLOW_SGEMM_SECONDS=0.005 build/solutions/03_flat_ddp train --config tiny --steps 10 --val-every 0 "
             "--gen-tokens 0 --summary %s/s.csv 2>&1",
             dir);
    int status = shell_output(command, output, sizeof output);
    snprintf(path, sizeof path, "%s/s.csv", dir);
    long read = files_read_into(path, summary, sizeof summary);
    shell_remove_dir(dir);
    cr_assert_eq(status, 0, "%s", output);
    cr_assert_gt(read, 0, "no summary:\n%s", output);
    double comm_ms = 1e3 * files_csv_figure(summary, "comm_time_avg_s");
    double exposed_ms = 1e3 * files_csv_figure(summary, "exposed_time_avg_s");
    cr_expect_geq(comm_ms, 100.0, "rank 0 waits about 200 ms a step: %s", summary); /* 40 products a step */
    cr_expect_geq(exposed_ms, 0.0, "%s", summary);
    cr_expect_lt(exposed_ms, comm_ms / 4, "%s", summary);
}

/* The sweep's CSV is an output like the trainer's: it never replaces an input. */
Test(lessons_dp, the_bucket_sweep_never_overwrites_an_input)
{
    char output[4096];
    int status = shell_output("tests/scenarios/sweep_keeps_its_input.sh", output, sizeof output);
    cr_expect_eq(status, 2, "%s", output);
    cr_expect_not_null(strstr(output, "--csv"), "%s", output);
    cr_expect_not_null(strstr(output, "would overwrite an input file"), "%s", output);
    cr_expect_null(strstr(output, "the input was changed"), "%s", output);
}

/* The sweep trains many times and saves none of them: train's --save-every (which once
 * wrote a state under no name and crashed), --save, --summary or --trace are refused. */
Test(lessons_dp, the_bucket_sweep_refuses_trains_outputs)
{
    static const char *const flags[] = {"--save /tmp/dtc_sweep_never --save-every 1", "--summary /tmp/dtc_sweep_never",
                                        "--trace /tmp/dtc_sweep_never", "--resume /tmp/dtc_sweep_never"};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++) {
        char command[512], output[4096];
        snprintf(command, sizeof command,
                 "build/solutions/05_bucketed_ddp sweep --config tiny --steps 2 --sizes 1 %s", flags[i]);
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s:\n%s", command, output);
        cr_expect_not_null(strstr(output, "sweep: --"), "%s:\n%s", command, output);
        cr_expect_not_null(strstr(output, "is train's"), "%s:\n%s", command, output);
    }
    cr_expect_neq(access("/tmp/dtc_sweep_never", F_OK), 0, "the refused sweep wrote its output");
}

Test(lessons_dp, lesson_00_refuses_more_than_one_rank)
{
    char output[4096];
    int status = shell_output("timeout 60 mpiexec -n 2 build/solutions/00_single_device train --config reference",
                              output, sizeof output);
    cr_expect_eq(status, 2);
    cr_expect_not_null(strstr(output, "runs on one device"), "%s", output);
}

/* PyTorch's own DDP (gloo, 2 ranks) from the same checkpoint and shards agrees with lesson
 * 00 step for step: our model, data order and optimizer are PyTorch's. So do its ZeRO-1
 * (ZeroRedundancyOptimizer) and, where a PyTorch that runs it is installed (make torch),
 * its FSDP in both modes. Optional: skipped where python3-torch is not installed. */
Test(lessons_dp, pytorch_ddp_zero1_and_fsdp_match_lesson_00)
{
    char output[16384];
    int status = shell_output("timeout 540 scripts/pytorch_ddp.sh check", output, sizeof output);
    if (status == 77)
        cr_skip_test("python3-torch is not installed");
    cr_assert_eq(status, 0, "%s", output);
}

/* A sharded run writes one whole llm.c checkpoint (gathered), which lesson 00 trains on
 * from, as does a sharded run; both continue the same trajectory. ZeRO-1 and ZeRO-3 at 2
 * ranks hold the same parameters bit for bit, so their checkpoints are the same bytes. */
Test(lessons_dp, sharded_runs_save_and_start_from_whole_checkpoints)
{
    char output[65536];
    int status = shell_output("tests/scenarios/sharded_checkpoints.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
}
