/* Lesson 07: ZeRO-1, optimizer state sharded.
 *
 *   mpiexec -n N 07_zero1 train [flags]
 *   07_zero1 plan [--ranks N] [--csv FILE] [flags]
 *
 * plan prints the shard plan that plan_shards and owned_real_count (yours in build/lessons/)
 * make for N ranks, without training: per unit and rank, the elements of the unit the rank
 * owns, how many are real and how many padding, and where they sit in its shard buffers.
 * --csv FILE writes the rows (the course report draws them). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lesson.h"
#include "paths.h"
#include "zero1.h"

typedef struct {
    int ranks; /* plan: the number of ranks */
} Options;

static Options options = {.ranks = 3};

static const Flag zero1_flags[] = {
    {"ranks", FLAG_INT, offsetof(Options, ranks), "plan: the number of ranks to cut the shards for", 1, 4096, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static const Lesson lesson = {
    .name = "07_zero1",
    .title = "ZeRO-1: AdamW state sharded; gradients reduce-scattered, parameters all-gathered",
    .strategy = &(const Strategy){.name = "zero1", .setup = zero1_setup, .start = zero1_start, .optimizer_step = zero1_optimizer_step,
                 .gather_optimizer = zero1_gather_optimizer,
                 .load_optimizer = zero1_load_optimizer, .stop = zero1_stop},
    .flags = {"ZeRO-1", zero1_flags, &options},
    .other_modes = "plan",
    .other_usage = "       07_zero1 plan [--ranks N] [--csv FILE] [flags]\n"
                   "         the shard plan for N ranks (default 3) of the model the flags describe, no training;\n"
                   "         --csv FILE writes the rows (unit,count,padded,shard_count,rank,first,real,padding,shard_offset)\n",
};

/* One rank's part of one unit: a line of the table and a row of the CSV. */
static void print_part(const ShardPlan *plan, const GPTConfig *cfg, int unit, FILE *csv)
{
    size_t count = unit_range(cfg, unit).count, shard = plan->shard_count[unit];
    size_t first = (size_t)plan->rank * shard, real = owned_real_count(plan, cfg, unit);
    printf("  %4d %10zu %10zu %8zu %6d   [%zu, %zu) %zu real + %zu padding, at %zu of its shard buffers\n", unit,
           count, shard * plan->world, shard, plan->rank, first, first + shard, real, shard - real,
           plan->shard_offset[unit]);
    if (csv != NULL)
        fprintf(csv, "%d,%zu,%zu,%zu,%d,%zu,%zu,%zu,%zu\n", unit, count, shard * plan->world, shard, plan->rank, first,
                real, shard - real, plan->shard_offset[unit]);
}

static int plan(const TrainConfig *cfg)
{
    char err[512];
    if (train_config_refuse_overwrite(cfg, err, sizeof err) != 0 ||
        check_folder_writable(cfg->csv_path, "--csv", err, sizeof err) != 0) {
        fprintf(stderr, "07_zero1: %s\n", err);
        return 2;
    }
    ShardPlan shards = {.num_units = gpt_num_units(&cfg->model), .world = options.ranks};
    shards.shard_count = calloc((size_t)shards.num_units, sizeof *shards.shard_count);
    shards.shard_offset = calloc((size_t)shards.num_units, sizeof *shards.shard_offset);
    if (shards.shard_count == NULL || shards.shard_offset == NULL) {
        fprintf(stderr, "07_zero1: out of memory\n");
        return 1;
    }
    OutputFile out = {0}; /* the CSV, renamed into place once whole */
    FILE *csv = cfg->csv_path != NULL ? output_open(&out, cfg->csv_path, err, sizeof err) : NULL;
    if (cfg->csv_path != NULL && csv == NULL) {
        fprintf(stderr, "07_zero1: --csv %s\n", err);
        return 1;
    }
    plan_shards(&shards, &cfg->model);
    printf("shard plan over %d rank(s): %d units, %zu parameters; each rank's shard buffers hold %zu elements\n"
           "  %4s %10s %10s %8s %6s   elements of the unit it owns\n",
           shards.world, shards.num_units, gpt_num_params(&cfg->model), shards.shard_total, "unit", "count", "padded",
           "shard", "rank");
    if (csv != NULL)
        fprintf(csv, "unit,count,padded,shard_count,rank,first,real,padding,shard_offset\n");
    for (int unit = 0; unit < shards.num_units; unit++)
        for (shards.rank = 0; shards.rank < shards.world; shards.rank++)
            print_part(&shards, &cfg->model, unit, csv);
    free(shards.shard_count);
    free(shards.shard_offset);
    if (output_finish(&out, err, sizeof err) != 0) {
        fprintf(stderr, "07_zero1: --csv %s\n", err);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "plan") != 0)
        return lesson_main(argc, argv, &lesson);
    TrainConfig cfg;
    int parsed = lesson_parse(&lesson, argc, argv, 2, &cfg, 1);
    return parsed != 0 ? (parsed > 0 ? 0 : 2) : plan(&cfg);
}
