/* The tiny model both the gradient checks and the hook tests run: every code path of
 * the GPT at a size where finite differences over every parameter stay cheap. */
#ifndef DTC_TESTS_TINY_MODEL_H
#define DTC_TESTS_TINY_MODEL_H

#include "gpt_config.h"

/* V = 11 (Vp = 128), L = 2, NH = 2, C = 8, maxT = 6, run at B = 2, T = 5. */
static inline GPTConfig tiny_model_config(void)
{
    GPTConfig cfg = {.max_seq_len = 6, .vocab_size = 11, .num_layers = 2, .num_heads = 2, .channels = 8};
    cfg.padded_vocab_size = gpt_padded_vocab(cfg.vocab_size);
    return cfg;
}

enum { TINY_B = 2, TINY_T = 5 };
static const int tiny_inputs[TINY_B * TINY_T] = {1, 4, 4, 10, 0, 7, 2, 9, 4, 3};
static const int tiny_targets[TINY_B * TINY_T] = {4, 4, 10, 0, 6, 2, 9, 4, 3, 3};

#endif
