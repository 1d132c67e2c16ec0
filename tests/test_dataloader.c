/* Token shards and the distributed data loader. Shard files for the failure cases are
 * built byte by byte here, independently of shard_write, and batch contents are checked
 * against positions computed from the specification. */
#include <criterion/criterion.h>

#include "alloc.h"
#include "dataloader.h"
#include "files.h"
#include "shard.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char test_dir[64];

static void make_test_dir(void)
{
    snprintf(test_dir, sizeof test_dir, "/tmp/dtc_shard_test_XXXXXX");
    cr_assert_not_null(mkdtemp(test_dir));
}

static void remove_test_dir(void) { files_remove_dir(test_dir); }

static int count_dir_entries(void)
{
    int count = files_count(test_dir);
    cr_assert_geq(count, 0, "cannot read %s", test_dir);
    return count;
}

static const char *path_for(const char *name)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", test_dir, name);
    return path;
}

static void put_le32(uint8_t *dst, int32_t value)
{
    uint32_t bits = (uint32_t)value;
    dst[0] = bits & 0xff;
    dst[1] = (bits >> 8) & 0xff;
    dst[2] = (bits >> 16) & 0xff;
    dst[3] = (bits >> 24) & 0xff;
}

/* A shard written by hand: any header, any number of tokens, little-endian. */
static void write_raw_shard(const char *path, int32_t magic, int32_t version, int32_t count,
                            const uint16_t *tokens, size_t num_tokens)
{
    uint8_t header[1024] = {0};
    put_le32(header, magic);
    put_le32(header + 4, version);
    put_le32(header + 8, count);
    FILE *file = fopen(path, "wb");
    cr_assert_not_null(file);
    cr_assert_eq(fwrite(header, 1, sizeof header, file), sizeof header);
    for (size_t i = 0; i < num_tokens; i++) {
        uint8_t pair[2] = {tokens[i] & 0xff, tokens[i] >> 8};
        cr_assert_eq(fwrite(pair, 1, 2, file), 2);
    }
    fclose(file);
}

static uint8_t *read_whole_file(const char *path, long *size)
{
    FILE *file = fopen(path, "rb");
    cr_assert_not_null(file);
    fseek(file, 0, SEEK_END);
    *size = ftell(file);
    rewind(file);
    uint8_t *bytes = malloc((size_t)*size);
    cr_assert_eq(fread(bytes, 1, (size_t)*size, file), (size_t)*size);
    fclose(file);
    return bytes;
}

TestSuite(shard, .init = make_test_dir, .fini = remove_test_dir);
TestSuite(dataloader, .init = make_test_dir, .fini = remove_test_dir);

/* ------------------------------------------------------------------ shards */

