/* The grader's CSV comparison, build/tools/compare_runs, run on small hand-written files.
 * Every expected line is written out by hand from the values in the files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "shell.h"

static char work_dir[64];

static void make_dir(void) { cr_assert_not_null(shell_temp_dir(work_dir, sizeof work_dir, "compare_runs")); }
static void remove_dir(void) { shell_remove_dir(work_dir); }

TestSuite(compare_runs, .init = make_dir, .fini = remove_dir, .timeout = 60);

static void write_file(const char *name, const char *text)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", work_dir, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* Writes a CSV of `rows` steps, "step,loss,comm_bytes", where step s has loss
 * loss_start + s and comm_bytes bytes_start + s. */
static void write_steps(const char *name, int rows, double loss_start, long bytes_start)
{
    char text[4096];
    int used = snprintf(text, sizeof text, "step,loss,comm_bytes\n");
    for (int s = 1; s <= rows; s++)
        used += snprintf(text + used, sizeof text - (size_t)used, "%d,%.9g,%ld\n", s, loss_start + s,
                         bytes_start + s);
    write_file(name, text);
}

/* Runs compare_runs on expected.csv and actual.csv of the work folder with the flags given;
 * returns its exit status, its stdout and stderr in output. */
static int compare(const char *flags, char *output, size_t len)
{
    char command[1024];
    snprintf(command, sizeof command, "build/tools/compare_runs %s/expected.csv %s/actual.csv %s", work_dir,
             work_dir, flags);
    return shell_output(command, output, len);
}

static void expect_contains(const char *output, const char *text)
{
    cr_expect_not_null(strstr(output, text), "expected '%s' in:\n%s", text, output);
}

static int count_lines(const char *output)
{
    int lines = 0;
    for (const char *c = output; *c; c++)
        lines += *c == '\n';
    return lines;
}

/* Lines of a failure's table: indented rows whose first word is a step number. */
static int count_table_rows(const char *output)
{
    int rows = 0;
    for (const char *line = output; *line != '\0';) {
        int step;
        char space[2];
        if (strncmp(line, "  ", 2) == 0 && sscanf(line, "%d%1[ ]", &step, space) == 2)
            rows++;
        const char *end = strchr(line, '\n');
        if (end == NULL)
            break;
        line = end + 1;
    }
    return rows;
}

/* Both files: "step,bytes" with each value written by hand. */
static void write_byte_counts(const char *name, const char *first, const char *second)
{
    char text[256];
    snprintf(text, sizeof text, "step,bytes\n1,%s\n2,%s\n", first, second);
    write_file(name, text);
}

Test(compare_runs, whole_numbers_are_printed_in_full)
{
    write_steps("expected.csv", 3, 0.5, 516095);
    write_steps("actual.csv", 3, 0.5, 1032191);
    char output[4096];
    cr_assert_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label n2", output, sizeof output), 1, "%s",
                 output);
    expect_contains(output, "FAIL n2 comm_bytes: 3 of 3 rows differ; first at step=1: 1032192 but expected "
                            "516096 (difference 516096, allowed 0)\n");
    expect_contains(output, "1032194");
    cr_expect_null(strstr(output, "e+0"), "a byte count in %%g form:\n%s", output);
}

