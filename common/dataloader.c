#include "dataloader.h"

#include "alloc.h"
#include "shard.h"

#include <stdio.h>
#include <string.h>

static size_t global_batch_tokens(const DataLoader *dl)
{
    return (size_t)dl->local_batch * (size_t)dl->world * (size_t)dl->seq_len;
}

static int check_shape(const char *path, int global_batch, int seq_len, int vocab_size,
                       int rank, int world, char *err, size_t err_len)
{
    if (global_batch <= 0 || seq_len <= 0 || vocab_size <= 0) {
        snprintf(err, err_len, "%s: batch %d, sequence length %d and vocab size %d must all "
                 "be positive", path, global_batch, seq_len, vocab_size);
    } else if (world <= 0 || rank < 0 || rank >= world) {
        snprintf(err, err_len, "%s: rank %d is not in a world of size %d", path, rank, world);
    } else if (global_batch % world != 0) {
        snprintf(err, err_len, "%s: global batch %d does not divide by world size %d",
                 path, global_batch, world);
    } else {
        return 0;
    }
    return -1;
}

/* A token outside the vocabulary would index past the embedding table, so the whole
 * shard is checked once here instead of trusting the file. */
static int check_tokens(const DataLoader *dl, const char *path, int vocab_size,
                        char *err, size_t err_len)
{
    for (size_t i = 0; i < dl->num_tokens; i++) {
        if (dl->tokens[i] >= vocab_size) {
            snprintf(err, err_len, "%s: token %u at index %zu is outside the vocabulary "
                     "(vocab size %d)", path, (unsigned)dl->tokens[i], i, vocab_size);
            return -1;
        }
    }
    return 0;
}

static int check_length(const DataLoader *dl, const char *path, char *err, size_t err_len)
{
    size_t needed = global_batch_tokens(dl) + 1;
    if (dl->num_tokens < needed) {
        snprintf(err, err_len, "%s: shard holds %zu tokens but one global batch of %d x %d "
                 "needs %zu", path, dl->num_tokens, dl->local_batch * dl->world,
                 dl->seq_len, needed);
        return -1;
    }
    return 0;
}

static int allocate_batch(DataLoader *dl, const char *path, char *err, size_t err_len)
{
    size_t bytes = (size_t)dl->local_batch * (size_t)dl->seq_len * sizeof(int);
    dl->inputs = mem_alloc(bytes, MEM_DATA);
    dl->targets = mem_alloc(bytes, MEM_DATA);
    if (dl->inputs == NULL || dl->targets == NULL) {
        snprintf(err, err_len, "%s: cannot allocate 2 x %zu bytes for the batch", path, bytes);
        return -1;
    }
    return 0;
}

int dataloader_open(DataLoader *dl, const char *path, int global_batch, int seq_len,
                    int vocab_size, int rank, int world, char *err, size_t err_len)
{
    memset(dl, 0, sizeof *dl);
    if (check_shape(path, global_batch, seq_len, vocab_size, rank, world, err, err_len) != 0)
        return -1;
    dl->local_batch = global_batch / world;
    dl->seq_len = seq_len;
    dl->rank = rank;
    dl->world = world;
    if (shard_read(path, &dl->tokens, &dl->num_tokens, err, err_len) != 0 ||
        check_length(dl, path, err, err_len) != 0 ||
        check_tokens(dl, path, vocab_size, err, err_len) != 0 ||
        allocate_batch(dl, path, err, err_len) != 0) {
        dataloader_close(dl);
        return -1;
    }
    return 0;
}

void dataloader_next(DataLoader *dl)
{
    size_t T = (size_t)dl->seq_len;
    size_t first_row = (size_t)dl->rank * (size_t)dl->local_batch;
    const uint16_t *local = dl->tokens + dl->batch_start + first_row * T;
    size_t local_tokens = (size_t)dl->local_batch * T;
    /* This rank's rows are contiguous in the shard, so one pass fills them all. */
    for (size_t i = 0; i < local_tokens; i++) {
        dl->inputs[i] = local[i];
        dl->targets[i] = local[i + 1];
    }
    size_t step = global_batch_tokens(dl);
    dl->batch_start += step;
    if (dl->batch_start + step + 1 > dl->num_tokens)
        dl->batch_start = 0;
}

void dataloader_reset(DataLoader *dl)
{
    dl->batch_start = 0;
}

void dataloader_close(DataLoader *dl)
{
    mem_free(dl->tokens);
    mem_free(dl->inputs);
    mem_free(dl->targets);
    memset(dl, 0, sizeof *dl);
}
