#include "gpu_peaks.h"

#include <cuda_runtime_api.h>
#include <string.h>

/* NVIDIA's data-sheet figures in TFLOP/s, dense. The first entry whose words all appear in
 * the device name wins, so the more specific names come first. */
typedef struct {
    const char *name_has, *and_has;
    double fp32_tflops, tf32_tflops;
} GpuPeak;

static const GpuPeak peaks[] = {
    {"H200", NULL, 66.9, 494.7},
    {"H100", "PCIe", 51.2, 378.0},
    {"H100", NULL, 66.9, 494.7}, /* SXM5 (the "H100 80GB HBM3" name) */
    {"A100", NULL, 19.5, 156.0},
    {"L40S", NULL, 91.6, 183.0},
    {"L40", NULL, 90.5, 90.5},
    {"L4", NULL, 30.3, 60.0},
    {"A10", NULL, 31.2, 62.5},
};

double gpu_peak_flops(int device, int tf32)
{
    struct cudaDeviceProp props;
    if (device < 0 || cudaGetDeviceProperties(&props, device) != cudaSuccess)
        return 0.0;
    for (size_t i = 0; i < sizeof peaks / sizeof peaks[0]; i++)
        if (strstr(props.name, peaks[i].name_has) != NULL &&
            (peaks[i].and_has == NULL || strstr(props.name, peaks[i].and_has) != NULL))
            return 1e12 * (tf32 ? peaks[i].tf32_tflops : peaks[i].fp32_tflops);
    return 0.0;
}
