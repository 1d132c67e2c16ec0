/* GPT-2's tokens offline: the shards and tokenizer file `make data GPT2=1` writes
 * (data/gpt2_tokens.py, through tiktoken), read back by the C side the sample uses. The
 * tokenizer file decodes GPT-2's known ids, and the shards decode back to the text they
 * were made from, byte for byte; a file that is not a whole tokenizer file is refused,
 * naming what is wrong. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "files.h"
#include "shard.h"
#include "shell.h"
#include "tokenizer.h"

#define GPT2_TOKENIZER "data/generated/gpt2_tokenizer.bin"

static Tokenizer gpt2;
static char dir[64];

static void open_gpt2(void)
{
    char err[256];
    cr_assert_eq(tokenizer_read(&gpt2, GPT2_TOKENIZER, err, sizeof err), 0, "%s (make data GPT2=1 writes it)", err);
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "tokenizer"));
}

static void close_gpt2(void)
{
    tokenizer_free(&gpt2);
    shell_remove_dir(dir);
}

TestSuite(tokenizer, .init = open_gpt2, .fini = close_gpt2);

/* Token id's text, NUL-terminated, in a static buffer. */
static const char *piece_text(int id)
{
    static char text[256];
    size_t length;
    const uint8_t *piece = tokenizer_piece(&gpt2, id, &length);
    memcpy(text, piece, length);
    text[length] = '\0';
    return text;
}

Test(tokenizer, gpt2s_file_decodes_gpt2s_ids)
{
    cr_expect_eq(gpt2.vocab_size, 50257);
    cr_expect_eq(gpt2.end_of_text, 50256);
    cr_expect_str_eq(piece_text(15496), "Hello");
    cr_expect_str_eq(piece_text(995), " world");
    cr_expect_str_eq(piece_text(50256), "<|endoftext|>");
    int tokens[8];
    cr_assert_eq(tokenizer_encode_longest(&gpt2, "Hello world", tokens, 8), 2);
    cr_expect(tokens[0] == 15496 && tokens[1] == 995, "Hello world -> %d %d", tokens[0], tokens[1]);
    cr_expect_eq(tokenizer_encode_longest(&gpt2, "Hello world", tokens, 1), -1, "more tokens than room");
}

/* Every paragraph of the validation text, after its end-of-text token, decodes to itself. */
Test(tokenizer, the_gpt2_shard_decodes_to_the_text_it_was_made_from)
{
    char err[256];
    uint16_t *tokens;
    size_t count;
    cr_assert_eq(shard_read("data/generated/gpt2_val.bin", &tokens, &count, err, sizeof err), 0, "%s", err);
    FILE *text = fopen("data/generated/austen_val.txt", "rb");
    cr_assert_not_null(text);
    size_t documents = 0, mismatches = 0, at = 0;
    for (size_t i = 0; i < count; i++) {
        if (tokens[i] == gpt2.end_of_text) {
            documents++;
            continue;
        }
        size_t length;
        const uint8_t *piece = tokenizer_piece(&gpt2, tokens[i], &length);
        for (size_t k = 0; k < length; k++, at++)
            mismatches += fgetc(text) != piece[k];
    }
    cr_expect_eq(fgetc(text), EOF, "the text goes on after the shard's last token (%zu bytes decoded)", at);
    fclose(text);
    mem_free(tokens);
    cr_expect_eq(mismatches, 0, "%zu of %zu bytes differ", mismatches, at);
    cr_expect_eq(documents, 1035, "a document per paragraph: %zu", documents);
}

/* A file that is not a whole tokenizer file: a copy of `copy_of`, with `count` bytes written
 * at `at` (after the end at -1; none when count is 0), then cut to `cut_to` bytes (unless
 * -1). tokenizer_read must refuse it, naming the file and saying `reason`. */
typedef struct {
    const char *copy_of;
    long at;
    const char *bytes;
    size_t count;
    long cut_to;
    const char *reason;
} Damage;

static void expect_refused(const Damage *damage)
{
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/bad.bin", dir);
    cr_assert_eq(files_copy(damage->copy_of, path), 0, "cannot copy %s", damage->copy_of);
    cr_assert(damage->count == 0 || files_patch(path, damage->at, damage->bytes, damage->count) == 0);
    cr_assert(damage->cut_to < 0 || files_cut(path, damage->cut_to) == 0);
    Tokenizer t;
    cr_expect_eq(tokenizer_read(&t, path, err, sizeof err), -1, "%s: accepted", damage->reason);
    cr_expect_not_null(strstr(err, damage->reason), "expected '%s', said '%s'", damage->reason, err);
    cr_expect_not_null(strstr(err, path), "the reason names no file: %s", err);
}

Test(tokenizer, a_file_that_is_not_a_whole_tokenizer_file_is_refused)
{
    static const Damage damages[] = {
        {"data/generated/gpt2_val.bin", 0, NULL, 0, -1, "not a tokenizer file (magic 20240520, expected 20240328)"},
        {GPT2_TOKENIZER, 4, "\003", 1, -1, "version 3"},
        {GPT2_TOKENIZER, 0, NULL, 0, 100000, "ends at token"},
        {GPT2_TOKENIZER, -1, "x", 1, -1, "bytes after the last of its 50257 tokens"},
        {GPT2_TOKENIZER, 0, NULL, 0, 1000, "shorter than a tokenizer file's header"},
        {GPT2_TOKENIZER, 1024, "\000", 1, -1, "a token of 0 bytes at token 0"},
    };
    for (size_t i = 0; i < sizeof damages / sizeof *damages; i++)
        expect_refused(&damages[i]);
}
