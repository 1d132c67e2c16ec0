#include "trainer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checkpoint.h"
#include "device.h"
#include "events.h"
#include "paths.h"
#include "replicas.h"
#include "run_logs.h"
#include "sample.h"
#include "timer.h"
#include "trace.h"
#include "watchdog.h"

/* --resume: the state, checked against this run; its parameters into the model (the rest
 * waits for the strategy: restore_resumed). */
static int load_resumed(Trainer *tr, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    ResumeState *state = &tr->resumed;
    if (resume_load(cfg->resume_path, tr->settings, tr->model.num_params, state, err, err_len) != 0)
        return -1;
    size_t batch_tokens = (size_t)cfg->batch_size * cfg->seq_len;
    if (state->steps_done > cfg->steps || state->data_position > tr->train.num_tokens - batch_tokens - 1) {
        snprintf(err, err_len, "--resume %s: its step (%d) or data position (%llu) is past this run's end",
                 cfg->resume_path, state->steps_done, (unsigned long long)state->data_position);
        return -1;
    }
    tr->model.kernels->to_device(tr->model.params, state->params, tr->model.num_params * sizeof(float));
    return 0;
}

static int load_or_init(Trainer *tr, char *err, size_t err_len)
{
    if (tr->cfg.resume_path != NULL)
        return load_resumed(tr, err, err_len);
    if (tr->cfg.init_from == NULL) {
        /* each rank its own model: making them equal is the strategy's job */
        gpt_init_weights(&tr->model, tr->cfg.seed + (uint64_t)tr->rank);
        return 0;
    }
    size_t bytes = tr->model.num_params * sizeof(float);
    float *host = mem_alloc(bytes, MEM_OTHER);
    if (host == NULL) {
        snprintf(err, err_len, "out of memory reading %s", tr->cfg.init_from);
        return -1;
    }
    int status = checkpoint_load(tr->cfg.init_from, &tr->model.cfg, host, err, err_len);
    if (status == 0)
        tr->model.kernels->to_device(tr->model.params, host, bytes);
    mem_free(host);
    return status;
}

/* The sample's tokenizer: --tokenizer's, or NULL (tokens are bytes). */
static const Tokenizer *sample_tokenizer(const Trainer *tr)
{
    return tr->tokenizer.vocab_size > 0 ? &tr->tokenizer : NULL;
}

static int open_outputs(Trainer *tr, char *err, size_t err_len)
{
    if (tr->rank != 0)
        return 0;
    /* the sample comes at the end: a tokenizer or prompt it cannot use is found now */
    char reason[384];
    if (tr->cfg.tokenizer_path != NULL &&
        tokenizer_read(&tr->tokenizer, tr->cfg.tokenizer_path, reason, sizeof reason) != 0) {
        snprintf(err, err_len, "--tokenizer %s", reason);
        return -1;
    }
    if ((tr->cfg.gen_tokens > 0 || tr->cfg.tokenizer_path != NULL) &&
        sample_check_prompt(&tr->cfg.model, sample_tokenizer(tr), tr->cfg.prompt, err, err_len) != 0)
        return -1;
    if (tr->cfg.trace_dir != NULL && trace_check_dir(tr->cfg.trace_dir, tr->world, err, err_len) != 0)
        return -1;
    if (check_folder_writable(tr->cfg.summary_path, "--summary", err, err_len) != 0 ||
        check_folder_writable(tr->cfg.comm_log_path, "--comm-log", err, err_len) != 0 ||
        check_folder_writable(tr->cfg.save_path, "--save", err, err_len) != 0 ||
        check_folder_writable(tr->cfg.csv_path, "--csv", err, err_len) != 0)
        return -1;
    if (tr->cfg.csv_path == NULL)
        return 0;
    if (output_open(&tr->csv, tr->cfg.csv_path, err, err_len) == NULL)
        return -1;
    fprintf(tr->csv.fp, "step,loss,grad_norm,lr,ms,tokens_per_s,val_loss,comm_ms,comm_bytes\n");
    return 0;
}

static int split_batch(Trainer *tr, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    int parts = tr->world * cfg->accum_steps;
    if (cfg->accum_steps < 1 || cfg->batch_size % parts != 0) {
        snprintf(err, err_len, "--batch %d does not split into %d rank(s) x %d micro-batch(es)%s",
                 cfg->batch_size, tr->world, cfg->accum_steps, cfg->accum_steps > 1 ? " (--accum)" : "");
        return -1;
    }
    tr->micro_batch = cfg->batch_size / parts;
    return 0;
}

