#include "trainer.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "checkpoint.h"
#include "paths.h"
#include "sample.h"
#include "timer.h"

void blas_set_threads(int threads)
{
    openblas_set_num_threads(threads);
}

const char *blas_core_name(void)
{
    return openblas_get_corename();
}

static int refuse_overwrite(const TrainConfig *cfg, char *err, size_t err_len)
{
    const char *inputs[] = {cfg->train_path, cfg->val_path, cfg->init_from};
    const char *outputs[] = {cfg->save_path, cfg->csv_path};
    const char *output_flags[] = {"--save", "--csv"};
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 3; i++)
            if (same_file(outputs[o], inputs[i])) {
                snprintf(err, err_len, "%s %s would overwrite an input file; choose another path",
                         output_flags[o], outputs[o]);
                return -1;
            }
    return 0;
}

static int load_or_init(Trainer *tr, char *err, size_t err_len)
{
    if (tr->cfg.init_from == NULL) {
        gpt_init_weights(&tr->model, tr->cfg.seed);
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

static int open_outputs(Trainer *tr, char *err, size_t err_len)
{
    if (tr->cfg.csv_path == NULL)
        return 0;
    tr->csv = fopen(tr->cfg.csv_path, "w");
    if (tr->csv == NULL) {
        snprintf(err, err_len, "--csv %s: cannot open for writing", tr->cfg.csv_path);
        return -1;
    }
    fprintf(tr->csv, "step,loss,grad_norm,lr,ms,tokens_per_s,val_loss\n");
    return 0;
}

int trainer_setup(Trainer *tr, const TrainConfig *cfg, const Kernels *kernels, char *err, size_t err_len)
{
    memset(tr, 0, sizeof *tr);
    tr->cfg = *cfg;
    blas_set_threads(cfg->threads);
    mem_set_limit((size_t)(cfg->mem_limit_mb * 1e6));
    int B = cfg->batch_size, T = cfg->seq_len, V = cfg->model.vocab_size;
    if (refuse_overwrite(cfg, err, err_len) != 0 ||
        dataloader_open(&tr->train, cfg->train_path, B, T, V, 0, 1, err, err_len) != 0)
        return -1;
    if (cfg->val_every > 0) {
        if (dataloader_open(&tr->val, cfg->val_path, B, T, V, 0, 1, err, err_len) != 0)
            return -1;
        tr->has_val = 1;
    }
    if (gpt_create(&tr->model, &cfg->model, kernels, err, err_len) != 0 ||
        load_or_init(tr, err, err_len) != 0 ||
        adamw_create(&tr->opt, tr->model.num_params, kernels, err, err_len) != 0 ||
        gpt_set_batch(&tr->model, B, T, err, err_len) != 0)
        return -1;
    return open_outputs(tr, err, err_len);
}

void trainer_teardown(Trainer *tr)
{
    if (tr->csv != NULL)
        fclose(tr->csv);
    adamw_destroy(&tr->opt);
    gpt_destroy(&tr->model);
    dataloader_close(&tr->train);
    if (tr->has_val)
        dataloader_close(&tr->val);
    memset(tr, 0, sizeof *tr);
}

StepResult trainer_step(Trainer *tr, int step)
{
    const TrainConfig *cfg = &tr->cfg;
    GPT *model = &tr->model;
    StepResult result;
    double start = now_seconds();
    dataloader_next(&tr->train);
    gpt_zero_grad(model);
    result.loss = gpt_forward(model, tr->train.inputs, tr->train.targets);
    gpt_backward(model);
    result.grad_norm = grad_norm(model->kernels, model->grads, model->num_params);
    result.lr = lr_schedule(cfg->lr, step, cfg->steps, cfg->warmup_steps, cfg->min_lr_frac);
    float scale = clip_scale(result.grad_norm, cfg->grad_clip);
    adamw_step(&tr->opt, model->params, model->grads, train_config_hyper(cfg, result.lr), scale);
    result.seconds = now_seconds() - start;
    return result;
}

float trainer_validate(Trainer *tr)
{
    double total = 0.0;
    dataloader_reset(&tr->val);
    for (int i = 0; i < tr->cfg.val_batches; i++) {
        dataloader_next(&tr->val);
        total += gpt_forward(&tr->model, tr->val.inputs, tr->val.targets);
    }
    return (float)(total / tr->cfg.val_batches);
}

static int is_val_step(const TrainConfig *cfg, int step)
{
    return cfg->val_every > 0 && ((step + 1) % cfg->val_every == 0 || step + 1 == cfg->steps);
}

static void report_step(Trainer *tr, int step, const StepResult *r, float val_loss)
{
    const TrainConfig *cfg = &tr->cfg;
    double tokens_per_s = (double)cfg->batch_size * cfg->seq_len / r->seconds;
    int has_val = !isnan(val_loss);
    if ((step + 1) % cfg->log_every == 0 || step == 0 || step + 1 == cfg->steps || has_val) {
        printf("step %5d/%d | loss %.6f | grad norm %.6f | lr %.3e | %7.2f ms | %8.0f tok/s",
               step + 1, cfg->steps, r->loss, r->grad_norm, r->lr, 1e3 * r->seconds, tokens_per_s);
        if (has_val)
            printf(" | val loss %.6f", val_loss);
        printf("\n");
        fflush(stdout);
    }
    if (tr->csv == NULL)
        return;
    fprintf(tr->csv, "%d,%.9g,%.9g,%.9g,%.4f,%.1f,", step + 1, r->loss, r->grad_norm, r->lr,
            1e3 * r->seconds, tokens_per_s);
    if (has_val)
        fprintf(tr->csv, "%.9g", val_loss);
    fprintf(tr->csv, "\n");
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

static int finish_run(Trainer *tr, char *err, size_t err_len)
{
    const TrainConfig *cfg = &tr->cfg;
    if (cfg->save_path != NULL) {
        size_t bytes = tr->model.num_params * sizeof(float);
        float *host = mem_alloc(bytes, MEM_OTHER);
        if (host == NULL) {
            snprintf(err, err_len, "out of memory saving %s", cfg->save_path);
            return -1;
        }
        tr->model.kernels->to_host(host, tr->model.params, bytes);
        int status = checkpoint_save(cfg->save_path, &tr->model.cfg, host, err, err_len);
        mem_free(host);
        if (status != 0)
            return -1;
        printf("saved checkpoint %s\n", cfg->save_path);
    }
    if (cfg->gen_tokens > 0) {
        char text[4096];
        if (generate_text(&tr->model, cfg->prompt, cfg->gen_tokens, cfg->seed, text, sizeof text, err, err_len) != 0)
            return -1;
        print_sample(text);
    }
    return 0;
}

int trainer_run(Trainer *tr, char *err, size_t err_len)
{
    for (int step = 0; step < tr->cfg.steps; step++) {
        StepResult r = trainer_step(tr, step);
        float val_loss = is_val_step(&tr->cfg, step) && tr->has_val ? trainer_validate(tr) : NAN;
        report_step(tr, step, &r, val_loss);
    }
    if (tr->csv != NULL)
        fflush(tr->csv);
    return finish_run(tr, err, err_len);
}
