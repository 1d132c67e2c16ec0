/* The scripts a user runs by hand answer --help with their header comment and start nothing;
 * those that take no arguments refuse one; compare_table.sh never writes its table over a
 * summary it reads. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "shell.h"

/* A script's header as --help prints it (summary_lib.sh's header_help), against what it
 * printed: equal, and the script ended at once with status 0. */
static void expect_help(const char *script)
{
    char command[512], header[8192], output[8192];
    snprintf(command, sizeof command,
             "sed -n '2,/^set -/p' scripts/%s | sed '$d' | sed 's/^# \\{0,1\\}//'", script);
    cr_assert_eq(shell_output(command, header, sizeof header), 0, "%s", header);
    cr_assert_gt(strlen(header), 40, "scripts/%s has no header comment", script);
    snprintf(command, sizeof command, "timeout 20 scripts/%s --help </dev/null", script);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s --help: %s", script, output);
    cr_expect_str_eq(output, header, "%s --help printed something else", script);
}

Test(scripts, each_script_run_by_hand_answers_help_with_its_header, .timeout = 240)
{
    static const char *const scripts[] = {
        "bench.sh", "bench_dp.sh", "bench_kernels.sh", "bench_gpu.sh", "bench_zero.sh", "bench_cluster.sh",
        "predict_cluster.sh", "collectives_table.sh", "compare_table.sh", "zero_memory.sh", "run_course.sh",
        "scale_figures.sh", "pack_offline.sh", "check_gpu.sh", "grade_class.sh", "check.sh", "docs_images.sh",
        "make_expected.sh", "setup.sh", "setup_gpt2.sh", "run_gpu_tests.sh", "fuzz.sh", "hint.sh",
    };
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++)
        expect_help(scripts[i]);
}

Test(scripts, a_script_that_takes_no_arguments_refuses_one)
{
    static const char *const scripts[] = {"bench.sh", "bench_gpu.sh", "bench_zero.sh"};
    for (size_t i = 0; i < sizeof scripts / sizeof *scripts; i++) {
        char command[256], output[1024];
        snprintf(command, sizeof command, "timeout 20 scripts/%s small </dev/null", scripts[i]);
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s: %s", scripts[i], output);
        cr_expect_not_null(strstr(output, "takes no arguments, not 'small'"), "%s: %s", scripts[i], output);
    }
}

/* --csv OUT naming one of the summaries would empty it before it was read. */
Test(scripts, compare_table_never_writes_over_a_summary_it_reads)
{
    char dir[64], command[1024], output[4096];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "compare"));
    snprintf(command, sizeof command,
             "cd %s && printf 'strategy,ranks,step_time_avg_s\\nflat,2,0.03\\n' > a.csv && "
             "printf 'strategy,ranks,step_time_avg_s\\nzero1,2,0.04\\n' > b.csv && cp a.csv before.csv", dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    snprintf(command, sizeof command, "scripts/compare_table.sh --csv %s/a.csv %s/a.csv %s/b.csv", dir, dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s", output);
    cr_expect_not_null(strstr(output, "would overwrite the summary it reads"), "%s", output);
    snprintf(command, sizeof command, "cmp %s/a.csv %s/before.csv", dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "the summary changed: %s", output);
    snprintf(command, sizeof command, "scripts/compare_table.sh --csv %s/both.csv %s/a.csv %s/b.csv >/dev/null && "
             "cat %s/both.csv", dir, dir, dir, dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_str_eq(output, "strategy,ranks,step_time_avg_s\nflat,2,0.03\nzero1,2,0.04\n");
    snprintf(command, sizeof command, "rm -rf %s", dir);
    shell_output(command, output, sizeof output);
}
