/* Lesson 00 end to end: the built programs, the grader and the expected values. These
 * run the real binaries from the repository root (make test builds them and the data). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "files.h"
#include "shell.h"

#include "checkpoint.h"

#define SOLUTION "build/solutions/00_single_device"
#define STUDENT "build/lessons/00_single_device"
#define EXPECTED "tests/expected/00_single_device/train_reference.csv"

static int run(const char *command) { return shell_status(command); }

/* Runs a command and captures its first output line (stdout and stderr). */
static int run_capture(const char *command, char *first_line, size_t len)
{
    char wrapped[1024];
    snprintf(wrapped, sizeof wrapped, "%s 2>&1", command);
    FILE *pipe = popen(wrapped, "r");
    cr_assert_not_null(pipe);
    first_line[0] = '\0';
    if (fgets(first_line, (int)len, pipe) == NULL)
        first_line[0] = '\0';
    char rest[512];
    int extra_lines = 0;
    while (fgets(rest, sizeof rest, pipe) != NULL)
        extra_lines++;
    int status = pclose(pipe);
    cr_assert_eq(extra_lines, 0, "expected a one-line error from: %s", command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static char work_dir[64];

static void make_work_dir(void) { cr_assert_not_null(shell_temp_dir(work_dir, sizeof work_dir, "lesson00")); }
static void remove_work_dir(void) { shell_remove_dir(work_dir); }

TestSuite(lesson00, .init = make_work_dir, .fini = remove_work_dir, .timeout = 300);

Test(lesson00, solution_passes_grading_with_avx2_kernels)
{
    cr_assert_eq(run("OPENBLAS_CORETYPE=Haswell scripts/grade.sh 00 " SOLUTION " > /dev/null"), 0);
}

Test(lesson00, solution_passes_grading_with_autodetected_kernels)
{
    cr_assert_eq(run("env -u OPENBLAS_CORETYPE scripts/grade.sh 00 " SOLUTION " > /dev/null"), 0);
}

Test(lesson00, skeleton_fails_grading)
{
    cr_assert_eq(run("scripts/grade.sh 00 " STUDENT " > /dev/null"), 1);
}

/* A training run that differs from the reference in one small way must fail the
 * comparison: this is what shows the tolerance is tight enough. */
static void assert_variant_fails(const char *flags)
{
    char command[1024];
    snprintf(command, sizeof command, SOLUTION " train --config reference %s --csv %s/variant.csv > /dev/null", flags,
             work_dir);
    cr_assert_eq(run(command), 0, "%s", command);
    snprintf(command, sizeof command, "tests/scenarios/within_tolerance.sh " EXPECTED " %s/variant.csv > /dev/null",
             work_dir);
    cr_assert_eq(run(command), 1, "a run with %s passed the comparison", flags);
}

Test(lesson00, tolerance_catches_learning_rate_off_by_one_percent) { assert_variant_fails("--lr 0.00303"); }
Test(lesson00, tolerance_catches_no_weight_decay) { assert_variant_fails("--weight-decay 0"); }
Test(lesson00, tolerance_catches_beta2_mistake) { assert_variant_fails("--beta2 0.999"); }
Test(lesson00, tolerance_catches_no_clipping) { assert_variant_fails("--grad-clip 0"); }
Test(lesson00, tolerance_catches_another_seed) { assert_variant_fails("--seed 1338"); }
Test(lesson00, tolerance_catches_eps_mistake) { assert_variant_fails("--eps 1e-6"); }

Test(lesson00, checkpoint_round_trip_through_the_cli)
{
    char command[1024], path[128], saved_again[128];
    snprintf(path, sizeof path, "%s/a.bin", work_dir);
    snprintf(saved_again, sizeof saved_again, "%s/b.bin", work_dir);
    snprintf(command, sizeof command, SOLUTION " train --config reference --steps 3 --save %s > /dev/null", path);
    cr_assert_eq(run(command), 0, "%s", command);
    snprintf(command, sizeof command, SOLUTION " train --config reference --steps 0 --init-from %s --save %s > /dev/null",
             path, saved_again);
    cr_assert_eq(run(command), 0, "%s", command);
    cr_assert_eq(files_same(path, saved_again), 1, "saving a loaded checkpoint must give the same bytes");
    GPTConfig cfg;
    char err[256];
    cr_assert_eq(checkpoint_read_config(path, &cfg, err, sizeof err), 0, "%s", err);
    cr_assert(cfg.num_layers == 2 && cfg.channels == 64 && cfg.vocab_size == 256);
}

Test(lesson00, resuming_from_a_checkpoint_changes_the_start)
{
    char command[1024], path[128];
    snprintf(command, sizeof command, SOLUTION " train --config reference --steps 5 --save %s/a.bin > /dev/null",
             work_dir);
    cr_assert_eq(run(command), 0, "%s", command);
    snprintf(command, sizeof command,
             SOLUTION " train --config reference --steps 1 --init-from %s/a.bin --csv %s/r.csv > /dev/null", work_dir,
             work_dir);
    cr_assert_eq(run(command), 0, "%s", command);
    snprintf(path, sizeof path, "%s/r.csv", work_dir);
    char rows[2][256];
    cr_assert_eq(files_lines(path, rows, 2), 2, "%s has no step", path);
    double first_loss = atof(strchr(rows[1], ',') + 1); /* step,loss,... */
    cr_assert_lt(first_loss, 5.3, "a run from a trained checkpoint must start below the untrained loss");
}

static void assert_one_line_error(const char *args, int expected_status, const char *must_contain)
{
    char command[512], line[512];
    snprintf(command, sizeof command, SOLUTION " %s", args);
    int status = run_capture(command, line, sizeof line);
    cr_assert_eq(status, expected_status, "'%s' exited %d: %s", args, status, line);
    cr_assert(strstr(line, must_contain) != NULL, "'%s' said: %s", args, line);
}

Test(lesson00, bad_input_gets_a_one_line_error)
{
    assert_one_line_error("train --bogus 1", 2, "unknown flag --bogus");
    assert_one_line_error("train --lr", 2, "--lr needs a value");
    assert_one_line_error("train --lr abc", 2, "--lr: 'abc' is not a number");
    assert_one_line_error("train --batch 0", 2, "--batch");
    assert_one_line_error("train --heads 3", 2, "channels must divide evenly by heads");
    assert_one_line_error("train --seq 256", 2, "--seq 256 is longer than --max-seq 128");
    assert_one_line_error("train --config huge", 2, "unknown preset 'huge'");
    assert_one_line_error("fly", 2, "unknown mode 'fly'");
    assert_one_line_error("train --config tiny --train /nonexistent.bin", 1, "/nonexistent.bin");
    assert_one_line_error("train --config tiny --init-from /nonexistent.bin", 1, "/nonexistent.bin");
    /* NaN compares false with both ends of a range, so it must be refused before them */
    assert_one_line_error("train --lr nan", 2, "--lr: 'nan' is not a finite number");
    assert_one_line_error("train --grad-clip inf", 2, "--grad-clip: 'inf' is not a finite number");
    assert_one_line_error("train --step-timeout 0.0000009", 2, "--step-timeout 9e-07: a timer that short");
    /* found before the first step, not when the run saves at its end */
    assert_one_line_error("train --config tiny --save /nonexistent/model.bin", 1, "there is no folder /nonexistent");
    assert_one_line_error("train --config tiny --save /dev/null", 1, "exists and is not a regular file");
    assert_one_line_error("train --config tiny --csv /dev/null", 1, "--csv /dev/null: exists and is not a regular file");
    assert_one_line_error("train --config tiny --summary /tmp", 1, "--summary /tmp: exists and is not a regular file");
    /* --flag=value: the same rules */
    assert_one_line_error("train --bogus=1", 2, "unknown flag --bogus");
    assert_one_line_error("train --lr=abc", 2, "--lr: 'abc' is not a number");
    assert_one_line_error("train --lr=", 2, "--lr: '' is not a number");
    assert_one_line_error("train --skip-nonfinite=1", 2, "flag --skip-nonfinite takes no value (given '1')");
    assert_one_line_error("train --config=huge", 2, "unknown preset 'huge'");
}

/* On GPT-2's tokens the sample is decoded through GPT-2's tokenizer: the prompt, then text;
 * without a tokenizer, ids past a byte show as <id>, never as a byte they are not. A
 * tokenizer of another vocabulary is refused before training. */
Test(lesson00, a_gpt2_token_sample_is_decoded_through_the_tokenizer)
{
    const char *gpt2 = SOLUTION " train --config tiny --vocab 50257 --steps 2 --gen-tokens 12 "
                       "--train data/generated/gpt2_train.bin --val data/generated/gpt2_val.bin";
    char command[1024], output[1 << 14];
    snprintf(command, sizeof command, "%s --tokenizer data/generated/gpt2_tokenizer.bin", gpt2);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    const char *sample = strstr(output, "\nsample: ");
    cr_assert_not_null(sample, "no sample line: %s", output);
    memmove(output, sample + 1, strcspn(sample + 1, "\n") + 1); /* the sample line alone */
    output[strcspn(output, "\n")] = '\0';
    cr_expect_eq(strncmp(output, "sample: She ", 12), 0, "%s", output);
    cr_expect_null(strstr(output, "<|endoftext|>"), "%s", output);
    int id;
    cr_expect_neq(sscanf(output, "%*[^<]<%d>", &id), 1, "an id shown as a number: %s", output);
    cr_assert_eq(shell_output(gpt2, output, sizeof output), 0, "%s", output);
    sample = strstr(output, "\nsample: ");
    cr_assert_not_null(sample, "no sample line: %s", output);
    cr_expect_eq(sscanf(sample + 1, "sample: She <%d>", &id), 1, "no <id> after the prompt: %s", sample + 1);
    assert_one_line_error("train --config tiny --tokenizer data/generated/gpt2_tokenizer.bin", 1,
                          "--tokenizer holds 50257 tokens but the model's vocabulary is 256 (--vocab)");
}

/* How long the first n comma-separated fields of a CSV row are (the whole row if it has fewer). */
static int fields_before(const char *row, int n)
{
    const char *end = row;
    for (int field = 0; field < n; field++) {
        end += strcspn(end, ",");
        if (*end == '\0' || field + 1 == n)
            break;
        end++; /* past the comma */
    }
    return (int)(end - row);
}

/* --flag=value is --flag value: the same run, step for step (times left out). */
Test(lesson00, flags_written_with_an_equals_sign_mean_the_same)
{
    char command[1024], paths[2][128], rows[2][5][256];
    static const char *const spellings[] = {"--config=reference --steps=3 --lr=0.002 --csv=%s",
                                            "--config reference --steps 3 --lr 0.002 --csv %s"};
    for (int i = 0; i < 2; i++) {
        char flags[256];
        snprintf(paths[i], sizeof paths[i], "%s/%c.csv", work_dir, 'a' + i);
        snprintf(flags, sizeof flags, spellings[i], paths[i]);
        snprintf(command, sizeof command, SOLUTION " train %s > /dev/null", flags);
        cr_assert_eq(run(command), 0, "%s", command);
        cr_assert_eq(files_lines(paths[i], rows[i], 5), 4, "%s: not a header and 3 steps", paths[i]);
    }
    for (int row = 0; row < 4; row++) /* step, loss, grad norm, lr: the rest are times */
        cr_expect_eq(fields_before(rows[0][row], 4), fields_before(rows[1][row], 4), "row %d", row);
    for (int row = 0; row < 4; row++)
        cr_expect_eq(strncmp(rows[0][row], rows[1][row], fields_before(rows[0][row], 4)), 0,
                     "the two spellings gave different runs: '%s' against '%s'", rows[0][row], rows[1][row]);
    cr_expect_gt(atof(rows[0][3] + fields_before(rows[0][3], 3) + 1), 0, "no learning rate: %s", rows[0][3]);
}

/* A checkpoint saved after one step, then with wte's element 256 made the float `bytes` (4
 * bytes, little-endian): its path is written into bad. */
static void save_patched_checkpoint(const char *bytes, char *bad, size_t bad_len)
{
    char command[512], good[128];
    snprintf(good, sizeof good, "%s/good.bin", work_dir);
    snprintf(command, sizeof command, SOLUTION " train --config reference --steps 1 --save %s > /dev/null", good);
    cr_assert_eq(run(command), 0, "%s", command);
    snprintf(bad, bad_len, "%s/bad.bin", work_dir);
    cr_assert_eq(files_copy(good, bad), 0);
    cr_assert_eq(files_patch(bad, 1024 + 256 * 4, bytes, 4), 0); /* after the 256-int header */
}

/* That checkpoint trained from by `run`: exit status 1 and `reason`. */
static void check_patched_checkpoint(const char *bytes, const char *run, const char *reason)
{
    char command[1024], output[16384], bad[128];
    save_patched_checkpoint(bytes, bad, sizeof bad);
    snprintf(command, sizeof command, "%s train --config reference --init-from %s", run, bad);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 1, "%s:\n%s", command, output);
    cr_expect_not_null(strstr(output, reason), "%s: no '%s':\n%s", command, reason, output);
}

Test(lesson00, a_checkpoint_that_is_not_numbers_is_refused_naming_the_tensor)
{
    check_patched_checkpoint("\x00\x00\x80\x7f", SOLUTION, "wte (layer 0) holds inf at element 256");
}

/* The largest float is a number, but the forward pass overflows on it: the run stops at
 * step 1 and says so, naming a rank whose rows gave the NaN (each rank has the same model). */
Test(lesson00, a_loss_that_is_not_a_number_stops_the_run_at_its_step)
{
    check_patched_checkpoint("\xff\xff\x7f\x7f", "mpiexec -n 2 build/solutions/07_zero1",
                             "step 1: the loss is -nan (rank 1's own rows): training stops at the first step");
}

/* With --skip-nonfinite the same checkpoint trains through: every step's loss is NaN, each
 * is skipped and counted, and the parameters saved at the end are the checkpoint's, bit for
 * bit, on the plain optimizer (lesson 00) as on a sharded one (ZeRO-3 at 2 ranks). */
Test(lesson00, skip_nonfinite_skips_such_steps_leaving_the_parameters_as_they_were)
{
    const char *runs[] = {SOLUTION, "mpiexec -n 2 build/solutions/09_zero3"};
    for (int r = 0; r < 2; r++) {
        char command[1024], output[16384], bad[128], out[128];
        save_patched_checkpoint("\xff\xff\x7f\x7f", bad, sizeof bad);
        snprintf(out, sizeof out, "%s/out.bin", work_dir);
        snprintf(command, sizeof command, "%s train --config reference --steps 3 --skip-nonfinite --init-from %s "
                 "--save %s", runs[r], bad, out);
        int status = shell_output(command, output, sizeof output);
        cr_expect_eq(status, 0, "%s:\n%s", command, output);
        cr_expect_not_null(strstr(output, "step 3: the loss is -nan"), "%s", output);
        cr_expect_not_null(strstr(output, "skipped, the parameters and optimizer state are as they were"), "%s",
                           output);
        cr_expect_not_null(strstr(output, "skipped 3 step(s) whose loss or gradient norm was not a number "
                                          "(--skip-nonfinite), the first at step 1"), "%s", output);
        cr_expect_eq(files_same(bad, out), 1, "the parameters are not as saved");
    }
}

/* What the run would trip over only at its end, or never get past, is refused before the
 * first step: a FIFO as an input (opening it would wait for a writer forever), a trace
 * folder that is a file, a prompt the sample cannot use. */
Test(lesson00, inputs_and_outputs_that_cannot_work_are_refused_before_training)
{
    char args[512];
    snprintf(args, sizeof args, "mkfifo %s/fifo", work_dir);
    cr_assert_eq(run(args), 0);
    snprintf(args, sizeof args, "train --config tiny --train %s/fifo", work_dir);
    assert_one_line_error(args, 1, "fifo: not a regular file (a token shard must be one)");
    snprintf(args, sizeof args, "train --config tiny --init-from %s/fifo", work_dir);
    assert_one_line_error(args, 1, "fifo: not a regular file (a checkpoint must be one)");
    snprintf(args, sizeof args, "train --config tiny --trace %s/fifo", work_dir);
    assert_one_line_error(args, 1, "not a folder this run can write into");
    assert_one_line_error("train --config tiny --gen-tokens 3 --prompt ''", 1, "--prompt must be 1..15 bytes long");
    snprintf(args, sizeof args, "train --config tiny --tokenizer %s/fifo", work_dir);
    assert_one_line_error(args, 1, "fifo: not a regular file (a tokenizer must be one)");
    assert_one_line_error("train --config tiny --seq 1 --max-seq 1 --gen-tokens 3", 1,
                          "--max-seq 1 leaves no room for the sample's prompt");
}

/* A sample reads no position past its last token: a long --max-seq costs it nothing (the
 * whole sequence of 65536 positions would take gigabytes and most of a minute). */
Test(lesson00, the_sample_runs_only_over_the_positions_it_fills, .timeout = 30)
{
    char output[8192];
    int status = shell_output(SOLUTION " train --config tiny --steps 1 --max-seq 65536 --gen-tokens 5 "
                              "--mem-limit 64", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "\nsample: "), "%s", output);
}

