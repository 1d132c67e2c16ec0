/* The unit-major layout of the flat parameter buffer.
 *
 * unit 0       = wte (Vp x C) then wpe (maxT x C)
 * unit 1..L    = one transformer block each, tensors in TENSOR_LN1W..TENSOR_FCPROJB order
 * unit L+1     = lnfw, lnfb
 *
 * Every unit is one contiguous range, so a bucket, a flattened all-reduce and a ZeRO
 * shard are all plain ranges. Gradients and AdamW moments share this layout. */
#ifndef DTC_LAYOUT_H
#define DTC_LAYOUT_H

#include "gpt_config.h"

/* Tensor kinds in llm.c's checkpoint (tensor-major) order. */
typedef enum {
    TENSOR_WTE, TENSOR_WPE,
    TENSOR_LN1W, TENSOR_LN1B, TENSOR_QKVW, TENSOR_QKVB, TENSOR_ATTPROJW, TENSOR_ATTPROJB,
    TENSOR_LN2W, TENSOR_LN2B, TENSOR_FCW, TENSOR_FCB, TENSOR_FCPROJW, TENSOR_FCPROJB,
    TENSOR_LNFW, TENSOR_LNFB,
    NUM_TENSOR_KINDS
} TensorKind;

typedef struct {
    size_t offset; /* first element, in floats, within the flat buffer */
    size_t count;  /* elements */
} Range;

const char *tensor_name(TensorKind kind);
int tensor_is_per_layer(TensorKind kind);
/* Elements of one instance of a tensor (one layer's worth for block tensors). */
size_t tensor_numel(const GPTConfig *cfg, TensorKind kind);
/* Where one tensor instance lives; layer is ignored for wte, wpe, lnfw, lnfb. */
Range tensor_range(const GPTConfig *cfg, TensorKind kind, int layer);

int gpt_num_units(const GPTConfig *cfg);               /* L + 2 */
Range unit_range(const GPTConfig *cfg, int unit);
size_t gpt_num_params(const GPTConfig *cfg);
/* The unit a tensor instance belongs to. */
int tensor_unit(const GPTConfig *cfg, TensorKind kind, int layer);

/* The tensor kinds of a unit: first, and one past the last. */
void unit_kinds(const GPTConfig *cfg, int unit, int *first, int *end);

/* The tensors of one unit, in layout order; returns how many were written (at most 12). */
int unit_tensors(const GPTConfig *cfg, int unit, Range out[12]);

#endif
