/* Lesson 00 exercise: predict a training run's memory from its configuration.
 *
 * Every buffer is fp32 (4 bytes per element). Read docs/00_single_device.md, section
 * "The memory estimator", for the tensors the model keeps (`make hint LESSON=00` gives a
 * hint when you are stuck). Work the counts out from the shape yourself: call nothing that
 * counts for you (gpt_num_params(), layout.h's tensor_numel, tensor_range and unit_range,
 * the allocator) and copy no sizes from model.c, since the point is to check the model
 * against your prediction.
 *
 * `make grade LESSON=00` compares your numbers with the reference, exactly. */
#include "memory_estimate.h"

MemoryEstimate estimate_memory(const GPTConfig *cfg, int B, int T)
{
    MemoryEstimate estimate = {0};
    (void)cfg;
    (void)B;
    (void)T;

    /* TODO: parameters (they do not depend on B or T). */

    /* TODO: gradients and the two AdamW moments. */

    /* TODO: activations: the bytes of every buffer forward keeps for backward (model.h:
     * Activations and LayerActivations) for a batch of B sequences of T tokens. Backward's
     * scratch buffers are not part of it. */

    return estimate;
}
