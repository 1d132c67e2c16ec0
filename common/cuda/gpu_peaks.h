/* Data-sheet peaks of the GPUs the course is run on, for MFU. */
#ifndef DTC_GPU_PEAKS_H
#define DTC_GPU_PEAKS_H

/* Dense (no sparsity) FLOP/s of GPU `device` for fp32 on CUDA cores (tf32 = 0) or TF32 on
 * tensor cores (tf32 = 1); 0 when the GPU is not in the table. */
double gpu_peak_flops(int device, int tf32);

#endif