/* %g would print both as 3.36e+07 and the difference as 1. */
Test(compare_runs, a_difference_of_one_byte_in_a_large_count_is_visible)
{
    write_byte_counts("expected.csv", "33554432", "33554432");
    write_byte_counts("actual.csv", "33554432", "33554433");
    char output[4096];
    cr_assert_eq(compare("--columns bytes --rtol 0 --atol 0 --label est", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL est bytes: 1 of 2 rows differ; first at step=2: 33554433 but expected 33554432 "
                            "(difference 1, allowed 0)\n");
    cr_expect_null(strstr(output, "e+0"), "%s", output);
}

/* Between whole numbers only whole differences occur: 1e-7 of 33554432 allows 3 bytes. */
Test(compare_runs, the_allowance_for_whole_numbers_is_whole)
{
    write_byte_counts("expected.csv", "33554432", "33554432");
    write_byte_counts("actual.csv", "33554432", "33554436");
    char output[4096];
    cr_assert_eq(compare("--columns bytes --rtol 1e-7 --atol 0", output, sizeof output), 1, "%s", output);
    expect_contains(output, "(difference 4, allowed 3)\n");
}

Test(compare_runs, fractional_values_keep_a_compact_float_form)
{
    write_file("expected.csv", "step,loss\n1,2.5\n2,3.25\n");
    write_file("actual.csv", "step,loss\n1,2.5\n2,3.2501\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --rtol 1e-5 --atol 0 --label f", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL f loss: 1 of 2 rows differ; first at step=2: 3.2501 but expected 3.25 "
                            "(difference 0.0001, allowed 3.25e-05)\n");
}

Test(compare_runs, the_table_shows_five_rows_and_how_many_more)
{
    write_steps("expected.csv", 8, 0.5, 1000);
    write_steps("actual.csv", 8, 0.5, 1100);
    char output[4096];
    cr_assert_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label t", output, sizeof output), 1, "%s",
                 output);
    expect_contains(output, "FAIL t comm_bytes: 8 of 8 rows differ; first at step=1: 1101 but expected 1001");
    cr_expect_eq(count_table_rows(output), 5, "%s", output);
    cr_expect(strstr(output, "step") && strstr(output, "expected  ") && strstr(output, "actual") &&
                  strstr(output, "difference\n"),
              "no header line:\n%s", output);
    expect_contains(output, "  5          1005          1105           100\n");
    cr_expect_null(strstr(output, "1106"), "step 6 is past the first five:\n%s", output);
    expect_contains(output, "and 3 more\n");
}

/* --at-most (ZeRO-3's bytes): below the expected passes, and says how many rows were; above fails */
Test(compare_runs, at_most_lets_a_value_below_pass_and_none_above)
{
    write_file("expected.csv", "step,comm_bytes\n1,1000\n2,1000\n3,1000\n");
    write_file("actual.csv", "step,comm_bytes\n1,1000\n2,900\n3,1000\n");
    char output[4096];
    cr_expect_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label t", output, sizeof output), 1, "%s", output);
    cr_expect_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label t --at-most", output, sizeof output), 0,
                 "%s", output);
    expect_contains(output, "PASS t comm_bytes: 3 rows, 1 below the expected (as --at-most allows), the other 2's "
                            "largest relative difference 0\n");
    write_file("actual.csv", "step,comm_bytes\n1,900\n2,900\n3,900\n");
    cr_expect_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label t --at-most", output, sizeof output), 0,
                 "%s", output);
    expect_contains(output, "PASS t comm_bytes: 3 rows, all below the expected (as --at-most allows)\n");
    write_file("actual.csv", "step,comm_bytes\n1,1000\n2,1001\n3,1000\n");
    cr_expect_eq(compare("--columns comm_bytes --rtol 0 --atol 0 --label t --at-most", output, sizeof output), 1,
                 "%s", output);
    expect_contains(output, "FAIL t comm_bytes: 1 of 3 rows differ; first at step=2: 1001 but expected 1000");
}

Test(compare_runs, a_short_table_has_no_more)
{
    write_file("expected.csv", "step,loss\n1,1.5\n2,1.25\n3,1.125\n4,1\n");
    write_file("actual.csv", "step,loss\n1,1.5\n2,1.75\n3,1.125\n4,2\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --label t", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL t loss: 2 of 4 rows differ; first at step=2: 1.75 but expected 1.25 "
                            "(difference 0.5, allowed 0)\n");
    cr_expect_eq(count_table_rows(output), 2, "%s", output);
    expect_contains(output, "  4             1             2             1\n");
    cr_expect_null(strstr(output, "more"), "%s", output);
}

/* Relative differences 2e-6 and 5e-6 lie within rtol 1e-5; the PASS line shows the larger. */
Test(compare_runs, a_pass_reports_the_largest_relative_difference)
{
    write_file("expected.csv", "step,loss,val_loss\n1,2,\n2,4,4\n");
    write_file("actual.csv", "step,loss,val_loss\n1,2.00001,\n2,4.000008,4\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss,val_loss --rtol 1e-5 --atol 0 --label p", output, sizeof output), 0, "%s",
                 output);
    expect_contains(output, "PASS p loss: 2 rows, largest relative difference 5e-06\n");
    expect_contains(output, "PASS p val_loss: 2 rows, largest relative difference 0\n");
}

