#include "train_config.h"

#include "device_choice.h"
#include "paths.h"
#include "watchdog.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define FIELD(name) offsetof(TrainConfig, name)

const Flag train_flags[] = {
    {"config", FLAG_STRING, FIELD(preset), "preset: course, reference, tiny or gpt2 (applied first)", 0, 0, 0},
    {"vocab", FLAG_INT, FIELD(model.vocab_size), "V, vocabulary size", 2, 65536, 0},
    {"layers", FLAG_INT, FIELD(model.num_layers), "L, transformer blocks", 1, 1024, 0},
    {"heads", FLAG_INT, FIELD(model.num_heads), "H, attention heads", 1, 1024, 0},
    {"channels", FLAG_INT, FIELD(model.channels), "C, model width", 1, 65536, 0},
    {"max-seq", FLAG_INT, FIELD(model.max_seq_len), "maxT, longest sequence the model accepts", 1, 1 << 20, 0},
    {"batch", FLAG_INT, FIELD(batch_size), "B, global batch (sequences per step, all ranks)", 1, 1 << 20, 0},
    {"seq", FLAG_INT, FIELD(seq_len), "T, sequence length (<= maxT)", 1, 1 << 20, 0},
    {"steps", FLAG_INT, FIELD(steps), "optimizer steps", 0, 1e9, 0},
    {"lr", FLAG_FLOAT, FIELD(lr), "peak learning rate", 0, 10, 0},
    {"beta1", FLAG_FLOAT, FIELD(beta1), "AdamW beta1", 0, 0.999999, 0},
    {"beta2", FLAG_FLOAT, FIELD(beta2), "AdamW beta2", 0, 0.999999, 0},
    {"eps", FLAG_FLOAT, FIELD(eps), "AdamW epsilon", 0, 1, 0},
    {"weight-decay", FLAG_FLOAT, FIELD(weight_decay), "AdamW decoupled weight decay", 0, 10, 0},
    {"grad-clip", FLAG_FLOAT, FIELD(grad_clip), "clip the global gradient norm to this (0 = off)", 0, 1e9, 0},
    {"warmup", FLAG_INT, FIELD(warmup_steps), "linear warm-up steps, then cosine decay", 0, 1e9, 0},
    {"min-lr-frac", FLAG_FLOAT, FIELD(min_lr_frac), "learning rate at the last step, as a fraction of --lr", 0, 1, 0},
    {"seed", FLAG_U64, FIELD(seed), "seed for initialisation and sampling", 0, 9007199254740992.0, 0},
    {"train", FLAG_STRING, FIELD(train_path), "training token shard", 0, 0, 0},
    {"val", FLAG_STRING, FIELD(val_path), "validation token shard", 0, 0, 0},
    {"val-every", FLAG_INT, FIELD(val_every), "validate every N steps and at the end (0 = never)", 0, 1e9, 0},
    {"val-batches", FLAG_INT, FIELD(val_batches), "batches per validation", 1, 1e6, 0},
    {"log-every", FLAG_INT, FIELD(log_every), "print a step line every N steps", 1, 1e9, 0},
    {"init-from", FLAG_STRING, FIELD(init_from), "start from this llm.c-format checkpoint", 0, 0, 0},
    {"save", FLAG_STRING, FIELD(save_path), "write an llm.c-format checkpoint here at the end", 0, 0, 0},
    {"save-every", FLAG_INT, FIELD(save_every),
     "also every N steps, with everything a run needs to go on in SAVE.state (0 = never)", 0, 1e9, 0},
    {"resume", FLAG_STRING, FIELD(resume_path), "go on from this SAVE.state, as if the run had never stopped", 0, 0, 0},
    {"csv", FLAG_STRING, FIELD(csv_path), "write per-step figures to this CSV", 0, 0, 0},
    {"trace", FLAG_STRING, FIELD(trace_dir), "write per-rank Perfetto timelines, memory over time included (rank_R.json, merged.json), here", 0, 0, 0},
    {"summary", FLAG_STRING, FIELD(summary_path), "write the end-of-run summary to this CSV (one row)", 0, 0, 0},
    {"comm-log", FLAG_STRING, FIELD(comm_log_path),
     "write every rank's communicator calls, model marks and allocations to this CSV", 0, 0, 0},
    {"threads", FLAG_INT, FIELD(threads), "OpenBLAS threads", 1, 1024, 0},
    {"device", FLAG_STRING, FIELD(device), "where the model runs: cpu or cuda (a build with make CUDA=1)", 0, 0, 0},
    {"comm", FLAG_STRING, FIELD(comm_backend),
     "communicator: mpi, nccl, or auto (nccl on GPUs when each rank has its own, else mpi)", 0, 0, 0},
    {"tf32", FLAG_SWITCH, FIELD(tf32), "GPU matrix products on TF32 tensor cores (default: exact fp32)", 0, 1, 0},
    {"mem-limit", FLAG_FLOAT, FIELD(mem_limit_mb), "memory budget in MB for the tracking allocator (0 = none)", 0, 1e9, 0},
    {"step-timeout", FLAG_FLOAT, FIELD(step_timeout), "end the run if one step, or a save or the end's writing, takes longer (seconds; 0 = never)", 0, 1e9, 0},
    {"wait-timeout", FLAG_FLOAT, FIELD(wait_timeout),
     "end the run if a rank waits longer for the others in one call, saying what each was doing (seconds; 0 = never)",
     0, 1e9, 0},
    {"skip-nonfinite", FLAG_SWITCH, FIELD(skip_nonfinite),
     "a step whose loss or gradient norm is not a number changes nothing and is counted, instead of ending the run",
     0, 1, 0},
    {"dry-run", FLAG_SWITCH, FIELD(dry_run), "print the configuration (every setting) and stop", 0, 1, 0},
    {"prompt", FLAG_STRING, FIELD(prompt), "prompt for the sample generated at the end", 0, 0, 0},
    {"tokenizer", FLAG_STRING, FIELD(tokenizer_path),
     "llm.c tokenizer file the sample's tokens are decoded through (none: tokens are bytes)", 0, 0, 0},
    {"gen-tokens", FLAG_INT, FIELD(gen_tokens), "tokens to generate at the end (0 = none)", 0, 1 << 20, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* The course's one set of hyper-parameters; presets differ only in size and length. */
static void course_hyper(TrainConfig *cfg)
{
    cfg->lr = 3e-3f;
    cfg->beta1 = 0.9f;
    cfg->beta2 = 0.95f;
    cfg->eps = 1e-8f;
    cfg->weight_decay = 0.1f;
    cfg->grad_clip = 1.0f;
    cfg->min_lr_frac = 0.1f;
    cfg->seed = 1337;
    cfg->train_path = "data/generated/train.bin";
    cfg->val_path = "data/generated/val.bin";
    cfg->val_batches = 4;
    cfg->log_every = 1;
    cfg->threads = 1;
    cfg->device = "cpu";
    cfg->comm_backend = "auto";
    cfg->accum_steps = 1;
    cfg->step_timeout = 600;
    cfg->wait_timeout = 30;
    cfg->prompt = "She ";
}

static void set_shape(TrainConfig *cfg, int L, int H, int C, int T, int B)
{
    cfg->model = (GPTConfig){.max_seq_len = T, .vocab_size = 256, .num_layers = L,
                             .num_heads = H, .channels = C};
    cfg->seq_len = T;
    cfg->batch_size = B;
}

int train_config_state_path(const TrainConfig *cfg, char *out, size_t out_len)
{
    if (cfg->save_path == NULL || cfg->save_every == 0)
        return 0;
    return snprintf(out, out_len, "%s.state", cfg->save_path) < (int)out_len ? 1 : -1;
}

/* Whether input is one of the files --trace DIR writes: DIR/merged.json, DIR/rank_N.json. */
static int is_trace_output(const char *dir, const char *input)
{
    if (dir == NULL || input == NULL)
        return 0;
    char folder[4096];
    const char *name = path_folder(input, folder, sizeof folder);
    int rank, used = 0;
    if (strcmp(name, "merged.json") != 0 && !(sscanf(name, "rank_%d.json%n", &rank, &used) == 1 && name[used] == '\0'))
        return 0;
    return same_file(folder, dir);
}

int train_config_refuse_overwrite(const TrainConfig *cfg, char *err, size_t err_len)
{
    char state_path[4096];
    int has_state = train_config_state_path(cfg, state_path, sizeof state_path);
    if (has_state < 0) {
        snprintf(err, err_len, "--save: the path is too long to name a resume state beside it");
        return -1;
    }
    enum { INPUTS = 5, OUTPUTS = 5 };
    const char *inputs[INPUTS] = {cfg->train_path, cfg->val_path, cfg->init_from, cfg->resume_path,
                                  cfg->tokenizer_path};
    const char *outputs[OUTPUTS] = {cfg->save_path, cfg->csv_path, cfg->summary_path, cfg->comm_log_path,
                                    has_state ? state_path : NULL};
    const char *output_flags[OUTPUTS] = {"--save", "--csv", "--summary", "--comm-log", "--save-every's state"};
    for (int i = 0; i < INPUTS; i++)
        if (is_trace_output(cfg->trace_dir, inputs[i])) {
            snprintf(err, err_len, "--trace %s would overwrite the input file %s; choose another folder",
                     cfg->trace_dir, inputs[i]);
            return -1;
        }
    for (int o = 0; o < OUTPUTS; o++) {
        for (int i = 0; i < INPUTS; i++)
            if (same_file(outputs[o], inputs[i])) {
                snprintf(err, err_len, "%s %s would overwrite an input file; choose another path",
                         output_flags[o], outputs[o]);
                return -1;
            }
        /* two outputs on one file: one would be lost under the other */
        const char *writer = is_trace_output(cfg->trace_dir, outputs[o]) ? "--trace" : NULL;
        for (int other = 0; other < o && writer == NULL; other++)
            if (same_file(outputs[o], outputs[other]))
                writer = output_flags[other];
        if (writer != NULL) {
            snprintf(err, err_len, "%s %s names a file that %s writes too; choose another path", output_flags[o],
                     outputs[o], writer);
            return -1;
        }
    }
    return 0;
}

int train_config_refuse_train_outputs(const TrainConfig *cfg, const char *mode, int writes_csv, char *err,
                                      size_t err_len)
{
    const struct { int given; const char *flag; } unused[] = {
        {cfg->save_path != NULL, "--save"},         {cfg->save_every > 0, "--save-every"},
        {cfg->resume_path != NULL, "--resume"},     {cfg->summary_path != NULL, "--summary"},
        {cfg->comm_log_path != NULL, "--comm-log"}, {cfg->trace_dir != NULL, "--trace"},
        {cfg->csv_path != NULL && !writes_csv, "--csv"},
    };
    for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++)
        if (unused[i].given) {
            snprintf(err, err_len, "%s: %s is train's: this mode writes no such file", mode, unused[i].flag);
            return -1;
        }
    return 0;
}

int train_config_preset(TrainConfig *cfg, const char *name, char *err, size_t err_len)
{
    memset(cfg, 0, sizeof *cfg);
    course_hyper(cfg);
    if (strcmp(name, "course") == 0) {
        set_shape(cfg, 4, 4, 128, 128, 8);
        cfg->steps = 2000;
        cfg->warmup_steps = 100;
        cfg->val_every = 200;
        cfg->log_every = 10;
        cfg->gen_tokens = 120;
    } else if (strcmp(name, "reference") == 0) {
        /* what expected values and grading use: small enough to run in about a second, on
         * the synthetic reviews, whose 30 steps have no step where the order of a sum moves
         * the gradient norm past the grading tolerance (real text has: docs/grading.md) */
        set_shape(cfg, 2, 4, 64, 64, 8);
        cfg->train_path = "data/generated/reviews_train.bin";
        cfg->val_path = "data/generated/reviews_val.bin";
        cfg->steps = 30;
        cfg->warmup_steps = 5;
        cfg->val_every = 10;
        cfg->val_batches = 2;
    } else if (strcmp(name, "gpt2") == 0) {
        /* GPT-2 124M's shape, for GPU throughput (add --vocab 50257 for its real head) */
        set_shape(cfg, 12, 12, 768, 1024, 8);
        cfg->steps = 20;
        cfg->warmup_steps = 5;
        cfg->log_every = 1;
    } else if (strcmp(name, "tiny") == 0) {
        set_shape(cfg, 1, 2, 16, 16, 4);
        cfg->steps = 5;
        cfg->warmup_steps = 1;
    } else {
        snprintf(err, err_len, "--config: unknown preset '%s' (course, reference, tiny or gpt2)", name);
        return -1;
    }
    cfg->preset = name;
    return 0;
}

static int check_whole(TrainConfig *cfg, char *err, size_t err_len)
{
    cfg->model.padded_vocab_size = gpt_padded_vocab(cfg->model.vocab_size);
    if (gpt_config_check(&cfg->model, err, err_len) != 0)
        return -1;
    if (cfg->seq_len > cfg->model.max_seq_len) {
        snprintf(err, err_len, "--seq %d is longer than --max-seq %d", cfg->seq_len, cfg->model.max_seq_len);
        return -1;
    }
    if (watchdog_check_seconds("--step-timeout", cfg->step_timeout, err, err_len) != 0 ||
        watchdog_check_seconds("--wait-timeout", cfg->wait_timeout, err, err_len) != 0)
        return -1;
    if (cfg->save_every > 0 && cfg->save_path == NULL) {
        snprintf(err, err_len, "--save-every needs --save PATH (the model goes to PATH, the resume state to "
                 "PATH.state)");
        return -1;
    }
    if (cfg->resume_path != NULL && cfg->init_from != NULL) {
        snprintf(err, err_len, "--resume and --init-from both name where to start: give one");
        return -1;
    }
    return device_check_choice(cfg->device, cfg->comm_backend, cfg->tf32, err, err_len);
}

int train_config_from_args(TrainConfig *cfg, int argc, char **argv, int first,
                           const FlagSet *extra_sets, int num_extra, char *err, size_t err_len)
{
    const char *preset = cli_find(argc, argv, first, "config");
    if (train_config_preset(cfg, preset ? preset : "course", err, err_len) != 0)
        return -1;
    FlagSet sets[8] = {{"training", train_flags, cfg}};
    for (int i = 0; i < num_extra && i < 7; i++)
        sets[i + 1] = extra_sets[i];
    if (cli_parse(argc, argv, first, sets, num_extra + 1, err, err_len) != 0)
        return -1;
    /* the course's shards (data/...) are found wherever the program is started from */
    static char train_found[4200], val_found[4200];
    if (cfg->train_path != NULL && strncmp(cfg->train_path, "data/", 5) == 0)
        cfg->train_path = course_file(cfg->train_path, train_found, sizeof train_found);
    if (cfg->val_path != NULL && strncmp(cfg->val_path, "data/", 5) == 0)
        cfg->val_path = course_file(cfg->val_path, val_found, sizeof val_found);
    return check_whole(cfg, err, err_len);
}

AdamWHyper train_config_hyper(const TrainConfig *cfg, float lr)
{
    return (AdamWHyper){.lr = lr, .beta1 = cfg->beta1, .beta2 = cfg->beta2,
                        .eps = cfg->eps, .weight_decay = cfg->weight_decay};
}

void train_config_print(const TrainConfig *cfg, FILE *out, const char *prefix)
{
    char value[64];
    for (const Flag *f = train_flags; f->name != NULL; f++) {
        cli_format_value(f, cfg, value, sizeof value);
        fprintf(out, "%s%-13s %s\n", prefix, f->name, value);
    }
}
