/* Lesson 00 exercise: predict a training run's memory from its configuration.
 *
 * Every buffer is fp32 (4 bytes per element). Read docs/00_single_device.md, section
 * "The memory estimator", for the list of tensors the model keeps. Work the counts out
 * from the shape yourself: do not call gpt_num_params() or look at the allocator, since
 * the point is to check the model against your prediction.
 *
 * `make grade LESSON=00` compares your numbers with the reference, exactly. */
#include "memory_estimate.h"

MemoryEstimate estimate_memory(const GPTConfig *cfg, int B, int T)
{
    MemoryEstimate estimate = {0};
    (void)cfg;
    (void)B;
    (void)T;

    /* TODO: parameters. wte has Vp (padded vocab) rows of C; wpe has maxT rows of C; each
     * of the L blocks holds two LayerNorms (weight + bias, C each), qkv (3C x C + 3C),
     * the attention projection (C x C + C), the MLP (4C x C + 4C, then C x 4C + C); the
     * final LayerNorm holds 2C. */

    /* TODO: gradients and the two AdamW moments: one fp32 value per parameter each. */

    /* TODO: activations kept for backward, for B x T tokens:
     *   the embedding output (B*T*C);
     *   per layer: ln1, atty, residual2, ln2, residual3 (B*T*C each), qkv (3*B*T*C),
     *   fch and fch_gelu (4*B*T*C each), the attention probabilities (B*NH*T*T), and the
     *   mean and 1/std of both LayerNorms (B*T each);
     *   the final LayerNorm's output (B*T*C) with its mean and 1/std (B*T each);
     *   the output probabilities (B*T*V, V the real vocabulary size). */

    return estimate;
}
