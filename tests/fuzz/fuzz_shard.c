/* The token shard reader (shard.h) on any bytes: an error or a shard, never a crash. */
#define _GNU_SOURCE
#include "fuzz_input.h"

#include "alloc.h"
#include "shard.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    uint16_t *tokens = NULL;
    size_t count = 0;
    if (shard_read(path, &tokens, &count, err, sizeof err) == 0)
        mem_free(tokens);
    close(fd);
    return 0;
}
