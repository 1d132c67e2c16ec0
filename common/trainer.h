/* The training loop every lesson runs: data, forward, backward, clipping, AdamW, logging,
 * validation, checkpoint and the end-of-run sample. */
#ifndef DTC_TRAINER_H
#define DTC_TRAINER_H

#include <stdio.h>

#include "dataloader.h"
#include "model.h"
#include "optimizer.h"
#include "train_config.h"

typedef struct {
    float loss, grad_norm, lr;
    double seconds;
} StepResult;

typedef struct {
    TrainConfig cfg;
    GPT model;
    AdamW opt;
    DataLoader train, val;
    int has_val;
    FILE *csv;
} Trainer;

/* Builds everything a run needs from cfg on the given device. Returns 0, or -1 with a
 * one-line reason (bad file, shape mismatch, out of memory, an output that would
 * overwrite an input). */
int trainer_setup(Trainer *tr, const TrainConfig *cfg, const Kernels *kernels, char *err, size_t err_len);
void trainer_teardown(Trainer *tr);

/* One optimizer step on the next training batch (step is 0-based). */
StepResult trainer_step(Trainer *tr, int step);

/* Mean loss over cfg.val_batches validation batches, always the same ones. */
float trainer_validate(Trainer *tr);

/* The whole run: cfg.steps steps with step lines, CSV rows, validation, then the
 * checkpoint and the sample. Returns 0, or -1 with a reason. */
int trainer_run(Trainer *tr, char *err, size_t err_len);

/* Sets OpenBLAS's thread count (one busy thread per core is fastest). */
void blas_set_threads(int threads);
const char *blas_core_name(void);

#endif
