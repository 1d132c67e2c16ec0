/* A tracking allocator: every byte the course hands out goes through here, tagged with
 * what it holds, so lesson 00 can print measured memory beside the estimate and the
 * batch sweep can stop at a memory budget the way a GPU stops at its capacity. */
#ifndef DTC_ALLOC_H
#define DTC_ALLOC_H

#include <stddef.h>

typedef enum {
    MEM_PARAMS, MEM_GRADS, MEM_ADAM_M, MEM_ADAM_V,
    MEM_ACTIVATIONS,   /* forward results kept for backward */
    MEM_SCRATCH,       /* backward working buffers */
    MEM_DATA,          /* token shards and batches */
    MEM_COMM,          /* communication buffers */
    MEM_OTHER,
    MEM_NUM_KINDS
} MemKind;

const char *mem_kind_name(MemKind kind);

/* Zero-filled, 64-byte aligned. Returns NULL when the limit would be exceeded or the
 * system is out of memory; never aborts. */
void *mem_alloc(size_t bytes, MemKind kind);
void mem_free(void *ptr);

/* The bookkeeping alone, for allocators of other memory (the GPU's): mem_account returns
 * 1 and counts the bytes, or 0 when the limit refuses them (counted as a refusal). */
int mem_account(size_t bytes, MemKind kind);
void mem_unaccount(size_t bytes, MemKind kind);

/* 0 = no limit. The limit applies to everything but MEM_DATA. */
void mem_set_limit(size_t bytes);
size_t mem_limit(void);
/* How many allocations the limit has refused so far: tells "over budget" apart from
 * other failures. */
size_t mem_limit_refusals(void);
size_t mem_in_use(MemKind kind);
size_t mem_in_use_total(void);
size_t mem_peak_total(void);
void mem_reset_peak(void);
/* The process's peak resident set, from the kernel, in bytes. */
size_t mem_peak_rss(void);

#endif
