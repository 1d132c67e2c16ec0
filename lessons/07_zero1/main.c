/* Lesson 07: ZeRO-1, optimizer state sharded.
 *
 *   mpiexec -n N 07_zero1 train [flags]
 *   07_zero1 plan [--ranks N] [--csv FILE] [flags]
 *
 * plan prints the shard plan for N ranks without training, as your zero1_owned (in
 * build/lessons/) answers it: per unit and rank, the elements of the unit the rank owns, of
 * the padded shard ceil(count / N) the rules ask for, how many real and how many padding.
 * --csv FILE writes the rows (the course report draws them). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "layout.h"
#include "lesson.h"
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
    .strategy = &zero1,
    .flags = {"ZeRO-1", zero1_flags, &options},
    .other_modes = "plan",
    .other_usage = "       07_zero1 plan [--ranks N] [--csv FILE] [flags]\n"
                   "         the shard plan for N ranks (default 3) of the model the flags describe, no training;\n"
                   "         --csv FILE writes the rows (unit,count,padded,shard_count,rank,first,real,padding)\n",
};

/* One rank's part of one unit, as zero1_owned says: a line of the table and a row of the CSV. */
static void print_part(const GPTConfig *cfg, int world, int rank, int unit, FILE *csv)
{
    size_t count = unit_range(cfg, unit).count, shard = (count + (size_t)world - 1) / (size_t)world, first;
    size_t real = zero1_owned(cfg, world, rank, unit, &first);
    size_t padding = shard > real ? shard - real : 0;
    printf("  %4d %10zu %10zu %8zu %6d   [%zu, %zu) %zu real + %zu padding\n", unit, count, shard * world, shard,
           rank, first, first + shard, real, padding);
    if (csv != NULL)
        fprintf(csv, "%d,%zu,%zu,%zu,%d,%zu,%zu,%zu\n", unit, count, shard * world, shard, rank, first, real, padding);
}

/* The plan: a row per unit and rank. */
static void print_plan(const TrainConfig *cfg, FILE *csv)
{
    int units = gpt_num_units(&cfg->model), world = options.ranks;
    printf("shard plan over %d rank(s): %d units, %zu parameters\n"
           "  %4s %10s %10s %8s %6s   elements of the unit it owns\n",
           world, units, gpt_num_params(&cfg->model), "unit", "count", "padded", "shard", "rank");
    if (csv != NULL)
        fprintf(csv, "unit,count,padded,shard_count,rank,first,real,padding\n");
    for (int unit = 0; unit < units; unit++)
        for (int rank = 0; rank < world; rank++)
            print_part(&cfg->model, world, rank, unit, csv);
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "plan") != 0)
        return lesson_main(argc, argv, &lesson);
    return lesson_table_mode(&lesson, argc, argv, print_plan);
}
