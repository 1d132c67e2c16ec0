/* The NCCL backend of comm.h (CUDA builds). */
#ifndef DTC_COMM_NCCL_H
#define DTC_COMM_NCCL_H

#include <stddef.h>

#include "comm.h"

/* Switches comm's collectives on GPU buffers to NCCL, bootstrapped over the MPI world
 * (rank 0 makes the unique id and broadcasts it). Host buffers keep going through MPI.
 * Needs cuda_device_setup first and one GPU per rank (every_rank_has_own_gpu): NCCL refuses
 * two ranks on one GPU. Collective over all ranks; 0 on every rank, or -1 on every rank
 * with a one-line reason. */
int comm_use_nccl(Comm *comm, char *err, size_t err_len);

/* 1 when no two ranks on a machine drive the same GPU (same PCI bus id), else 0 with why
 * naming two that do ("local rank 1 uses GPU 0000:18:00.0, as local rank 0 does"). Needs
 * cuda_device_setup first. Collective over all ranks; every rank gets the same answer. */
int every_rank_has_own_gpu(Comm *comm, char *why, size_t why_len);

/* An NCCL version code (ncclGetVersion, NCCL_VERSION_CODE) as text: "2.28.3". */
void nccl_version_text(int code, char *out, size_t len);

#endif
