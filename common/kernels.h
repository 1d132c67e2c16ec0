/* The device seam. The model and the optimizer are written once, in terms of this table
 * of memory and layer operations; each device supplies one table. kernels_cpu.c is the
 * CPU table (C11 + CBLAS); a CUDA table (kernels + cuBLAS) plugs in beside it without
 * any change to model.c, optimizer.c or a lesson. Every pointer a kernel receives is
 * memory of that device, obtained from its alloc. */
#ifndef DTC_KERNELS_H
#define DTC_KERNELS_H

#include <stddef.h>

#include "alloc.h"
#include "float16.h"

/* The attention kernels' scratch: one head's T x T scores (backward), or its keys
 * transposed, C/NH x T (forward). */
static inline size_t attention_scratch_floats(int T, int C, int NH)
{
    size_t hs = (size_t)(C / NH);
    return (size_t)T * ((size_t)T > hs ? (size_t)T : hs);
}

/* The 16-bit attention's rounded operands: q, k and v (N x 3C), dy (N x C), and a T x T
 * matrix for each head of every sequence (the probabilities, then d(scores)). */
static inline size_t attention_operands16(int B, int T, int C, int NH)
{
    return (size_t)4 * B * T * C + (size_t)B * NH * T * T;
}

typedef struct {
    float lr, beta1, beta2, eps, weight_decay;
} AdamWHyper;

