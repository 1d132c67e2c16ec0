/* Grading a class (scripts/grade_class.sh): submissions built against a pristine course and
 * run in the sandbox. The scenarios and their checks are in tests/class/. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "shell.h"

TestSuite(grade_class, .timeout = 900);

/* Runs one scenario of tests/class/: every point it prints must be "ok". */
static void expect_scenario_holds(const char *script)
{
    static char output[65536];
    int status = shell_output(script, output, sizeof output);
    if (status == 77)
        cr_skip_test("no sandbox on this machine:\n%s", output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_null(strstr(output, "not ok "), "%s", output);
}

Test(grade_class, an_adversarial_class_is_graded_fairly_and_leaves_everything_as_it_was)
{
    expect_scenario_holds("tests/class/check_class.sh");
}

/* Submissions that fork, loop, allocate or write without end, reach for the network or
 * abort: each runs into a limit of the sandbox, and the correct one beside them is graded
 * as if they were not there (tests/class/check_limits.sh). */
Test(grade_class, submissions_that_run_into_the_limits_change_no_one_elses_grade)
{
    expect_scenario_holds("tests/class/check_limits.sh");
}

Test(grade_class, bad_input_gets_one_line_before_any_work)
{
    char output[4096];
    cr_expect_eq(shell_output("scripts/grade_class.sh /nonexistent", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade_class: /nonexistent is not a folder\n");
    cr_expect_eq(shell_output("scripts/grade_class.sh . --jobs 0", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade_class: --jobs '0' is not a positive number\n");
    cr_expect_eq(shell_output("d=$(mktemp -d) && scripts/grade_class.sh $d --out $d/grades; s=$?; rm -rf $d; exit $s",
                              output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "is inside the submissions"), "%s", output);
    cr_expect_eq(shell_output("scripts/grade_class.sh --help | head -n 1", output, sizeof output), 0);
    cr_expect_str_eq(output, "Grades a class: every submission built against a pristine copy of the course and run in a\n");
}