Test(shard, write_produces_llmc_layout_and_reads_back)
{
    enum { N = 1000 };
    uint16_t tokens[N];
    for (int i = 0; i < N; i++)
        tokens[i] = (uint16_t)((i * 2654435761u) >> 16);
    tokens[0] = 0x1234;
    tokens[N - 1] = 65535;
    const char *path = path_for("round.bin");
    char err[256] = "";
    cr_assert_eq(shard_write(path, tokens, N, err, sizeof err), 0, "%s", err);

    long size;
    uint8_t *bytes = read_whole_file(path, &size);
    cr_assert_eq(size, 1024 + 2 * N);
    const uint8_t magic_le[4] = {0x88, 0xD8, 0x34, 0x01}; /* 20240520 = 0x0134D888 */
    cr_assert_arr_eq(bytes, magic_le, 4);
    cr_assert_eq(bytes[4], 1);
    cr_assert_eq(bytes[8] | (bytes[9] << 8), N);
    for (int i = 12; i < 1024; i++)
        cr_assert_eq(bytes[i], 0, "header byte %d must be zero", i);
    cr_assert_eq(bytes[1024], 0x34);
    cr_assert_eq(bytes[1025], 0x12);
    free(bytes);

    size_t data_before = mem_in_use(MEM_DATA);
    uint16_t *read_back = NULL;
    size_t count = 0;
    cr_assert_eq(shard_read(path, &read_back, &count, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count, N);
    cr_assert_arr_eq(read_back, tokens, sizeof tokens);
    cr_assert_eq(mem_in_use(MEM_DATA), data_before + 2 * N, "tokens go to MEM_DATA");
    mem_free(read_back);
    cr_assert_eq(mem_in_use(MEM_DATA), data_before);
}

Test(shard, write_leaves_only_the_shard_and_replaces_old_files)
{
    const uint16_t first[5] = {1, 2, 3, 4, 5};
    const uint16_t second[3] = {9, 8, 7};
    const char *path = path_for("replace.bin");
    char err[256] = "";
    cr_assert_eq(shard_write(path, first, 5, err, sizeof err), 0, "%s", err);
    cr_assert_eq(shard_write(path, second, 3, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count_dir_entries(), 1, "no temporary file may be left behind");
    uint16_t *tokens;
    size_t count;
    cr_assert_eq(shard_read(path, &tokens, &count, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count, 3);
    cr_assert_arr_eq(tokens, second, sizeof second);
    mem_free(tokens);
}

Test(shard, write_failures_name_the_file)
{
    const uint16_t tokens[2] = {1, 2};
    char err[256] = "";
    char missing[300];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.bin", test_dir);
    cr_assert_eq(shard_write(missing, tokens, 2, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, missing), "%s", err);
    const char *empty = path_for("empty.bin");
    cr_assert_eq(shard_write(empty, tokens, 0, err, sizeof err), -1);
    cr_assert_not_null(strstr(err, empty), "%s", err);
    cr_assert_eq(count_dir_entries(), 0, "a failed write leaves nothing");
}

/* Reads path expecting failure; the message must name the file and contain phrase. */
static void expect_read_error(const char *path, const char *phrase)
{
    size_t data_before = mem_in_use(MEM_DATA);
    uint16_t *tokens = NULL;
    size_t count = 0;
    char err[256] = "";
    cr_assert_eq(shard_read(path, &tokens, &count, err, sizeof err), -1,
                 "bad shard accepted (expected '%s')", phrase);
    cr_assert_null(tokens);
    cr_assert_not_null(strstr(err, path), "error must name the file: %s", err);
    cr_assert_not_null(strstr(err, phrase), "error should say '%s': %s", phrase, err);
    cr_assert_null(strchr(err, '\n'), "one line: %s", err);
    cr_assert_eq(mem_in_use(MEM_DATA), data_before, "nothing may leak on failure");
}

static const uint16_t some_tokens[10] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};

Test(shard, read_rejects_bad_magic)
{
    const char *path = path_for("magic.bin");
    write_raw_shard(path, 123, 1, 10, some_tokens, 10);
    expect_read_error(path, "bad magic 123 (expected 20240520)");
}

Test(shard, read_rejects_bad_version)
{
    const char *path = path_for("version.bin");
    write_raw_shard(path, 20240520, 2, 10, some_tokens, 10);
    expect_read_error(path, "version 2");
}

Test(shard, read_rejects_truncated_file)
{
    const char *path = path_for("truncated.bin");
    write_raw_shard(path, 20240520, 1, 10, some_tokens, 9);
    expect_read_error(path, "file is 1042 bytes but the header promises 1024+2*10");
}

Test(shard, read_rejects_oversized_file)
{
    const char *path = path_for("oversized.bin");
    const uint16_t eleven[11] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
    write_raw_shard(path, 20240520, 1, 10, eleven, 11);
    expect_read_error(path, "file is 1046 bytes");
}

Test(shard, read_rejects_zero_and_negative_counts)
{
    const char *zero = path_for("zero.bin");
    write_raw_shard(zero, 20240520, 1, 0, NULL, 0);
    expect_read_error(zero, "holds 0 tokens");
    const char *negative = path_for("negative.bin");
    write_raw_shard(negative, 20240520, 1, -5, NULL, 0);
    expect_read_error(negative, "holds -5 tokens");
}

Test(shard, read_rejects_short_header_and_missing_file)
{
    const char *path = path_for("short.bin");
    FILE *file = fopen(path, "wb");
    cr_assert_not_null(file);
    fputs("not a shard", file);
    fclose(file);
    expect_read_error(path, "too short");
    expect_read_error(path_for("absent.bin"), "cannot open");
}

/* ------------------------------------------------------------------ data loader */

/* Shard whose token i is i, so every batch position says where it came from. */
static const char *identity_shard(size_t num_tokens)
{
    uint16_t *tokens = malloc(num_tokens * sizeof *tokens);
    for (size_t i = 0; i < num_tokens; i++)
        tokens[i] = (uint16_t)i;
    const char *path = path_for("identity.bin");
    char err[256] = "";
    cr_assert_eq(shard_write(path, tokens, num_tokens, err, sizeof err), 0, "%s", err);
    free(tokens);
    return path;
}

static void expect_open_error(const char *path, int batch, int seq_len, int vocab, int rank,
                              int world, const char *phrase)
{
    DataLoader dl;
    char err[256] = "";
    size_t data_before = mem_in_use(MEM_DATA);
    cr_assert_eq(dataloader_open(&dl, path, batch, seq_len, vocab, rank, world, err,
                                 sizeof err), -1, "expected failure '%s'", phrase);
    cr_assert_not_null(strstr(err, phrase), "error should say '%s': %s", phrase, err);
    cr_assert_null(dl.tokens);
    cr_assert_eq(mem_in_use(MEM_DATA), data_before, "nothing may leak on failure");
}

Test(dataloader, rejects_token_outside_vocabulary)
{
    uint16_t tokens[100];
    for (int i = 0; i < 100; i++)
        tokens[i] = 5;
    tokens[17] = 300;
    const char *path = path_for("vocab.bin");
    write_raw_shard(path, 20240520, 1, 100, tokens, 100);
    expect_open_error(path, 2, 8, 256, 0, 1, path);
    expect_open_error(path, 2, 8, 256, 0, 1, "token 300 at index 17");
    expect_open_error(path, 2, 8, 300, 0, 1, "token 300 at index 17"); /* V itself is out */
    DataLoader dl;
    char err[256] = "";
    cr_assert_eq(dataloader_open(&dl, path, 2, 8, 301, 0, 1, err, sizeof err), 0, "%s", err);
    dataloader_close(&dl);
}

Test(dataloader, rejects_bad_shapes)
{
    const char *path = identity_shard(200);
    expect_open_error(path, 12, 5, 256, 0, 5, "does not divide by world size 5");
    expect_open_error(path, 12, 5, 256, 4, 4, "rank 4");
    expect_open_error(path, 12, 5, 256, -1, 4, "rank -1");
    expect_open_error(path, 0, 5, 256, 0, 1, "positive");
    /* 200 tokens hold 199 predictions: a 4 x 50 batch needs 201 tokens. */
    expect_open_error(path, 4, 50, 256, 0, 1, "needs 201");
    expect_open_error(path_for("absent.bin"), 4, 5, 256, 0, 1, "absent.bin");
}

/* The start of single-device batch k for B=12, T=5 over 187 tokens, worked out by hand:
 * batches start at 0, 60, 120; a fourth would need tokens up to 180+61 > 187: wrap. */
static const size_t expected_starts[7] = {0, 60, 120, 0, 60, 120, 0};

Test(dataloader, single_device_batches_follow_the_shard_and_wrap)
{
    const char *path = identity_shard(187);
    DataLoader dl;
    char err[256] = "";
    cr_assert_eq(dataloader_open(&dl, path, 12, 5, 256, 0, 1, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dl.local_batch, 12);
    for (int k = 0; k < 7; k++) {
        dataloader_next(&dl);
        for (int i = 0; i < 12 * 5; i++) {
            cr_assert_eq(dl.inputs[i], (int)(expected_starts[k] + i), "batch %d pos %d", k, i);
            cr_assert_eq(dl.targets[i], (int)(expected_starts[k] + i + 1));
        }
    }
    dataloader_reset(&dl);
    dataloader_next(&dl);
    cr_assert_eq(dl.inputs[0], 0, "reset goes back to the first batch");
    cr_assert_eq(dl.targets[59], 60);
    dataloader_close(&dl);
}

Test(dataloader, wraps_when_the_next_batch_is_one_token_short)
{
    /* 180 tokens, batches of 60: the batch at 120 would need token 180 as its last
     * target, which does not exist, so the loader must wrap after the second batch. */
    const char *path = identity_shard(180);
    DataLoader dl;
    char err[256] = "";
    cr_assert_eq(dataloader_open(&dl, path, 12, 5, 256, 0, 1, err, sizeof err), 0, "%s", err);
    const int starts[5] = {0, 60, 0, 60, 0};
    for (int k = 0; k < 5; k++) {
        dataloader_next(&dl);
        cr_assert_eq(dl.inputs[0], starts[k], "batch %d", k);
        cr_assert_eq(dl.targets[59], starts[k] + 60, "batch %d", k);
    }
    dataloader_close(&dl);
}

Test(dataloader, rank_gets_its_own_rows)
{
    const char *path = identity_shard(187);
    DataLoader dl;
    char err[256] = "";
    /* world 3: rank 2 takes global rows 8..11 of each 12-row batch. */
    cr_assert_eq(dataloader_open(&dl, path, 12, 5, 256, 2, 3, err, sizeof err), 0, "%s", err);
    cr_assert_eq(dl.local_batch, 4);
    dataloader_next(&dl);
    dataloader_next(&dl);
    cr_assert_eq(dl.inputs[0], 60 + 8 * 5);
    cr_assert_eq(dl.inputs[19], 60 + 8 * 5 + 19);
    cr_assert_eq(dl.targets[19], 60 + 8 * 5 + 20);
    dataloader_close(&dl);
}

/* A shard of arbitrary tokens, so equal batches cannot come from a lucky pattern. */
static const char *scrambled_shard(size_t num_tokens)
{
    uint16_t *tokens = malloc(num_tokens * sizeof *tokens);
    uint32_t state = 12345;
    for (size_t i = 0; i < num_tokens; i++) {
        state = state * 1103515245u + 12345u;
        tokens[i] = (uint16_t)((state >> 16) % 256);
    }
    const char *path = path_for("scrambled.bin");
    char err[256] = "";
    cr_assert_eq(shard_write(path, tokens, num_tokens, err, sizeof err), 0, "%s", err);
    free(tokens);
    return path;
}

Test(dataloader, ranks_together_see_exactly_the_single_device_batch)
{
    enum { GLOBAL_BATCH = 12, T = 7, BATCHES = 9 };
    const char *path = scrambled_shard(3 * GLOBAL_BATCH * T + 30);
    char err[256] = "";
    for (int world = 1; world <= 4; world++) {
        DataLoader single, ranks[4];
        cr_assert_eq(dataloader_open(&single, path, GLOBAL_BATCH, T, 256, 0, 1, err,
                                     sizeof err), 0, "%s", err);
        for (int r = 0; r < world; r++)
            cr_assert_eq(dataloader_open(&ranks[r], path, GLOBAL_BATCH, T, 256, r, world,
                                         err, sizeof err), 0, "%s", err);
        for (int batch = 0; batch < BATCHES; batch++) {
            dataloader_next(&single);
            int local = GLOBAL_BATCH / world * T;
            for (int r = 0; r < world; r++) {
                dataloader_next(&ranks[r]);
                cr_assert_arr_eq(ranks[r].inputs, single.inputs + r * local,
                                 local * sizeof(int), "world %d rank %d batch %d inputs",
                                 world, r, batch);
                cr_assert_arr_eq(ranks[r].targets, single.targets + r * local,
                                 local * sizeof(int), "world %d rank %d batch %d targets",
                                 world, r, batch);
                cr_assert_eq(ranks[r].batch_start, single.batch_start);
            }
        }
        dataloader_close(&single);
        for (int r = 0; r < world; r++)
            dataloader_close(&ranks[r]);
    }
}

Test(dataloader, shard_of_exactly_one_batch_repeats_it)
{
    const char *path = identity_shard(4 * 6 + 1);
    DataLoader dl;
    char err[256] = "";
    cr_assert_eq(dataloader_open(&dl, path, 4, 6, 256, 1, 2, err, sizeof err), 0, "%s", err);
    for (int k = 0; k < 3; k++) {
        dataloader_next(&dl);
        cr_assert_eq(dl.inputs[0], 12, "rank 1 of 2 starts at row 2, token 12");
        cr_assert_eq(dl.targets[11], 24);
        cr_assert_eq(dl.batch_start, 0);
    }
    dataloader_close(&dl);
}

Test(dataloader, close_returns_all_memory)
{
    const char *path = identity_shard(187);
    size_t data_before = mem_in_use(MEM_DATA);
    DataLoader dl;
    char err[256] = "";
    cr_assert_eq(dataloader_open(&dl, path, 12, 5, 256, 1, 4, err, sizeof err), 0, "%s", err);
    /* shard (2 bytes a token) plus inputs and targets (3 x 5 ints each) */
    cr_assert_eq(mem_in_use(MEM_DATA), data_before + 187 * 2 + 2 * 3 * 5 * sizeof(int));
    dataloader_close(&dl);
    cr_assert_eq(mem_in_use(MEM_DATA), data_before);
    dataloader_close(&dl); /* closing twice is harmless */
    cr_assert_eq(mem_in_use(MEM_DATA), data_before);
}
