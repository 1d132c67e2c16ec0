#include "alloc.h"

#include "grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

/* Each block carries a header (size and kind) so mem_free can account for it. The header
 * occupies one alignment unit so the caller's pointer stays 64-byte aligned. */
enum { ALIGNMENT = 64 };

typedef struct {
    size_t bytes;
    MemKind kind;
} BlockHeader;

/* Every float of a block filled with this byte is a NaN. */
enum { NAN_BYTE = 0xFF };

static size_t bytes_in_use[MEM_NUM_KINDS];
static size_t total_in_use;
static size_t peak_total;
static size_t limit_bytes;
static size_t refusals;

static const char *const kind_names[MEM_NUM_KINDS] = {
    "parameters", "gradients", "adamw_m", "adamw_v", "master_weights", "activations",
    "backward_scratch", "data", "communication", "other",
};

const char *mem_kind_name(MemKind kind)
{
    return kind_names[kind];
}

static MemListener listener;

void mem_set_listener(MemListener heard_by)
{
    listener = heard_by;
}

static void tell(MemChangeType type, const void *ptr, size_t bytes, MemKind kind)
{
    if (listener != NULL)
        listener(&(MemChange){type, ptr, bytes, kind});
}

/* The bytes in use of kind changed: the listener hears its new total. */
static void note_change(MemKind kind)
{
    tell(MEM_IN_USE_CHANGED, NULL, bytes_in_use[kind], kind);
}

int mem_account(size_t bytes, MemKind kind)
{
    /* The limit stands in for device memory; token shards stay in host memory on any
     * device, so they do not count against it. */
    size_t device_in_use = total_in_use - bytes_in_use[MEM_DATA];
    if (limit_bytes != 0 && kind != MEM_DATA && device_in_use + bytes > limit_bytes) {
        refusals++;
        return 0;
    }
    bytes_in_use[kind] += bytes;
    total_in_use += bytes;
    if (total_in_use > peak_total)
        peak_total = total_in_use;
    note_change(kind);
    return 1;
}

void mem_unaccount(size_t bytes, MemKind kind)
{
    bytes_in_use[kind] -= bytes;
    total_in_use -= bytes;
    note_change(kind);
}

void *mem_alloc(size_t bytes, MemKind kind)
{
    if (!mem_account(bytes, kind))
        return NULL;
    size_t rounded = (bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    uint8_t *block = aligned_alloc(ALIGNMENT, ALIGNMENT + rounded);
    if (block == NULL) {
        mem_unaccount(bytes, kind);
        return NULL;
    }
    memset(block + ALIGNMENT, kind == MEM_COMM ? NAN_BYTE : 0, rounded);
    BlockHeader *header = (BlockHeader *)block;
    header->bytes = bytes;
    header->kind = kind;
    /* a host block unknown to the table only goes unnamed in the log: mem_free needs the header */
    (void)mem_block_added(block + ALIGNMENT, bytes, kind);
    return block + ALIGNMENT;
}

void mem_free(void *ptr)
{
    if (ptr == NULL)
        return;
    uint8_t *block = (uint8_t *)ptr - ALIGNMENT;
    BlockHeader *header = (BlockHeader *)block;
    mem_block_removed(ptr, NULL, NULL);
    mem_unaccount(header->bytes, header->kind);
    memset(ptr, NAN_BYTE, header->bytes);
    free(block);
}

/* ---------------------------------------------------------------- live blocks */

/* Tens of blocks at most live at once: a plain array, searched from the newest end. Kept
 * outside the tracking allocator: it is bookkeeping, not the model's memory. */
typedef struct {
    const uint8_t *start;
    size_t bytes;
    MemKind kind;
    long serial;
} LiveBlock;

static LiveBlock *live_blocks;
static size_t num_live, live_capacity;
static long blocks_made[MEM_NUM_KINDS];
int mem_block_added(const void *ptr, size_t bytes, MemKind kind)
{
    LiveBlock *blocks = grow_for_one(live_blocks, &live_capacity, num_live, sizeof *blocks, 64);
    if (blocks == NULL)
        return -1;
    live_blocks = blocks;
    live_blocks[num_live++] = (LiveBlock){ptr, bytes, kind, blocks_made[kind]++};
    tell(MEM_BLOCK_ADDED, ptr, bytes, kind);
    return 0;
}

int mem_block_removed(const void *ptr, size_t *bytes, MemKind *kind)
{
    for (size_t i = num_live; i-- > 0;)
        if (live_blocks[i].start == ptr) {
            tell(MEM_BLOCK_REMOVED, ptr, live_blocks[i].bytes, live_blocks[i].kind);
            if (bytes != NULL)
                *bytes = live_blocks[i].bytes;
            if (kind != NULL)
                *kind = live_blocks[i].kind;
            live_blocks[i] = live_blocks[--num_live];
            return 1;
        }
    return 0;
}

int mem_block_find(const void *address, MemBlockPlace *place)
{
    const uint8_t *at = address;
    for (size_t i = num_live; i-- > 0;) {
        const LiveBlock *b = &live_blocks[i];
        /* a 0-byte block still owns its start address */
        if (at >= b->start && (at < b->start + b->bytes || at == b->start)) {
            *place = (MemBlockPlace){b->kind, b->serial, (size_t)(at - b->start), b->bytes};
            return 1;
        }
    }
    return 0;
}

void mem_set_limit(size_t bytes) { limit_bytes = bytes; }
size_t mem_limit_refusals(void) { return refusals; }
size_t mem_in_use(MemKind kind) { return bytes_in_use[kind]; }
size_t mem_in_use_total(void) { return total_in_use; }
size_t mem_peak_total(void) { return peak_total; }
void mem_reset_peak(void) { peak_total = total_in_use; }

size_t mem_peak_rss(void)
{
    struct rusage usage;
    if (getrusage(RUSAGE_SELF, &usage) != 0)
        return 0;
    return (size_t)usage.ru_maxrss * 1024; /* Linux reports kilobytes */
}
