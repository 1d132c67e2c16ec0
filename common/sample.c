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

/* The prompt as the model's tokens: with a tokenizer, its end-of-text token (a document
 * starts there) and the prompt's pieces; else the prompt's bytes. The count, or -1. */
static int prompt_tokens(const GPTConfig *cfg, const Tokenizer *tokenizer, const char *prompt, int *tokens,
                         char *err, size_t err_len)
{
    int capacity = cfg->max_seq_len - 1, n = 0;
    if (tokenizer != NULL && tokenizer->end_of_text >= 0)
        tokens[n++] = tokenizer->end_of_text;
    if (capacity - n < 1) {
        snprintf(err, err_len, "--max-seq %d leaves no room for the sample's prompt and a token after it",
                 cfg->max_seq_len);
        return -1;
    }
    if (tokenizer != NULL) {
        int pieces = tokenizer_encode_longest(tokenizer, prompt, tokens + n, capacity - n);
        if (pieces < 0) {
            snprintf(err, err_len, "--prompt: '%s' is not made of the tokenizer's tokens, or needs more than %d of them",
                     prompt, capacity - n);
            return -1;
        }
        return n + pieces;
    }
    size_t length = strlen(prompt);
    if (length < 1 || length > (size_t)capacity) {
        snprintf(err, err_len, "--prompt must be 1..%d bytes long", capacity);
        return -1;
    }
    for (size_t i = 0; i < length; i++) {
        tokens[i] = (unsigned char)prompt[i];
        if (tokens[i] >= cfg->vocab_size) {
            snprintf(err, err_len, "--prompt byte %d is not in the vocabulary (V=%d)", tokens[i], cfg->vocab_size);
            return -1;
        }
    }
    return (int)length;
}

int sample_check_prompt(const GPTConfig *cfg, const Tokenizer *tokenizer, const char *prompt, char *err,
                        size_t err_len)
{
    if (tokenizer != NULL && tokenizer->vocab_size != cfg->vocab_size) {
        snprintf(err, err_len, "--tokenizer holds %d tokens but the model's vocabulary is %d (--vocab)",
                 tokenizer->vocab_size, cfg->vocab_size);
        return -1;
    }
    int tokens[cfg->max_seq_len];
    int n = prompt_tokens(cfg, tokenizer, prompt, tokens, err, err_len);
    if (n == 0) {
        snprintf(err, err_len, "--prompt is empty and there is no end-of-text token to start from");
        return -1;
    }
    return n < 0 ? -1 : 0;
}

/* Appends token id's text to out (n bytes used of out_len): through the tokenizer, or as
 * its byte, or <id> for an id no byte can be. */
static size_t append_token(const Tokenizer *tokenizer, int id, char *out, size_t n, size_t out_len)
{
    char number[16];
    const char *text = number;
    size_t length;
    if (tokenizer != NULL) {
        text = (const char *)tokenizer_piece(tokenizer, id, &length);
    } else if (id < 256) {
        number[0] = (char)id;
        length = 1;
    } else {
        length = (size_t)snprintf(number, sizeof number, "<%d>", id);
    }
    for (size_t i = 0; i < length && n + 1 < out_len; i++)
        out[n++] = text[i];
    return n;
}

int generate_text(GPT *model, const Tokenizer *tokenizer, const char *prompt, int max_new, uint64_t seed,
                  char *out, size_t out_len, char *err, size_t err_len)
{
    int max_seq = model->cfg.max_seq_len, V = model->cfg.vocab_size;
    int tokens[max_seq];
    memset(tokens, 0, sizeof tokens);
    int length = prompt_tokens(&model->cfg, tokenizer, prompt, tokens, err, err_len);
    if (length <= 0)
        return -1;
    /* the positions the sample can fill, and no more: a row's probabilities do not depend on
     * the positions after it (causal attention), so a longer sequence only costs time */
    int T = length + max_new < max_seq ? length + max_new : max_seq;
    if (gpt_set_batch(model, 1, T, err, err_len) != 0)
        return -1;
    int first_shown = tokenizer != NULL && tokenizer->end_of_text >= 0; /* not the end-of-text token */
    int stop = tokenizer != NULL ? tokenizer->end_of_text : '\n';
    float probs[V];
    Rng rng;
    rng_seed(&rng, seed);
    /* causal attention: positions after `length` do not change the row we read */
    for (int i = 0; i < max_new && length < T; i++) {
        gpt_forward(model, tokens, NULL);
        model->kernels->to_host(probs, model->acts.probs + (size_t)(length - 1) * V, sizeof probs);
        tokens[length++] = sample_token(probs, V, rng_uniform(&rng));
        if (tokens[length - 1] == stop)
            break;
    }
    size_t n = 0;
    for (int i = first_shown; i < length; i++)
        if (tokens[i] != stop || tokenizer == NULL)
            n = append_token(tokenizer, tokens[i], out, n, out_len);
    out[n] = '\0';
    return 0;
}
