/* The course report: built from a small run of the whole course (run_course.sh --small), it
 * holds every strategy and every plot, and headless Chromium renders it with a silent
 * console and every data set of every plot drawn (scripts/check_report.py); with
 * --student, the student's own runs beside the reference's. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "shell.h"

static char dir[64];

static void make_dir(void) { cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "report")); }
static void remove_dir(void) { shell_remove_dir(dir); }

TestSuite(report, .init = make_dir, .fini = remove_dir, .timeout = 600);

static const char *const strategies[] = {"single_device", "naive_ddp", "flat_ddp", "overlap_ddp", "bucketed_ddp",
                                         "grad_accum", "zero1", "zero2", "zero3", "mixed_zero2"};
static const char *const lessons[] = {"00_single_device", "02_naive_ddp", "03_flat_ddp", "04_overlap_ddp",
                                      "05_bucketed_ddp", "06_grad_accum", "07_zero1", "08_zero2", "09_zero3",
                                      "10_mixed_precision"};
static const char *const plots[] = {"loss", "loss_00_single_device", "breakdown", "bucket_sweep",
                                    "memory", "memory_ranks", "shard_layout", "busbw", "scale_124m", "scale_1558m"};

static int file_exists(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f != NULL)
        fclose(f);
    return f != NULL;
}

/* DIR/relative made: a folder when `text` is NULL, else a file holding text. */
static void make_in_dir(const char *relative, const char *text)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, relative);
    if (text == NULL)
        cr_assert(mkdir(path, 0755) == 0 || errno == EEXIST, "cannot make %s", path);
    else
        cr_assert_eq(files_write(path, text), 0, "cannot write %s", path);
}

static void expect_plot(const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "%s/report/plots/%s.svg", dir, name);
    cr_expect(file_exists(path), "plot %s is missing", path);
}

/* scripts/run_course.sh FLAGS into this test's folder; on failure, the end of its output. */
static void run_course(const char *flags)
{
    char command[1024], output[1 << 14];
    snprintf(command, sizeof command, "scripts/run_course.sh %s --runs %s/runs --report %s/report > %s/log 2>&1", flags,
             dir, dir, dir);
    if (shell_status(command) != 0) {
        snprintf(command, sizeof command, "tail -n 30 %s/log", dir);
        shell_output(command, output, sizeof output);
        cr_assert_fail("run_course.sh %s failed:\n%s", flags, output);
    }
}

Test(report, a_small_run_builds_a_report_chromium_renders_with_every_plot_drawn)
{
    char command[4096], output[1 << 14];
    run_course("--small");
    snprintf(command, sizeof command, "cat %s/report/summary.md", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        char row[64];
        snprintf(row, sizeof row, "| %s | ", strategies[i]);
        cr_expect_not_null(strstr(output, row), "summary.md has no row for %s:\n%s", strategies[i], output);
    }
    /* the step model's prediction of each lesson it models, beside the measured step */
    static const char *const predicted[] = {"02_naive_ddp | naive", "03_flat_ddp | flat", "04_overlap_ddp | overlap",
                                            "05_bucketed_ddp | bucketed", "06_grad_accum | accumulate",
                                            "07_zero1 | zero1", "08_zero2 | zero2", "09_zero3 | zero3",
                                            "10_mixed_precision | mixed"};
    for (size_t i = 0; i < sizeof predicted / sizeof *predicted; i++) {
        char row[64];
        snprintf(row, sizeof row, "| %s | ", predicted[i]);
        cr_expect_not_null(strstr(output, row), "summary.md predicts no %s:\n%s", predicted[i], output);
    }
    /* its step and exposed communication, predicted and measured, and the step's error */
    const char *flat = strstr(output, "| 03_flat_ddp | flat | ");
    double figures[5];
    cr_expect(flat != NULL && sscanf(flat + strlen("| 03_flat_ddp | flat | "), "%lf | %lf | %lf | %lf | %lf |",
                                     &figures[0], &figures[1], &figures[2], &figures[3], &figures[4]) == 5,
              "%s", output);
    for (size_t i = 0; i < sizeof plots / sizeof *plots; i++)
        expect_plot(plots[i]);
    char ids[2048] = "";
    for (size_t i = 0; i < sizeof lessons / sizeof *lessons; i++) {
        char name[64];
        snprintf(name, sizeof name, "timeline_%s", lessons[i]);
        expect_plot(name);
        strcat(strcat(ids, " "), name);
        if (i > 0) { /* each data-parallel lesson's step as the step model predicts it */
            snprintf(name, sizeof name, "timeline_%s_predicted", lessons[i]);
            expect_plot(name);
            strcat(strcat(ids, " "), name);
        }
    }
    static const char *const memory_lessons[] = {"00_single_device", "07_zero1", "08_zero2", "09_zero3",
                                                 "10_mixed_precision"};
    for (size_t i = 0; i < sizeof memory_lessons / sizeof *memory_lessons; i++) {
        char name[64];
        snprintf(name, sizeof name, "memory_step_%s", memory_lessons[i]);
        expect_plot(name);
        strcat(strcat(ids, " "), name);
    }
    /* the timeline is the next-to-last of the 6 traced steps, and its title says so */
    snprintf(command, sizeof command, "grep -c 'One step of 02_naive_ddp (step 5)' %s/report/plots/timeline_02_naive_ddp.svg",
             dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "the timeline's title names another step");
    snprintf(command, sizeof command, "grep -c 'over one step of 09_zero3 (step 5)' %s/report/plots/memory_step_09_zero3.svg",
             dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "the memory plot's title names another step");
    snprintf(command, sizeof command, "scripts/check_report.py %s/report loss loss_00_single_device breakdown "
             "bucket_sweep memory memory_ranks shard_layout busbw scale_124m scale_1558m%s", dir, ids);
    int status = shell_output(command, output, sizeof output);
    cr_assert_neq(status, 77, "no chromium to render the report: make setup installs it\n%s", output);
    cr_expect_eq(status, 0, "%s", output);
}

