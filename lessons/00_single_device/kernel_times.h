/* Where a step's time goes: the device's kernel table with every layer operation timed.
 * The model calls its kernels through a table (common/kernels.h), so a copy of the table
 * whose entries time the real ones measures a real training step, call by call, without a
 * line of the model changing. Each call waits for the device (a GPU runs asynchronously)
 * before its clock stops, which a GPU step pays for: these times explain a step, the
 * untimed throughput figure is the step's speed. */
#ifndef LESSON00_KERNEL_TIMES_H
#define LESSON00_KERNEL_TIMES_H

#include "kernels.h"

/* The timed copy of inner (one at a time), its tallies empty. */
const Kernels *kernel_times_wrap(const Kernels *inner);

/* Empties the tallies (after warm-up steps). */
void kernel_times_reset(void);

/* Prints one row per operation and shape, slowest first, per step over `steps` steps of
 * step_seconds each; GFLOP/s for the matrix products and attention, and their share of
 * peak_flops_per_s when it is above 0. */
void kernel_times_print(int steps, double step_seconds, double peak_flops_per_s);

#endif