/* Modes that do not train write none of train's files: a flag naming one is refused, not
 * left for someone to wait for. */
Test(lesson00, modes_that_do_not_train_refuse_trains_outputs)
{
    char args[512];
    snprintf(args, sizeof args, "profile --config tiny --csv %s/p.csv", work_dir);
    assert_one_line_error(args, 2, "profile: --csv is train's");
    snprintf(args, sizeof args, "profile --config tiny --trace %s/t", work_dir);
    assert_one_line_error(args, 2, "profile: --trace is train's");
    snprintf(args, sizeof args, "estimate --config tiny --summary %s/s.csv", work_dir);
    assert_one_line_error(args, 2, "estimate: --summary is train's");
    char command[512];
    snprintf(command, sizeof command, "test ! -e %s/p.csv && test ! -e %s/t && test ! -e %s/s.csv", work_dir,
             work_dir, work_dir);
    cr_expect_eq(run(command), 0, "a refused mode wrote a file");
}

Test(lesson00, never_overwrites_an_input)
{
    char args[256];
    snprintf(args, sizeof args, "train --config tiny --save data/generated/train.bin");
    assert_one_line_error(args, 1, "would overwrite an input");
    snprintf(args, sizeof args, "train --config tiny --csv data/generated/val.bin");
    assert_one_line_error(args, 1, "would overwrite an input");
    /* the trace's own files count too: DIR/merged.json and DIR/rank_N.json */
    snprintf(args, sizeof args, "train --config tiny --val %s/rank_0.json --trace %s", work_dir, work_dir);
    assert_one_line_error(args, 1, "would overwrite the input file");
    /* the sample's tokenizer is an input too */
    snprintf(args, sizeof args, "train --config tiny --tokenizer data/generated/val.bin --summary data/generated/val.bin");
    assert_one_line_error(args, 1, "--summary data/generated/val.bin would overwrite an input");
}