/* The model calls the strategy's own callbacks (NULL: the model's own buffers, no hook). */
static void install_hooks(Trainer *tr)
{
    const Strategy *s = &tr->strategy;
    tr->model.hooks = (GPTHooks){
        .run = &tr->run,
        .grads_ready = s->grads_ready,
        .acquire_params = s->acquire_params,
        .release_params = s->release_params,
        .unit_grads = s->unit_grads,
    };
}

static ModelStorage model_storage(const Strategy *strategy, const TrainConfig *cfg)
{
    ModelStorage storage = strategy->model_storage != NULL ? strategy->model_storage() : (ModelStorage){0};
    storage.matmuls_16bit = cfg->matmuls_16bit;
    storage.matmul_format = cfg->matmul_format;
    return storage;
}

/* Allocation only, so that a rank that fails (two ranks sharing a GPU can run out of memory
 * one at a time) stops every rank before the strategy's first collective. */
static int setup_strategy(Trainer *tr, const Strategy *strategy, const void *options, char *err, size_t err_len)
{
    tr->strategy = *strategy;
    tr->run = (RunContext){.comm = tr->comm, .model = &tr->model, .options = options,
                           .accum_steps = tr->cfg.accum_steps};
    if (tr->cfg.accum_steps > 1 && strategy->forward_backward == NULL) {
        snprintf(err, err_len, "%s runs one micro-batch per step: it cannot accumulate %d", strategy->name,
                 tr->cfg.accum_steps);
        return -1;
    }
    /* what is allocated from here on is the strategy's, not the model's (the grader's
     * memory rules tell the model's backward scratch from a student's by it) */
    events_mark("strategy_setup", -1, NULL, 0);
    return strategy->setup != NULL ? strategy->setup(&tr->run, err, err_len) : 0;
}

static void start_strategy(Trainer *tr)
{
    if (tr->strategy.start != NULL)
        tr->strategy.start(&tr->run);
    if (model_storage(&tr->strategy, &tr->cfg).no_parameters)
        gpt_drop_params(&tr->model); /* the strategy has cut its shard from them */
    install_hooks(tr);
}

/* With --save-every or --resume: the settings a resume state records and must match, and
 * whether the strategy can save its optimizer state at all. */
static int prepare_resume(Trainer *tr, const Strategy *strategy, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    if (cfg->save_every == 0 && cfg->resume_path == NULL)
        return 0;
    if (strategy->optimizer_step != NULL && (strategy->gather_optimizer == NULL || strategy->load_optimizer == NULL)) {
        snprintf(err, err_len, "%s keeps an optimizer state it cannot save: no --save-every or --resume here",
                 strategy->name);
        return -1;
    }
    uint64_t train_hash = hash_bytes(tr->train.tokens, tr->train.num_tokens * sizeof *tr->train.tokens);
    resume_describe(cfg, train_hash, tr->settings, sizeof tr->settings);
    return 0;
}

static int open_data(Trainer *tr, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    int B = cfg->batch_size, T = cfg->seq_len, V = cfg->model.vocab_size;
    if (dataloader_open(&tr->train, cfg->train_path, B, T, V, tr->rank, tr->world, err, err_len) != 0)
        return -1;
    if (cfg->val_every > 0) {
        if (dataloader_open(&tr->val, cfg->val_path, B, T, V, tr->rank, tr->world, err, err_len) != 0)
            return -1;
        tr->has_val = 1;
    }
    return 0;
}

/* The rest of --resume's state, once the strategy holds its optimizer state: AdamW's
 * moments and step count, the data position and the step to go on from. */
static void restore_resumed(Trainer *tr)
{
    ResumeState *state = &tr->resumed;
    size_t bytes = tr->model.num_params * sizeof(float);
    if (tr->strategy.load_optimizer != NULL) {
        tr->strategy.load_optimizer(&tr->run, state->m, state->v, state->adam_steps);
    } else {
        tr->model.kernels->to_device(tr->opt.m, state->m, bytes);
        tr->model.kernels->to_device(tr->opt.v, state->v, bytes);
        tr->opt.step = state->adam_steps;
    }
    tr->train.batch_start = state->data_position;
    tr->model.loss_scale = state->loss_scale; /* over what the strategy's start set */
    tr->model.good_steps = state->good_steps;
    tr->first_step = state->steps_done;
    if (tr->rank == 0 && !tr->cfg.quiet)
        printf("resumed from %s after step %d\n", tr->cfg.resume_path, state->steps_done);
    resume_free(state);
}

