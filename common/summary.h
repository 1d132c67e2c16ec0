/* The end-of-run table every lesson prints (step time and communication time,
 * average and spread, the communication fraction, throughput, memory per rank) and the
 * one-row CSV of the same figures that `make run` collects into its comparison table. */
#ifndef DTC_SUMMARY_H
#define DTC_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

/* Mean and spread of a stream of values without keeping them (Welford). */
typedef struct {
    long count;
    double mean, sum_sq_dev;
} Running;

void running_add(Running *r, double value);
double running_std(const Running *r); /* population standard deviation; 0 below 2 values */

typedef struct {
    const char *strategy;
    int ranks, threads, steps, warmup_steps; /* warm-up steps are left out of the figures */
    Running step_seconds, comm_seconds, comm_fraction; /* per step, slowest rank */
    Running exposed_seconds; /* per step: the step beyond the slowest rank's compute (trainer.h) */
    double tokens_per_step;                            /* global */
    Running comm_bytes;                                /* per step, per rank, as CommStats counts */
    double param_bytes;
    double peak_tracked_mb, peak_rss_mb;               /* per rank, the largest rank */
    /* In use at the end of the last step, per rank (the largest rank), from the tracking
     * allocator: the model state (parameters, gradients, AdamW m + v), the working buffers
     * of the communication (MEM_COMM) and the activations (with backward's scratch). */
    double params_mb, grads_mb, adam_mb, working_mb, activations_mb;
    double master_mb; /* mixed precision's fp32 master weights (0 without them) */
    float last_loss;
    /* NCCL: the collectives run on the GPU beside compute, so comm time is only the host's
     * time queueing them (their cost shows in the step time) */
    int comm_queued_on_gpu;
    /* MFU on GPUs: the model's FLOPs a token (gpt_flops_per_token) against the summed peaks
     * of the run's GPUs in the products' format; gpus 0 on the CPU (no line printed), and
     * peak_flops 0 with mfu_unknown saying why where there is no peak to measure against. */
    int gpus;
    double flops_per_token, peak_flops;
    const char *peak_format, *mfu_unknown;
    /* On a CPU run, when rank 0's machine has fewer cores than its ranks' threads: a note
     * saying so (comm_oversubscribed), printed with the figures it makes doubtful; else "". */
    char oversubscribed[192];
} RunSummary;

/* Steps left out of the averages at the start of a run of `steps`: caches, page faults and
 * the first collectives' connection set-up make them slow. */
int summary_warmup_steps(int steps);

void summary_print(const RunSummary *s, FILE *out);

extern const char summary_csv_header[];
void summary_csv_row(const RunSummary *s, FILE *out);
/* Writes header and row to path. Returns 0, or -1 with a reason. */
int summary_write_csv(const RunSummary *s, const char *path, char *err, size_t err_len);

#endif
