/* Lesson 00's measurements: where the memory goes, how fast a step is, how far the batch
 * can grow, and what that speed would mean for bigger models. */
#include "profile.h"

#include <stddef.h>
#include <string.h>

#include "blas_kernels.h"
#include "cpu_peak.h"
#include "device.h"
#include "kernel_times.h"
#include "memory_estimate.h"
#include "timer.h"
#include "trainer.h"

#define OPT(name) offsetof(ProfileOptions, name)

const Flag profile_flags[] = {
    {"warmup-iters", FLAG_INT, OPT(warmup_iters), "untimed steps before measuring", 0, 1e6, 0},
    {"iters", FLAG_INT, OPT(iters), "timed steps per measurement", 1, 1e6, 0},
    {"sweep-max-batch", FLAG_INT, OPT(sweep_max_batch), "largest batch the sweep tries", 1, 1 << 20, 0},
    {"throughput-only", FLAG_SWITCH, OPT(throughput_only),
     "memory and throughput only: no time breakdown, batch sweep or extrapolation (what a benchmark reads)", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

ProfileOptions profile_defaults(void)
{
    return (ProfileOptions){.warmup_iters = 3, .iters = 10, .sweep_max_batch = 64};
}

static double mb(size_t bytes) { return (double)bytes / 1e6; }

void print_estimate_csv(const TrainConfig *cfg, FILE *out)
{
    MemoryEstimate e = estimate_memory(&cfg->model, cfg->batch_size, cfg->seq_len);
    fprintf(out, "component,bytes\nparameters,%zu\ngradients,%zu\nadamw_m,%zu\nadamw_v,%zu\nactivations,%zu\n",
            e.parameters, e.gradients, e.adamw_m, e.adamw_v, e.activations);
}

/* ---------------------------------------------------------------- timing */

static const Strategy single_device = {.name = "single_device"};

typedef struct {
    double seconds_per_step;
    double tokens_per_s;
    size_t peak_bytes; /* tracked, everything but host-side data */
} Throughput;

static void warm_up(Trainer *tr, const ProfileOptions *opts)
{
    for (int i = 0; i < opts->warmup_iters; i++)
        trainer_step(tr, i);
}

/* The timed steps, after warm_up. */
static Throughput time_steps(Trainer *tr, const ProfileOptions *opts)
{
    double start = now_seconds();
    for (int i = 0; i < opts->iters; i++)
        trainer_step(tr, opts->warmup_iters + i);
    Throughput t;
    t.seconds_per_step = (now_seconds() - start) / opts->iters;
    t.tokens_per_s = (double)tr->cfg.batch_size * tr->cfg.seq_len / t.seconds_per_step;
    t.peak_bytes = mem_peak_total() - mem_in_use(MEM_DATA);
    return t;
}

static Throughput measure(Trainer *tr, const ProfileOptions *opts)
{
    warm_up(tr, opts);
    return time_steps(tr, opts);
}

/* ---------------------------------------------------------------- memory */

static void print_memory_row(const char *name, size_t estimated, size_t measured)
{
    printf("  %-22s %12.3f %12.3f %+12.3f\n", name, mb(estimated), mb(measured),
           mb(measured) - mb(estimated));
}

/* On a GPU the device's own count too: it includes the CUDA context, cuBLAS's workspace
 * and NCCL's buffers, which the tracker never sees (the GPU's counterpart of RSS). */
static void print_device_memory(const Kernels *kernels)
{
    size_t used = 0, total = 0;
    if (device_memory_info(kernels, &used, &total) != 0)
        return;
    printf("  %-22s %12s %12.3f  (of %.3f on the GPU, cudaMemGetInfo)\n", "GPU memory in use", "", mb(used),
           mb(total));
}

static void print_memory(const Trainer *tr)
{
    const TrainConfig *cfg = &tr->cfg;
    MemoryEstimate e = estimate_memory(&cfg->model, cfg->batch_size, cfg->seq_len);
    size_t estimated_total = e.parameters + e.gradients + e.adamw_m + e.adamw_v + e.activations;
    printf("\n== memory (MB = 10^6 bytes), B=%d T=%d ==\n", cfg->batch_size, cfg->seq_len);
    printf("  %-22s %12s %12s %12s\n", "component", "estimated", "measured", "difference");
    print_memory_row("parameters", e.parameters, mem_in_use(MEM_PARAMS));
    print_memory_row("gradients", e.gradients, mem_in_use(MEM_GRADS));
    print_memory_row("adamw m", e.adamw_m, mem_in_use(MEM_ADAM_M));
    print_memory_row("adamw v", e.adamw_v, mem_in_use(MEM_ADAM_V));
    print_memory_row("activations", e.activations, mem_in_use(MEM_ACTIVATIONS));
    print_memory_row("backward scratch", 0, mem_in_use(MEM_SCRATCH));
    print_memory_row("data (host side)", 0, mem_in_use(MEM_DATA));
    print_memory_row("other", 0, mem_in_use(MEM_OTHER) + mem_in_use(MEM_COMM));
    print_memory_row("total tracked", estimated_total, mem_in_use_total());
    printf("  %-22s %12s %12.3f\n", "peak tracked", "", mb(mem_peak_total()));
    printf("  %-22s %12s %12.3f\n", "peak RSS (process)", "", mb(mem_peak_rss()));
    print_device_memory(tr->model.kernels);
    printf("  why measured > estimated: backward keeps working buffers (the gradient of the\n"
           "  residual stream, of qkv and of the MLP, one T x T attention tile) that the\n"
           "  estimate leaves out; the data loader holds whole token shards; and the process\n"
           "  also holds code, libc, and OpenBLAS's own GEMM buffers, which only RSS sees.\n");
}

/* ---------------------------------------------------------------- sweep */

typedef struct {
    int batch;
    Throughput t;
} SweepRow;

static void print_sweep(const SweepRow *rows, int n)
{
    printf("  %8s %12s %12s %14s\n", "batch", "tokens/s", "ms/step", "peak MB");
    for (int i = 0; i < n; i++)
        printf("  %8d %12.0f %12.2f %14.3f\n", rows[i].batch, rows[i].t.tokens_per_s,
               1e3 * rows[i].t.seconds_per_step, mb(rows[i].t.peak_bytes));
}

/* Doubles B from 1 until memory runs out (the --mem-limit budget, or the GPU's own) or the
 * maximum. */

static int batch_sweep(const TrainConfig *base, const ProfileOptions *opts, const Kernels *kernels, Comm *comm)
{
    printf("\n== batch-size sweep (T=%d, --mem-limit %.1f MB) ==\n", base->seq_len, base->mem_limit_mb);
    SweepRow rows[32];
    int n = 0;
    for (int B = 1; B <= opts->sweep_max_batch && n < 32; B *= 2) {
        TrainConfig cfg = *base;
        cfg.batch_size = B;
        cfg.val_every = 0;
        cfg.csv_path = cfg.save_path = NULL;
        Trainer tr;
        char err[512];
        size_t refusals = mem_limit_refusals(), device_failures = device_alloc_failures(kernels);
        mem_reset_peak();
        if (trainer_setup(&tr, &cfg, kernels, comm, &single_device, NULL, err, sizeof err) != 0) {
            trainer_teardown(&tr);
            if (mem_limit_refusals() == refusals && device_alloc_failures(kernels) == device_failures) {
                fprintf(stderr, "00_single_device profile: %s\n", err);
                return -1;
            }
            printf("  OOM at batch size %d (%s)\n", B, err);
            break;
        }
        rows[n].batch = B;
        rows[n++].t = measure(&tr, opts);
        trainer_teardown(&tr);
    }
    print_sweep(rows, n);
    return 0;
}

/* ---------------------------------------------------------------- extrapolation */

static void print_extrapolation(double flops_per_s, size_t our_params)
{
    static const struct { const char *name; double params; } models[] = {
        {"this model", 0}, {"GPT-2 124M", 124e6}, {"GPT-2 1.5B", 1.5e9},
        {"7B", 7e9}, {"70B", 70e9}, {"1T", 1e12},
    };
    static const double budgets[] = {1e9, 300e9, 10e12};
    printf("\n== extrapolation at the measured %.2f GFLOP/s (6 x params FLOPs per token) ==\n",
           flops_per_s / 1e9);
    printf("  %-12s %14s %14s %16s %16s %16s\n", "model", "params", "tokens/s",
           "days for 1B tok", "days for 300B", "days for 10T");
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        double params = models[i].params > 0 ? models[i].params : (double)our_params;
        double tokens_per_s = flops_per_s / (6.0 * params);
        printf("  %-12s %14.3g %14.4g", models[i].name, params, tokens_per_s);
        for (size_t b = 0; b < 3; b++)
            printf(" %16.4g", budgets[b] / tokens_per_s / 86400.0);
        printf("\n");
    }
}

/* The yardstick for the achieved rate: on a GPU its data-sheet peak for the matrix
 * products' number format; on the CPU the measured FMA peak of one core times the threads
 * the run uses. 0 when there is none. */
typedef struct {
    double flops_per_s;
    char what[96];
} Peak;

static Peak device_peak(const Kernels *kernels, int tf32, int threads)
{
    Peak peak = {0, ""};
    if (kernels == &cpu_kernels) {
        CpuPeak core = cpu_fma_peak();
        peak.flops_per_s = threads * core.flops_per_s;
        snprintf(peak.what, sizeof peak.what, "%d x one core's measured %s FMA peak", threads,
                 core.vectors ? core.vectors : "(none)");
    } else {
        ProductFormat format = tf32 ? PRODUCTS_TF32 : PRODUCTS_FP32;
        peak.flops_per_s = device_peak_flops(kernels, format);
        snprintf(peak.what, sizeof peak.what, "%s peak, dense", product_format_name(format));
    }
    return peak;
}

/* Model FLOPs utilisation: the achieved rate as a share of the peak. */
static void print_utilisation(const Kernels *kernels, const Peak *peak, double flops_per_s)
{
    int tera = peak->flops_per_s >= 1e12;
    if (peak->flops_per_s <= 0)
        printf("  MFU               n/a (no peak known for %s)\n", device_label(kernels));
    else
        printf("  MFU               %.1f%% of %.1f %s (%s)\n", 100.0 * flops_per_s / peak->flops_per_s,
               peak->flops_per_s / (tera ? 1e12 : 1e9), tera ? "TFLOP/s" : "GFLOP/s", peak->what);
}

/* A second run of the same steps through the timed kernel table (kernel_times.h). */
static int print_time_breakdown(const TrainConfig *cfg, const ProfileOptions *opts, const Kernels *kernels,
                                Comm *comm, const Peak *peak)
{
    Trainer tr;
    char err[512];
    if (trainer_setup(&tr, cfg, kernel_times_wrap(kernels), comm, &single_device, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "00_single_device profile: %s\n", err);
        trainer_teardown(&tr);
        return -1;
    }
    warm_up(&tr, opts);
    kernel_times_reset();
    double step_seconds = time_steps(&tr, opts).seconds_per_step;
    trainer_teardown(&tr);
    printf("\n== where a step's time goes (every kernel call timed; %d steps of %.2f ms) ==\n", opts->iters,
           1e3 * step_seconds);
    kernel_times_print(opts->iters, step_seconds, peak->flops_per_s);
    return 0;
}

int run_profile(const TrainConfig *cfg, const ProfileOptions *opts, Comm *comm)
{
    TrainConfig run_cfg = *cfg;
    run_cfg.val_every = 0;
    run_cfg.save_path = run_cfg.csv_path = NULL;
    Trainer tr;
    char err[512];
    const Kernels *kernels = device_open(cfg->device, cfg->comm_backend, cfg->tf32, cfg->threads, comm, err,
                                           sizeof err);
    if (kernels == NULL) {
        fprintf(stderr, "00_single_device profile: %s\n", err);
        return 1;
    }
    printf("lesson 00 profile | %s%s, %d thread(s) | L%d H%d C%d V%d T%d B%d\n", device_label(kernels),
           cfg->tf32 ? " (TF32)" : "", cfg->threads, cfg->model.num_layers, cfg->model.num_heads,
           cfg->model.channels, cfg->model.vocab_size, cfg->seq_len, cfg->batch_size);
    if (kernels == &cpu_kernels)
        blas_kernels_print(stdout);
    if (trainer_setup(&tr, &run_cfg, kernels, comm, &single_device, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "00_single_device profile: %s\n", err);
        trainer_teardown(&tr);
        return 1;
    }
    Throughput t = measure(&tr, opts);
    print_memory(&tr);
    double flops_per_token = gpt_flops_per_token(&cfg->model, cfg->seq_len);
    double flops_per_s = flops_per_token * t.tokens_per_s;
    printf("\n== throughput (%d warm-up steps, %d timed) ==\n", opts->warmup_iters, opts->iters);
    printf("  parameters        %zu\n", tr.model.num_params);
    printf("  step time         %.2f ms\n", 1e3 * t.seconds_per_step);
    printf("  tokens/s          %.0f\n", t.tokens_per_s);
    printf("  FLOPs per token   %.4g (6 x matmul weights + attention over all T x T, as MFU counts it)\n", flops_per_token);
    printf("  achieved          %.2f GFLOP/s (%.3f TFLOP/s)\n", flops_per_s / 1e9, flops_per_s / 1e12);
    Peak peak = device_peak(kernels, cfg->tf32, cfg->threads);
    print_utilisation(kernels, &peak, flops_per_s);
    size_t num_params = tr.model.num_params;
    trainer_teardown(&tr);
    if (opts->throughput_only)
        return 0;
    if (print_time_breakdown(&run_cfg, opts, kernels, comm, &peak) != 0)
        return 1;
    if (batch_sweep(cfg, opts, kernels, comm) != 0)
        return 1;
    print_extrapolation(flops_per_s, num_params);
    return 0;
}
