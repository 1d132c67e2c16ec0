/* Everything a training run is configured by, the named presets (the course's one set of
 * hyper-parameters lives here and nowhere else), and the flags that set it. */
#ifndef DTC_TRAIN_CONFIG_H
#define DTC_TRAIN_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "cli.h"
#include "gpt_config.h"
#include "kernels.h"

typedef struct {
    const char *preset;
    GPTConfig model;
    int batch_size;   /* global batch: rows per step over all ranks */
    int seq_len;      /* T */
    int steps;
    float lr, beta1, beta2, eps, weight_decay, grad_clip, min_lr_frac;
    int warmup_steps;
    uint64_t seed;
    const char *train_path, *val_path;
    int val_every, val_batches;
    int log_every;
    int accum_steps;  /* micro-batches per optimizer step (lesson 06's --accum); 1 elsewhere */
    const char *init_from, *save_path, *csv_path, *summary_path;
    int save_every;           /* --save-every: a resumable checkpoint every N steps (0 = none) */
    const char *resume_path;  /* --resume: go on from this resume state (resume.h) */
    const char *trace_dir; /* --trace: per-rank timelines for Perfetto go here */
    const char *comm_log_path; /* --comm-log: the communication log as CSV (comm_log.h) */
    int threads;
    const char *device;       /* --device: cpu or cuda */
    const char *comm_backend; /* --comm: auto, mpi or nccl */
    int tf32;                 /* --tf32: matrix products on TF32 tensor cores (GPU only) */
    int matmuls_16bit;        /* matmuls on 16-bit operands (lesson 10 sets it; ModelStorage) */
    Format16 matmul_format;   /* their format: bf16 or fp16 */
    char lesson_settings[256]; /* the lesson's own flags that shape the run's numbers, as "name
                                * value" lines (its configure hook writes them; "" for none):
                                * a resume state records them and must match them (resume.h) */
    float mem_limit_mb; /* 0 = none; the tracking allocator refuses past it */
    const char *prompt;
    const char *tokenizer_path; /* --tokenizer, or NULL: the sample's tokens are bytes */
    int gen_tokens;
    float step_timeout; /* seconds a step may take before the run is ended as hung; 0 = never */
    float wait_timeout; /* seconds one call may wait for the other ranks (comm.h); 0 = forever */
    int quiet;        /* no header, step lines or summary (sweeps print their own rows) */
    int dry_run;      /* print the configuration and stop */
    int skip_nonfinite; /* a step whose loss or gradient norm is not finite changes nothing, and training goes on */
} TrainConfig;

/* -1 with "FLAG PATH would overwrite an input file; ..." when an output the flags name (--save,
 * --csv, --summary, --comm-log, the resume state, --trace's files) is one of the run's inputs
 * (--train, --val, --init-from, --resume, --tokenizer), or with "... names a file that FLAG
 * writes too" when two outputs are one file. */
int train_config_refuse_overwrite(const TrainConfig *cfg, char *err, size_t err_len);

/* -1 with "MODE: FLAG is train's: ..." when a mode that does not train as train does (a
 * profile, a plan, a sweep) is given a flag naming what only train writes or reads back
 * (--save, --save-every, --resume, --summary, --comm-log, --trace; --csv unless writes_csv),
 * so that no one waits for a file that never comes. */
int train_config_refuse_train_outputs(const TrainConfig *cfg, const char *mode, int writes_csv, char *err,
                                      size_t err_len);

/* With --save PATH and --save-every, the resume state's path (PATH.state) into out: 1; 0
 * when the run writes none; -1 when it does not fit. */
int train_config_state_path(const TrainConfig *cfg, char *out, size_t out_len);

/* Fills cfg with the named preset ("course", "reference", "tiny", "gpt2"); -1 if unknown. */
int train_config_preset(TrainConfig *cfg, const char *name, char *err, size_t err_len);

/* The flag table for TrainConfig (use with cli_parse). */
extern const Flag train_flags[];

/* Applies --config then every flag, then checks the whole: one-line reason on error. */
int train_config_from_args(TrainConfig *cfg, int argc, char **argv, int first,
                           const FlagSet *extra_sets, int num_extra, char *err, size_t err_len);

AdamWHyper train_config_hyper(const TrainConfig *cfg, float lr);

/* One line per setting, "key value", so a run records its full configuration. */
void train_config_print(const TrainConfig *cfg, FILE *out, const char *prefix);

#endif
