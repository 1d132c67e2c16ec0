/* Lesson 09, another design: a map from unit to the buffer holding it (or NULL), and a free
 * list of buffers; a unit's buffer goes back on the list when the model lets it go, unless
 * the model uses it again right away. The parameter shard is one allocation per unit. */
#include "zero3.h"
#include "zero2_parts.h"

#include <stdio.h>
#include <stdlib.h>

enum { MAX_BUFFERS = 2 };

typedef struct {
    Zero2 grads;                    /* lesson 08's state: first, for its hooks */
    float **unit_shard;             /* per unit: this rank's padded shard of its parameters */
    float **holding;                /* per unit: the buffer it is gathered in, or NULL */
    CommRequest *arriving;          /* per unit: its gather, while in flight */
    float *free_list[MAX_BUFFERS];  /* buffers holding nothing */
    int num_free, num_buffers, prefetch;
} Mapped;

static ModelStorage mapped_model_storage(void)
{
    return (ModelStorage){.no_gradients = 1, .no_parameters = 1};
}

static int allocate(RunContext *run, Mapped *m, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    const ShardPlan *plan = &m->grads.zero1.plan;
    int units = plan->num_units;
    m->unit_shard = calloc((size_t)units, sizeof *m->unit_shard);
    m->holding = calloc((size_t)units, sizeof *m->holding);
    m->arriving = calloc((size_t)units, sizeof *m->arriving);
    if (m->unit_shard == NULL || m->holding == NULL || m->arriving == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (int unit = 0; unit < units; unit++)
        if ((m->unit_shard[unit] = k->alloc(plan->shard_count[unit] * sizeof(float), MEM_PARAMS)) == NULL) {
            snprintf(err, err_len, "out of memory for unit %d's parameter shard", unit);
            return -1;
        }
    for (m->num_buffers = 0; m->num_buffers < (m->prefetch ? 2 : 1); m->num_buffers++) {
        float *buffer = k->alloc(plan->largest_shard * (size_t)plan->world * sizeof(float), MEM_COMM);
        if (buffer == NULL) {
            snprintf(err, err_len, "out of memory for the gathered units");
            return -1;
        }
        m->free_list[m->num_free++] = buffer;
    }
    return 0;
}

static int mapped_setup(RunContext *run, char *err, size_t err_len)
{
    const Zero3Options *options = run->options;
    Mapped *m = calloc(1, sizeof *m);
    run->state = m;
    if (m == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    m->prefetch = !options->no_prefetch;
    if (zero2_init(run, &m->grads, err, err_len) != 0)
        return -1;
    return allocate(run, m, err, err_len);
}

static void mapped_start(RunContext *run)
{
    Mapped *m = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = &m->grads.zero1.plan;
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t first = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(m->unit_shard[unit], model->params + first,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
}

/* A free buffer gathering unit (started, or blocking). */
static void gather(RunContext *run, Mapped *m, int unit, int nonblocking)
{
    if (m->num_free == 0) {
        fprintf(stderr, "zero3: no free buffer to gather unit %d into\n", unit);
        abort();
    }
    const ShardPlan *plan = &m->grads.zero1.plan;
    float *buffer = m->free_list[--m->num_free];
    m->holding[unit] = buffer;
    if (nonblocking)
        comm_check(run->comm, comm_all_gather_start(run->comm, m->unit_shard[unit], buffer, plan->shard_count[unit],
                                                    &m->arriving[unit]));
    else
        comm_check(run->comm, comm_all_gather(run->comm, m->unit_shard[unit], buffer, plan->shard_count[unit]));
}

static void let_go(RunContext *run, Mapped *m, int unit)
{
    if (m->holding[unit] == NULL)
        return;
    comm_check(run->comm, comm_wait(&m->arriving[unit]));
    m->free_list[m->num_free++] = m->holding[unit];
    m->holding[unit] = NULL;
}

static float *mapped_acquire_params(RunContext *run, int unit)
{
    Mapped *m = run->state;
    if (m->holding[unit] == NULL)
        gather(run, m, unit, 0);
    comm_check(run->comm, comm_wait(&m->arriving[unit]));
    UnitUse next;
    if (m->prefetch && gpt_next_param_use(run->model, &next) && m->holding[next.unit] == NULL)
        gather(run, m, next.unit, 1);
    return m->holding[unit];
}

static void mapped_release_params(RunContext *run, int unit)
{
    Mapped *m = run->state;
    UnitUse next;
    if (!(gpt_next_param_use(run->model, &next) && next.unit == unit))
        let_go(run, m, unit);
}

static void let_all_go(RunContext *run, Mapped *m)
{
    for (int unit = 0; unit < m->grads.zero1.plan.num_units; unit++)
        let_go(run, m, unit);
}

static float mapped_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm)
{
    Mapped *m = run->state;
    Zero1 *shards = &m->grads.zero1;
    float norm = sharded_grad_norm(run, shards), scale = clip_scale(norm, max_norm);
    adamw_begin_step(&shards->opt);
    for (int unit = 0; unit < shards->plan.num_units; unit++)
        adamw_update_range(&shards->opt, shards->plan.shard_offset[unit], m->unit_shard[unit],
                           shards->grad_shard + shards->plan.shard_offset[unit], shards->plan.shard_count[unit],
                           hyper, scale);
    let_all_go(run, m); /* stale now */
    return norm;
}

static void mapped_gather_params(RunContext *run, float *host)
{
    Mapped *m = run->state;
    const GPTConfig *cfg = &run->model->cfg;
    let_all_go(run, m);
    for (int unit = 0; unit < gpt_num_units(cfg); unit++) {
        gather(run, m, unit, 0);
        Range range = unit_range(cfg, unit);
        run->model->kernels->to_host(host + range.offset, m->holding[unit], range.count * sizeof(float));
        let_go(run, m, unit);
    }
}

static void mapped_stop(RunContext *run)
{
    Mapped *m = run->state;
    if (m == NULL)
        return;
    const Kernels *k = run->model->kernels;
    for (int unit = 0; m->holding != NULL && unit < m->grads.zero1.plan.num_units; unit++)
        if (m->holding[unit] != NULL) {
            comm_wait(&m->arriving[unit]);
            m->free_list[m->num_free++] = m->holding[unit];
        }
    for (int b = 0; b < m->num_free; b++)
        k->free(m->free_list[b]);
    for (int unit = 0; m->unit_shard != NULL && unit < m->grads.zero1.plan.num_units; unit++)
        k->free(m->unit_shard[unit]);
    free(m->unit_shard);
    free(m->holding);
    free(m->arriving);
    zero2_release(run, &m->grads);
    free(m);
    run->state = NULL;
}

const Strategy zero3 = {
    .name = "zero3",
    .model_storage = mapped_model_storage,
    .setup = mapped_setup,
    .start = mapped_start,
    .acquire_params = mapped_acquire_params,
    .release_params = mapped_release_params,
    .unit_grads = zero2_unit_grads,
    .grads_ready = zero2_grads_ready,
    .optimizer_step = mapped_optimizer_step,
    .gather_params = mapped_gather_params,
    .stop = mapped_stop,
};
