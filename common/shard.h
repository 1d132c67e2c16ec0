/* Token shards on disk, in llm.c's format so files move freely between the two projects:
 * a header of 256 little-endian int32 (magic, version, token count, the rest zero), then
 * the tokens as little-endian uint16. */
#ifndef DTC_SHARD_H
#define DTC_SHARD_H

#include <stddef.h>
#include <stdint.h>

enum {
    SHARD_MAGIC = 20240520,
    SHARD_VERSION = 1,
    SHARD_HEADER_INTS = 256,
    SHARD_HEADER_BYTES = SHARD_HEADER_INTS * 4,
};

/* Writes count tokens (1..INT32_MAX, the header holds an int32) to path. The bytes go to a
 * temporary file in the same directory that is renamed over path only once complete, so a
 * failed write never leaves a half-written shard behind. Returns 0, or -1 with one line
 * naming the file and the problem in err. */
int shard_write(const char *path, const uint16_t *tokens, size_t count,
                char *err, size_t err_len);

/* Reads a whole shard into memory allocated with mem_alloc(MEM_DATA); free it with
 * mem_free. Checks magic, version, count > 0 and that the file size is exactly
 * SHARD_HEADER_BYTES + 2*count. Returns 0, or -1 with one line in err. */
int shard_read(const char *path, uint16_t **tokens_out, size_t *count_out,
               char *err, size_t err_len);

#endif