int trainer_setup(Trainer *tr, const TrainConfig *cfg, const Kernels *kernels, Comm *comm,
                  const Strategy *strategy, const void *options, char *err, size_t err_len)
{
    memset(tr, 0, sizeof *tr);
    tr->cfg = *cfg;
    tr->comm = comm;
    comm_set_wait_timeout(comm, cfg->wait_timeout); /* from here on, set-up included */
    tr->rank = comm_rank(comm);
    tr->world = comm_size(comm);
    /* the record of events, and a trace's memory track, start here */
    run_logs_start(cfg->comm_log_path != NULL || cfg->trace_dir != NULL, cfg->trace_dir != NULL);
    mem_set_limit((size_t)(cfg->mem_limit_mb * 1e6));
    int failed = train_config_refuse_overwrite(cfg, err, err_len) != 0 || split_batch(tr, err, err_len) != 0 ||
                 open_data(tr, err, err_len) != 0 || prepare_resume(tr, strategy, err, err_len) != 0 ||
                 gpt_create_with(&tr->model, &cfg->model, kernels, model_storage(strategy, cfg), err, err_len) != 0 ||
                 load_or_init(tr, err, err_len) != 0 ||
                 (strategy->optimizer_step == NULL &&
                  adamw_create(&tr->opt, tr->model.num_params, kernels, err, err_len) != 0) ||
                 gpt_set_batch(&tr->model, tr->micro_batch, cfg->seq_len, err, err_len) != 0 ||
                 setup_strategy(tr, strategy, options, err, err_len) != 0 || open_outputs(tr, err, err_len) != 0;
    if (!comm_all_ok(comm, failed, "set-up", err, err_len))
        return -1;
    start_strategy(tr);
    if (cfg->resume_path != NULL)
        restore_resumed(tr);
    if (cfg->trace_dir != NULL && /* a GPU's trace is timed on the GPU */
        trace_start(cfg->trace_dir, tr->rank, tr->world, comm_clock_offset(comm), kernels->trace_clock, err,
                    err_len) != 0)
        return -1;
    return 0;
}

void trainer_teardown(Trainer *tr)
{
    resume_free(&tr->resumed);
    if (tr->strategy.stop != NULL)
        tr->strategy.stop(&tr->run);
    char err[512];
    if (output_finish(&tr->csv, err, sizeof err) != 0) /* a run that failed: the steps it took */
        fprintf(stderr, "--csv: %s\n", err);
    tokenizer_free(&tr->tokenizer);
    adamw_destroy(&tr->opt);
    gpt_destroy(&tr->model);
    dataloader_close(&tr->train);
    if (tr->has_val)
        dataloader_close(&tr->val);
    mem_set_listener(NULL);
    events_forget(); /* what no file was written from */
    memset(tr, 0, sizeof *tr);
}

/* Forward and backward over this rank's rows of the batch in dl: the strategy's own passes
 * (gradient accumulation runs several), or one over them all. Returns the mean loss. */
static float forward_backward(Trainer *tr, const DataLoader *dl)
{
    if (tr->strategy.forward_backward != NULL)
        return tr->strategy.forward_backward(&tr->run, dl->inputs, dl->targets);
    float loss = gpt_forward(&tr->model, dl->inputs, dl->targets);
    gpt_backward(&tr->model);
    return loss;
}

/* The mean over ranks of a per-rank mean (every rank has as many rows). */
static float global_mean(Trainer *tr, float local)
{
    double total = local;
    comm_check(tr->comm, comm_sum_double(tr->comm, &total));
    return (float)(total / tr->world);
}

/* Timings: a step is as slow as its slowest rank. Memory: the largest rank is the limit. */
static double max_over_ranks(Trainer *tr, double value)
{
    comm_check(tr->comm, comm_max_double(tr->comm, &value));
    return value;
}

