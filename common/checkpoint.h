/* Model checkpoints in llm.c's fp32 file format, so files move freely between this
 * course and that ecosystem.
 *
 * File layout (little-endian, as llm.c writes it on x86 and ARM):
 *   header: 256 x int32 = [20240326 magic, 3 version, maxT, V, L, NH, C, Vp, 0, ...]
 *   then float32 tensors in tensor-major order: wte, wpe, then every layer's ln1w,
 *   then every layer's ln1b, ... through fcprojb, then lnfw, lnfb.
 *
 * In memory the parameters are unit-major (layout.h); save and load reorder tensor by
 * tensor while streaming, so no second copy of the model is ever allocated. */
#ifndef DTC_CHECKPOINT_H
#define DTC_CHECKPOINT_H

#include <stddef.h>

#include "gpt_config.h"

#define CHECKPOINT_MAGIC 20240326
#define CHECKPOINT_VERSION 3           /* llm.c's fp32 version; 5 would be bf16 */
#define CHECKPOINT_HEADER_INTS 256
#define CHECKPOINT_HEADER_BYTES (CHECKPOINT_HEADER_INTS * 4)

/* All functions return 0 on success, or -1 with one line in err (naming the file and
 * the problem). err may be NULL or err_len 0 when the caller does not want the text. */

/* Reads and checks only the header (magic, version, a usable shape) and fills cfg, so a
 * caller can size its buffers before checkpoint_load. */
int checkpoint_read_config(const char *path, GPTConfig *cfg, char *err, size_t err_len);

/* Loads a checkpoint into params: unit-major, gpt_num_params(expected) floats. The
 * file's shape must equal expected field by field and its size must be exactly
 * header + 4 * num_params bytes. On failure params may be partly overwritten. */
int checkpoint_load(const char *path, const GPTConfig *expected, float *params,
                    char *err, size_t err_len);

/* Writes params (unit-major, gpt_num_params(cfg) floats) as a checkpoint. The data goes
 * to a temporary file beside path, is flushed to disk, and is then renamed over path,
 * so a crash leaves either the previous file or the complete new one, never half. */
int checkpoint_save(const char *path, const GPTConfig *cfg, const float *params,
                    char *err, size_t err_len);

#endif