/* Two outputs on one file: the second written would leave nothing of the first. */
Test(lesson00, two_outputs_on_one_file_are_refused)
{
    char args[512];
    snprintf(args, sizeof args, "train --config tiny --csv %s/o.csv --summary %s/o.csv", work_dir, work_dir);
    assert_one_line_error(args, 1, "--summary");
    assert_one_line_error(args, 1, "names a file that --csv writes too");
    snprintf(args, sizeof args, "train --config tiny --save %s/m --save-every 1 --comm-log %s/m.state", work_dir,
             work_dir);
    assert_one_line_error(args, 1, "--save-every's state");
    snprintf(args, sizeof args, "train --config tiny --csv %s/t/rank_0.json --trace %s/t", work_dir, work_dir);
    assert_one_line_error(args, 1, "names a file that --trace writes too");
}

Test(lesson00, profile_reports_oom_at_the_memory_limit)
{
    char command[1024];
    snprintf(command, sizeof command,
             SOLUTION " profile --config reference --mem-limit 12 --iters 1 --warmup-iters 0 > %s/p.txt", work_dir);
    cr_assert_eq(run(command), 0);
    snprintf(command, sizeof command, "grep -q 'OOM at batch size' %s/p.txt", work_dir);
    cr_assert_eq(run(command), 0, "the sweep must stop with an OOM line under a 12 MB budget");
    snprintf(command, sizeof command,
             "awk '/^  activations/ {exit !($2 == $3)}' %s/p.txt", work_dir);
    cr_assert_eq(run(command), 0, "the estimated activations must equal the allocated ones");
}

