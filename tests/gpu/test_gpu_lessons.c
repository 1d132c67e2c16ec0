/* The GPU build end to end: the whole model on the GPU against the CPU's expected values,
 * lessons 02-10 at 2 ranks sharing one GPU through the MPI backend against lesson 00 on
 * the CPU, NCCL at 1 rank running every collective, and lesson 00's batch sweep stopping
 * at the GPU's own out-of-memory. Each skips, saying why, without a GPU. They run the
 * built programs from the repository root, those of gpu_build_dir() (make test-gpu and
 * make test-emu build them), some through tests/scenarios/. */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../shell.h"
#include "gpu_test_util.h"

TestSuite(gpu_lessons, .timeout = 900);

/* Runs command (a program of the CUDA build under test, or a tests/scenarios script given
 * that build) and returns its status, its output in out; a kernel the emulated GPU cannot
 * run skips the test. */
static int run_command(const char *command, char *out, size_t out_len)
{
    int status = shell_output(command, out, out_len);
    skip_what_the_emulation_cannot_run(out);
    return status;
}

/* run_command on the command that format and its arguments make, as printf would. */
static int run_program(char *out, size_t out_len, const char *format, ...)
{
    char command[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(command, sizeof command, format, args);
    va_end(args);
    return run_command(command, out, out_len);
}

static void expect_command(const char *what, const char *command)
{
    static char output[65536];
    int status = run_command(command, output, sizeof output);
    cr_expect_eq(status, 0, "%s failed (exit %d):\n%s", what, status, output);
}

/* tests/tolerance.sh is the CPU's tolerance; the GPU is held to the same one: every
 * difference it makes is a different summation order (cuBLAS, tree reductions), the kind
 * of difference the tolerance was sized for with 100x headroom. */
Test(gpu_lessons, model_on_the_gpu_matches_the_cpu_expected_values)
{
    require_gpu();
    char command[512];
    snprintf(command, sizeof command, "tests/scenarios/gpu_expected_values.sh '%s'", gpu_build_dir());
    expect_command("lesson 00 --device cuda against tests/expected", command);
}

/* TF32 rounds every product's inputs to 10 mantissa bits (relative error 2^-11, about
 * 5e-4), so the run drifts from fp32 by about that per step; 30 steps stay within 1e-2
 * relative in loss, while a wrong kernel moves the loss by far more. */
Test(gpu_lessons, tf32_run_stays_close_to_the_cpu_expected_values)
{
    require_gpu();
    char command[512];
    snprintf(command, sizeof command, "tests/scenarios/gpu_expected_values.sh '%s' --tf32", gpu_build_dir());
    expect_command("lesson 00 --device cuda --tf32 against tests/expected", command);
}

/* A lesson on the GPU against lesson 00 on the CPU, 8 reference steps with validation at
 * 4 and 8, within the CPU's tolerance. `launch` starts it (mpiexec for several ranks),
 * `comm` names the communicator and `must_print` is a line its output must hold. */
static void check_gpu_lesson(const char *launch, const char *lesson, const char *comm, const char *flags,
                             const char *must_print)
{
    char command[2048], what[256];
    snprintf(command, sizeof command, "tests/scenarios/gpu_matches_lesson_00.sh '%s' '%s' %s %s '%s' %s",
             gpu_build_dir(), launch, lesson, comm, must_print, flags);
    snprintf(what, sizeof what, "%s %s --comm %s %s", launch, lesson, comm, flags);
    expect_command(what, command);
}

/* Lessons 02-10 with the flags that give them something to do in 8 small steps: the DDP
 * lessons first, then ZeRO (and lesson 10's mixed precision on it) from FIRST_ZERO on. */
static const struct {
    const char *lesson, *flags;
} DATA_PARALLEL[] = {{"02_naive_ddp", ""},     {"03_flat_ddp", ""}, {"04_overlap_ddp", ""},
                     {"05_bucketed_ddp", "--bucket-mb 0.1"}, {"06_grad_accum", "--accum 2"},
                     {"07_zero1", ""},         {"08_zero2", ""},    {"09_zero3", ""},
                     {"10_mixed_precision", ""}, {"10_mixed_precision", "--stage 3"},
                     {"10_mixed_precision", "--fp16"}};
enum { FIRST_ZERO = 5, DATA_PARALLEL_COUNT = sizeof DATA_PARALLEL / sizeof DATA_PARALLEL[0] };

/* Two ranks on one GPU: NCCL refuses that, the MPI backend stages through host memory. */
static void check_lessons_on_shared_gpu(int first, int end)
{
    for (int i = first; i < end; i++)
        check_gpu_lesson("env CUDA_VISIBLE_DEVICES=0 mpiexec -n 2", DATA_PARALLEL[i].lesson, "mpi",
                         DATA_PARALLEL[i].flags, "parameters identical on all 2 rank(s)");
}

Test(gpu_lessons, data_parallel_lessons_at_2_ranks_on_one_gpu_match_lesson_00)
{
    require_gpu();
    check_lessons_on_shared_gpu(0, FIRST_ZERO);
}

Test(gpu_lessons, zero_lessons_at_2_ranks_on_one_gpu_match_lesson_00)
{
    require_gpu();
    check_lessons_on_shared_gpu(FIRST_ZERO, DATA_PARALLEL_COUNT);
}

/* Lesson 01 checks every element of every collective against exact integer sums; its
 * header must name the backend and world (`header`, e.g. "backend nccl, 2 ranks"). */
static void check_collectives(const char *launch, const char *comm, const char *header)
{
    static char output[65536];
    int status = run_program(output, sizeof output, "timeout 300 %s %s/solutions/01_collectives --device cuda --comm %s "
                             "-b 4K -e 4M -f 32 -w 1 -n 2 -c 1", launch, gpu_build_dir(), comm);
    cr_expect_eq(status, 0, "01_collectives --comm %s: exit %d\n%s", comm, status, output);
    cr_expect_not_null(strstr(output, header), "01_collectives --comm %s: no '%s'\n%s", comm, header, output);
    cr_expect_not_null(strstr(output, "\n# Out of bounds values : 0 OK"), "01_collectives --comm %s:\n%s", comm, output);
}

/* NCCL between GPUs: every data-parallel lesson at 2 ranks, each on a GPU of its own (the
 * DDP lessons and ZeRO in two tests, which run side by side on the emulated GPU), and
 * lesson 01's check of every element of every collective. */
static void check_lessons_over_nccl(int first, int end)
{
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2)
        cr_skip_test("needs 2 GPUs, this machine has %d", gpus);
    for (int i = first; i < end; i++)
        check_gpu_lesson("mpiexec -n 2", DATA_PARALLEL[i].lesson, "nccl", DATA_PARALLEL[i].flags,
                         "2 rank(s) over nccl");
}

