/* Lesson 10: the state and its plumbing, given (the idea is in mixed.c). */
#include "mixed.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Every shard's squares, widened unit by unit (a unit's shard at a time in grad_piece), and
 * summed over the ranks: the norm of the gradient the update will use (before the loss
 * scale is divided out). */
float grad_norm_16(RunContext *run, Mixed *mixed)
{
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    const Kernels *k = run->model->kernels;
    double sum_of_squares = 0.0;
    for (int unit = 0; unit < plan->num_units; unit++) {
        k->widen_16(mixed->format, mixed->grad_piece, mixed->grad_shard + plan->shard_offset[unit],
                    plan->shard_count[unit]);
        sum_of_squares += k->sum_of_squares(mixed->grad_piece, plan->shard_count[unit]);
    }
    comm_check(run->comm, comm_sum_double(run->comm, &sum_of_squares));
    return (float)sqrt(sum_of_squares);
}

/* Lesson 08's state, then the 16-bit buffers in place of lesson 07's fp32 gradient shard;
 * lesson 07's fp32 collective buffers stay, as the widened unit and gradient piece. The
 * stage decides which 16-bit state is whole and which a shard: the parameters are whole up to
 * ZeRO-2, the gradients whole on ZeRO-1 (beside the shard the step reduce-scatters into). */
static int allocate_mixed(RunContext *run, Mixed *mixed, char *err, size_t err_len)
{
    const Kernels *k = run->model->kernels;
    Zero1 *zero1 = &mixed->zero2.zero1;
    const ShardPlan *plan = &zero1->plan;
    size_t whole = run->model->num_params * sizeof(bits16), sharded = plan->shard_total * sizeof(bits16);
    k->free(zero1->grad_shard);
    zero1->grad_shard = NULL;
    mixed->widened = zero1->padded;
    mixed->grad_piece = zero1->piece;
    if (mixed->stage < 3)
        mixed->params = k->alloc(whole, MEM_PARAMS);
    else
        mixed->param_shard = k->alloc(sharded, MEM_PARAMS);
    if (mixed->stage == 1)
        mixed->grads = k->alloc(whole, MEM_GRADS);
    mixed->master = k->alloc(plan->shard_total * sizeof(float), MEM_MASTER);
    mixed->grad_shard = k->alloc(sharded, mixed->stage == 1 ? MEM_COMM : MEM_GRADS);
    mixed->padded = k->alloc(plan->largest_shard * plan->world * sizeof(bits16), MEM_COMM);
    mixed->piece = k->alloc(plan->largest_shard * sizeof(bits16), MEM_COMM);
    if ((mixed->params == NULL && mixed->param_shard == NULL) || (mixed->stage == 1 && mixed->grads == NULL) ||
        mixed->master == NULL || mixed->grad_shard == NULL || mixed->padded == NULL || mixed->piece == NULL) {
        snprintf(err, err_len, "out of memory for the 16-bit parameters or gradients, the fp32 master shard or "
                 "the 16-bit buffers");
        return -1;
    }
    return 0;
}

const char *mixed_strategy_name(const void *options)
{
    static const char *const names[] = {"mixed_zero1", "mixed_zero2", "mixed_zero3"};
    return names[((const MixedOptions *)options)->stage - 1];
}

int mixed_setup(RunContext *run, char *err, size_t err_len)
{
    Mixed *mixed = calloc(1, sizeof *mixed);
    run->state = mixed;
    if (mixed == NULL) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    const MixedOptions *options = run->options;
    mixed->stage = options->stage;
    mixed->format = options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    mixed->scale_window = options->scale_window;
    mixed->widened_unit = -1;
    if (zero2_init(run, &mixed->zero2, err, err_len) != 0)
        return -1;
    return allocate_mixed(run, mixed, err, err_len);
}

/* Rank 0's fp32 parameters to every rank (lesson 07's start); this rank keeps its shard of
 * them as the master, and the 16-bit parameters rounded from them: every one, or on ZeRO-3
 * its shard, rounded from the master (the padding zero in both). The model then drops its
 * fp32 buffer (mixed_model_storage). fp16 scales the loss from the first backward on. */
void mixed_start(RunContext *run)
{
    Mixed *mixed = run->state;
    GPT *model = run->model;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    zero1_start(run);
    for (int unit = 0; unit < plan->num_units; unit++) {
        size_t first = unit_range(&model->cfg, unit).offset + (size_t)plan->rank * plan->shard_count[unit];
        model->kernels->copy(mixed->master + plan->shard_offset[unit], model->params + first,
                             owned_real_count(plan, &model->cfg, unit) * sizeof(float));
    }
    if (mixed->stage < 3)
        model->kernels->round_to_16(mixed->format, mixed->params, model->params, model->num_params);
    else
        model->kernels->round_to_16(mixed->format, mixed->param_shard, mixed->master, plan->shard_total);
    model->loss_scale = mixed->format == FORMAT_FP16 ? FIRST_LOSS_SCALE : 1.0f;
}

/* The fp32 master, whole on every rank (the checkpoint holds it, not its 16-bit rounding):
 * each unit's shards all-gathered in fp32 through the widened buffer, which then holds no
 * unit's parameters. A checkpoint gathers the parameters before the optimizer state
 * (zero1_gather_optimizer, which also writes widened), so this reset covers both; the next
 * step widens, or on ZeRO-3 gathers, unit 0 anew. */
void mixed_gather_params(RunContext *run, float *host)
{
    Mixed *mixed = run->state;
    const ShardPlan *plan = &mixed->zero2.zero1.plan;
    for (int unit = 0; unit < plan->num_units; unit++) {
        Range range = unit_range(&run->model->cfg, unit);
        comm_check(run->comm, comm_all_gather(run->comm, mixed->master + plan->shard_offset[unit], mixed->widened,
                                              plan->shard_count[unit]));
        run->model->kernels->to_host(host + range.offset, mixed->widened, range.count * sizeof(float));
    }
    mixed->widened_unit = -1;
}

void mixed_stop(RunContext *run)
{
    Mixed *mixed = run->state;
    if (mixed == NULL)
        return;
    const Kernels *k = run->model->kernels;
    k->free(mixed->params);
    k->free(mixed->param_shard);
    k->free(mixed->grads);
    k->free(mixed->master);
    k->free(mixed->grad_shard);
    k->free(mixed->padded);
    k->free(mixed->piece);
    zero2_release(run, &mixed->zero2);
    free(mixed);
    run->state = NULL;
}
