#ifndef DTC_TIMER_H
#define DTC_TIMER_H

#include <time.h>

/* Seconds on a monotonic clock: immune to wall-clock adjustments during a run. */
static inline double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
