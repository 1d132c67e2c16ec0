/* The grader sees each lesson's idea, not only its numbers: every wrong solution in
 * tests/mutants/ whose numbers agree with the reference fails on the rule it breaks
 * (communication schedule, memory, memory safety), and every correct solution written
 * another way (tests/variants/) passes. Also the grader as a student meets it: one check,
 * all lessons in one table, Gradescope's JSON, the command that reproduces a failure. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "shell.h"

TestSuite(grading, .timeout = 600);

/* Grades build/mutants/MUTANT as lesson NUMBER: the grader's exit status, its output in output. */
static int grade_mutant(const char *number, const char *mutant, char *output, size_t output_len)
{
    char binary[256];
    snprintf(binary, sizeof binary, "build/mutants/%s", mutant);
    return shell_grade(number, binary, output, output_len);
}

/* The grading failed, with a FAIL line that starts with `reason`. */
static void expect_failed_with(const char *mutant, int status, const char *output, const char *reason)
{
    char line[256];
    cr_expect_eq(status, 1, "%s was not failed:\n%s", mutant, output);
    snprintf(line, sizeof line, "\nFAIL %s", reason);
    cr_expect_not_null(strstr(output, line), "%s failed, but not with 'FAIL %s':\n%s", mutant, reason, output);
}

/* The mutant fails grading, with a FAIL line that starts with `reason`. */
static void check_fails_with(const char *number, const char *mutant, const char *reason)
{
    static char output[65536];
    int status = grade_mutant(number, mutant, output, sizeof output);
    expect_failed_with(mutant, status, output, reason);
}

/* It fails on `reason` while its numbers all pass in the check `label`: only the rule named
 * can tell it from a right answer. */
static void check_only_the_rule_fails(const char *number, const char *mutant, const char *reason,
                                      const char *label)
{
    static char output[65536];
    char line[256];
    int status = grade_mutant(number, mutant, output, sizeof output);
    expect_failed_with(mutant, status, output, reason);
    const char *columns[] = {"loss", "grad_norm", "val_loss", "comm_bytes"};
    for (int c = 0; c < 4; c++) {
        snprintf(line, sizeof line, "PASS %s %s: 30 rows", label, columns[c]);
        cr_expect_not_null(strstr(output, line), "%s: no '%s':\n%s", mutant, line, output);
    }
}

Test(grading, a_ring_that_calls_the_library_all_reduce_fails)
{
    check_fails_with("01", "01_collectives/library_all_reduce", "ring_3 schedule ring:");
}

Test(grading, a_blocking_all_reduce_per_unit_fails_the_overlap_rule)
{
    check_only_the_rule_fails("04", "04_overlap_ddp/blocking_per_unit", "dp_reference_n2 schedule overlap:",
                              "dp_reference_n2");
}

Test(grading, all_reduces_started_after_backward_fail_the_overlap_rule)
{
    check_only_the_rule_fails("04", "04_overlap_ddp/started_in_before_step", "dp_reference_n2 schedule overlap:",
                              "dp_reference_n2");
}

Test(grading, a_bucket_plan_that_ignores_bucket_mb_fails)
{
    check_fails_with("05", "05_bucketed_ddp/bucket_per_unit", "dp_reference_n2_bucket-mb_0.25 schedule buckets:");
    check_fails_with("05", "05_bucketed_ddp/one_bucket", "dp_reference_n2_bucket-mb_0.1 schedule buckets:");
}

Test(grading, communicating_on_every_micro_batch_fails_the_last_micro_batch_rule)
{
    check_fails_with("06", "06_grad_accum/sync_every_micro_batch",
                     "dp_reference_n2_accum_2_bucket-mb_0.1 schedule last_micro_batch:");
}

/* Without the 1/K scale the gradients add up to K times the mean: the norm shows it at once. */
Test(grading, micro_batches_left_unscaled_fail_the_grad_norm)
{
    check_fails_with("06", "06_grad_accum/no_loss_scale",
                     "dp_reference_n2_accum_4_bucket-mb_0.25 grad_norm: 30 of 30 rows differ; first at step=1: "
                     "10.37");
}

