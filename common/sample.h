/* Text generation from a trained model: the end-of-run sample every lesson can print. */
#ifndef DTC_SAMPLE_H
#define DTC_SAMPLE_H

#include <stdint.h>

#include "model.h"

/* A prompt generate_text can continue: 1..maxT-1 bytes, each a token of the vocabulary.
 * 0, or -1 with a one-line reason naming --prompt. */
int sample_check_prompt(const GPTConfig *cfg, const char *prompt, char *err, size_t err_len);

/* Continues prompt (bytes as tokens) by up to max_new tokens sampled from the model,
 * stopping after a newline. The model's activations are re-allocated for one sequence of
 * maxT. Writes a NUL-terminated string (prompt + continuation) into out. Returns 0, or
 * -1 with a reason (out of memory, a prompt longer than maxT or a byte >= V). */
int generate_text(GPT *model, const char *prompt, int max_new, uint64_t seed,
                  char *out, size_t out_len, char *err, size_t err_len);

#endif