/* A difference from an expected 0 is relative to nothing: it is said apart, not as relative. */
Test(compare_runs, a_difference_from_an_expected_zero_is_not_called_relative)
{
    write_file("expected.csv", "step,loss\n1,0\n2,4\n");
    write_file("actual.csv", "step,loss\n1,3e-09\n2,4.00000004\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --rtol 1e-5 --atol 1e-8 --label z", output, sizeof output), 0, "%s", output);
    expect_contains(output, "PASS z loss: 2 rows, largest relative difference 1e-08 (and a difference of 3e-09 "
                            "where 0 was expected)\n");
}

Test(compare_runs, one_failing_column_fails_the_comparison_and_the_others_still_pass)
{
    write_file("expected.csv", "step,loss,comm_bytes\n1,2,100\n");
    write_file("actual.csv", "step,loss,comm_bytes\n1,2,101\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss,comm_bytes --label m", output, sizeof output), 1, "%s", output);
    expect_contains(output, "PASS m loss: 1 rows");
    expect_contains(output, "FAIL m comm_bytes: 1 of 1 rows differ");
}

Test(compare_runs, a_cell_that_is_not_a_number_fails)
{
    write_file("expected.csv", "step,loss\n1,0\n2,0\n");
    write_file("actual.csv", "step,loss\n1,abc\n2,0\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --rtol 1 --atol 1 --label n", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL n loss: 1 of 2 rows differ; first at step=1:");
    expect_contains(output, "'abc' in the actual file is not a number");
}

/* A step both runs skipped for an fp16 overflow has an infinite gradient norm in both: they
 * agree. Infinity against a number differs, whatever the tolerance. */
Test(compare_runs, infinities_agree_only_with_themselves)
{
    write_file("expected.csv", "step,grad_norm\n1,inf\n2,inf\n3,2.5\n");
    write_file("actual.csv", "step,grad_norm\n1,inf\n2,2.5\n3,-inf\n");
    char output[4096];
    cr_assert_eq(compare("--columns grad_norm --rtol 1 --atol 1 --label n", output, sizeof output), 1, "%s",
                 output);
    expect_contains(output, "FAIL n grad_norm: 2 of 3 rows differ; first at step=2: 2.5 but expected inf");
}

Test(compare_runs, a_number_with_trailing_text_fails)
{
    write_file("expected.csv", "step,loss\n1,5.5x\n");
    write_file("actual.csv", "step,loss\n1,5.5\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --rtol 1 --atol 1", output, sizeof output), 1, "%s", output);
    expect_contains(output, "'5.5x' in the expected file is not a number");
}

