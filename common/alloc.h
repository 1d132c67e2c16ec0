/* A tracking allocator: every byte the course hands out goes through here, tagged with
 * what it holds, so lesson 00 can print measured memory beside the estimate and the
 * batch sweep can stop at a memory budget the way a GPU stops at its capacity. */
#ifndef DTC_ALLOC_H
#define DTC_ALLOC_H

#include <stddef.h>

typedef enum {
    MEM_PARAMS, MEM_GRADS, MEM_ADAM_M, MEM_ADAM_V,
    MEM_MASTER,        /* mixed precision: the fp32 copy of the parameters AdamW updates */
    MEM_ACTIVATIONS,   /* forward results kept for backward */
    MEM_SCRATCH,       /* backward working buffers */
    MEM_DATA,          /* token shards and batches */
    MEM_COMM,          /* communication buffers */
    MEM_OTHER,
    MEM_NUM_KINDS
} MemKind;

const char *mem_kind_name(MemKind kind);

/* 64-byte aligned. Returns NULL when the limit would be exceeded or the system is out of
 * memory; never aborts. Zero-filled, except communication buffers (MEM_COMM), which start
 * as NaN: a collective's working buffer holds nothing until it is written, and code that
 * reads what it never wrote (the padding of a shard, say) fails at once instead of by a
 * hair. mem_free fills a block with NaN before giving it back, for the same reason. */
void *mem_alloc(size_t bytes, MemKind kind);
void mem_free(void *ptr);

/* The bookkeeping alone, for allocators of other memory (the GPU's): mem_account returns
 * 1 and counts the bytes, or 0 when the limit refuses them (counted as a refusal). */
int mem_account(size_t bytes, MemKind kind);
void mem_unaccount(size_t bytes, MemKind kind);

/* Live blocks by address, so the communication log can name the buffer a call works on
 * ("gradients#0+1536": the first gradient block this process allocated, element 1536).
 * mem_alloc and mem_free keep it for host memory; another device's allocator calls these. */
typedef struct {
    MemKind kind;
    long serial;   /* the how-manieth block of its kind this process allocated, from 0 */
    size_t offset; /* bytes from the block's start */
    size_t bytes;  /* the block's size */
} MemBlockPlace;

/* Returns 0, or -1 when out of host memory for the table (the block is then unknown). */
int mem_block_added(const void *ptr, size_t bytes, MemKind kind);
/* Forgets the block at ptr; 0 if no live block starts there (its size and kind otherwise). */
int mem_block_removed(const void *ptr, size_t *bytes, MemKind *kind);
/* Which live block holds address; 0 if none does. */
int mem_block_find(const void *address, MemBlockPlace *place);

/* Who hears of every change: a block added or removed, and the bytes in use of a kind after
 * each change (an allocation that failed included: its bytes went up and came back). One
 * listener, installed by whoever sits above the allocator (a run gives its record of events
 * these, events.h); NULL: nobody. The allocator calls nothing else above it. */
typedef enum { MEM_BLOCK_ADDED, MEM_BLOCK_REMOVED, MEM_IN_USE_CHANGED } MemChangeType;
typedef struct {
    MemChangeType type;
    const void *ptr; /* the block's start; NULL for MEM_IN_USE_CHANGED */
    size_t bytes;    /* the block's size, or the kind's bytes in use after the change */
    MemKind kind;
} MemChange;
typedef void (*MemListener)(const MemChange *change);
void mem_set_listener(MemListener listener);

/* 0 = no limit. The limit applies to everything but MEM_DATA. */
void mem_set_limit(size_t bytes);
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