Test(gpu_lessons, lessons_over_nccl_at_2_ranks_match_lesson_00)
{
    require_gpu();
    check_lessons_over_nccl(0, FIRST_ZERO);
    check_collectives("mpiexec -n 2", "nccl", "backend nccl, 2 ranks");
}

Test(gpu_lessons, lessons_over_nccl_at_2_ranks_match_lesson_00_with_zero)
{
    require_gpu();
    check_lessons_over_nccl(FIRST_ZERO, DATA_PARALLEL_COUNT);
}

/* The grader with --device cuda: lesson 02's solution passes its 2-rank check on the GPU
 * (the CPU's expected values, the bytes sent, the lesson's rules), and lesson 03's flat
 * all-reduce graded as lesson 02 fails the per-tensor rule there as it does on the CPU (one
 * check each: a run on the emulated GPU takes minutes). */
Test(gpu_lessons, grading_on_the_gpu_passes_a_solution_and_fails_a_wrong_idea)
{
    require_gpu();
    static char output[65536];
    int status = run_program(output, sizeof output, "env CUDA_VISIBLE_DEVICES=0 scripts/grade.sh 02 "
                             "%s/solutions/02_naive_ddp --device cuda --check dp_reference_n2", gpu_build_dir());
    cr_expect_eq(status, 0, "grade.sh 02 --device cuda on the solution: exit %d\n%s", status, output);
    cr_expect_not_null(strstr(output, "lesson 02: PASS (7 of 7 checks passed)"), "no PASS line:\n%s", output);
    status = run_program(output, sizeof output, "env CUDA_VISIBLE_DEVICES=0 scripts/grade.sh 02 "
                         "%s/solutions/03_flat_ddp --device cuda --check dp_reference_n2", gpu_build_dir());
    cr_expect_eq(status, 1, "grade.sh 02 --device cuda on lesson 03: exit %d\n%s", status, output);
    cr_expect_not_null(strstr(output, "FAIL dp_reference_n2 schedule per_tensor"), "no rule failed:\n%s", output);
}