Test(compare_runs, a_value_in_one_file_only_fails_and_is_counted)
{
    write_file("expected.csv", "step,val_loss\n1,\n2,5.25\n3,\n4,4.5\n");
    write_file("actual.csv", "step,val_loss\n1,\n2,\n3,3\n4,4.5\n");
    char output[4096];
    cr_assert_eq(compare("--columns val_loss --rtol 1 --label v", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL v val_loss: 2 of 4 rows differ; first at step=2: (empty) but expected 5.25 "
                            "(a value in one file only)\n");
    cr_expect_eq(count_table_rows(output), 2, "%s", output);
}

Test(compare_runs, a_missing_column_fails)
{
    write_file("expected.csv", "step,loss\n1,2\n");
    write_file("actual.csv", "step,lr\n1,2\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --label c", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL c loss: column missing from the actual file\n");
}

Test(compare_runs, a_different_number_of_rows_fails)
{
    write_steps("expected.csv", 3, 0.5, 10);
    write_steps("actual.csv", 2, 0.5, 10);
    char output[4096];
    cr_assert_eq(compare("--columns loss --label r", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL r loss: 2 rows but expected 3\n");
}

Test(compare_runs, rows_for_different_steps_fail)
{
    write_file("expected.csv", "step,loss\n1,2\n2,2\n");
    write_file("actual.csv", "step,loss\n1,2\n3,2\n");
    char output[4096];
    cr_assert_eq(compare("--columns loss --label s", output, sizeof output), 1, "%s", output);
    expect_contains(output, "FAIL s loss: row 2 is step=3 but expected step=2\n");
}

/* Bad input exits 2 with one line on stderr that names the problem. */
static void expect_bad_input(const char *flags, const char *named)
{
    char output[4096];
    cr_expect_eq(compare(flags, output, sizeof output), 2, "'%s' was accepted:\n%s", flags, output);
    cr_expect_eq(count_lines(output), 1, "'%s' should give one line:\n%s", flags, output);
    cr_expect_not_null(strstr(output, named), "'%s' should name '%s':\n%s", flags, named, output);
}

Test(compare_runs, bad_flags_exit_2)
{
    write_steps("expected.csv", 2, 0.5, 10);
    write_steps("actual.csv", 2, 0.5, 10);
    expect_bad_input("--columns loss --rtlo 1e-5", "unknown flag --rtlo");
    expect_bad_input("--rtol 1e-5", "--columns is required");
    expect_bad_input("--columns loss --rtol", "--rtol needs a value");
    expect_bad_input("--columns --rtol 0", "--columns needs a value");
    expect_bad_input("--columns loss --atol abc", "--atol: 'abc' is not a number");
    expect_bad_input("--columns loss --rtol -1", "--rtol: -1 is outside 0..");
    expect_bad_input("--columns=loss --rtol=nan", "--rtol: 'nan' is not a finite number");
}

Test(compare_runs, missing_and_empty_files_exit_2)
{
    write_steps("expected.csv", 2, 0.5, 10);
    expect_bad_input("--columns loss", "actual.csv");
    write_file("actual.csv", "");
    expect_bad_input("--columns loss", "actual.csv is empty");
}

/* --flag=value reads as --flag value. */
Test(compare_runs, flags_written_with_an_equals_sign_mean_the_same)
{
    char output[4096];
    write_steps("expected.csv", 3, 0.5, 10);
    write_steps("actual.csv", 3, 0.5, 10);
    cr_expect_eq(compare("--columns=loss --rtol=0 --atol=0 --label=same", output, sizeof output), 0, "%s", output);
    expect_contains(output, "PASS same loss: 3 rows");
}

Test(compare_runs, help_exits_0)
{
    char output[4096];
    cr_assert_eq(shell_output("build/tools/compare_runs --help", output, sizeof output), 0, "%s", output);
    expect_contains(output, "usage: compare_runs EXPECTED ACTUAL --columns");
}

/* --after-validation-between: step 3 follows the validated step 2, and may move anything from
 * its own expected bytes (90, what validation left gathered saved) up to step 2's (100);
 * every other step stays exact, and nothing outside that range passes. */
Test(compare_runs, after_validation_a_step_may_move_between_its_bytes_and_the_step_befores)
{
    write_file("expected.csv", "step,val_loss,comm_bytes\n1,,100\n2,4,100\n3,,90\n4,,100\n");
    char output[4096];
    static const char *const passing[] = {"90", "95", "100"};
    for (size_t i = 0; i < sizeof passing / sizeof *passing; i++) {
        char actual[256];
        snprintf(actual, sizeof actual, "step,val_loss,comm_bytes\n1,,100\n2,4,100\n3,,%s\n4,,100\n", passing[i]);
        write_file("actual.csv", actual);
        cr_expect_eq(compare("--columns comm_bytes --after-validation-between --label v", output, sizeof output), 0,
                     "%s: %s", passing[i], output);
        cr_expect_eq(compare("--columns comm_bytes --label v", output, sizeof output), strcmp(passing[i], "90") != 0,
                     "without the switch, %s: %s", passing[i], output);
    }
    write_file("actual.csv", "step,val_loss,comm_bytes\n1,,100\n2,4,100\n3,,101\n4,,95\n");
    cr_assert_eq(compare("--columns comm_bytes --after-validation-between --label v", output, sizeof output), 1,
                 "%s", output);
    expect_contains(output, "FAIL v comm_bytes: 2 of 4 rows differ; first at step=3: 101 but expected 90");
}
