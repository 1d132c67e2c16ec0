/* Lesson 00 reference solution: the memory estimator. */
#include "memory_estimate.h"

static size_t parameter_count(const GPTConfig *cfg)
{
    size_t C = (size_t)cfg->channels, L = (size_t)cfg->num_layers;
    size_t embeddings = (size_t)cfg->padded_vocab_size * C + (size_t)cfg->max_seq_len * C;
    size_t layernorms = 2 * (2 * C);
    size_t attention = (3 * C * C + 3 * C) + (C * C + C);
    size_t mlp = (4 * C * C + 4 * C) + (4 * C * C + C);
    size_t final_layernorm = 2 * C;
    return embeddings + L * (layernorms + attention + mlp) + final_layernorm;
}

static size_t activation_floats(const GPTConfig *cfg, int B, int T)
{
    size_t BT = (size_t)B * T, C = (size_t)cfg->channels, L = (size_t)cfg->num_layers;
    size_t per_layer = 5 * BT * C          /* ln1, atty, residual2, ln2, residual3 */
                     + 3 * BT * C          /* qkv */
                     + 2 * 4 * BT * C      /* fch, fch_gelu */
                     + (size_t)B * cfg->num_heads * T * T /* attention probabilities */
                     + 4 * BT;             /* two LayerNorms' mean and 1/std */
    size_t embedding = BT * C;
    size_t final_layernorm = BT * C + 2 * BT;
    size_t output = BT * (size_t)cfg->vocab_size;
    return embedding + L * per_layer + final_layernorm + output;
}

MemoryEstimate estimate_memory(const GPTConfig *cfg, int B, int T)
{
    size_t param_bytes = parameter_count(cfg) * sizeof(float);
    MemoryEstimate estimate = {
        .parameters = param_bytes,
        .gradients = param_bytes,
        .adamw_m = param_bytes,
        .adamw_v = param_bytes,
        .activations = activation_floats(cfg, B, T) * sizeof(float),
    };
    return estimate;
}