/* NCCL allows one rank per GPU. Two ranks shown the same GPU (CUDA_VISIBLE_DEVICES=0 for
 * both): --comm nccl refuses before NCCL does, naming them, and auto takes MPI. */
Test(gpu_lessons, ranks_sharing_a_gpu_are_refused_nccl_and_auto_takes_mpi)
{
    require_gpu();
    static char output[65536];
    int status = run_program(output, sizeof output, "env CUDA_VISIBLE_DEVICES=0 timeout 300 mpiexec -n 2 "
                             "%s/solutions/02_naive_ddp train --config tiny --device cuda --comm nccl", gpu_build_dir());
    cr_expect_eq(status, 1, "--comm nccl at 2 ranks on one GPU: exit %d\n%s", status, output);
    const char *refusal = strstr(output, "needs one GPU per rank: local rank ");
    cr_expect(refusal != NULL && strstr(refusal, " uses GPU ") != NULL && strstr(refusal, ", as local rank ") != NULL,
              "--comm nccl at 2 ranks on one GPU does not name the ranks:\n%s", output);
    check_gpu_lesson("env CUDA_VISIBLE_DEVICES=0 mpiexec -n 2", "02_naive_ddp", "auto", "", "2 rank(s) over mpi");
}

/* A launcher that gives each rank a CUDA_VISIBLE_DEVICES of its own shows each its GPU as
 * GPU 0: told apart by PCI bus id, they get NCCL from auto. Needs two GPUs. */
Test(gpu_lessons, ranks_each_shown_their_own_gpu_get_nccl)
{
    require_gpu();
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess || gpus < 2)
        cr_skip_test("needs 2 GPUs, this machine has %d", gpus);
    check_gpu_lesson("mpiexec -n 2 tests/gpu/own_gpu_per_rank.sh", "02_naive_ddp", "auto", "", "2 rank(s) over nccl");
}

/* A fault made by the emulated NCCL (DTC_EMU_NCCL_...): a real GPU cannot be asked for it. */
static void require_the_emulated_nccl(void)
{
    require_gpu();
    if (!gpu_is_emulated())
        cr_skip_test("the fault is made by the emulated NCCL (make test-emu)");
}

/* A rank that never joins NCCL (the emulated NCCL's DTC_EMU_NCCL_HANG_RANK: a peer NCCL cannot
 * reach) holds the others in ncclCommInitRank, which waits for every rank: the run ends at
 * --wait-timeout, saying so, instead of waiting forever. A real GPU cannot be asked for the
 * fault, so there the test skips. */