StepResult trainer_step(Trainer *tr, int step)
{
    const TrainConfig *cfg = &tr->cfg;
    GPT *model = &tr->model;
    StepResult result;
    CommStats before = comm_stats(tr->comm);
    TraceMark step_started = events_step(step + 1);
    double start = now_seconds();
    dataloader_next(&tr->train);
    events_span(TRACK_COMPUTE, "data", -1, step_started, events_now());
    gpt_zero_grad(model);
    float local_loss = forward_backward(tr, &tr->train);
    if (tr->strategy.before_step != NULL)
        tr->strategy.before_step(&tr->run);
    result.lr = lr_schedule(cfg->lr, step, cfg->steps, cfg->warmup_steps, cfg->min_lr_frac);
    AdamWHyper hyper = train_config_hyper(cfg, result.lr);
    float max_norm = cfg->grad_clip;
    if (cfg->skip_nonfinite && max_over_ranks(tr, isfinite(local_loss) ? 0.0 : 1.0) > 0)
        max_norm = NAN; /* clip_scale is then NaN: every update of this step is skipped (optimizer.h) */
    TraceMark optimizer_started = events_mark_begin("optimizer_start", -1, NULL, 0);
    result.loss_scale = model->loss_scale;
    tr->run.skipped_step = 0;
    if (tr->strategy.optimizer_step != NULL) {
        result.grad_norm = tr->strategy.optimizer_step(&tr->run, hyper, max_norm);
    } else {
        result.grad_norm = grad_norm(model->kernels, model->grads, model->num_params);
        adamw_step(&tr->opt, model->params, model->grads, hyper, clip_scale(result.grad_norm, max_norm));
    }
    TraceMark optimizer_ended = events_now();
    model->kernels->synchronize(); /* a GPU queues work: the step ends when the device is done */
    double ended = now_seconds();
    result.overflowed = tr->run.skipped_step;
    if (result.overflowed)
        events_mark("overflow", -1, NULL, 0);
    events_mark("step_end", -1, NULL, 0);
    events_span(TRACK_COMPUTE, "optimizer step", -1, optimizer_started, optimizer_ended);
    events_span(TRACK_COMPUTE, "step#", step + 1, step_started, optimizer_ended);
    events_settle(); /* the device is past every marker of the step */
    double seconds = ended - start;
    CommStats after = comm_stats(tr->comm);
    /* bookkeeping, outside the timed step: what a single device would report */
    result.local_loss = local_loss;
    result.loss = global_mean(tr, local_loss);
    result.seconds = max_over_ranks(tr, seconds);
    double comm_seconds = after.seconds - before.seconds;
    result.comm_seconds = max_over_ranks(tr, comm_seconds);
    result.exposed_seconds = result.seconds - max_over_ranks(tr, seconds - comm_seconds);
    result.comm_bytes = after.bytes - before.bytes;
    return result;
}

float trainer_validate(Trainer *tr)
{
    size_t rows = (size_t)tr->micro_batch * tr->cfg.seq_len;
    double total = 0.0;
    events_mark("validate_start", -1, NULL, 0);
    dataloader_reset(&tr->val);
    for (int i = 0; i < tr->cfg.val_batches; i++) {
        dataloader_next(&tr->val);
        for (int micro = 0; micro < tr->cfg.accum_steps; micro++)
            total += gpt_forward(&tr->model, tr->val.inputs + micro * rows, tr->val.targets + micro * rows);
    }
    events_mark("validate_end", -1, NULL, 0);
    return global_mean(tr, (float)(total / ((double)tr->cfg.val_batches * tr->cfg.accum_steps)));
}

static int is_val_step(const TrainConfig *cfg, int step)
{
    return cfg->val_every > 0 && ((step + 1) % cfg->val_every == 0 || step + 1 == cfg->steps);
}

/* On a terminal, long runs that print every log_every steps show where they are between. */
static void show_progress(const Trainer *tr, int step, double elapsed)
{
    if (tr->rank != 0 || tr->cfg.log_every == 1 || tr->cfg.quiet || !isatty(STDERR_FILENO))
        return;
    double left = elapsed / (step + 1 - tr->first_step) * (tr->cfg.steps - step - 1);
    fprintf(stderr, "\r  step %d/%d, about %.0f s left ", step + 1, tr->cfg.steps, left);
}

static void clear_progress(const Trainer *tr)
{
    if (tr->rank == 0 && tr->cfg.log_every > 1 && isatty(STDERR_FILENO))
        fprintf(stderr, "\r%40s\r", "");
}

/* "42 s", "3 min 05 s", "2 h 07 min". */
static void format_duration(double seconds, char *out, size_t size)
{
    long s = lround(seconds);
    if (s < 60)
        snprintf(out, size, "%ld s", s);
    else if (s < 3600)
        snprintf(out, size, "%ld min %02ld s", s / 60, s % 60);
    else
        snprintf(out, size, "%ld h %02ld min", s / 3600, s % 3600 / 60);
}

/* Every line but the last says how long the rest of the run will take at the pace so far
 * (steps and validation), wherever the output goes: a log file, or mpiexec's pipes. */
static void print_step(Trainer *tr, int step, const StepResult *r, double tokens_per_s, float val_loss,
                       double elapsed)
{
    const TrainConfig *cfg = &tr->cfg;
    clear_progress(tr);
    printf("step %5d/%d | loss %.6f | grad norm %.6f | lr %.3e | %7.2f ms | comm %6.2f ms | %8.0f tok/s",
           step + 1, cfg->steps, r->loss, r->grad_norm, r->lr, 1e3 * r->seconds, 1e3 * r->comm_seconds,
           tokens_per_s);
    if (!isnan(val_loss))
        printf(" | val loss %.6f", val_loss);
    if (step + 1 < cfg->steps) {
        char left[32];
        format_duration(elapsed / (step + 1 - tr->first_step) * (cfg->steps - step - 1), left, sizeof left);
        printf(" | %s left", left);
    }
    printf("\n");
    fflush(stdout);
}

