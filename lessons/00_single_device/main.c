/* Lesson 00: training on one device, and measuring what that costs.
 *
 *   00_single_device train    [flags]   train and report loss, grad norm, speed
 *   00_single_device profile  [flags]   memory, throughput, where the time goes, batch sweep
 *   00_single_device estimate [flags]   the memory estimator's figures as CSV
 */
#include <stdio.h>
#include <string.h>

#include "lesson.h"
#include "profile.h"

/* One device, so nothing to communicate: the strategy every later lesson must match. */
static const Lesson lesson = {
    .name = "00_single_device",
    .title = "training on one device: the reference every data-parallel lesson must reproduce",
    .strategy = &(const Strategy){.name = "single_device"},
    .single_device = 1,
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: 00_single_device train|profile|estimate [flags]\n"
            "  train     train on the token shards; a line per step, CSV with --csv\n"
            "  profile   memory (estimated vs measured), throughput, FLOPs against the peak,\n"
            "            where a step's time goes (every kernel timed), batch-size sweep, and\n"
            "            an extrapolation to larger models\n"
            "  estimate  print the memory estimator's figures (component,bytes) for the config\n");
}

/* profile and estimate: the training flags plus, for profile, its own. */
static int measure(const char *mode, int argc, char **argv)
{
    TrainConfig cfg;
    ProfileOptions opts = profile_defaults();
    Lesson with_profile = lesson;
    if (strcmp(mode, "profile") == 0)
        with_profile.flags = (FlagSet){"profile", profile_flags, &opts};
    int parsed = lesson_parse(&with_profile, argc, argv, 2, &cfg, 1);
    if (parsed != 0)
        return parsed > 0 ? 0 : 2;
    char err[512];
    if (train_config_refuse_train_outputs(&cfg, mode, 0, err, sizeof err) != 0) { /* it prints: no --csv either */
        fprintf(stderr, "00_single_device: %s\n", err);
        return 2;
    }
    if (strcmp(mode, "estimate") == 0) {
        print_estimate_csv(&cfg, stdout);
        return 0;
    }
    Comm *comm = comm_init(&argc, &argv, err, sizeof err);
    if (comm == NULL)
        return comm_init_failed("00_single_device", err);
    int status = comm_size(comm) > 1 ? 2 : run_profile(&cfg, &opts, comm);
    if (status == 2)
        fprintf(stderr, "00_single_device: profile runs on one device; start it without mpiexec\n");
    return comm_finalize(comm) != 0 && status == 0 ? 1 : status;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argv[1][0] == '-' && cli_wants_help(argc, argv, 1, NULL, 0))) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *mode = argv[1];
    if (strcmp(mode, "train") == 0)
        return lesson_main(argc, argv, &lesson);
    if (strcmp(mode, "profile") == 0 || strcmp(mode, "estimate") == 0)
        return measure(mode, argc, argv);
    fprintf(stderr, "00_single_device: unknown mode '%s' (train, profile or estimate)\n", mode);
    return 2;
}
