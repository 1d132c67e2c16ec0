#include "lesson.h"

#include "device.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "blas_kernels.h"
#include "kernels.h"
#include "trainer.h"

static void print_usage(const Lesson *lesson, FILE *out)
{
    fprintf(out, "usage: [mpiexec -n N] %s train [flags]\n", lesson->name);
    if (lesson->other_usage != NULL)
        fprintf(out, "%s", lesson->other_usage);
    fprintf(out, "  %s\n", lesson->title);
}

/* MODE --help: the usage (a lesson whose modes it does not list: the mode's line), then the
 * flags. */
static void print_help(const Lesson *lesson, const char *mode, TrainConfig *cfg)
{
    if (strcmp(mode, "train") == 0 || lesson->other_usage != NULL)
        print_usage(lesson, stdout);
    else
        printf("usage: %s %s [flags]\n  %s\n", lesson->name, mode, lesson->title);
    if (strcmp(mode, "train") != 0)
        printf("  %s writes none of train's files: --save, --save-every, --resume, --summary, --comm-log and\n"
               "  --trace are refused here\n", mode);
    FlagSet sets[2] = {{"training (defaults of this preset in brackets)", train_flags, cfg}, lesson->flags};
    cli_print_help(sets, lesson->flags.flags != NULL ? 2 : 1);
}

int lesson_parse(const Lesson *lesson, int argc, char **argv, int first, TrainConfig *cfg, int verbose)
{
    char err[512];
    int num_extra = lesson->flags.flags != NULL ? 1 : 0;
    const char *mode = first >= 2 ? argv[first - 1] : "train";
    FlagSet known[2] = {{"training", train_flags, cfg}, lesson->flags};
    if (cli_wants_help(argc, argv, first, known, num_extra + 1)) {
        const char *preset = cli_find(argc, argv, first, "config");
        int status = train_config_preset(cfg, preset ? preset : "course", err, sizeof err) == 0 ? 1 : -1;
        if (verbose && status > 0)
            print_help(lesson, mode, cfg);
        else if (verbose)
            fprintf(stderr, "%s: %s\n", lesson->name, err);
        return status;
    }
    if (train_config_from_args(cfg, argc, argv, first, &lesson->flags, num_extra, err, sizeof err) != 0) {
        if (verbose)
            fprintf(stderr, "%s: %s\n", lesson->name, err);
        return -1;
    }
    if ((lesson->configure != NULL && lesson->configure(cfg, lesson->flags.target, err, sizeof err) != 0) ||
        (strcmp(mode, "train") != 0 && train_config_refuse_train_outputs(cfg, mode, 1, err, sizeof err) != 0)) {
        if (verbose)
            fprintf(stderr, "%s: %s\n", lesson->name, err);
        return -1;
    }
    return 0;
}

/* Every failed rank has a reason; the lowest such rank prints its own, so a failure that all
 * ranks share is reported once. */
static void report_failure(const Lesson *lesson, Comm *comm, int failed, const char *err)
{
    int rank = comm_rank(comm), size = comm_size(comm);
    double lowest_failed = failed ? size - rank : 0; /* the max of this picks the lowest rank */
    comm_check(comm, comm_max_double(comm, &lowest_failed));
    if (failed && rank == size - (int)lowest_failed) {
        if (rank > 0)
            fprintf(stderr, "%s: rank %d: %s\n", lesson->name, rank, err);
        else
            fprintf(stderr, "%s: %s\n", lesson->name, err);
    }
}

static void print_header(const Lesson *lesson, const Trainer *tr)
{
    printf("lesson %s: %s\n", lesson->name, lesson->title);
    printf("%d rank(s) over %s | %s, %d thread(s) per rank | strategy %s\n", tr->world, comm_backend_name(tr->comm),
           device_label(tr->model.kernels), tr->cfg.threads, tr->strategy.name);
    if (tr->world > 1) {
        char processes[1024];
        comm_describe_processes(tr->comm, processes, sizeof processes);
        char host[256] = "";
        gethostname(host, sizeof host - 1);
        printf("processes on this machine (%s): %s\n", host, processes);
    }
    char oversubscribed[192];
    if (tr->model.kernels == &cpu_kernels &&
        comm_oversubscribed(tr->comm, tr->cfg.threads, oversubscribed, sizeof oversubscribed))
        printf("note: %s\n", oversubscribed);
    if (tr->model.kernels == &cpu_kernels)
        blas_kernels_print(stdout);
    if (tr->model.matmuls_16bit)
        printf("matmul operands: %s, each product exact, summed in fp32 (activations stay fp32)\n",
               format16_name(tr->model.matmul_format));
    train_config_print(&tr->cfg, stdout, "config ");
    printf("parameters %zu (%.3f MB of gradients)\n", tr->model.num_params,
           tr->model.num_params * sizeof(float) / 1e6);
    printf("rows per forward %d (global batch %d = %d rank(s) x %d micro-batch(es) x %d)\n", tr->micro_batch,
           tr->cfg.batch_size, tr->world, tr->cfg.accum_steps, tr->micro_batch);
    fflush(stdout);
}