/* What the benchmarks read, and nothing after it: memory and throughput, no second timed run,
 * no sweep, no extrapolation. */
Test(lesson00, profile_throughput_only_stops_after_the_throughput)
{
    char output[1 << 14];
    const char *command = SOLUTION " profile --config tiny --iters 1 --warmup-iters 0 --throughput-only";
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    static const char *const shown[] = {"== memory", "  tokens/s ", "  MFU "};
    static const char *const left_out[] = {"== where a step's time goes", "== batch-size sweep", "== extrapolation"};
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++)
        cr_expect_not_null(strstr(output, shown[i]), "no '%s' in:\n%s", shown[i], output);
    for (size_t i = 0; i < sizeof left_out / sizeof *left_out; i++)
        cr_expect_null(strstr(output, left_out[i]), "'%s' should be left out:\n%s", left_out[i], output);
}

Test(lesson00, help_lists_the_flags)
{
    static const char *const modes[][2] = {{"train", "--mem-limit"}, {"profile", "--sweep-max-batch"}};
    for (int i = 0; i < 2; i++) {
        char command[256], output[1 << 14];
        snprintf(command, sizeof command, SOLUTION " %s --help", modes[i][0]);
        cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
        cr_expect_not_null(strstr(output, modes[i][1]), "%s --help has no %s:\n%s", modes[i][0], modes[i][1], output);
    }
}

