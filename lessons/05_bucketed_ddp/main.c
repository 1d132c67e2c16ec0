/* Lesson 05: bucketed DDP.
 *
 *   mpiexec -n N 05_bucketed_ddp train [--bucket-mb X] [flags]
 *   mpiexec -n N 05_bucketed_ddp sweep [--sizes 0.05,0.25,1,4,1000] [flags]
 *   05_bucketed_ddp plan [--bucket-mb X] [--csv FILE] [flags]
 *
 * sweep trains a short run (--steps, default 30) for each bucket size and prints one row per
 * size: how bucket size trades the number of messages against how early they start. With
 * --csv FILE the rows also go to FILE (the course report plots them).
 * plan prints, without training, the bucket your bucketed_ddp_bucket_of gives each unit of
 * the model the flags describe, in the order backward finishes them. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bucketed_ddp.h"
#include "layout.h"
#include "lesson.h"
#include "paths.h"

typedef struct {
    BucketOptions buckets;
    const char *sizes; /* sweep: comma-separated MB */
} Options;

static Options options = {.buckets = {.bucket_mb = 1.0}, .sizes = "0.05,0.25,1,4,1000"};

static const Flag bucket_flags[] = {
    {"bucket-mb", FLAG_FLOAT, offsetof(Options, buckets.bucket_mb), "train, plan: most gradient MB (10^6 bytes) per bucket", 0, 1e9,
     0},
    {"sizes", FLAG_STRING, offsetof(Options, sizes), "sweep: the bucket sizes to try, MB, comma-separated", 0, 0, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static const Lesson lesson = {
    .name = "05_bucketed_ddp",
    .title = "bucketed DDP: units grouped into buckets in backward order, each all-reduced once complete",
    .strategy = &bucketed_ddp,
    .flags = {"buckets", bucket_flags, &options},
    .other_modes = "sweep, plan",
    .other_usage = "       [mpiexec -n N] 05_bucketed_ddp sweep [--sizes MB,MB,...] [flags]\n"
                   "         a short run (--steps, default 30; no validation or checkpoint) per bucket size;\n"
                   "         --csv FILE writes the rows (bucket_mb,buckets,step_ms,step_std_ms,comm_ms,comm_frac,tokens_per_s)\n"
                   "       05_bucketed_ddp plan [--bucket-mb X] [--csv FILE] [flags]\n"
                   "         the bucket of each unit in your plan for the model the flags describe, no training;\n"
                   "         --csv FILE writes the rows (unit,count,bytes,bucket)\n",
};

/* Parses "0.5,1,4" into sizes; returns how many, or -1 after a line naming the bad entry. */
static int parse_sizes(const char *text, double *sizes, int max_sizes, int verbose)
{
    int count = 0;
    if (*text == '\0') {
        if (verbose)
            fprintf(stderr, "05_bucketed_ddp: --sizes is empty: give bucket sizes in MB, e.g. 0.25,1,4\n");
        return -1;
    }
    for (const char *at = text; *at != '\0'; count++) {
        if (count == max_sizes) {
            if (verbose)
                fprintf(stderr, "05_bucketed_ddp: --sizes: at most %d sizes\n", max_sizes);
            return -1;
        }
        char *end;
        sizes[count] = strtod(at, &end);
        /* written so that NaN fails too: it compares false with everything */
        if (end == at || !(sizes[count] >= 0 && sizes[count] <= 1e6) || (*end != ',' && *end != '\0')) {
            if (verbose)
                fprintf(stderr, "05_bucketed_ddp: --sizes '%s': '%s' is not a size in MB\n", text, at);
            return -1;
        }
        at = *end == ',' ? end + 1 : end;
    }
    return count;
}

static void print_sweep_row(const TrainConfig *cfg, double mb, const RunSummary *s, FILE *csv)
{
    int count = bucketed_ddp_bucket_of(&cfg->model, (size_t)(mb * 1e6), 0) + 1; /* unit 0 is sent last */
    double step_ms = 1e3 * s->step_seconds.mean, std_ms = 1e3 * running_std(&s->step_seconds);
    double comm_ms = 1e3 * s->comm_seconds.mean, tokens_per_s = s->tokens_per_step / s->step_seconds.mean;
    printf("  %10.3f %8d %10.3f %10.3f %10.3f %10.4f %10.0f\n", mb, count, step_ms, std_ms, comm_ms,
           s->comm_fraction.mean, tokens_per_s);
    fflush(stdout);
    if (csv != NULL)
        fprintf(csv, "%g,%d,%.4f,%.4f,%.4f,%.5f,%.1f\n", mb, count, step_ms, std_ms, comm_ms, s->comm_fraction.mean,
                tokens_per_s);
}

/* Rank 0's CSV of the sweep rows, or NULL when none was asked for (or on other ranks). */
static FILE *open_sweep_csv(const TrainConfig *cfg, int rank, OutputFile *out, int *failed)
{
    *out = (OutputFile){0};
    *failed = 0;
    FILE *csv = rank == 0 ? lesson_open_csv(&lesson, cfg, out, failed) : NULL;
    if (csv != NULL)
        fprintf(csv, "bucket_mb,buckets,step_ms,step_std_ms,comm_ms,comm_frac,tokens_per_s\n");
    return csv;
}

static int sweep(Comm *comm, TrainConfig *cfg, int steps_given)
{
    double sizes[32];
    int count = parse_sizes(options.sizes, sizes, 32, comm_rank(comm) == 0);
    if (count < 0)
        return 2;
    int rank = comm_rank(comm), failed;
    OutputFile out;
    FILE *csv = open_sweep_csv(cfg, rank, &out, &failed);
    char err[512];
    if (!comm_all_ok(comm, failed, "opening --csv", err, sizeof err))
        return 2; /* the rank that failed said why */
    cfg->steps = steps_given ? cfg->steps : 30;
    cfg->val_every = cfg->gen_tokens = 0;
    cfg->csv_path = cfg->save_path = cfg->summary_path = NULL;
    cfg->quiet = 1;
    if (rank == 0)
        printf("bucket sweep: %d rank(s), %d steps each (the first %d are warm-up)\n  %10s %8s %10s %10s %10s %10s %10s\n",
               comm_size(comm), cfg->steps, summary_warmup_steps(cfg->steps), "bucket MB", "buckets",
               "step ms", "std ms", "comm ms", "comm frac", "tokens/s");
    int status = 0;
    for (int i = 0; i < count && status == 0; i++) {
        options.buckets.bucket_mb = (float)sizes[i];
        RunSummary summary;
        status = lesson_train(&lesson, comm, cfg, &summary) != 0;
        if (status == 0 && rank == 0)
            print_sweep_row(cfg, sizes[i], &summary, csv);
    }
    if (output_finish(&out, err, sizeof err) != 0) {
        fprintf(stderr, "05_bucketed_ddp: %s\n", err);
        status = 1;
    }
    return status;
}

/* Each unit's row of the plan, in the order backward finishes them: its gradient's elements
 * and bytes, and the bucket your bucketed_ddp_bucket_of puts it in. */
static void print_plan(const TrainConfig *cfg, FILE *csv)
{
    size_t max_bytes = (size_t)(options.buckets.bucket_mb * 1e6);
    printf("bucket plan for at most %zu bytes per bucket, in the order backward finishes the units\n"
           "  %4s %12s %14s %6s\n",
           max_bytes, "unit", "count", "bytes", "bucket");
    if (csv != NULL)
        fprintf(csv, "unit,count,bytes,bucket\n");
    for (int unit = gpt_num_units(&cfg->model) - 1; unit >= 0; unit--) {
        size_t count = unit_range(&cfg->model, unit).count;
        int bucket = bucketed_ddp_bucket_of(&cfg->model, max_bytes, unit);
        printf("  %4d %12zu %14zu %6d\n", unit, count, count * sizeof(float), bucket);
        if (csv != NULL)
            fprintf(csv, "%d,%zu,%zu,%d\n", unit, count, count * sizeof(float), bucket);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "plan") == 0)
        return lesson_table_mode(&lesson, argc, argv, print_plan);
    if (argc < 2 || strcmp(argv[1], "sweep") != 0)
        return lesson_main(argc, argv, &lesson);
    char err[512];
    Comm *comm = comm_init(&argc, &argv, err, sizeof err);
    if (comm == NULL)
        return comm_init_failed(lesson.name, err);
    TrainConfig cfg;
    int parsed = lesson_parse(&lesson, argc, argv, 2, &cfg, comm_rank(comm) == 0);
    int status = parsed != 0 ? (parsed > 0 ? 0 : 2) : sweep(comm, &cfg, cli_find(argc, argv, 2, "steps") != NULL);
    return comm_finalize(comm) != 0 && status == 0 ? 1 : status;
}