int lesson_train(const Lesson *lesson, Comm *comm, const TrainConfig *cfg, RunSummary *summary)
{
    char err[512] = "";
    Trainer tr;
    memset(&tr, 0, sizeof tr); /* torn down even when the device never opened */
    comm_set_wait_timeout(comm, cfg->wait_timeout); /* opening the device waits for the peers too */
    const Kernels *kernels = device_open(cfg->device, cfg->comm_backend, cfg->tf32, cfg->threads, comm, err,
                                           sizeof err);
    Strategy strategy = *lesson->strategy;
    if (lesson->strategy_name != NULL)
        strategy.name = lesson->strategy_name(lesson->flags.target);
    int failed = kernels == NULL ||
                 trainer_setup(&tr, cfg, kernels, comm, &strategy, lesson->flags.target, err, sizeof err) != 0;
    if (comm_all_ok(comm, failed, "setting up", err, sizeof err)) {
        if (comm_rank(comm) == 0 && !cfg->quiet)
            print_header(lesson, &tr);
        failed = cfg->dry_run ? 0 : trainer_run(&tr, err, sizeof err) != 0;
        if (summary != NULL)
            *summary = tr.summary;
    }
    int any_failed = !comm_all_ok(comm, failed, "the run", err, sizeof err);
    if (any_failed)
        report_failure(lesson, comm, failed, err);
    trainer_teardown(&tr);
    return any_failed ? -1 : 0;
}

FILE *lesson_open_csv(const Lesson *lesson, const TrainConfig *cfg, OutputFile *out, int *status)
{
    char err[512];
    *out = (OutputFile){0};
    *status = 0;
    if (cfg->csv_path == NULL)
        return NULL;
    if (train_config_refuse_overwrite(cfg, err, sizeof err) != 0 ||
        check_folder_writable(cfg->csv_path, "--csv", err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", lesson->name, err);
        *status = 2;
        return NULL;
    }
    FILE *csv = output_open(out, cfg->csv_path, err, sizeof err);
    if (csv == NULL) {
        fprintf(stderr, "%s: --csv %s\n", lesson->name, err);
        *status = 1;
    }
    return csv;
}

int lesson_table_mode(const Lesson *lesson, int argc, char **argv,
                      void (*print_rows)(const TrainConfig *cfg, FILE *csv))
{
    TrainConfig cfg;
    int parsed = lesson_parse(lesson, argc, argv, 2, &cfg, 1);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    OutputFile out; /* the CSV, renamed into place once whole */
    int status;
    FILE *csv = lesson_open_csv(lesson, &cfg, &out, &status);
    if (status != 0)
        return status;
    print_rows(&cfg, csv);
    char err[512];
    if (output_finish(&out, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --csv %s\n", lesson->name, err);
        return 1;
    }
    return 0;
}

/* `LESSON --help`: the usage, then the flags of train, its default mode, on the course preset. */
static int print_main_help(const Lesson *lesson)
{
    TrainConfig cfg;
    char err[256];
    if (train_config_preset(&cfg, "course", err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", lesson->name, err);
        return 1;
    }
    print_help(lesson, "train", &cfg);
    if (lesson->other_modes != NULL)
        printf("\n%s MODE --help lists the flags of another mode (%s).\n", lesson->name, lesson->other_modes);
    return 0;
}

int lesson_main(int argc, char **argv, const Lesson *lesson)
{
    if (argc < 2) {
        print_usage(lesson, stderr);
        return 2;
    }
    if (cli_is_help(argv[1]))
        return print_main_help(lesson);
    char err[512];
    Comm *comm = comm_init(&argc, &argv, err, sizeof err);
    if (comm == NULL)
        return comm_init_failed(lesson->name, err);
    int quiet = comm_rank(comm) != 0; /* every rank parses the same flags: one reports */
    int status = 0;
    TrainConfig cfg;
    if (strcmp(argv[1], "train") != 0) {
        if (!quiet)
            fprintf(stderr, "%s: unknown mode '%s' (train%s%s)\n", lesson->name, argv[1],
                    lesson->other_modes != NULL ? ", " : "", lesson->other_modes != NULL ? lesson->other_modes : "");
        status = 2;
    } else if (lesson->single_device && comm_size(comm) > 1) {
        if (!quiet)
            fprintf(stderr, "%s: this lesson runs on one device; start it without mpiexec -n %d\n",
                    lesson->name, comm_size(comm));
        status = 2;
    } else {
        int parsed = lesson_parse(lesson, argc, argv, 2, &cfg, !quiet);
        if (parsed != 0)
            status = parsed > 0 ? 0 : 2;
        else
            status = lesson_train(lesson, comm, &cfg, NULL) == 0 ? 0 : 1;
    }
    return comm_finalize(comm) != 0 && status == 0 ? 1 : status;
}
