/* Lesson 09's exercise exports one strategy; its flag is given. */
#ifndef LESSON09_ZERO3_H
#define LESSON09_ZERO3_H

#include "strategy.h"

typedef struct {
    int no_prefetch; /* --no-prefetch */
} Zero3Options;      /* what run->options points at */

extern const Strategy zero3;

#endif
