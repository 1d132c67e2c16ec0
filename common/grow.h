/* Room for one more item at the end of an array that grows as it fills: the logs, the trace
 * and the allocator's own tables, all bookkeeping kept outside the tracking allocator. */
#ifndef DTC_GROW_H
#define DTC_GROW_H

#include <stdlib.h>

/* items (count used of *capacity) as it is while there is room; else reallocated to twice
 * the capacity (first, for an empty one), *capacity updated. NULL when out of memory: items
 * and *capacity are then as they were. */
static inline void *grow_for_one(void *items, size_t *capacity, size_t count, size_t item_size, size_t first)
{
    if (count < *capacity)
        return items;
    size_t wanted = *capacity ? 2 * *capacity : first;
    void *grown = realloc(items, wanted * item_size);
    if (grown != NULL)
        *capacity = wanted;
    return grown;
}

#endif
