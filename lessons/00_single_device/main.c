/* Lesson 00: training on one device, and measuring what that costs.
 *
 *   00_single_device train    [flags]   train and report loss, grad norm, speed
 *   00_single_device profile  [flags]   memory breakdown, throughput, batch sweep
 *   00_single_device estimate [flags]   the memory estimator's figures as CSV
 */
#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "profile.h"
#include "trainer.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: 00_single_device train|profile|estimate [flags]\n"
            "  train     train on the token shards; a line per step, CSV with --csv\n"
            "  profile   memory (estimated vs measured), throughput, FLOPs, batch-size sweep,\n"
            "            and an extrapolation to larger models\n"
            "  estimate  print the memory estimator's figures (component,bytes) for the config\n");
}

static int has_help_flag(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return 1;
    return 0;
}

static int train(const TrainConfig *cfg)
{
    char err[512];
    Trainer tr;
    int status = trainer_setup(&tr, cfg, &cpu_kernels, err, sizeof err);
    if (status == 0) {
        printf("lesson 00: single device | %s | BLAS core %s, %d thread(s)\n",
               cpu_kernels.device_name, blas_core_name(), cfg->threads);
        train_config_print(cfg, stdout, "config ");
        printf("parameters %zu\n", tr.model.num_params);
        status = trainer_run(&tr, err, sizeof err);
    }
    if (status != 0)
        fprintf(stderr, "00_single_device: %s\n", err);
    trainer_teardown(&tr);
    return status == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argv[1][0] == '-' && has_help_flag(argc, argv))) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "train") != 0 && strcmp(mode, "profile") != 0 && strcmp(mode, "estimate") != 0) {
        fprintf(stderr, "00_single_device: unknown mode '%s' (train, profile or estimate)\n", mode);
        return 2;
    }
    TrainConfig cfg;
    ProfileOptions opts = profile_defaults();
    FlagSet extra = {"profile", profile_flags, &opts};
    int num_extra = strcmp(mode, "profile") == 0 ? 1 : 0;
    char err[512];
    if (has_help_flag(argc, argv)) {
        const char *preset = cli_find(argc, argv, 2, "config");
        if (train_config_preset(&cfg, preset ? preset : "course", err, sizeof err) != 0) {
            fprintf(stderr, "00_single_device %s: %s\n", mode, err);
            return 2;
        }
        usage(stdout);
        FlagSet sets[2] = {{"training (defaults of this preset in brackets)", train_flags, &cfg}, extra};
        cli_print_help(sets, 1 + num_extra);
        return 0;
    }
    if (train_config_from_args(&cfg, argc, argv, 2, &extra, num_extra, err, sizeof err) != 0) {
        fprintf(stderr, "00_single_device %s: %s\n", mode, err);
        return 2;
    }
    if (strcmp(mode, "estimate") == 0) {
        print_estimate_csv(&cfg, stdout);
        return 0;
    }
    return strcmp(mode, "train") == 0 ? train(&cfg) : run_profile(&cfg, &opts);
}
