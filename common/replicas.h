/* Data parallelism is only correct if every rank ends a step holding the same parameters.
 * This checks that bit for bit: each rank hashes its parameters and the hashes are compared. */
#ifndef DTC_REPLICAS_H
#define DTC_REPLICAS_H

#include <stddef.h>
#include <stdint.h>

#include "comm.h"

/* 64-bit FNV-1a over the bytes. */
uint64_t hash_bytes(const void *data, size_t bytes);

/* Gathers every rank's hash into hashes[0..size-1] (on every rank). Returns 1 when all
 * are equal, 0 when not, -1 on a communication error. */
int replicas_identical(Comm *comm, uint64_t local_hash, uint64_t *hashes);

#endif
