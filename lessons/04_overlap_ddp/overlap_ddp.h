/* Lesson 04's exercise exports one strategy: the hooks the training loop calls, at the
 * points common/strategy.h describes. */
#ifndef LESSON04_OVERLAP_DDP_H
#define LESSON04_OVERLAP_DDP_H

#include "strategy.h"

extern const Strategy overlap_ddp;

#endif