typedef struct Kernels {
    const char *device_name;
    /* bytes per operand of the 16-bit matmuls below: 2 where the GEMM reads 16-bit floats
     * itself, 4 where it reads the rounded values as floats */
    size_t operand16_bytes;

    /* memory */
    /* zero-filled, but for communication buffers (MEM_COMM), which start as NaN (alloc.h); NULL
     * when out of memory */
    void *(*alloc)(size_t bytes, MemKind kind);
    void (*free)(void *ptr);
    void (*zero)(void *ptr, size_t bytes);
    void (*to_device)(void *dst, const void *host_src, size_t bytes);
    void (*to_host)(void *host_dst, const void *src, size_t bytes);
    void (*copy)(void *dst, const void *src, size_t bytes); /* device to device */

    /* layers: N = rows (B*T), C = channels, OC = output channels. Backward kernels
     * accumulate (+=) into parameter gradients; "dinp" outputs say below whether they
     * overwrite or accumulate. A layer's buffers never overlap (but where one works in
     * place, as said), so a device may take them as restrict. */
    void (*encoder_forward)(float *out, const int *tokens, const float *wte, const float *wpe,
                            int B, int T, int C);
    void (*encoder_backward)(float *dwte, float *dwpe, const float *dout, const int *tokens,
                             int B, int T, int C);
    void (*layernorm_forward)(float *out, float *mean, float *rstd, const float *inp,
                              const float *weight, const float *bias, int N, int C);
    /* dinp += */
    void (*layernorm_backward)(float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, const float *mean,
                               const float *rstd, int N, int C);
    /* out = inp (N x C) . weight^T (weight is OC x C) + bias; bias may be NULL */
    void (*matmul_forward)(float *out, const float *inp, const float *weight, const float *bias,
                           int N, int C, int OC);
    /* dinp = (overwrite); dweight, dbias += ; dbias may be NULL */
    void (*matmul_backward)(float *dinp, float *dweight, float *dbias, const float *dout,
                            const float *inp, const float *weight, int N, int C, int OC);
    /* The same two matmuls as tensor cores run them in mixed precision: inp, weight and dout
     * rounded to the 16-bit format (ties to even) into `operands`, each product of two
     * 16-bit values exact in fp32, the sums in fp32; out, dinp, dweight and dbias in fp32 as
     * above (dbias sums the fp32 dout: a bias is added, not multiplied). `operands` is
     * scratch of this device with room for N*C + OC*C + N*OC operands of operand16_bytes
     * each. */
    void (*matmul_forward_16)(Format16 format, float *out, const float *inp, const float *weight,
                              const float *bias, int N, int C, int OC, void *operands);
    void (*matmul_backward_16)(Format16 format, float *dinp, float *dweight, float *dbias, const float *dout,
                               const float *inp, const float *weight, int N, int C, int OC, void *operands);
    /* qkv is N x 3C (q, k, v per row); att keeps the B x NH x T x T softmax probabilities,
     * 0 above the diagonal: zeros that att holds already may be left as they are (the CPU
     * leaves those past its blocks, alloc's zeros, as nothing else writes att); scratch
     * holds attention_scratch_floats(T, C, NH) floats in both directions */
    void (*attention_forward)(float *out, float *att, float *scratch, const float *qkv, int B, int T, int C,
                              int NH);
    /* dqkv = (overwrite) */
    void (*attention_backward)(float *dqkv, float *scratch, const float *dout, const float *qkv,
                               const float *att, int B, int T, int C, int NH);
    /* The same attention as mixed precision runs it on tensor cores: every product's operands
     * (q, k, v, the probabilities, dy, d(scores)) rounded to the 16-bit format into
     * `operands`, each product of two exact in fp32, the sums in fp32; the softmax, its
     * backward, att and every result in fp32. `operands` is scratch of this device with room
     * for attention_operands16(B, T, C, NH) operands of operand16_bytes each. */
    void (*attention_forward_16)(Format16 format, float *out, float *att, float *scratch, const float *qkv, int B,
                                 int T, int C, int NH, void *operands);
    void (*attention_backward_16)(Format16 format, float *dqkv, float *scratch, const float *dout, const float *qkv,
                                  const float *att, int B, int T, int C, int NH, void *operands);
    /* out = gelu(inp); inp then holds what this device's backward reads: the CPU writes the
     * slope there, which shares its costly part, e^(-2u), with the value (scalar_math.h); the
     * GPU, bound by memory, leaves inp as it is and computes the slope again in backward */
    void (*gelu_forward)(float *out, float *inp, size_t n);
    /* dinout holds d(out) on entry and d(inp) on return; inp is what forward left there */
    void (*gelu_backward)(float *dinout, const float *inp, size_t n);
    void (*residual_forward)(float *out, const float *a, const float *b, size_t n);
    /* Turns logits (N x V) into probabilities in place; returns the mean loss over the N
     * rows (targets given) or 0 (targets NULL). */
    float (*softmax_crossentropy_forward)(float *logits_to_probs, const int *targets, int N, int V);
    /* Turns probabilities into d(loss)/d(logits) in place for loss = scale * sum of row losses. */
    void (*softmax_crossentropy_backward)(float *probs_to_dlogits, const int *targets, int N,
                                          int V, float scale);

    /* optimizer: one AdamW step on n elements; grads are multiplied by grad_scale first
     * (clipping); step is 1-based for bias correction. */
    void (*adamw_update)(float *params, const float *grads, float *m, float *v, size_t n,
                         AdamWHyper hyper, float grad_scale, int step);
    double (*sum_of_squares)(const float *x, size_t n);

    /* mixed precision (float16.h): dst = the nearest value of the format to each src (ties
     * to even; past fp16's range, infinity), and back (exact) */
    void (*round_to_16)(Format16 format, bits16 *dst, const float *src, size_t n);
    void (*widen_16)(Format16 format, float *dst, const bits16 *src, size_t n);

    /* Returns when every operation queued so far has finished (a GPU runs them
     * asynchronously; the CPU has nothing to wait for). Step timers call it. */
    void (*synchronize)(void);

    /* The clock a trace of this device's work is timed on (trace.h); NULL: the host's. */
    const struct TraceDeviceClock *trace_clock;
} Kernels;

/* Every device names its layer and optimizer kernels as the table does, so its table binds
 * them all with this one line; the memory calls, operand16_bytes and synchronize differ
 * by device and are bound by hand. */
#define KERNELS_BY_NAME \
    .encoder_forward = encoder_forward, \
    .encoder_backward = encoder_backward, \
    .layernorm_forward = layernorm_forward, \
    .layernorm_backward = layernorm_backward, \
    .matmul_forward = matmul_forward, \
    .matmul_backward = matmul_backward, \
    .matmul_forward_16 = matmul_forward_16, \
    .matmul_backward_16 = matmul_backward_16, \
    .attention_forward = attention_forward, \
    .attention_backward = attention_backward, \
    .attention_forward_16 = attention_forward_16, \
    .attention_backward_16 = attention_backward_16, \
    .gelu_forward = gelu_forward, \
    .gelu_backward = gelu_backward, \
    .residual_forward = residual_forward, \
    .softmax_crossentropy_forward = softmax_crossentropy_forward, \
    .softmax_crossentropy_backward = softmax_crossentropy_backward, \
    .adamw_update = adamw_update, \
    .sum_of_squares = sum_of_squares, \
    .round_to_16 = round_to_16, \
    .widen_16 = widen_16,

extern const Kernels cpu_kernels;

#endif