static void report_step(Trainer *tr, int step, const StepResult *r, float val_loss, double elapsed)
{
    const TrainConfig *cfg = &tr->cfg;
    if (tr->rank != 0 || cfg->quiet)
        return;
    double tokens_per_s = (double)cfg->batch_size * cfg->seq_len / r->seconds;
    if ((step + 1) % cfg->log_every == 0 || step == 0 || step + 1 == cfg->steps || !isnan(val_loss))
        print_step(tr, step, r, tokens_per_s, val_loss, elapsed);
    FILE *csv = tr->csv.fp;
    if (csv == NULL)
        return;
    fprintf(csv, "%d,%.9g,%.9g,%.9g,%.4f,%.1f,", step + 1, r->loss, r->grad_norm, r->lr, 1e3 * r->seconds,
            tokens_per_s);
    if (!isnan(val_loss))
        fprintf(csv, "%.9g", val_loss);
    fprintf(csv, ",%.4f,%.0f\n", 1e3 * r->comm_seconds, r->comm_bytes);
    fflush(csv); /* a row a step in the temporary file: followable, and kept if the run is killed */
}

static void record_step(Trainer *tr, int step, const StepResult *r)
{
    RunSummary *s = &tr->summary;
    s->last_loss = r->loss;
    if (step - tr->first_step < s->warmup_steps) /* the first steps this run took warm the caches */
        return;
    running_add(&s->step_seconds, r->seconds);
    running_add(&s->comm_seconds, r->comm_seconds);
    running_add(&s->exposed_seconds, r->exposed_seconds);
    running_add(&s->comm_fraction, r->seconds > 0 ? r->comm_seconds / r->seconds : 0.0);
    running_add(&s->comm_bytes, r->comm_bytes);
}

/* Bytes the model made up may not be printable text: show those as \xNN. */
static void print_sample(const char *text)
{
    printf("sample: ");
    for (const unsigned char *c = (const unsigned char *)text; *c != '\0'; c++) {
        if (*c == '\n')
            continue;
        if (*c >= 32 && *c < 127)
            putchar(*c);
        else
            printf("\\x%02x", *c);
    }
    printf("\n");
}

/* A loss or gradient norm that is not a number poisons every step after it: stop at the
 * first, naming a rank whose own rows gave it (the loss is the same on every rank, so every
 * rank stops here together). With --skip-nonfinite the step changed nothing (trainer_step):
 * count it, say so, and go on. */
static int stop_if_not_finite(Trainer *tr, int step, const StepResult *r, char *err, size_t err_len)
{
    if (isfinite(r->loss) && isfinite(r->grad_norm))
        return 0;
    if (isfinite(r->loss) && r->overflowed) {
        if (tr->overflows++ == 0)
            tr->first_overflow = step + 1;
        if (tr->rank == 0 && !tr->cfg.quiet)
            printf("step %d: the fp16 gradients overflowed at loss scale %g: skipped, the loss scale is now %g\n",
                   step + 1, r->loss_scale, tr->model.loss_scale);
        return 0;
    }
    double culprit = isfinite(r->local_loss) ? -1.0 : tr->rank;
    comm_check(tr->comm, comm_max_double(tr->comm, &culprit));
    char what[128] = "";
    snprintf(what, sizeof what, "step %d: the %s is %g", step + 1, isfinite(r->loss) ? "gradient norm" : "loss",
             isfinite(r->loss) ? r->grad_norm : r->loss);
    if (culprit >= 0)
        snprintf(what + strlen(what), sizeof what - strlen(what), " (rank %d's own rows)", (int)culprit);
    if (!tr->cfg.skip_nonfinite) {
        snprintf(err, err_len, "%s: training stops at the first step that is not a number", what);
        return -1;
    }
    if (tr->skipped_steps++ == 0)
        tr->first_skipped = step + 1;
    if (tr->rank == 0 && !tr->cfg.quiet)
        printf("%s: skipped, the parameters and optimizer state are as they were (--skip-nonfinite)\n", what);
    return 0;
}

static void report_skipped(const Trainer *tr)
{
    if (tr->overflows > 0 && tr->rank == 0 && !tr->cfg.quiet)
        printf("skipped %d step(s) whose fp16 gradients overflowed, the first at step %d; the loss scale ended at "
               "%g\n", tr->overflows, tr->first_overflow, tr->model.loss_scale);
    if (tr->skipped_steps > 0 && tr->rank == 0 && !tr->cfg.quiet)
        printf("skipped %d step(s) whose loss or gradient norm was not a number (--skip-nonfinite), the first at "
               "step %d\n", tr->skipped_steps, tr->first_skipped);
}

/* --step-timeout from now, saying deadline_message (written by the caller) if it passes. */
static void arm_step_deadline(Trainer *tr)
{
    watchdog_arm(DEADLINE_STEP, tr->cfg.step_timeout, watchdog_report_text, tr->deadline_message);
}

