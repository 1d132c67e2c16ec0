#include "gpt_config.h"

#include <stdio.h>

int gpt_padded_vocab(int vocab_size)
{
    return (vocab_size + 127) / 128 * 128;
}

int gpt_config_check(const GPTConfig *cfg, char *err, size_t err_len)
{
    const char *problem = NULL;
    if (cfg->vocab_size < 2 || cfg->vocab_size > 65536)
        problem = "vocab size must be in 2..65536 (tokens are uint16)";
    else if (cfg->padded_vocab_size < cfg->vocab_size)
        problem = "padded vocab size is smaller than the vocab size";
    else if (cfg->num_layers < 1)
        problem = "layers must be at least 1";
    else if (cfg->num_heads < 1 || cfg->channels < 1)
        problem = "heads and channels must be at least 1";
    else if (cfg->channels % cfg->num_heads != 0)
        problem = "channels must divide evenly by heads";
    else if (cfg->max_seq_len < 1)
        problem = "max sequence length must be at least 1";
    if (problem == NULL)
        return 0;
    snprintf(err, err_len, "bad model shape (V=%d L=%d H=%d C=%d maxT=%d): %s",
             cfg->vocab_size, cfg->num_layers, cfg->num_heads, cfg->channels,
             cfg->max_seq_len, problem);
    return -1;
}
