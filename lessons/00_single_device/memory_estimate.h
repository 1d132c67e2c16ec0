#ifndef LESSON00_MEMORY_ESTIMATE_H
#define LESSON00_MEMORY_ESTIMATE_H

#include <stddef.h>

#include "gpt_config.h"

/* Bytes a training run needs, predicted from the configuration alone. */
typedef struct {
    size_t parameters;
    size_t gradients;
    size_t adamw_m;
    size_t adamw_v;
    size_t activations; /* forward results kept for backward, for a batch of B x T */
} MemoryEstimate;

MemoryEstimate estimate_memory(const GPTConfig *cfg, int B, int T);

#endif
