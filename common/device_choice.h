/* The values --device, --comm and --tf32 may take, checked without opening anything: a
 * program that only reads a run's flags (the schedule checker, say) needs no device and no
 * communicator for it. */
#ifndef DTC_DEVICE_CHOICE_H
#define DTC_DEVICE_CHOICE_H

#include <stddef.h>

/* Checks the --device, --comm and --tf32 values (and that they go together): 0, or -1 with
 * a one-line reason naming the flag. */
int device_check_choice(const char *device, const char *comm_backend, int tf32, char *err, size_t err_len);

#endif
