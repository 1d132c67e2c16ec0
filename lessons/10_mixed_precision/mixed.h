/* Lesson 10's exercise exports one strategy; its flags are given. */
#ifndef LESSON10_MIXED_H
#define LESSON10_MIXED_H

#include "strategy.h"

typedef struct {
    int stage;         /* --stage: the ZeRO stage, 1, 2 (the default) or 3 */
    int fp32_matmuls;  /* --fp32-matmuls: the matmuls multiply fp32 activations, not 16-bit */
    int fp16;          /* --fp16: fp16 with a dynamic loss scale, not bf16 */
    int scale_window;  /* --scale-window: steps in a row without an overflow before the fp16
                        * loss scale doubles */
} MixedOptions;        /* what run->options points at */

/* fp16's loss scale starts here, as PyTorch's GradScaler does: 2^16; and doubles after this
 * many good steps in a row unless --scale-window says otherwise (GradScaler's too). */
#define FIRST_LOSS_SCALE 65536.0f
#define DEFAULT_SCALE_WINDOW 2000

extern const Strategy mixed;

#endif
