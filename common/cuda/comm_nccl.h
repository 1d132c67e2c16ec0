/* The NCCL backend of comm.h (CUDA builds). */
#ifndef DTC_COMM_NCCL_H
#define DTC_COMM_NCCL_H

#include <stddef.h>

#include "comm.h"

/* Switches comm's collectives on GPU buffers to NCCL, bootstrapped over the MPI world
 * (rank 0 makes the unique id and broadcasts it). Host buffers keep going through MPI.
 * Needs cuda_device_setup first and one GPU per rank on each machine: NCCL refuses two
 * ranks on one GPU. Collective over all ranks; 0 on every rank, or -1 on every rank with
 * a one-line reason. */
int comm_use_nccl(Comm *comm, char *err, size_t err_len);

/* "2.28.3" */
const char *nccl_version_text(void);

#endif