Test(grading, adamw_over_the_padded_shard_fails_under_address_sanitizer)
{
    check_only_the_rule_fails("07", "07_zero1/adamw_over_padding",
                              "sanitize_dp_reference_n3_batch_6: AddressSanitizer: heap-buffer-overflow, in update_owned",
                              "dp_reference_n3_batch_6");
}

/* Communication buffers start as NaN: unzeroed padding poisons the very first step, and the
 * run stops there. */
Test(grading, padding_left_unzeroed_fails_at_the_first_step)
{
    static char output[65536];
    int status = grade_mutant("07", "07_zero1/padding_not_zeroed", output, sizeof output);
    expect_failed_with("07_zero1/padding_not_zeroed", status, output,
                       "dp_reference_n3_batch_6 run: the lesson exited with an error");
    cr_expect_not_null(strstr(output, "07_zero1: step 1: the gradient norm is -nan"), "%s", output);
}

Test(grading, zero3_without_prefetch_fails_the_prefetch_rule)
{
    check_only_the_rule_fails("09", "09_zero3/no_prefetch", "dp_reference_n2 schedule prefetch:",
                              "dp_reference_n2");
}

/* Storage the strategy should have declared away: the numbers are right, the memory is not. */
Test(grading, zero2_keeping_the_full_gradient_fails_the_memory_rules)
{
    check_only_the_rule_fails("08", "08_zero2/keeps_full_gradient", "dp_reference_n2 schedule model_state:",
                              "dp_reference_n2");
}

Test(grading, zero2_keeping_a_gradient_buffer_per_unit_fails_the_memory_rules)
{
    check_only_the_rule_fails("08", "08_zero2/per_unit_buffers", "dp_reference_n2 schedule no_full_buffer: rank 0, "
                              "step 1, event", "dp_reference_n2");
}

Test(grading, zero3_keeping_the_full_parameters_fails_the_memory_rules)
{
    check_only_the_rule_fails("09", "09_zero3/keeps_full_parameters", "dp_reference_n2 schedule model_state:",
                              "dp_reference_n2");
}

/* Gather slots beyond what the model's order of use needs: right numbers, more memory. */
Test(grading, zero3_with_a_slot_to_spare_fails_the_gathers_rule)
{
    check_only_the_rule_fails("09", "09_zero3/three_slots", "dp_reference_n2 schedule gathers: rank 0, step 1, "
                              "event 41: forward_start 2: a third buffer", "dp_reference_n2");
    check_only_the_rule_fails("09", "09_zero3/two_slots_without_prefetch", "dp_reference_n2_no-prefetch schedule "
                              "gathers: rank 0, step 1, event 34: forward_start 1: a second buffer",
                              "dp_reference_n2_no-prefetch");
}

Test(grading, zero3_waiting_after_the_compute_fails_the_gathers_rule)
{
    check_fails_with("09", "09_zero3/wait_after_compute", "dp_reference_n2 schedule gathers:");
}

Test(grading, a_memory_estimate_with_V_or_T_for_Vp_or_maxT_fails)
{
    check_fails_with("00", "00_single_device/wte_with_V", "estimate_reference_vocab_300_max-seq_96 bytes:");
    check_fails_with("00", "00_single_device/wpe_with_T", "estimate_reference_vocab_300_max-seq_96 bytes:");
}

/* Correct solutions written differently from the reference pass every check. */
Test(grading, correct_variants_pass)
{
    const char *variants[][2] = {{"02", "02_naive_ddp/sum_then_divide"},
                                 {"04", "04_overlap_ddp/waits_in_backward_order"},
                                 {"04", "04_overlap_ddp/no_tests"},
                                 {"05", "05_bucketed_ddp/index_walk"},
                                 {"05", "05_bucketed_ddp/waits_reversed"},
                                 {"08", "08_zero2/two_shared_buffers"},
                                 {"09", "09_zero3/test_until_done"}};
    char binary[256], output[65536];
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        snprintf(binary, sizeof binary, "build/variants/%s", variants[i][1]);
        cr_expect_eq(shell_grade(variants[i][0], binary, output, sizeof output), 0, "%s:\n%s", binary, output);
    }
}

