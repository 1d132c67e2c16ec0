#include "alloc.h"

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

static size_t bytes_in_use[MEM_NUM_KINDS];
static size_t total_in_use;
static size_t peak_total;
static size_t limit_bytes;
static size_t refusals;

static const char *const kind_names[MEM_NUM_KINDS] = {
    "parameters", "gradients", "adamw_m", "adamw_v", "activations",
    "backward_scratch", "data", "communication", "other",
};

const char *mem_kind_name(MemKind kind)
{
    return kind_names[kind];
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
    return 1;
}

void mem_unaccount(size_t bytes, MemKind kind)
{
    bytes_in_use[kind] -= bytes;
    total_in_use -= bytes;
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
    memset(block + ALIGNMENT, 0, rounded);
    BlockHeader *header = (BlockHeader *)block;
    header->bytes = bytes;
    header->kind = kind;
    return block + ALIGNMENT;
}

void mem_free(void *ptr)
{
    if (ptr == NULL)
        return;
    uint8_t *block = (uint8_t *)ptr - ALIGNMENT;
    BlockHeader *header = (BlockHeader *)block;
    mem_unaccount(header->bytes, header->kind);
    free(block);
}

void mem_set_limit(size_t bytes) { limit_bytes = bytes; }
size_t mem_limit(void) { return limit_bytes; }
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
