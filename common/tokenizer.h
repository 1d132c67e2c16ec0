/* Token ids to text and back for the end-of-run sample, from a tokenizer file in llm.c's
 * format (make data GPT2=1 writes GPT-2's: data/generated/gpt2_tokenizer.bin): a header of
 * 256 little-endian uint32 (magic 20240328, version 1 or 2, the vocabulary size, and in
 * version 2 the end-of-text token), then each token's bytes as one length byte (1..255)
 * followed by the bytes. */
#ifndef DTC_TOKENIZER_H
#define DTC_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

enum { TOKENIZER_MAGIC = 20240328, TOKENIZER_HEADER_BYTES = 256 * 4 };

typedef struct {
    int vocab_size;
    int end_of_text;   /* its id, or -1 (a version 1 file names none) */
    uint8_t *bytes;    /* every token's bytes, one after another */
    uint32_t *offsets; /* token t is bytes[offsets[t] .. offsets[t + 1]) */
} Tokenizer;

/* Reads and checks a whole tokenizer file. 0, or -1 with one line naming the file and the
 * problem (not a tokenizer file, a version it does not know, a token cut short, bytes
 * after the last one). */
int tokenizer_read(Tokenizer *tokenizer, const char *path, char *err, size_t err_len);
void tokenizer_free(Tokenizer *tokenizer);

/* The bytes of token id (0 <= id < vocab_size), not NUL-terminated; their count in *length. */
const uint8_t *tokenizer_piece(const Tokenizer *tokenizer, int id, size_t *length);

/* Splits text into tokens, at each place taking the longest token whose bytes the text
 * continues with. Not GPT-2's byte-pair encoding (that lives in Python, data/gpt2_tokens.py):
 * the tokens decode to the same text, though they may be other ones than BPE would give.
 * Returns how many it wrote into tokens (at most capacity), or -1 when a byte of the text
 * is no token's first byte or the text needs more than capacity tokens. */
int tokenizer_encode_longest(const Tokenizer *tokenizer, const char *text, int *tokens, int capacity);

#endif