/* A step that never ends (a loop that never stops, or a collective some rank never joined,
 * if --wait-timeout is off or longer): say so instead of hanging. */
static void arm_watchdog(Trainer *tr, int step)
{
    snprintf(tr->deadline_message, sizeof tr->deadline_message,
             "rank %d: step %d has not finished after --step-timeout %g s: is a collective waiting for a rank "
             "that never joins it (collectives started in different orders on different ranks)?",
             tr->rank, step + 1, tr->cfg.step_timeout);
    arm_step_deadline(tr);
}

/* Around work one rank does while the others wait for it at their next collective (rank 0
 * writing the outputs, saving, sampling): their --wait-timeout waits on while it runs
 * (comm_begin_alone), so --step-timeout bounds it instead. */
static void begin_alone(Trainer *tr, const char *what)
{
    snprintf(tr->deadline_message, sizeof tr->deadline_message,
             "rank %d: %s has not ended after --step-timeout %g s", tr->rank, what, tr->cfg.step_timeout);
    arm_step_deadline(tr);
    comm_begin_alone(tr->comm, what);
}

static void end_alone(Trainer *tr)
{
    comm_end_alone(tr->comm);
    watchdog_disarm(DEADLINE_STEP);
}

static void gather_params_into(Trainer *tr, float *host)
{
    if (tr->strategy.gather_params != NULL)
        tr->strategy.gather_params(&tr->run, host);
    else
        tr->model.kernels->to_host(host, tr->model.params, tr->model.num_params * sizeof(float));
}

/* Every rank: the whole parameter vector on the host (a collective when the strategy
 * shards the parameters). NULL when out of memory. */
static float *gather_full_params(Trainer *tr)
{
    float *host = mem_alloc(tr->model.num_params * sizeof(float), MEM_OTHER);
    if (host != NULL)
        gather_params_into(tr, host);
    return host;
}

/* Every rank: the parameters and AdamW's state, whole, into state (collectives when the
 * strategy shards them). */
static void collect_state(Trainer *tr, ResumeState *state)
{
    gather_params_into(tr, state->params);
    if (tr->strategy.gather_optimizer != NULL) {
        state->adam_steps = tr->strategy.gather_optimizer(&tr->run, state->m, state->v);
    } else {
        size_t bytes = tr->model.num_params * sizeof(float);
        tr->model.kernels->to_host(state->m, tr->opt.m, bytes);
        tr->model.kernels->to_host(state->v, tr->opt.v, bytes);
        state->adam_steps = tr->opt.step;
    }
    state->data_position = tr->train.batch_start;
    state->loss_scale = tr->model.loss_scale;
    state->good_steps = tr->model.good_steps;
}

/* --save-every: the resume state (PATH.state) and the model (PATH), written by rank 0 after
 * every rank has gathered; every rank learns whether it worked. */
static int save_resumable(Trainer *tr, int steps_done, char *err, size_t err_len)
{
    char state_path[4096];
    if (train_config_state_path(&tr->cfg, state_path, sizeof state_path) != 1) { /* setup refuses both */
        snprintf(err, err_len, "--save-every: no --save path, or one too long, to name the resume state");
        return -1;
    }
    ResumeState state = {0};
    int failed = resume_alloc(&state, tr->model.num_params) != 0;
    if (failed)
        snprintf(err, err_len, "out of memory for the resume state");
    if (comm_all_ok(tr->comm, failed, "saving the resume state", err, err_len)) {
        begin_alone(tr, "saving the resume state"); /* the gathers are collectives; rank 0 writes */
        collect_state(tr, &state);
        state.steps_done = steps_done;
        failed = tr->rank == 0 && (resume_save(state_path, tr->settings, &state, err, err_len) != 0 ||
                                   checkpoint_save(tr->cfg.save_path, &tr->model.cfg, state.params, err, err_len) != 0);
        end_alone(tr);
        failed = !comm_all_ok(tr->comm, failed, "saving the resume state", err, err_len);
    }
    resume_free(&state);
    if (!failed && tr->rank == 0 && !tr->cfg.quiet)
        printf("saved %s and %s after step %d\n", state_path, tr->cfg.save_path, steps_done);
    return failed ? -1 : 0;
}

static int save_checkpoint(Trainer *tr, const float *host, char *err, size_t err_len)
{
    const char *path = tr->cfg.save_path;
    int status = checkpoint_save(path, &tr->model.cfg, host, err, err_len);
    if (status == 0)
        printf("saved checkpoint %s\n", path);
    return status;
}

/* The sample runs on rank 0 alone, so on the whole parameter vector with no strategy in the
 * way (a sharded model would wait in collectives for ranks that are not sampling). */
