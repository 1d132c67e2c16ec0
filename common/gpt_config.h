/* Shape of the GPT model. Kept apart from model.h so that data, checkpoint and
 * layout code can talk about shapes without pulling in the model itself. */
#ifndef DTC_GPT_CONFIG_H
#define DTC_GPT_CONFIG_H

#include <stddef.h>

typedef struct {
    int max_seq_len;       /* maxT: rows of the position table */
    int vocab_size;        /* V: tokens the model predicts */
    int padded_vocab_size; /* Vp: rows of wte, V rounded up to a multiple of 128 (llm.c's rule) */
    int num_layers;        /* L: transformer blocks */
    int num_heads;         /* NH: attention heads; C must divide by NH */
    int channels;          /* C: width of the residual stream */
} GPTConfig;

/* Vp for a given V: llm.c pads the token table so GEMMs get friendly shapes. */
int gpt_padded_vocab(int vocab_size);

/* Returns 0 when the shape is usable, else -1 with a one-line reason in err. */
int gpt_config_check(const GPTConfig *cfg, char *err, size_t err_len);

#endif