/* --student: the skeletons as shipped (what build/lessons/ holds here) beside the reference.
 * Lessons 02-07's skeletons run to the end with wrong numbers (or none); 08's and 09's stop
 * at the first step, so they have no curve and no timeline. */
Test(report, your_runs_go_beside_the_reference)
{
    char command[1024], output[1 << 14];
    snprintf(command, sizeof command, "scripts/run_course.sh --small --student --runs %s/runs --report %s/report",
             dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "--student without a reference run: %s", output);
    cr_expect_not_null(strstr(output, "run scripts/run_course.sh --small --runs"), "%s", output);
    run_course("--small");
    run_course("--small --student");
    snprintf(command, sizeof command, "cat %s/report/summary.md", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "## Your runs beside the reference"), "%s", output);
    cr_expect_not_null(strstr(output, "| 02_naive_ddp | 12 | "), "no row for your lesson 02:\n%s", output);
    cr_expect_null(strstr(output, "your 09_zero3"), "a lesson that stopped at once is shown:\n%s", output);
    expect_plot("loss_yours");
    expect_plot("timeline_02_naive_ddp_yours");
    snprintf(command, sizeof command, "%s/report/plots/timeline_09_zero3_yours.svg", dir);
    cr_expect(!file_exists(command), "a timeline for a lesson that stopped at once");
    snprintf(command, sizeof command, "scripts/check_report.py %s/report loss_yours timeline_02_naive_ddp_yours", dir);
    int status = shell_output(command, output, sizeof output);
    cr_assert_neq(status, 77, "no chromium to render the report: make setup installs it\n%s", output);
    cr_expect_eq(status, 0, "%s", output);
}

/* --cluster: the lessons and lesson 01's all-reduce on shared memory and across two hosts
 * (scripts/bench_cluster.sh), a table row per lesson and network and two plots drawn. In
 * the `cluster` suite (tests/test_lessons_dp.c), which runs alone. */
Test(cluster, the_report_shows_the_lessons_across_a_network, .init = make_dir, .fini = remove_dir)
{
    if (geteuid() != 0)
        cr_skip_test("the cluster needs root (network namespaces)");
    char command[1024], output[1 << 14];
    run_course("--small --cluster 1");
    snprintf(command, sizeof command, "cat %s/report/summary.md", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "## Across a network"), "%s", output);
    static const char *const rows[] = {"| strategy | network | step ms | comm ms | exposed comm ms | tokens/s |",
                                       "| naive_ddp | shm | ", "| naive_ddp | 1gbit | ", "| zero3 | 1gbit | "};
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++)
        cr_expect_not_null(strstr(output, rows[i]), "no row %s in summary.md:\n%s", rows[i], output);
    expect_plot("cluster");
    expect_plot("cluster_busbw");
    snprintf(command, sizeof command, "scripts/check_report.py %s/report cluster cluster_busbw", dir);
    int status = shell_output(command, output, sizeof output);
    cr_assert_neq(status, 77, "no chromium to render the report: make setup installs it\n%s", output);
    cr_expect_eq(status, 0, "%s", output);
}

/* A rate that is not one, or --cluster with --student: one line, status 2, before any run. */
Test(report, a_cluster_run_with_a_bad_rate_is_refused_before_any_work)
{
    static const char *const refused[][2] = {{"--cluster fast", "'fast' is not a rate"},
                                             {"--cluster 1 --student", "leave out --student"}};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char command[512], output[4096];
        snprintf(command, sizeof command, "scripts/run_course.sh --small %s --runs %s/runs --report %s/report",
                 refused[i][0], dir, dir);
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s: %s", refused[i][0], output);
        cr_expect_not_null(strstr(output, refused[i][1]), "%s: %s", refused[i][0], output);
        cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line: %s", output);
        snprintf(command, sizeof command, "%s/runs", dir);
        cr_expect(!file_exists(command), "%s: the runs folder was made", refused[i][0]);
    }
}

