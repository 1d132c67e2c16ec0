/* The training loop every lesson runs, on one rank or many: data, forward, backward (with
 * the lesson's strategy hooked in), clipping, AdamW, logging, validation, the replica check,
 * the summary, the checkpoint and the end-of-run sample.
 *
 * On N ranks each rank initialises its model from seed + rank (a strategy that forgets to
 * make them equal fails visibly), trains on its own B/N rows of every global batch, and the
 * figures printed are those a single device would print for the whole global batch: the
 * global mean loss and the norm of the averaged gradient. Only rank 0 prints and writes. */
#ifndef DTC_TRAINER_H
#define DTC_TRAINER_H

#include <stdio.h>

#include "comm.h"
#include "dataloader.h"
#include "model.h"
#include "optimizer.h"
#include "paths.h"
#include "resume.h"
#include "strategy.h"
#include "summary.h"
#include "tokenizer.h"
#include "train_config.h"

typedef struct {
    float loss;          /* global mean over the global batch */
    float local_loss;    /* this rank's mean over its own rows */
    float grad_norm, lr; /* norm before clipping, as rank 0 computed it */
    double seconds;      /* the slowest rank's step time */
    double comm_seconds; /* the slowest rank's time inside communication during the step */
    /* The step beyond the slowest rank's time outside communication: what no overlap hid.
     * The rest of comm_seconds is a faster rank waiting in a call for a slower one. */
    double exposed_seconds;
    double comm_bytes;   /* this rank's communication, counted as CommStats does */
    int overflowed;      /* the strategy skipped the step: its fp16 gradients overflowed */
    float loss_scale;    /* what backward scaled the loss by (model.h) */
} StepResult;

typedef struct {
    TrainConfig cfg;
    Comm *comm;
    Strategy strategy;
    RunContext run;
    int rank, world;
    int micro_batch; /* rows per forward: global batch / (world x accum_steps) */
    GPT model;
    AdamW opt;
    DataLoader train, val;
    int has_val;
    OutputFile csv;      /* --csv, rank 0: renamed into place when the run ends */
    Tokenizer tokenizer; /* --tokenizer, rank 0: for the sample (vocab_size 0 when none) */
    RunSummary summary;
    int first_step;        /* 0, or the steps a resumed run had done */
    int skipped_steps, first_skipped; /* --skip-nonfinite: how many, and the first (1-based) */
    int overflows, first_overflow;    /* steps skipped for an fp16 overflow (RunContext) */
    ResumeState resumed;   /* --resume's state, held from set-up until the strategy has started */
    char settings[2048];   /* with --save-every or --resume: what a resume state must match */
    char deadline_message[320]; /* what the step's deadline says if it passes */
} Trainer;

/* Builds everything a run needs from cfg on the given device, and starts the strategy.
 * options is what the strategy sees as run->options. Returns 0, or -1 with a one-line
 * reason (bad file, a batch that does not split over the ranks, out of memory, an output
 * that would overwrite an input). */
int trainer_setup(Trainer *tr, const TrainConfig *cfg, const Kernels *kernels, Comm *comm,
                  const Strategy *strategy, const void *options, char *err, size_t err_len);
void trainer_teardown(Trainer *tr);

/* One optimizer step on the next training batch (step is 0-based). */
StepResult trainer_step(Trainer *tr, int step);

/* Global mean loss over cfg.val_batches validation batches, always the same ones. */
float trainer_validate(Trainer *tr);

/* The whole run: cfg.steps steps with step lines, CSV rows and validation, then the replica
 * check, the summary, the checkpoint and the sample. Returns 0, or -1 with a reason
 * (including ranks that ended with different parameters). */
int trainer_run(Trainer *tr, char *err, size_t err_len);

#endif
