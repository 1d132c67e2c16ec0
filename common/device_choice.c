#include "device_choice.h"

#include <stdio.h>
#include <string.h>

int device_check_choice(const char *device, const char *comm_backend, int tf32, char *err, size_t err_len)
{
    int on_gpu = strcmp(device, "cuda") == 0;
    if (!on_gpu && strcmp(device, "cpu") != 0)
        snprintf(err, err_len, "--device: unknown device '%s' (cpu or cuda)", device);
    else if (strcmp(comm_backend, "auto") != 0 && strcmp(comm_backend, "mpi") != 0 && strcmp(comm_backend, "nccl") != 0)
        snprintf(err, err_len, "--comm: unknown communicator '%s' (auto, mpi or nccl)", comm_backend);
    else if (!on_gpu && strcmp(comm_backend, "nccl") == 0)
        snprintf(err, err_len, "--comm nccl moves GPU memory: it needs --device cuda");
    else if (!on_gpu && tf32)
        snprintf(err, err_len, "--tf32 is a GPU setting: it needs --device cuda");
    else
        return 0;
    return -1;
}
