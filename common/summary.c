#include "summary.h"

#include "paths.h"

#include <math.h>

void running_add(Running *r, double value)
{
    r->count++;
    double delta = value - r->mean;
    r->mean += delta / r->count;
    r->sum_sq_dev += delta * (value - r->mean);
}

double running_std(const Running *r)
{
    return r->count < 2 ? 0.0 : sqrt(r->sum_sq_dev / r->count);
}

int summary_warmup_steps(int steps)
{
    return steps >= 10 ? 5 : steps / 2;
}

static double tokens_per_second(const RunSummary *s)
{
    return s->step_seconds.mean > 0 ? s->tokens_per_step / s->step_seconds.mean : 0.0;
}

static void print_utilisation(const RunSummary *s, FILE *out)
{
    if (s->gpus == 0)
        return;
    if (s->peak_flops <= 0) {
        fprintf(out, "  %-22s %10s   (%s)\n", "MFU", "n/a", s->mfu_unknown);
        return;
    }
    double mfu = tokens_per_second(s) * s->flops_per_token / s->peak_flops;
    fprintf(out, "  %-22s %9.1f%%   (of %.1f TFLOP/s: %d GPU(s) at the %s peak, dense)\n", "MFU", 100.0 * mfu,
            s->peak_flops / 1e12, s->gpus, s->peak_format);
}

void summary_print(const RunSummary *s, FILE *out)
{
    fprintf(out, "summary: %s, %d rank(s) x %d thread(s), steps %d-%d (the first %d are warm-up)\n",
            s->strategy, s->ranks, s->threads, s->warmup_steps + 1, s->steps, s->warmup_steps);
    if (s->oversubscribed[0] != '\0')
        fprintf(out, "  note: %s\n", s->oversubscribed);
    fprintf(out, "  %-22s %10s %10s\n", "", "avg", "std");
    fprintf(out, "  %-22s %10.3f %10.3f\n", "step time (ms)", 1e3 * s->step_seconds.mean,
            1e3 * running_std(&s->step_seconds));
    fprintf(out, "  %-22s %10.3f %10.3f\n", "comm time (ms)", 1e3 * s->comm_seconds.mean,
            1e3 * running_std(&s->comm_seconds));
    fprintf(out, "  %-22s %10.3f %10.3f\n", "exposed comm (ms)", 1e3 * s->exposed_seconds.mean,
            1e3 * running_std(&s->exposed_seconds));
    fprintf(out, "  %-22s %10.4f %10.4f\n", "comm fraction", s->comm_fraction.mean,
            running_std(&s->comm_fraction));
    fprintf(out, "  %-22s %10.0f\n", "tokens/s", tokens_per_second(s));
    print_utilisation(s, out);
    fprintf(out, "  %-22s %10.3f   (%.2f x the parameter bytes; mean over the steps)\n", "comm MB per step", s->comm_bytes.mean / 1e6,
            s->param_bytes > 0 ? s->comm_bytes.mean / s->param_bytes : 0.0);
    fprintf(out, "  %-22s %10.1f   (tracked allocations; peak RSS %.1f MB)\n", "peak memory/rank (MB)",
            s->peak_tracked_mb, s->peak_rss_mb);
    fprintf(out, "  %-22s %10.3f   (params %.3f + grads %.3f + AdamW m, v %.3f", "model state/rank (MB)",
            s->params_mb + s->grads_mb + s->adam_mb + s->master_mb, s->params_mb, s->grads_mb, s->adam_mb);
    if (s->master_mb > 0)
        fprintf(out, " + fp32 master %.3f", s->master_mb);
    fprintf(out, ")\n");
    fprintf(out, "  %-22s %10.3f   (activations %.3f)\n", "working buffers (MB)", s->working_mb,
            s->activations_mb);
    if (s->comm_queued_on_gpu)
        fprintf(out, "  comm time (and so exposed comm) is the host's time queueing NCCL collectives, which\n"
                     "  run on the GPU beside compute (what they cost shows in the step time);\n");
    else
        fprintf(out, "  comm time is time spent inside communication calls (blocked, not computing);\n"
                     "  exposed comm is the step beyond the slowest rank's time outside them; the rest\n"
                     "  of comm time is a faster rank waiting for a slower one;\n");
    fprintf(out, "  comm MB counts an all-reduce of n bytes as 2n (reduce-scatter + all-gather)\n");
}

const char summary_csv_header[] =
    "strategy,ranks,threads,steps_measured,step_time_avg_s,step_time_std_s,comm_time_avg_s,"
    "comm_time_std_s,comm_frac_avg,comm_frac_std,tokens_per_s,peak_rss_mb,last_loss,"
    "comm_mb_per_step,peak_tracked_mb,params_mb,grads_mb,adam_mb,working_mb,activations_mb,master_mb,"
    "exposed_time_avg_s,exposed_time_std_s";

void summary_csv_row(const RunSummary *s, FILE *out)
{
    fprintf(out,
            "%s,%d,%d,%ld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.1f,%.1f,%.6f,%.6g,%.1f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,"
            "%.6g,%.6g\n",
            s->strategy,
            s->ranks, s->threads, s->step_seconds.count, s->step_seconds.mean, running_std(&s->step_seconds),
            s->comm_seconds.mean, running_std(&s->comm_seconds), s->comm_fraction.mean,
            running_std(&s->comm_fraction), tokens_per_second(s), s->peak_rss_mb, s->last_loss,
            s->comm_bytes.mean / 1e6, s->peak_tracked_mb, s->params_mb, s->grads_mb, s->adam_mb, s->working_mb,
            s->activations_mb, s->master_mb, s->exposed_seconds.mean, running_std(&s->exposed_seconds));
}

static int write_summary(FILE *out, const char *path, const void *what, char *err, size_t err_len)
{
    fprintf(out, "%s\n", summary_csv_header);
    summary_csv_row(what, out);
    if (ferror(out)) {
        snprintf(err, err_len, "--summary %s: write failed", path);
        return -1;
    }
    return 0;
}

int summary_write_csv(const RunSummary *s, const char *path, char *err, size_t err_len)
{
    return write_file_atomically(path, write_summary, s, err, err_len);
}
