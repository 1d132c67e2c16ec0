/* Lesson 02's exercise exports one strategy: the hooks the training loop calls, at the
 * points common/strategy.h describes. */
#ifndef LESSON02_NAIVE_DDP_H
#define LESSON02_NAIVE_DDP_H

#include "strategy.h"

extern const Strategy naive_ddp;

#endif
