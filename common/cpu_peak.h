/* One core's peak single-precision rate, measured: the yardstick for a CPU run's GFLOP/s.
 * A CPU has no data-sheet figure that holds on a virtual machine (clocks, turbo, and how
 * many AVX-512 FMA units the core has all vary), so the peak is timed: independent chains
 * of fused multiply-adds at each vector width the CPU has, the fastest width counting. */
#ifndef DTC_CPU_PEAK_H
#define DTC_CPU_PEAK_H

typedef struct {
    double flops_per_s; /* 0 when the CPU has no FMA instructions */
    const char *vectors; /* the width that reached it: "AVX-512" or "AVX2" */
} CpuPeak;

/* Takes about a tenth of a second on one thread. */
CpuPeak cpu_fma_peak(void);

#endif
