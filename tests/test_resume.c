/* Resumable checkpoints (common/resume.h): a run killed with SIGKILL goes on from its last
 * resume state exactly as if it had never stopped (tests/resume_after_kill.sh), and a state
 * that is not this run's, or not whole, is refused before any work with one line. These run
 * the built programs from the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "files.h"
#include "shell.h"

#define LESSON00 "build/solutions/00_single_device"
#define LESSON10 "build/solutions/10_mixed_precision"

static char dir[64];

static void make_dir(void) { cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "resume")); }
static void remove_dir(void) { shell_remove_dir(dir); }

TestSuite(resume, .init = make_dir, .fini = remove_dir, .timeout = 600);

/* 200 steps, the first state saved at step 50: the run goes on for 150 steps after it, time
 * enough for the kill to land before its end on a busy machine. */
static void check_resumes(const char *binary, int ranks, int resume_ranks, const char *flags, const char *says)
{
    char command[512], output[16384];
    snprintf(command, sizeof command, "STEPS=200 SAVE_EVERY=50 tests/resume_after_kill.sh %s %d %d %s", binary, ranks,
             resume_ranks, flags);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 0, "%s:\n%s", command, output);
    cr_expect_not_null(strstr(output, says), "%s:\n%s", command, output);
}

Test(resume, a_killed_run_goes_on_bit_for_bit_on_one_device_in_ddp_and_in_zero)
{
    const char *same = "steps 51-200 and the final parameters bit for bit the same";
    check_resumes(LESSON00, 1, 1, "", same);
    check_resumes("build/solutions/05_bucketed_ddp", 2, 2, "", same);
    check_resumes("build/solutions/07_zero1", 2, 2, "", same);
    check_resumes("build/solutions/09_zero3", 2, 2, "", same);
    /* the state holds the fp32 master, whole; the bf16 weights are its rounding */
    check_resumes(LESSON10, 2, 2, "", same);
    check_resumes(LESSON10, 2, 2, "--stage 3", same);
}

/* fp16: the state keeps the loss scale and the count of good steps. With a window of 4 the
 * scale has moved by step 50 and the count is mid-window: a state without either takes
 * other steps from 52 or 54 on. */
Test(resume, an_fp16_run_goes_on_with_its_loss_scale_and_good_steps)
{
    check_resumes(LESSON10, 2, 2, "--fp16 --scale-window 4",
                  "steps 51-200 and the final parameters bit for bit the same");
}

/* The state holds the whole optimizer state, gathered from the shards: 3 ranks take their
 * own shards of what 2 ranks saved (ZeRO-3: of the parameters too). The sums run in another order, so within the tolerance. */
Test(resume, a_zero_state_saved_at_2_ranks_goes_on_at_3)
{
    check_resumes("build/solutions/09_zero3", 2, 3, "--batch 12", "PASS resumed at 3 ranks loss: 150 rows");
}

/* What is done to the resume state between the runs: nothing, a byte changed at `at`, or
 * its last `cut` bytes cut off. */
typedef struct {
    long at;
    long cut;
} Damage;

static const Damage untouched = {-1, 0};

/* A 10-step run of `program` with `flags` that saves every 5 steps, then `damage` to its
 * state. */
static void save_state(const char *program, const char *flags, Damage damage)
{
    char command[1024], output[16384], state[128];
    snprintf(command, sizeof command, "%s train --config reference --steps 10 %s --save %s/ck --save-every 5",
             program, flags, dir);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s:\n%s", command, output);
    snprintf(state, sizeof state, "%s/ck.state", dir);
    cr_assert(damage.at < 0 || files_patch(state, damage.at, "\177", 1) == 0);
    cr_assert(damage.cut == 0 || files_cut(state, files_size(state) - damage.cut) == 0);
}

/* A 10-step run of `program` with `flags`: refused with exit status `status` (2: flags that
 * contradict each other, 1: a state that cannot be used) and one line containing `reason`. */
static void check_run_exits(int expected, const char *program, const char *flags, const char *reason)
{
    char command[1024], output[16384];
    snprintf(command, sizeof command, "%s train --config reference --steps 10 %s", program, flags);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, expected, "%s:\n%s", command, output);
    cr_expect_not_null(strstr(output, reason), "%s: no '%s':\n%s", command, reason, output);
    cr_expect_eq(strchr(output, '\n'), output + strlen(output) - 1, "more than one line:\n%s", output);
}

