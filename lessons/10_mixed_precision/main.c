/* Lesson 10: mixed precision on a ZeRO stage. `mpiexec -n N 10_mixed_precision train [--stage 1|2|3] [flags]` */
#include <stddef.h>
#include <stdio.h>

#include "lesson.h"
#include "mixed.h"

static MixedOptions options = {.stage = 2, .scale_window = DEFAULT_SCALE_WINDOW};

static const Flag mixed_flags[] = {
    {"stage", FLAG_INT, offsetof(MixedOptions, stage),
     "the ZeRO stage mixed precision runs on: 1 (bf16 gradients whole), 2 (sharded; the default) or 3 (the bf16 "
     "parameters sharded too)", 1, 3, 0},
    {"fp32-matmuls", FLAG_SWITCH, offsetof(MixedOptions, fp32_matmuls),
     "multiply the fp32 activations by the widened 16-bit weights, not 16-bit by 16-bit, and attention in fp32 "
     "(default: every product's operands 16-bit, attention's included, summed in fp32)", 0, 1, 0},
    {"fp16", FLAG_SWITCH, offsetof(MixedOptions, fp16),
     "fp16 parameters, gradients and product operands, with a dynamic loss scale, instead of bf16", 0, 1, 0},
    {"scale-window", FLAG_INT, offsetof(MixedOptions, scale_window),
     "with --fp16: steps in a row without an overflow before the loss scale doubles (as PyTorch's GradScaler's "
     "growth_interval)", 1, 1 << 30, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* The matrix products' operands (the matmuls' and attention's) are 16-bit, as a GPU's
 * tensor cores take them (kernels.h), unless --fp32-matmuls asks for the comparison. The
 * format, the matmuls and fp16's scale window shape the run's numbers (--stage does not:
 * every stage computes the same), so a resume state records them. */
static int configure(TrainConfig *cfg, const void *lesson_options, char *err, size_t err_len)
{
    const MixedOptions *mixed_options = lesson_options;
    if (!mixed_options->fp16 && mixed_options->scale_window != DEFAULT_SCALE_WINDOW) {
        snprintf(err, err_len, "--scale-window is for --fp16's loss scale: bf16 has none (add --fp16)");
        return -1;
    }
    cfg->matmuls_16bit = !mixed_options->fp32_matmuls;
    cfg->matmul_format = mixed_options->fp16 ? FORMAT_FP16 : FORMAT_BF16;
    char window[32] = "";
    if (mixed_options->fp16)
        snprintf(window, sizeof window, "scale-window %d\n", mixed_options->scale_window);
    snprintf(cfg->lesson_settings, sizeof cfg->lesson_settings, "precision %s\nmatmuls %s\n%s",
             format16_name(cfg->matmul_format), cfg->matmuls_16bit ? "16-bit" : "fp32", window);
    return 0;
}

/* The strategy's name says the stage: "mixed_zero1", "mixed_zero2" or "mixed_zero3". */
static const char *mixed_strategy_name(const void *lesson_options)
{
    static const char *const names[] = {"mixed_zero1", "mixed_zero2", "mixed_zero3"};
    return names[((const MixedOptions *)lesson_options)->stage - 1];
}

static const Lesson lesson = {
    .name = "10_mixed_precision",
    .title = "Mixed precision: bf16 or fp16 parameters and gradients, computed with and sent in 16 bits; fp32 "
             "master weights and AdamW, sharded",
    .strategy = &mixed,
    .flags = {"mixed precision", mixed_flags, &options},
    .configure = configure,
    .strategy_name = mixed_strategy_name,
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
