/* What every training lesson's program does around its strategy: flags, the communicator,
 * the run, errors. A lesson's main.c describes itself in a Lesson and calls lesson_main:
 *
 *   NN_name train [flags]        (mpiexec -n N NN_name train ... on N ranks)
 */
#ifndef DTC_LESSON_H
#define DTC_LESSON_H

#include <stdio.h>

#include "cli.h"
#include "comm.h"
#include "paths.h"
#include "strategy.h"
#include "summary.h"
#include "train_config.h"

typedef struct {
    const char *name;  /* the program: "02_naive_ddp" */
    const char *title; /* what the lesson adds, one line */
    const Strategy *strategy; /* the lesson's exercise exports it */
    FlagSet flags;     /* the lesson's own flags (flags.flags NULL if none); flags.target is
                        * what the strategy sees as run->options */
    /* Applies the lesson's flags to the training configuration (NULL: nothing to apply),
     * writing those that shape the run's numbers into cfg->lesson_settings for the resume
     * state. Returns 0, or -1 with a one-line reason when they cannot go together with it. */
    int (*configure)(TrainConfig *cfg, const void *options, char *err, size_t err_len);
    /* The strategy's name in the header and the summary for the lesson's flags (NULL:
     * strategy.name), when a flag changes what runs. */
    const char *(*strategy_name)(const void *options);
    int single_device; /* refuses more than one rank */
    /* Modes besides train that the lesson's main handles itself (NULL if none), e.g.
     * "sweep" or "sweep, plan", and their usage lines. */
    const char *other_modes;
    const char *other_usage;
} Lesson;

/* The whole program for `train`; other modes are the lesson's own. Returns the exit status. */
int lesson_main(int argc, char **argv, const Lesson *lesson);

/* Parses argv[first..] into cfg (preset, training flags, the lesson's flags). argv[first - 1]
 * is the mode when first >= 2: a mode other than train refuses the flags naming what only
 * train writes (train_config_refuse_train_outputs; --csv is the mode's own). Returns 1 on
 * --help (printing it if verbose), -1 on bad input (printing one line if verbose), else 0. */
int lesson_parse(const Lesson *lesson, int argc, char **argv, int first, TrainConfig *cfg, int verbose);

/* Trains once with cfg on every rank of comm: header, step lines, summary (into *summary
 * if not NULL). Errors on any rank fail every rank, with the reason printed. Returns 0 or -1. */
int lesson_train(const Lesson *lesson, Comm *comm, const TrainConfig *cfg, RunSummary *summary);

/* A mode's --csv FILE (cfg->csv_path), opened to be renamed into place by output_finish, so
 * that a mode that fails leaves no half-written file. NULL with *status 0 when none was
 * asked for; NULL with *status the exit status (2 for a path the flags may not name, 1 for
 * one that cannot be written) after a line naming the problem. */
FILE *lesson_open_csv(const Lesson *lesson, const TrainConfig *cfg, OutputFile *out, int *status);

/* A mode that prints a table without training (a lesson's `plan`): parses argv[2..] into a
 * configuration, opens --csv FILE, has print_rows print the table (and write the CSV's rows,
 * header included, where csv is not NULL), then publishes the CSV. Returns the exit status. */
int lesson_table_mode(const Lesson *lesson, int argc, char **argv,
                      void (*print_rows)(const TrainConfig *cfg, FILE *csv));

#endif
