#include "gpu_peaks.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* NVIDIA's data-sheet figures in TFLOP/s, dense: the sheets print the tensor cores' figures
 * with 2:4 sparsity, twice these. The first entry whose words all appear in the device name
 * wins, so the more specific names come first: the NVL and PCIe boards of a GPU run at lower
 * clocks than its SXM module. */
typedef struct {
    const char *name_has, *and_has;
    double tflops[3]; /* by GpuPeakFormat: fp32, TF32, bf16/fp16 */
} GpuPeak;

static const GpuPeak peaks[] = {
    {"H200", "NVL", {60.0, 417.5, 835.5}},
    {"H200", NULL, {66.9, 494.7, 989.4}},  /* SXM */
    {"H100", "NVL", {60.0, 417.5, 835.5}},
    {"H100", "PCIe", {51.2, 378.0, 756.5}},
    {"H100", NULL, {66.9, 494.7, 989.4}},  /* SXM5 (the "H100 80GB HBM3" name) */
    {"A100", NULL, {19.5, 156.0, 312.0}},
    {"L40S", NULL, {91.6, 183.0, 362.0}},
    {"L40", NULL, {90.5, 90.5, 181.0}},
    {"L4", NULL, {30.3, 60.0, 121.0}},
    {"A10", NULL, {31.2, 62.5, 125.0}},
};

double gpu_peak_flops(int device, GpuPeakFormat format)
{
    struct cudaDeviceProp props;
    if (device < 0 || (unsigned)format > GPU_PEAK_16BIT || cudaGetDeviceProperties(&props, device) != cudaSuccess)
        return 0.0;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(props.name, peaks[i].name_has) != NULL &&
            (peaks[i].and_has == NULL || strstr(props.name, peaks[i].and_has) != NULL))
            return 1e12 * peaks[i].tflops[format];
    return 0.0;
}
