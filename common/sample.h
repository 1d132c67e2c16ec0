/* Text generation from a trained model: the end-of-run sample every lesson can print. */
#ifndef DTC_SAMPLE_H
#define DTC_SAMPLE_H

#include <stdint.h>

#include "model.h"
#include "tokenizer.h"

/* A prompt generate_text can continue: with a tokenizer (NULL: none), one whose pieces make
 * the prompt, after the end-of-text token, within maxT-1 tokens, and a tokenizer of the
 * model's vocabulary; without, 1..maxT-1 bytes, each a token of the vocabulary. 0, or -1
 * with a one-line reason naming --prompt or --tokenizer. */
int sample_check_prompt(const GPTConfig *cfg, const Tokenizer *tokenizer, const char *prompt, char *err,
                        size_t err_len);

/* Continues the prompt (as above) by up to max_new tokens sampled from the model: with a
 * tokenizer until it draws the end-of-text token, without until a line break (the corpus
 * holds a paragraph a line). The model's activations are re-allocated for one sequence of
 * maxT. Writes the prompt and its continuation as NUL-terminated text into out: each token
 * decoded through the tokenizer, or without one as its byte (an id of 256 or more, in a
 * bigger vocabulary, as <id>). Returns 0, or -1 with a reason. */
int generate_text(GPT *model, const Tokenizer *tokenizer, const char *prompt, int max_new, uint64_t seed,
                  char *out, size_t out_len, char *err, size_t err_len);

#endif
