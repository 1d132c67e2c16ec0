/* Lesson 07's exercise exports one strategy and one question about its shards. */
#ifndef LESSON07_ZERO1_H
#define LESSON07_ZERO1_H

#include <stddef.h>

#include "strategy.h"

extern const Strategy zero1;

/* The part of unit `unit` that rank `rank` of `world` owns: how many of its elements are
 * real (not padding), and in *first where its shard starts in the unit (at or past the
 * unit's count when it owns only padding). `07_zero1 plan` and the tests ask it. */
size_t zero1_owned(const GPTConfig *cfg, int world, int rank, int unit, size_t *first);

#endif
