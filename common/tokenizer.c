#include "tokenizer.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "le32.h"
#include "paths.h"

/* The header's vocabulary and end-of-text token, checked. */
static int read_header(Tokenizer *t, FILE *file, const char *path, char *err, size_t err_len)
{
    uint8_t header[TOKENIZER_HEADER_BYTES];
    if (fread(header, 1, sizeof header, file) != sizeof header) {
        snprintf(err, err_len, "%s: shorter than a tokenizer file's header (%d bytes)", path, TOKENIZER_HEADER_BYTES);
        return -1;
    }
    uint32_t magic = le32_get(header), version = le32_get(header + 4), vocab = le32_get(header + 8);
    if (magic != TOKENIZER_MAGIC) {
        snprintf(err, err_len, "%s: not a tokenizer file (magic %u, expected %d)", path, magic, TOKENIZER_MAGIC);
        return -1;
    }
    if (version != 1 && version != 2) {
        snprintf(err, err_len, "%s: tokenizer file version %u (this reads 1 and 2)", path, version);
        return -1;
    }
    uint32_t end_of_text = version == 2 ? le32_get(header + 12) : UINT32_MAX;
    if (vocab < 1 || vocab > 65536 || (version == 2 && end_of_text >= vocab)) {
        snprintf(err, err_len, "%s: header holds a vocabulary of %u and end-of-text token %d", path, vocab,
                 (int)end_of_text);
        return -1;
    }
    t->vocab_size = (int)vocab;
    t->end_of_text = version == 2 ? (int)end_of_text : -1;
    return 0;
}

/* Every token's length byte and bytes, to the end of the file and no further; the file
 * holds body_bytes after its header. */
static int read_pieces(Tokenizer *t, FILE *file, size_t body_bytes, const char *path, char *err, size_t err_len)
{
    uint32_t used = 0;
    size_t capacity = body_bytes > 0 ? body_bytes : 1;
    t->offsets = mem_alloc(((size_t)t->vocab_size + 1) * sizeof *t->offsets, MEM_OTHER);
    t->bytes = mem_alloc(capacity, MEM_OTHER);
    if (t->offsets == NULL || t->bytes == NULL) {
        snprintf(err, err_len, "%s: out of memory for %d tokens", path, t->vocab_size);
        return -1;
    }
    for (int id = 0; id < t->vocab_size; id++) {
        int length = fgetc(file);
        if (length <= 0 || used + (size_t)length > capacity || fread(t->bytes + used, 1, (size_t)length, file) != (size_t)length) {
            snprintf(err, err_len, "%s: %s at token %d of %d", path, length == 0 ? "a token of 0 bytes" : "ends", id,
                     t->vocab_size);
            return -1;
        }
        t->offsets[id] = used;
        used += (uint32_t)length;
    }
    t->offsets[t->vocab_size] = used;
    if (fgetc(file) != EOF) {
        snprintf(err, err_len, "%s: bytes after the last of its %d tokens", path, t->vocab_size);
        return -1;
    }
    return 0;
}

int tokenizer_read(Tokenizer *tokenizer, const char *path, char *err, size_t err_len)
{
    *tokenizer = (Tokenizer){0};
    FILE *file = open_input(path, "tokenizer", err, err_len);
    if (file == NULL)
        return -1;
    struct stat info;
    int status = fstat(fileno(file), &info) == 0 ? 0 : -1;
    if (status != 0)
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
    if (status == 0)
        status = read_header(tokenizer, file, path, err, err_len);
    if (status == 0)
        status = read_pieces(tokenizer, file, (size_t)info.st_size - TOKENIZER_HEADER_BYTES, path, err, err_len);
    fclose(file);
    if (status != 0)
        tokenizer_free(tokenizer);
    return status;
}

void tokenizer_free(Tokenizer *tokenizer)
{
    mem_free(tokenizer->bytes);
    mem_free(tokenizer->offsets);
    *tokenizer = (Tokenizer){0};
}

const uint8_t *tokenizer_piece(const Tokenizer *tokenizer, int id, size_t *length)
{
    *length = tokenizer->offsets[id + 1] - tokenizer->offsets[id];
    return tokenizer->bytes + tokenizer->offsets[id];
}

/* The longest token text starts with, or -1. */
static int longest_token_at(const Tokenizer *t, const char *text, size_t available)
{
    int best = -1;
    size_t best_length = 0;
    for (int id = 0; id < t->vocab_size; id++) {
        size_t length;
        const uint8_t *piece = tokenizer_piece(t, id, &length);
        if (id != t->end_of_text && length > best_length && length <= available && memcmp(piece, text, length) == 0) {
            best = id;
            best_length = length;
        }
    }
    return best;
}

int tokenizer_encode_longest(const Tokenizer *tokenizer, const char *text, int *tokens, int capacity)
{
    int count = 0;
    for (size_t at = 0, left = strlen(text); left > 0; count++) {
        int id = longest_token_at(tokenizer, text + at, left);
        if (id < 0 || count >= capacity)
            return -1;
        tokens[count] = id;
        size_t length;
        tokenizer_piece(tokenizer, id, &length);
        at += length;
        left -= length;
    }
    return count;
}