/* Lesson 00's state, damaged so, then lesson 00 with `resume_flags`. */
static void check_exit_after(int expected, Damage damage, const char *resume_flags, const char *reason)
{
    save_state(LESSON00, "", damage);
    check_run_exits(expected, LESSON00, resume_flags, reason);
}

static void check_exit(int expected, const char *resume_flags, const char *reason)
{
    check_exit_after(expected, untouched, resume_flags, reason);
}

static void check_refused(const char *flags, const char *reason)
{
    check_exit(1, flags, reason);
}

Test(resume, a_state_of_another_run_is_refused_naming_the_first_difference)
{
    char flags[256];
    snprintf(flags, sizeof flags, "--resume %s/ck.state --lr 0.002", dir);
    check_refused(flags, "does not match this run: it was saved with lr 0.003, this run has lr 0.002");
    snprintf(flags, sizeof flags, "--resume %s/ck.state --steps 11", dir);
    check_refused(flags, "it was saved with steps 10, this run has steps 11");
}

Test(resume, a_damaged_or_foreign_state_is_refused)
{
    char flags[256];
    snprintf(flags, sizeof flags, "--resume %s/ck.state", dir);
    check_exit_after(1, (Damage){100000, 0}, flags, "damaged (its contents do not match their hash)");
    check_exit_after(1, (Damage){-1, 4}, flags, "damaged (not the size its header says)");
    snprintf(flags, sizeof flags, "--resume %s/ck", dir);
    check_refused(flags, "not a resume state");
    /* "dtc resume state 2": its version, byte 17, from another format */
    char state[128];
    snprintf(state, sizeof state, "%s/ck.state", dir);
    cr_assert(files_patch(state, 17, "1", 1) == 0);
    snprintf(flags, sizeof flags, "--resume %s", state);
    check_run_exits(1, LESSON00, flags, "a resume state of format 1; this program reads format 2 only");
}

/* Lesson 10's format, matmuls and fp16 scale window shape its numbers, so a state is
 * refused by a run with others (an fp32 lesson has none of them); its ZeRO stage does not. */
Test(resume, a_state_in_another_precision_is_refused_naming_it)
{
    char flags[256];
    save_state(LESSON10, "", untouched);
    snprintf(flags, sizeof flags, "--resume %s/ck.state --fp16", dir);
    check_run_exits(1, LESSON10, flags, "it was saved with precision bf16, this run has precision fp16");
    snprintf(flags, sizeof flags, "--resume %s/ck.state --fp32-matmuls", dir);
    check_run_exits(1, LESSON10, flags, "it was saved with matmuls 16-bit, this run has matmuls fp32");
    snprintf(flags, sizeof flags, "--resume %s/ck.state", dir);
    check_run_exits(1, "build/solutions/09_zero3", flags, "it was saved with precision bf16, this run has no such");
    snprintf(flags, sizeof flags, "--resume %s/ck.state --stage 3 --gen-tokens 0", dir);
    char command[512], output[16384];
    snprintf(command, sizeof command, LESSON10 " train --config reference --steps 10 %s", flags);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s:\n%s", command, output);
    cr_expect_not_null(strstr(output, "resumed from"), "%s:\n%s", command, output);

    save_state(LESSON10, "--fp16 --scale-window 4", untouched);
    snprintf(flags, sizeof flags, "--resume %s/ck.state --fp16 --scale-window 5", dir);
    check_run_exits(1, LESSON10, flags, "it was saved with scale-window 4, this run has scale-window 5");
    check_run_exits(2, LESSON10, "--scale-window 4", "--scale-window is for --fp16's loss scale");
}

Test(resume, flags_that_cannot_work_together_are_refused)
{
    char flags[256];
    check_exit(2, "--save-every 5", "--save-every needs --save PATH");
    snprintf(flags, sizeof flags, "--resume %s/ck.state --init-from %s/ck", dir, dir);
    check_exit(2, flags, "--resume and --init-from both name where to start");
    snprintf(flags, sizeof flags, "--save %s/ck --save-every 5 --train %s/ck.state", dir, dir);
    check_refused(flags, "would overwrite an input file");
}
