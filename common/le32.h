/* Little-endian 32-bit integers in files (llm.c's shards and tokenizer files), the same on
 * any host. */
#ifndef DTC_LE32_H
#define DTC_LE32_H

#include <stdint.h>

static inline void le32_put(uint8_t *dst, uint32_t value)
{
    for (int i = 0; i < 4; i++)
        dst[i] = (uint8_t)(value >> (8 * i));
}

static inline uint32_t le32_get(const uint8_t *src)
{
    uint32_t value = 0;
    for (int i = 0; i < 4; i++)
        value |= (uint32_t)src[i] << (8 * i);
    return value;
}

#endif
