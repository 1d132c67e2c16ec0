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

/* A sandbox started without --uid (as the class checks start one) runs as a user id of its
 * own: a grader ending another submission's processes beside it does not end it
 * (tests/class/check_two_sandboxes.sh). */
Test(grade_class, a_sandbox_runs_on_while_another_users_processes_are_ended)
{
    expect_scenario_holds("tests/class/check_two_sandboxes.sh");
}

Test(grade_class, bad_input_gets_one_line_before_any_work)
{
    char output[4096];
    cr_expect_eq(shell_output("scripts/grade_class.sh /nonexistent", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade_class: /nonexistent is not a folder\n");
    cr_expect_eq(shell_output("scripts/grade_class.sh . --jobs 0", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade_class: --jobs '0' is not a positive number\n");
    char submissions[64], command[256];
    cr_assert_not_null(shell_temp_dir(submissions, sizeof submissions, "grade_class"));
    snprintf(command, sizeof command, "scripts/grade_class.sh %s --out %s/grades", submissions, submissions);
    cr_expect_eq(shell_output(command, output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "is inside the submissions"), "%s", output);
    /* one student's submission given for the class: its lessons/ would be graded as a student */
    snprintf(command, sizeof command, "mkdir %s/lessons && scripts/grade_class.sh %s", submissions, submissions);
    cr_expect_eq(shell_output(command, output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "holds lessons/, as one submission does: give the folder that holds a "
                                      "submission per student\n"), "%s", output);
    shell_remove_dir(submissions);
    cr_expect_eq(shell_output("scripts/grade_class.sh --help", output, sizeof output), 0);
    const char *first_line = "Grades a class: every submission built against a pristine copy of the course and run in "
                             "a\n";
    cr_expect_eq(strncmp(output, first_line, strlen(first_line)), 0, "%s", output);
}

/* Two entries for one student (bob/ and bob.zip) would share one folder of grades: refused
 * before any grading, in one line naming both, and nothing is written. */
Test(grade_class, two_entries_for_one_student_are_refused_before_any_grading)
{
    char submissions[64], command[512], output[4096];
    cr_assert_not_null(shell_temp_dir(submissions, sizeof submissions, "grade_class"));
    snprintf(command, sizeof command, "mkdir %s/bob && touch %s/bob.zip && scripts/grade_class.sh %s --out %s.grades",
             submissions, submissions, submissions, submissions);
    int status = shell_output(command, output, sizeof output);
    snprintf(command, sizeof command, "test -e %s.grades", submissions);
    int wrote = shell_status(command) == 0;
    shell_remove_dir(submissions);
    strcat(submissions, ".grades");
    shell_remove_dir(submissions);
    cr_expect_eq(status, 2, "%s", output);
    cr_expect_str_eq(output, "grade_class: bob and bob.zip are both bob's submission: keep one of them\n");
    cr_expect_not(wrote, "the grades folder was made");
}

/* A student named as the gradebook's own file would make a folder where it goes: refused. */
Test(grade_class, a_student_named_as_the_gradebook_is_refused)
{
    char submissions[64], command[512], output[4096];
    cr_assert_not_null(shell_temp_dir(submissions, sizeof submissions, "grade_class"));
    snprintf(command, sizeof command, "mkdir %s/gradebook.csv && scripts/grade_class.sh %s --out %s.grades",
             submissions, submissions, submissions);
    int status = shell_output(command, output, sizeof output);
    shell_remove_dir(submissions);
    strcat(submissions, ".grades");
    shell_remove_dir(submissions);
    cr_expect_eq(status, 2, "%s", output);
    cr_expect_str_eq(output, "grade_class: gradebook.csv: a student cannot be named gradebook.csv (the gradebook's "
                             "file)\n");
}

/* A git repository's files are taken as committed, and no command it names (a filter, a
 * file-system monitor, a hook) runs: the grader runs as root, outside the sandbox. One owned
 * by another user is read too; one with a `..` name is refused (tests/class/check_intake.sh). */
Test(grade_class, a_git_submission_runs_none_of_its_commands)
{
    expect_scenario_holds("tests/class/check_intake.sh git");
}

/* A link in a submission (a lesson folder that leads to another student's) takes nothing. */
Test(grade_class, nothing_is_taken_through_a_link_to_another_submission)
{
    expect_scenario_holds("tests/class/check_intake.sh links");
}

/* Students named with a comma, a quote or a line break: one gradebook row each, the name
 * quoted as CSV quotes it, and one folder of grades each. */
Test(grade_class, odd_names_get_one_gradebook_row_and_one_folder_each)
{
    expect_scenario_holds("tests/class/check_intake.sh names");
}

/* A run handed in is compared only when it is named after a graded check of its lesson: a
 * lesson 10 drift run named after no check is told so, not compared with lesson 00. */
Test(grade_class, a_handed_in_run_counts_only_under_a_checks_name)
{
    expect_scenario_holds("tests/class/check_intake.sh runs");
}

/* Every archive that could put a file outside where it is unpacked, or that holds what is
 * not a file, is refused whole with one line, and nothing is written. */
Test(grade_class, unsafe_archives_are_refused_with_one_line_writing_nothing)
{
    static char output[16384];
    int status = shell_output("tests/class/unpack_unsafe_archives.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    const char *refusals[] = {
        "absolute.zip: entry '/tmp/x.c' has an absolute name: refused\nexit 1\n",
        "device.tar.gz: entry 'lessons/x.c' is a link or a special file: refused\nexit 1\n",
        "dotdot.tar.gz: entry 'lessons/../../x.c' has a '..' part: refused\nexit 1\n",
        "fifo.tar.gz: entry 'lessons/x.c' is a link or a special file: refused\nexit 1\n",
        "hardlink.tar.gz: entry 'lessons/x.c' is a link or a special file: refused\nexit 1\n",
        "homework.rar: not a .tar.gz, .tgz, .tar or .zip file: refused\nexit 1\n",
        "symlink.tar.gz: entry 'lessons/x.c' is a link or a special file: refused\nexit 1\n",
        "symlink.zip: entry 'lessons/x.c' is a link or a special file: refused\nexit 1\n",
        "truncated.tar.gz: cannot be read: a damaged or truncated archive\nexit 1\n",
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++)
        cr_expect_not_null(strstr(output, refusals[i]), "no '%s' in:\n%s", refusals[i], output);
    cr_expect_null(strstr(output, "something was written"), "%s", output);
}

/* Gradescope's entry point grades the one submission it is given with the same grader and
 * leaves results.json where Gradescope reads it. */
Test(grade_class, the_gradescope_entry_point_writes_results_json)
{
    char output[4096];
    if (shell_status("scripts/sandbox.sh --root . -- true >/dev/null 2>&1") != 0)
        cr_skip_test("no sandbox on this machine");
    int status = shell_output("tests/class/gradescope_once.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_str_eq(output, "15 15 of 15 checks passed\n");
}
