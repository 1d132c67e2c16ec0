/* Feeds training batches from one token shard. Every rank opens the same shard and takes
 * its own rows of each global batch, so N ranks together see exactly the batch that a
 * single device would see: that is what makes data-parallel runs comparable to the
 * single-device reference. */
#ifndef DTC_DATALOADER_H
#define DTC_DATALOADER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    int local_batch;      /* B rows this rank gets = global_batch / world */
    int seq_len;          /* T */
    int rank, world;
    size_t num_tokens;
    uint16_t *tokens;     /* whole shard in memory */
    size_t batch_start;   /* token index where the next global batch starts */
    int *inputs;          /* local_batch*seq_len, filled by dataloader_next */
    int *targets;         /* local_batch*seq_len */
} DataLoader;

/* global_batch must divide by world; the shard must hold at least global_batch*seq_len+1
 * tokens; every token must be < vocab_size (else error naming the file, the token value
 * and its index). Returns 0, or -1 with one line in err and *dl left closed. */
int dataloader_open(DataLoader *dl, const char *path, int global_batch, int seq_len,
                    int vocab_size, int rank, int world, char *err, size_t err_len);

/* Global batch k covers tokens [s, s + global_batch*T + 1) with s = batch_start; global
 * row i is tokens [s + i*T, s + i*T + T] (inputs the first T, targets shifted by one), and
 * rank r takes rows r*local_batch .. (r+1)*local_batch - 1. Then batch_start advances by
 * global_batch*T, wrapping to 0 when the next batch would not fit. */
void dataloader_next(DataLoader *dl);

/* Back to the first batch. */
void dataloader_reset(DataLoader *dl);

/* Frees everything; safe on a loader that failed to open or was already closed. */
void dataloader_close(DataLoader *dl);

#endif