/* More threads than the machine has cores: the header and the summary say so, since the
 * times then measure the scheduler; with one thread they say nothing of it. */
Test(lesson00, more_threads_than_cores_is_said_beside_the_times)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char command[256], output[1 << 15], note[128];
    snprintf(note, sizeof note, "1 rank(s) x %ld thread(s) on this machine's %ld core(s): they take turns", cores + 1,
             cores);
    snprintf(command, sizeof command, SOLUTION " train --config tiny --steps 2 --gen-tokens 0 --threads %ld",
             cores + 1);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    const char *header = strstr(output, note), *summary = strstr(output, "summary: ");
    cr_expect(header != NULL && summary != NULL && header < summary, "no note before the steps:\n%s", output);
    cr_expect(summary != NULL && strstr(summary, note) != NULL, "no note in the summary:\n%s", output);
    cr_assert_eq(shell_output(SOLUTION " train --config tiny --steps 2 --gen-tokens 0 --threads 1", output,
                              sizeof output), 0, "%s", output);
    cr_expect_null(strstr(output, "take turns"), "a note with one thread:\n%s", output);
}

/* --csv goes to a temporary file beside its path, a row per step, renamed into place when
 * the run ends: a run killed halfway leaves an earlier file at the path as it was, and its
 * own rows in the temporary file. */
