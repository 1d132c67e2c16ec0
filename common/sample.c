#include "sample.h"

#include <stdio.h>
#include <string.h>

#include "rng.h"

/* Draws a token from a probability row by inverting its cumulative sum. */
static int sample_token(const float *probs, int V, double coin)
{
    double cumulative = 0.0;
    for (int v = 0; v < V; v++) {
        cumulative += probs[v];
        if (coin < cumulative)
            return v;
    }
    return V - 1;
}

int sample_check_prompt(const GPTConfig *cfg, const char *prompt, char *err, size_t err_len)
{
    size_t n = strlen(prompt);
    if (n < 1 || n >= (size_t)cfg->max_seq_len) {
        snprintf(err, err_len, "--prompt must be 1..%d bytes long", cfg->max_seq_len - 1);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)prompt[i] >= cfg->vocab_size) {
            snprintf(err, err_len, "--prompt byte %d is not in the vocabulary (V=%d)", (unsigned char)prompt[i],
                     cfg->vocab_size);
            return -1;
        }
    return 0;
}

static int prompt_tokens(const GPT *model, const char *prompt, int *tokens, char *err, size_t err_len)
{
    if (sample_check_prompt(&model->cfg, prompt, err, err_len) != 0)
        return -1;
    int n = (int)strlen(prompt);
    for (int i = 0; i < n; i++)
        tokens[i] = (unsigned char)prompt[i];
    return n;
}

int generate_text(GPT *model, const char *prompt, int max_new, uint64_t seed,
                  char *out, size_t out_len, char *err, size_t err_len)
{
    int T = model->cfg.max_seq_len, V = model->cfg.vocab_size;
    int tokens[T];
    memset(tokens, 0, sizeof tokens);
    int length = prompt_tokens(model, prompt, tokens, err, err_len);
    if (length < 0 || gpt_set_batch(model, 1, T, err, err_len) != 0)
        return -1;
    float probs[V];
    Rng rng;
    rng_seed(&rng, seed);
    /* causal attention: positions after `length` do not change the row we read */
    for (int i = 0; i < max_new && length < T && (size_t)length + 1 < out_len; i++) {
        gpt_forward(model, tokens, NULL);
        model->kernels->to_host(probs, model->acts.probs + (size_t)(length - 1) * V, sizeof probs);
        tokens[length++] = sample_token(probs, V, rng_uniform(&rng));
        if (tokens[length - 1] == '\n')
            break;
    }
    size_t n = 0;
    for (; n < (size_t)length && n + 1 < out_len; n++)
        out[n] = (char)tokens[n];
    out[n] = '\0';
    return 0;
}
