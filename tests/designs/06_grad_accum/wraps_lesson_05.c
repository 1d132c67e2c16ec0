/* Lesson 06, another design: a state of its own that wraps lesson 05's (run->state is the
 * wrapper; lesson 05's hooks see their own state while they run), counting the backward
 * passes itself rather than asking the model. */
#include "grad_accum.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct {
    void *buckets;     /* lesson 05's state */
    int passes_begun;  /* backward passes begun this step */
} Accum;

/* Runs one of lesson 05's hooks with its own state in run->state. */
#define AS_LESSON_05(run, call)                                                                                      \
    do {                                                                                                             \
        Accum *accum_ = (run)->state;                                                                                \
        (run)->state = accum_->buckets;                                                                              \
        call;                                                                                                        \
        accum_->buckets = (run)->state;                                                                              \
        (run)->state = accum_;                                                                                       \
    } while (0)

static int wrap_setup(RunContext *run, char *err, size_t err_len)
{
    Accum *accum = calloc(1, sizeof *accum);
    if (accum == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    run->state = accum;
    int status = 0;
    AS_LESSON_05(run, status = bucketed_ddp.setup(run, err, err_len));
    return status;
}

static void wrap_start(RunContext *run)
{
    AS_LESSON_05(run, bucketed_ddp.start(run));
}

static float wrap_forward_backward(RunContext *run, const int *inputs, const int *targets)
{
    Accum *accum = run->state;
    GPT *model = run->model;
    size_t tokens = (size_t)model->batch * model->seq_len;
    double loss = 0.0;
    model->loss_scale = 1.0f / (float)run->accum_steps;
    for (accum->passes_begun = 0; accum->passes_begun < run->accum_steps;) {
        size_t at = (size_t)accum->passes_begun * tokens;
        loss += gpt_forward(model, inputs + at, targets + at);
        accum->passes_begun++;
        gpt_backward(model);
    }
    return (float)(loss / run->accum_steps);
}

static void wrap_grads_ready(RunContext *run, int unit)
{
    Accum *accum = run->state;
    if (accum->passes_begun == run->accum_steps)
        AS_LESSON_05(run, bucketed_ddp.grads_ready(run, unit));
}

static void wrap_before_step(RunContext *run)
{
    AS_LESSON_05(run, bucketed_ddp.before_step(run));
}

static void wrap_stop(RunContext *run)
{
    Accum *accum = run->state;
    if (accum == NULL)
        return;
    AS_LESSON_05(run, bucketed_ddp.stop(run));
    free(accum);
    run->state = NULL;
}

const Strategy grad_accum = {
    .name = "grad_accum",
    .setup = wrap_setup,
    .start = wrap_start,
    .forward_backward = wrap_forward_backward,
    .grads_ready = wrap_grads_ready,
    .before_step = wrap_before_step,
    .stop = wrap_stop,
};
