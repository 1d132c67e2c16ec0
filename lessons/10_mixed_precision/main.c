/* Lesson 10: mixed precision on a ZeRO stage. `mpiexec -n N 10_mixed_precision train [--stage 1|2|3] [flags]` */
#include <stddef.h>

#include "lesson.h"
#include "mixed.h"

static MixedOptions options = {.stage = 2};

static const Flag mixed_flags[] = {
    {"stage", FLAG_INT, offsetof(MixedOptions, stage),
     "the ZeRO stage mixed precision runs on: 1 (bf16 gradients whole), 2 (sharded; the default) or 3 (the bf16 "
     "parameters sharded too)", 1, 3, 0},
    {"fp32-matmuls", FLAG_SWITCH, offsetof(MixedOptions, fp32_matmuls),
     "multiply the fp32 activations by the widened bf16 weights, not bf16 by bf16 (default: both operands bf16, "
     "summed in fp32)", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* The matmuls' operands are bf16, as a GPU's tensor cores take them (kernels.h), unless
 * --fp32-matmuls asks for the comparison. */
static void configure(TrainConfig *cfg, const void *lesson_options)
{
    const MixedOptions *mixed_options = lesson_options;
    cfg->bf16_matmuls = !mixed_options->fp32_matmuls;
}

static const Lesson lesson = {
    .name = "10_mixed_precision",
    .title = "Mixed precision: bf16 parameters and gradients, computed with and sent in 16 bits; fp32 master "
             "weights and AdamW, sharded",
    .strategy = {.name = "mixed_zero2", .model_storage = mixed_model_storage, .setup = mixed_setup,
                 .start = mixed_start, .acquire_params = mixed_acquire_params, .unit_grads = zero2_unit_grads,
                 .grads_ready = mixed_grads_ready, .optimizer_step = mixed_optimizer_step,
                 .gather_params = mixed_gather_params, .gather_optimizer = zero1_gather_optimizer,
                 .load_optimizer = zero1_load_optimizer, .stop = mixed_stop},
    .flags = {"mixed precision", mixed_flags, &options},
    .configure = configure,
    .strategy_name = mixed_strategy_name,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