Test(lesson00, a_killed_run_leaves_an_earlier_csv_as_it_was_and_its_rows_beside_it)
{
    char command[256], output[4096];
    snprintf(command, sizeof command, "tests/scenarios/killed_run_keeps_csv.sh %s", work_dir);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_str_eq(output, "earlier\nstep,loss,grad_norm,lr,ms,tokens_per_s,val_loss,comm_ms,comm_bytes\nrows kept\n");
}

/* Started from another folder, a lesson still finds the course's shards (data/generated/,
 * under the folder above build/), and says so in its header; a data path of the user's own
 * is taken as given, from where the program started. */
Test(lesson00, finds_the_course_data_from_any_working_folder)
{
    char command[8400], output[16384], course[4096];
    cr_assert_not_null(getcwd(course, sizeof course));
    snprintf(command, sizeof command, "cd %s && %s/" SOLUTION " train --config tiny --steps 2 --val-every 0", work_dir,
             course);
    cr_assert_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    char header[4200];
    snprintf(header, sizeof header, "train         %s/data/generated/train.bin\n", course);
    cr_expect_not_null(strstr(output, header), "no '%s' in:\n%s", header, output);
    snprintf(command, sizeof command, "cd %s && %s/" SOLUTION " train --config tiny --steps 1 --train data/mine.bin",
             work_dir, course);
    cr_expect_eq(shell_output(command, output, sizeof output), 1, "%s", output);
    cr_expect_not_null(strstr(output, "data/mine.bin: cannot open token shard"), "%s", output);
}