Test(gpu_lessons, a_rank_that_never_joins_nccl_ends_the_run_at_the_wait_timeout)
{
    require_the_emulated_nccl();
    static char output[65536];
    int status = run_program(output, sizeof output, "env DTC_EMU_NCCL_HANG_RANK=1 timeout 120 mpiexec -n 2 "
                             "%s/solutions/02_naive_ddp train --config tiny --device cuda --comm nccl --wait-timeout 3",
                             gpu_build_dir());
    cr_expect(status != 0 && status != 124, "exit %d (124: still waiting after 120 s):\n%s", status, output);
    cr_expect_not_null(strstr(output, "waited 3 s (--wait-timeout)"), "%s", output);
    cr_expect_not_null(strstr(output, "every rank here is waiting in ncclCommInitRank: NCCL cannot connect the ranks"),
                       "%s", output);
}

Test(gpu_lessons, nccl_at_1_rank_runs_every_collective_correctly)
{
    require_gpu();
    check_collectives("", "nccl", "backend nccl");
}

/* Even at 1 rank NCCL runs on its own stream, so these exercise the ordering between the
 * streams: requests waited on from backward (04, 05), ZeRO-3's prefetched gathers (09) and
 * the 16-bit collectives (10, bf16 and fp16); and the averaging reduce-scatters of ZeRO
 * (07, 08, 09), which over one rank NCCL must be asked to sum (comm_nccl.c). */
static void check_lesson_on_nccl(const char *lesson, const char *flags)
{
    check_gpu_lesson("", lesson, "nccl", flags, "over nccl");
}

Test(gpu_lessons, nccl_at_1_rank_trains_like_lesson_00)
{
    require_gpu();
    check_lesson_on_nccl("04_overlap_ddp", "");
    check_lesson_on_nccl("05_bucketed_ddp", "--bucket-mb 0.1");
    check_lesson_on_nccl("07_zero1", "");
    check_lesson_on_nccl("08_zero2", "");
    check_lesson_on_nccl("09_zero3", "");
    check_lesson_on_nccl("10_mixed_precision", "");
    check_lesson_on_nccl("10_mixed_precision", "--fp16");
}

/* A trace on the GPU is timed there (CUDA events on the compute and the communication
 * streams), for the lessons whose point is overlap: tests/scenarios/gpu_trace_timed.sh says
 * what must hold of it. */
Test(gpu_lessons, traces_over_nccl_are_timed_on_the_gpu)
{
    require_gpu();
    static const char *const runs[] = {"04_overlap_ddp all_reduce_start",
                                       "05_bucketed_ddp all_reduce_start --bucket-mb 0.1", "09_zero3 reduce_scatter"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        char command[512];
        snprintf(command, sizeof command, "tests/scenarios/gpu_trace_timed.sh '%s' %s", gpu_build_dir(), runs[i]);
        expect_command(runs[i], command);
    }
}

Test(gpu_lessons, collectives_on_gpu_buffers_through_mpi_at_2_ranks)
{
    require_gpu();
    check_collectives("mpiexec -n 2", "mpi", "backend mpi");
}

/* The sweep doubles the batch of the GPT-2 shape until cudaMalloc itself fails (80 GB
 * holds B = 64, not 128; 141 GB holds 128, not 256): it must report the out-of-memory
 * and go on to the extrapolation, not crash. */
Test(gpu_lessons, batch_sweep_stops_at_the_gpus_own_out_of_memory)
{
    require_gpu();
    /* the preset's batch 8 needs over 10 GB at this shape (00_single_device estimate --config
     * gpt2), and the sweep doubles it from there: 40 GB leaves it room to double */
    size_t free_bytes = 0, total_bytes = 0;
    cr_assert_eq(cuda_mem_info(&free_bytes, &total_bytes), 0, "cudaMemGetInfo failed");
    if ((double)total_bytes < 40e9)
        cr_skip_test("needs a GPU with 40 GB or more (the gpt2 shape at batch 8); this one has %.1f GB",
                     (double)total_bytes / 1e9);
    static char output[65536];
    int status = run_program(output, sizeof output, "%s/solutions/00_single_device profile --config gpt2 --device cuda "
                             "--tf32 --warmup-iters 0 --iters 1 --sweep-max-batch 4096", gpu_build_dir());
    cr_expect_eq(status, 0, "00_single_device profile on the GPU: exit %d\n%s", status, output);
    static const char *const lines[] = {"OOM at batch size", "MFU", "GPU memory in use", "extrapolation"};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++)
        cr_expect_not_null(strstr(output, lines[i]), "no '%s' in:\n%s", lines[i], output);
}

