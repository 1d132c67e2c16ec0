#include "shard.h"
#include "paths.h"

#include "alloc.h"
#include "le32.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Tokens are encoded through a small staging buffer so the file is little-endian on any
 * host without holding a second copy of the whole shard. */
enum { TOKENS_PER_CHUNK = 1 << 15 };

static int write_header(FILE *file, size_t count)
{
    uint8_t header[SHARD_HEADER_BYTES] = {0};
    le32_put(header + 0, SHARD_MAGIC);
    le32_put(header + 4, SHARD_VERSION);
    le32_put(header + 8, (uint32_t)count);
    return fwrite(header, 1, sizeof header, file) == sizeof header ? 0 : -1;
}

static int write_tokens(FILE *file, const uint16_t *tokens, size_t count)
{
    uint8_t chunk[2 * TOKENS_PER_CHUNK];
    for (size_t start = 0; start < count; start += TOKENS_PER_CHUNK) {
        size_t n = count - start < TOKENS_PER_CHUNK ? count - start : TOKENS_PER_CHUNK;
        for (size_t i = 0; i < n; i++) {
            chunk[2 * i] = (uint8_t)(tokens[start + i] & 0xff);
            chunk[2 * i + 1] = (uint8_t)(tokens[start + i] >> 8);
        }
        if (fwrite(chunk, 2, n, file) != n)
            return -1;
    }
    return 0;
}

typedef struct {
    const uint16_t *tokens;
    size_t count;
} Shard;

static int write_shard(FILE *file, const char *path, const void *what, char *err, size_t err_len)
{
    const Shard *shard = what;
    if (write_header(file, shard->count) != 0 || write_tokens(file, shard->tokens, shard->count) != 0) {
        snprintf(err, err_len, "%s: write failed: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

int shard_write(const char *path, const uint16_t *tokens, size_t count,
                char *err, size_t err_len)
{
    if (count == 0 || count > INT32_MAX) {
        snprintf(err, err_len, "%s: cannot write %zu tokens (a shard holds 1..%d)",
                 path, count, INT32_MAX);
        return -1;
    }
    Shard shard = {tokens, count};
    return write_file_atomically(path, write_shard, &shard, err, err_len);
}

/* Validates the header against the file size; returns the token count or -1. */
static long long check_header(const char *path, const uint8_t *header, long long file_bytes,
                              char *err, size_t err_len)
{
    int32_t magic = (int32_t)le32_get(header + 0);
    int32_t version = (int32_t)le32_get(header + 4);
    int32_t count = (int32_t)le32_get(header + 8);
    long long expected = SHARD_HEADER_BYTES + 2LL * count;
    if (magic != SHARD_MAGIC) {
        snprintf(err, err_len, "%s: bad magic %d (expected %d)", path, (int)magic, SHARD_MAGIC);
    } else if (version != SHARD_VERSION) {
        snprintf(err, err_len, "%s: unsupported version %d (expected %d)",
                 path, (int)version, SHARD_VERSION);
    } else if (count <= 0) {
        snprintf(err, err_len, "%s: header says the shard holds %d tokens (need at least 1)",
                 path, (int)count);
    } else if (file_bytes != expected) {
        snprintf(err, err_len, "%s: file is %lld bytes but the header promises %d+2*%d = %lld",
                 path, file_bytes, SHARD_HEADER_BYTES, (int)count, expected);
    } else {
        return count;
    }
    return -1;
}

/* Turns the little-endian bytes read from disk into host-order tokens, in place. */
static void decode_tokens_in_place(uint16_t *tokens, size_t count)
{
    const uint8_t *bytes = (const uint8_t *)tokens;
    for (size_t i = 0; i < count; i++) {
        uint16_t value = (uint16_t)(bytes[2 * i] | (bytes[2 * i + 1] << 8));
        tokens[i] = value;
    }
}

static uint16_t *read_tokens(FILE *file, const char *path, size_t count,
                             char *err, size_t err_len)
{
    uint16_t *tokens = mem_alloc(count * sizeof *tokens, MEM_DATA);
    if (tokens == NULL) {
        snprintf(err, err_len, "%s: cannot allocate %zu bytes for %zu tokens",
                 path, count * sizeof *tokens, count);
        return NULL;
    }
    if (fread(tokens, 2, count, file) != count) {
        snprintf(err, err_len, "%s: read failed after the header: %s", path,
                 ferror(file) ? strerror(errno) : "unexpected end of file");
        mem_free(tokens);
        return NULL;
    }
    decode_tokens_in_place(tokens, count);
    return tokens;
}

static int read_open_shard(FILE *file, const char *path, uint16_t **tokens_out,
                           size_t *count_out, char *err, size_t err_len)
{
    struct stat info;
    if (fstat(fileno(file), &info) != 0 || !S_ISREG(info.st_mode)) {
        snprintf(err, err_len, "%s: not a regular file", path);
        return -1;
    }
    uint8_t header[SHARD_HEADER_BYTES];
    if (info.st_size < SHARD_HEADER_BYTES ||
        fread(header, 1, sizeof header, file) != sizeof header) {
        snprintf(err, err_len, "%s: file is %lld bytes, too short for the %d-byte shard header",
                 path, (long long)info.st_size, SHARD_HEADER_BYTES);
        return -1;
    }
    long long count = check_header(path, header, (long long)info.st_size, err, err_len);
    if (count < 0)
        return -1;
    uint16_t *tokens = read_tokens(file, path, (size_t)count, err, err_len);
    if (tokens == NULL)
        return -1;
    *tokens_out = tokens;
    *count_out = (size_t)count;
    return 0;
}

int shard_read(const char *path, uint16_t **tokens_out, size_t *count_out,
               char *err, size_t err_len)
{
    FILE *file = open_input(path, "token shard", err, err_len);
    if (file == NULL) {
        /* the presets' own shards are made, not shipped: say how */
        size_t used = strlen(err);
        if (strstr(path, "data/generated/") != NULL && used < err_len)
            snprintf(err + used, err_len - used, " (make data writes the course's shards)");
        return -1;
    }
    int rc = read_open_shard(file, path, tokens_out, count_out, err, err_len);
    fclose(file);
    return rc;
}