/* The solutions' sanitizer builds are clean: the sanitize check of every lesson passes. */
Test(grading, every_solution_is_clean_under_the_sanitizers)
{
    char output[16384];
    int status = shell_output("tests/scenarios/sanitize_checks_pass.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    int lessons = 0;
    for (const char *at = output; (at = strstr(at, "PASS sanitize")) != NULL; at++)
        lessons++;
    cr_expect_eq(lessons, 10, "%s", output);
}

/* The schedule checker reads a log and nothing else: hand it one that is not a log. */
Test(grading, check_schedule_refuses_bad_input_with_one_line)
{
    char output[4096];
    cr_expect_eq(shell_output("build/tools/check_schedule 04 tests/expected/04_overlap_ddp.checks", output,
                              sizeof output), 2);
    cr_expect_not_null(strstr(output, "is not a communication log"), "%s", output);
    cr_expect_eq(shell_output("build/tools/check_schedule 12 x.csv", output, sizeof output), 2);
    cr_expect_eq(shell_output("build/tools/check_schedule 04 /nonexistent.csv", output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "cannot open /nonexistent.csv"), "%s", output);
    cr_expect_eq(shell_output("build/tools/check_schedule 04 x.csv --ranks 0", output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "check_schedule: --ranks: 0 is outside 1.."), "%s", output);
    /* its own flags, like the run's, also as --flag=value */
    cr_expect_eq(shell_output("build/tools/check_schedule 04 x.csv --label=mine --no-log='no log' --config=reference",
                              output, sizeof output), 1);
    cr_expect_not_null(strstr(output, "FAIL mine schedule "), "%s", output);
    cr_expect_not_null(strstr(output, ": no log"), "%s", output);
}

Test(grading, one_check_by_name_and_its_reproduce_commands)
{
    char output[65536];
    int status = shell_output("CHECK=dp_reference_n2_bucket-mb_0.25 scripts/grade.sh 05 "
                              "build/mutants/05_bucketed_ddp/bucket_per_unit",
                              output, sizeof output);
    cr_expect_eq(status, 1, "%s", output);
    cr_expect_null(strstr(output, "bucket-mb_0.1"), "only the named check runs:\n%s", output);
    cr_expect_not_null(strstr(output, "  reproduce:\n    mpiexec -disable-auto-cleanup -n 2 build/mutants/05_bucketed_ddp/bucket_per_unit "
                                      "train --config reference --bucket-mb 0.25 --csv run.csv --comm-log run_log.csv\n"),
                       "%s", output);
    cr_expect_not_null(strstr(output, "    build/tools/check_schedule 05 run_log.csv --ranks 2 --config reference "
                                      "--bucket-mb 0.25\n"), "%s", output);
    cr_expect_eq(shell_output("scripts/grade.sh 05 --check nosuchcheck", output, sizeof output), 2);
}

/* Gradescope's results.json: a test per check, scores that add up. */
Test(grading, json_results_in_gradescope_format)
{
    char output[65536];
    int status = shell_output("tests/scenarios/graded_json.sh 04 build/mutants/04_overlap_ddp/blocking_per_unit",
                              output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_str_eq(output, "8 7 8 ['lesson 04: dp_reference_n2 schedule overlap']\n");
}

/* A results.json that could not be written is found before grading, not after it. */
Test(grading, an_unwritable_json_is_refused_before_grading)
{
    char output[4096];
    cr_expect_eq(shell_output("scripts/grade.sh 02 --json /nonexistent/r.json", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade: --json /nonexistent/r.json: cannot write into /nonexistent\n");
    cr_expect_eq(shell_output("scripts/grade.sh 02 --json /dev/null", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade: --json /dev/null: exists and is not a regular file\n");
}