/* scripts/check_gpu.sh refuses what it cannot do before running anything: a part it does
 * not know, a log it would overwrite, an llm.c folder without llm.c. */
Test(gpu_lessons, check_gpu_refuses_bad_input_before_any_work)
{
    char dir[] = "/tmp/check_gpu_XXXXXX", log_path[64], command[512];
    cr_assert_not_null(mkdtemp(dir), "mkdtemp failed");
    snprintf(log_path, sizeof log_path, "%s/grade.log", dir);
    FILE *log = fopen(log_path, "w");
    cr_assert_not_null(log, "cannot write %s", log_path);
    fclose(log);
    char there_already[128], no_llmc[4200], here[4096];
    snprintf(there_already, sizeof there_already, "check_gpu: %s is there already: choose another --out\n", log_path);
    cr_assert_not_null(getcwd(here, sizeof here));
    /* a relative path is taken from the folder the script was started in, and named whole */
    snprintf(no_llmc, sizeof no_llmc, "check_gpu: --llmc %s/tests: no train_gpt2_fp32.cu there\n", here);
    const char *const refused[][2] = {
        {"--parts tests,bogus", "check_gpu: 'bogus' is not a part (tests, grade, sanitize, trace, bench)\n"},
        {"--parts grade --out ", there_already},
        {"--llmc tests --parts tests --out ", no_llmc},
    };
    static char output[4096];
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        snprintf(command, sizeof command, "DTC_GPU_BUILD='%s' scripts/check_gpu.sh %s%s", gpu_build_dir(),
                 refused[i][0], i > 0 ? dir : "");
        cr_expect_eq(shell_output(command, output, sizeof output), 2, "%s: %s", command, output);
        cr_expect_str_eq(output, refused[i][1], "%s", command);
    }
    remove(log_path);
    rmdir(dir);
}

/* The summary's MFU line on a GPU run: lesson_flags (a lesson and its flags) under `launch`;
 * the line must hold `expected`. */
static void check_mfu_line(const char *launch, const char *lesson_flags, const char *expected)
{
    static char output[65536];
    int status = run_program(output, sizeof output, "timeout 300 %s %s/solutions/%s --config tiny --device cuda "
                             "--steps 2 --val-every 0 --gen-tokens 0", launch, gpu_build_dir(), lesson_flags);
    cr_expect_eq(status, 0, "%s %s: exit %d\n%s", launch, lesson_flags, status, output);
    const char *line = strstr(output, "\n  MFU ");
    cr_expect(line != NULL && strstr(line, expected) != NULL && strchr(line + 1, '\n') > strstr(line, expected),
              "%s %s: no MFU line holding '%s':\n%s", launch, lesson_flags, expected, output);
}

/* MFU is measured against the peak of the products' own number format, summed over the
 * ranks' GPUs: lesson 10's bf16 and fp16 products against the 16-bit tensor-core peak,
 * --tf32 against TF32's, an NVL board against its own (lower) figures; ranks sharing a GPU
 * and a GPU without a data sheet get "n/a" and the reason. The emulated GPU takes a real
 * GPU's name (DTC_EMU_GPU_NAME) to pick the figures; a real GPU is what it is. */
