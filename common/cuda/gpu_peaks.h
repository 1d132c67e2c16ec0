/* Data-sheet peaks of the GPUs the course is run on, for MFU. */
#ifndef DTC_GPU_PEAKS_H
#define DTC_GPU_PEAKS_H

/* The units a matrix product runs on: CUDA cores in fp32, or tensor cores on TF32 or on
 * 16-bit operands (bf16 and fp16 have the same peak on every GPU in the table). */
typedef enum { GPU_PEAK_FP32, GPU_PEAK_TF32, GPU_PEAK_16BIT } GpuPeakFormat;

/* Dense (no sparsity) FLOP/s of GPU `device` in that format; 0 when the GPU is not in the
 * table. */
double gpu_peak_flops(int device, GpuPeakFormat format);

#endif