static int sample(Trainer *tr, const float *host, char *err, size_t err_len)
{
    GPT *model = &tr->model;
    const TrainConfig *cfg = &tr->cfg;
    size_t bytes = model->num_params * sizeof(float);
    float *own_params = model->params;
    GPTHooks own_hooks = model->hooks;
    float *full = model->kernels->alloc(bytes, MEM_OTHER);
    if (full == NULL) {
        snprintf(err, err_len, "out of memory for the sample's parameters");
        return -1;
    }
    model->kernels->to_device(full, host, bytes);
    model->params = full;
    model->hooks = (GPTHooks){0};
    char text[4096];
    int status = generate_text(model, sample_tokenizer(tr), cfg->prompt, cfg->gen_tokens, cfg->seed, text,
                               sizeof text, err, err_len);
    model->params = own_params;
    model->hooks = own_hooks;
    model->kernels->free(full);
    if (status == 0)
        print_sample(text);
    return status;
}

/* Rank 0 writes and samples for everyone: after the replica check, its model is every rank's. */
static int finish_run(Trainer *tr, const float *host, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    if (tr->rank != 0)
        return 0;
    if (cfg->save_path != NULL && save_checkpoint(tr, host, err, err_len) != 0)
        return -1;
    return cfg->gen_tokens > 0 ? sample(tr, host, err, err_len) : 0;
}

static int check_replicas(Trainer *tr, const float *host, char *err, size_t err_len)
{
    size_t bytes = tr->model.num_params * sizeof(float);
    uint64_t *hashes = calloc((size_t)tr->world, sizeof *hashes);
    int identical = hashes != NULL ? replicas_identical(tr->comm, hash_bytes(host, bytes), hashes) : -1;
    if (identical == 1 && tr->rank == 0 && !tr->cfg.quiet)
        printf("parameters identical on all %d rank(s): hash %016llx\n", tr->world, (unsigned long long)hashes[0]);
    if (identical == 0) {
        int other = 1;
        while (hashes[other] == hashes[0])
            other++;
        snprintf(err, err_len, "ranks ended with different parameters (rank 0 hash %016llx, rank %d %016llx)",
                 (unsigned long long)hashes[0], other, (unsigned long long)hashes[other]);
    } else if (identical < 0) {
        snprintf(err, err_len, "out of memory or a communication error checking the replicas");
    }
    free(hashes);
    return identical == 1 ? 0 : -1;
}

static ProductFormat products_format(const TrainConfig *cfg)
{
    if (cfg->matmuls_16bit)
        return cfg->matmul_format == FORMAT_FP16 ? PRODUCTS_FP16 : PRODUCTS_BF16;
    return cfg->tf32 ? PRODUCTS_TF32 : PRODUCTS_FP32;
}

/* MFU's yardstick on GPUs: the sum of their peaks, each rank's GPU counted once. Ranks that
 * share a GPU get none (its peak would count once a rank); so does a run where a rank's GPU
 * is not in the table of data sheets. The CPU's peak is measured, by lesson 00's profile. */
static void summarise_peak(Trainer *tr)
{
    RunSummary *s = &tr->summary;
    const Kernels *kernels = tr->model.kernels;
    s->gpus = device_on_gpu(kernels) ? tr->world : 0;
    s->mfu_unknown = "the ranks share a GPU";
    if (!device_gpu_per_rank(kernels))
        return;
    ProductFormat format = products_format(&tr->cfg);
    double peak = device_peak_flops(kernels, format);
    int unknown = max_over_ranks(tr, peak > 0 ? 0.0 : 1.0) > 0;
    comm_check(tr->comm, comm_sum_double(tr->comm, &peak));
    s->peak_flops = unknown ? 0.0 : peak;
    s->peak_format = product_format_name(format);
    s->flops_per_token = gpt_flops_per_token(&tr->cfg.model, tr->cfg.seq_len);
    s->mfu_unknown = "no data-sheet peak known for this GPU";
}

static int summarise(Trainer *tr, char *err, size_t err_len)
{
    RunSummary *s = &tr->summary;
    summarise_peak(tr);
    s->peak_tracked_mb = max_over_ranks(tr, mem_peak_total() / 1e6);
    s->peak_rss_mb = max_over_ranks(tr, mem_peak_rss() / 1e6);
    s->params_mb = max_over_ranks(tr, mem_in_use(MEM_PARAMS) / 1e6);
    s->grads_mb = max_over_ranks(tr, mem_in_use(MEM_GRADS) / 1e6);
    s->adam_mb = max_over_ranks(tr, (mem_in_use(MEM_ADAM_M) + mem_in_use(MEM_ADAM_V)) / 1e6);
    s->master_mb = max_over_ranks(tr, mem_in_use(MEM_MASTER) / 1e6);
    s->working_mb = max_over_ranks(tr, mem_in_use(MEM_COMM) / 1e6);
    s->activations_mb = max_over_ranks(tr, (mem_in_use(MEM_ACTIVATIONS) + mem_in_use(MEM_SCRATCH)) / 1e6);
    if (tr->rank != 0)
        return 0;
    if (!tr->cfg.quiet)
        summary_print(s, stdout);
    return tr->cfg.summary_path != NULL ? summary_write_csv(s, tr->cfg.summary_path, err, err_len) : 0;
}