Test(gpu_lessons, mfu_is_against_the_peak_of_the_products_format)
{
    require_gpu();
    if (!gpu_is_emulated()) {
        check_mfu_line("", "10_mixed_precision train", "at the bf16 tensor-core peak, dense)");
        return;
    }
    check_mfu_line("env DTC_EMU_GPU_NAME='NVIDIA H200 NVL'", "10_mixed_precision train",
                   "(of 835.5 TFLOP/s: 1 GPU(s) at the bf16 tensor-core peak, dense)");
    check_mfu_line("env DTC_EMU_GPU_NAME='NVIDIA H100 80GB HBM3'", "10_mixed_precision train --fp16",
                   "(of 989.4 TFLOP/s: 1 GPU(s) at the fp16 tensor-core peak, dense)");
    check_mfu_line("env DTC_EMU_GPU_NAME='NVIDIA H100 80GB HBM3' mpiexec -n 2", "02_naive_ddp train --comm nccl --tf32",
                   "(of 989.4 TFLOP/s: 2 GPU(s) at the TF32 tensor-core peak, dense)");
    check_mfu_line("env DTC_EMU_GPU_NAME='NVIDIA H100 PCIe'", "00_single_device train",
                   "(of 51.2 TFLOP/s: 1 GPU(s) at the fp32 peak, dense)");
    check_mfu_line("env DTC_EMU_GPU_NAME='NVIDIA H100 80GB HBM3' CUDA_VISIBLE_DEVICES=0 mpiexec -n 2",
                   "02_naive_ddp train --comm mpi", "n/a   (the ranks share a GPU)");
    check_mfu_line("", "00_single_device train", "n/a   (no data-sheet peak known for this GPU)");
}

/* NCCL's end can report an error of work nothing waited for (the emulated NCCL's
 * DTC_EMU_NCCL_DESTROY_FAILS_RANK makes ncclCommDestroy fail on rank 1): the run says so and
 * ends with status 1, not 0. A real GPU cannot be asked for the fault. */
Test(gpu_lessons, a_failure_at_ncclcommdestroy_fails_the_run)
{
    require_the_emulated_nccl();
    static char output[65536];
    int status = run_program(output, sizeof output, "env DTC_EMU_NCCL_DESTROY_FAILS_RANK=1 timeout 300 mpiexec -n 2 "
                             "%s/solutions/02_naive_ddp train --config tiny --device cuda --comm nccl --steps 2 "
                             "--gen-tokens 0", gpu_build_dir());
    cr_expect_eq(status, 1, "exit %d:\n%s", status, output);
    cr_expect_not_null(strstr(output, "ncclCommDestroy failed on rank 1 of 2: NCCL: "), "%s", output);
}

/* A run on the GPU killed once it has saved its resume state goes on from that state as if
 * it had never stopped, bit for bit (tests/resume_after_kill.sh, as on the CPU): lesson 00
 * at 1 rank, and lesson 10 in fp16 at 2 ranks sharing the GPU, whose state must also keep
 * the loss scale and its count of good steps (with a window of 4, both have moved by the
 * save). On the emulated GPU a step takes about a second, so the runs are shorter there. */
Test(gpu_lessons, a_killed_run_goes_on_bit_for_bit_on_the_gpu)
{
    require_gpu();
    const char *steps = gpu_is_emulated() ? "STEPS=12 SAVE_EVERY=8" : ""; /* else the script's own */
    /* which state the kill lands after depends on the GPU's speed: any will do */
    const char *same = "and the final parameters bit for bit the same";
    static const char *const runs[] = {
        "00_single_device 1 1 --device cuda",
        "10_mixed_precision 2 2 --device cuda --comm mpi --fp16 --scale-window 4"};
    for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
        static char output[65536];
        int status = run_program(output, sizeof output, "env CUDA_VISIBLE_DEVICES=0 %s tests/resume_after_kill.sh "
                                 "%s/solutions/%s", steps, gpu_build_dir(), runs[i]);
        cr_expect_eq(status, 0, "%s: exit %d\n%s", runs[i], status, output);
        cr_expect_not_null(strstr(output, same), "%s:\n%s", runs[i], output);
    }
}
