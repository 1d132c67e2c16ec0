#!/bin/sh
# Runs a command under mpiexec with CUDA_VISIBLE_DEVICES set to the rank's number, as
# launchers that bind one GPU to each rank do: every rank then sees one GPU, as GPU 0.
# MPICH's hydra gives each process its rank in PMI_RANK.
rank=${PMI_RANK:-$OMPI_COMM_WORLD_RANK}
if [ -z "$rank" ]; then
    echo "own_gpu_per_rank.sh: run it under mpiexec (no PMI_RANK)" >&2
    exit 2
fi
CUDA_VISIBLE_DEVICES=$rank exec "$@"