static void start_summary(Trainer *tr)
{
    const TrainConfig *cfg = &tr->cfg;
    tr->summary = (RunSummary){.strategy = tr->strategy.name, .ranks = tr->world, .threads = cfg->threads,
                               .steps = cfg->steps, .warmup_steps = summary_warmup_steps(cfg->steps),
                               .tokens_per_step = (double)cfg->batch_size * cfg->seq_len,
                               .param_bytes = (double)tr->model.num_params * sizeof(float),
                               .comm_queued_on_gpu = strcmp(comm_backend_name(tr->comm), "nccl") == 0};
    if (tr->model.kernels == &cpu_kernels)
        comm_oversubscribed(tr->comm, cfg->threads, tr->summary.oversubscribed, sizeof tr->summary.oversubscribed);
}

static int finish_trace(Trainer *tr, char *err, size_t err_len)
{
    if (tr->cfg.trace_dir == NULL)
        return 0;
    return run_logs_write_trace(tr->comm, tr->cfg.trace_dir, tr->cfg.quiet, err, err_len);
}

/* After the last step: the outputs, the replica check, the checkpoint and the sample. Every
 * rank learns whether each fallible part worked on all, so all go on through the same
 * collectives or all stop. */
static int finish_training(Trainer *tr, char *err, size_t err_len)
{
    if (!comm_all_ok(tr->comm, output_finish(&tr->csv, err, err_len) != 0, "writing --csv", err, err_len) ||
        !comm_all_ok(tr->comm, finish_trace(tr, err, err_len) != 0, "writing --trace", err, err_len) ||
        !comm_all_ok(tr->comm, summarise(tr, err, err_len) != 0, "writing --summary", err, err_len))
        return -1;
    float *host = gather_full_params(tr);
    int status = -1;
    if (host == NULL)
        snprintf(err, err_len, "out of memory gathering the parameters");
    else
        status = check_replicas(tr, host, err, err_len);
    /* written whatever the replicas said: the log is how to find out why they differ */
    if (tr->cfg.comm_log_path != NULL && run_logs_write_comm_log(tr->comm, tr->cfg.comm_log_path, err, err_len) != 0)
        status = -1;
    if (status == 0)
        status = finish_run(tr, host, err, err_len);
    mem_free(host);
    return status;
}

/* A run that stops at a step that is not a number still writes --comm-log, as far as it got:
 * the rule a mistake breaks can name it from there, where the numbers only say NaN. Every
 * rank stops at the same step (the loss and the norm are the ranks' together), so all write. */
static int stop_at_a_nonfinite_step(Trainer *tr)
{
    char log_err[512];
    if (tr->cfg.comm_log_path != NULL &&
        run_logs_write_comm_log(tr->comm, tr->cfg.comm_log_path, log_err, sizeof log_err) != 0)
        fprintf(stderr, "%s\n", log_err);
    return -1;
}

int trainer_run(Trainer *tr, char *err, size_t err_len)
{
    start_summary(tr);
    double started = now_seconds();
    for (int step = tr->first_step; step < tr->cfg.steps; step++) {
        arm_watchdog(tr, step);
        StepResult r = trainer_step(tr, step);
        float val_loss = is_val_step(&tr->cfg, step) && tr->has_val ? trainer_validate(tr) : NAN;
        watchdog_disarm(DEADLINE_STEP);
        report_step(tr, step, &r, val_loss, now_seconds() - started);
        record_step(tr, step, &r);
        if (stop_if_not_finite(tr, step, &r, err, err_len) != 0)
            return stop_at_a_nonfinite_step(tr);
        if (tr->cfg.save_every > 0 && (step + 1) % tr->cfg.save_every == 0 &&
            save_resumable(tr, step + 1, err, err_len) != 0)
            return -1;
        show_progress(tr, step, now_seconds() - started);
    }
    clear_progress(tr);
    report_skipped(tr);
    events_mark("train_end", -1, NULL, 0);
    begin_alone(tr, "finishing the run (outputs, replica check, saving)");
    int status = finish_training(tr, err, err_len);
    end_alone(tr);
    return status;
}
