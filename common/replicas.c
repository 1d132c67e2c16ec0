#include "replicas.h"

#include <stdlib.h>

uint64_t hash_bytes(const void *data, size_t bytes)
{
    const unsigned char *byte = data;
    uint64_t hash = 1469598103934665603ULL;
    for (size_t i = 0; i < bytes; i++) {
        hash ^= byte[i];
        hash *= 1099511628211ULL;
    }
    return hash;
}

/* The communicator moves floats; a float holds any 16-bit integer exactly, so a 64-bit hash
 * travels as four of them. */
enum { PIECES = 4 };

int replicas_identical(Comm *comm, uint64_t local_hash, uint64_t *hashes)
{
    int size = comm_size(comm);
    float pieces[PIECES];
    float *all = malloc((size_t)size * PIECES * sizeof *all);
    if (all == NULL)
        return -1;
    for (int p = 0; p < PIECES; p++)
        pieces[p] = (float)((local_hash >> (16 * p)) & 0xffff);
    if (comm_all_gather(comm, pieces, all, PIECES) != 0) {
        free(all);
        return -1;
    }
    int identical = 1;
    for (int r = 0; r < size; r++) {
        hashes[r] = 0;
        for (int p = 0; p < PIECES; p++)
            hashes[r] |= (uint64_t)all[r * PIECES + p] << (16 * p);
        identical &= hashes[r] == hashes[0];
    }
    free(all);
    return identical;
}