Test(report, an_incomplete_run_is_refused_naming_what_is_missing)
{
    char command[512], output[4096];
    make_in_dir("runs", NULL);
    snprintf(command, sizeof command, "scripts/make_report.py %s/runs %s/report", dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "%s", output);
    cr_expect_not_null(strstr(output, "comparison.csv is missing"), "%s", output);
    snprintf(command, sizeof command, "%s/report/index.html", dir);
    cr_expect(!file_exists(command), "no page from an incomplete run");
}

/* The report into the runs folder itself would mix its files into the run's, and a report
 * folder holding the runs (its data/ the runs, say) would clear the runs' cluster files as
 * an earlier report's: refused with exit status 2 before anything is written, however the
 * folder is named. */
Test(report, a_report_folder_that_is_or_holds_the_runs_folder_is_refused)
{
    static const char *const layouts[][2] = {{"runs", "runs/."}, {"report/data", "report"}};
    make_in_dir("report", NULL);
    for (int i = 0; i < 2; i++) {
        char command[512], output[4096], path[256];
        snprintf(path, sizeof path, "%s", layouts[i][0]);
        make_in_dir(path, NULL);
        snprintf(path, sizeof path, "%s/comparison.csv", layouts[i][0]);
        make_in_dir(path, "");
        snprintf(path, sizeof path, "%s/cluster.csv", layouts[i][0]);
        make_in_dir(path, "");
        snprintf(command, sizeof command, "scripts/make_report.py %s/%s %s/%s", dir, layouts[i][0], dir,
                 layouts[i][1]);
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s", output);
        cr_expect_not_null(strstr(output, "is or holds the runs folder"), "%s", output);
        cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line: %s", output);
        snprintf(command, sizeof command, "%s/%s", dir, layouts[i][0]);
        cr_assert_eq(files_list(command, output, sizeof output), 0);
        cr_expect_str_eq(output, "cluster.csv\ncomparison.csv\n", "the runs folder changed: %s", layouts[i][0]);
    }
}

/* Every file a run leaves, but empty: the report gets as far as its first plot, where gnuplot
 * finds no points and fails. The plot already there stays as it was, and no temporary file
 * is left behind. */
Test(report, a_failing_report_leaves_the_previous_files_and_no_temporary_one)
{
    if (shell_status("command -v gnuplot > /dev/null") != 0)
        cr_skip_test("no gnuplot: make setup installs gnuplot-nox");
    char command[2048], output[1 << 14];
    static const char *const folders[] = {"runs", "runs/traces", "report", "report/plots"};
    for (size_t i = 0; i < sizeof folders / sizeof *folders; i++)
        make_in_dir(folders[i], NULL);
    static const char *const files[] = {"comparison", "collectives", "bucket_sweep", "zero_memory", "shard_plan"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(command, sizeof command, "runs/%s.csv", files[i]);
        make_in_dir(command, "");
    }
    for (size_t i = 0; i < sizeof lessons / sizeof *lessons; i++) {
        static const char *const made[][2] = {{"runs/%s.csv", ""}, {"runs/traces/%s", NULL},
                                              {"runs/traces/%s/summary.csv", ""}, {"runs/traces/%s/timeline.csv", ""},
                                              {"runs/traces/%s/memory.csv", ""}, {"runs/traces/%s/rank_0.json", ""}};
        for (size_t m = 0; m < sizeof made / sizeof *made; m++) {
            snprintf(command, sizeof command, made[m][0], lessons[i]);
            make_in_dir(command, made[m][1]);
        }
    }
    make_in_dir("report/plots/loss.svg", "the previous plot\n");
    snprintf(command, sizeof command, "scripts/make_report.py %s/runs %s/report", dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "%s", output);
    cr_expect_not_null(strstr(output, "gnuplot failed on loss"), "%s", output);
    char rows[2][256];
    snprintf(command, sizeof command, "%s/report/plots/loss.svg", dir);
    cr_expect(files_lines(command, rows, 2) == 1 && strcmp(rows[0], "the previous plot") == 0,
              "the previous plot was overwritten");
    static const char *const report_folders[] = {"report", "report/plots"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(command, sizeof command, "%s/%s", dir, report_folders[i]);
        cr_assert_eq(files_list(command, output, sizeof output), 0);
        cr_expect_null(strstr(output, ".tmp."), "temporary files are left behind in %s:\n%s", command, output);
    }
}
