#!/bin/bash
# Stands in for nvcc when the CUDA build is made for the emulated GPU (make test-emu):
#   nvcc_emu.sh [flags...] -c FILE.cu -o FILE.o
# A .cu file with kernels goes through rewrite_launches.py and g++ with the emulation's
# device headers (tests/emu/include); one with host code only goes through g++ with the
# real CUDA headers, like the C files. The other flags (nvcc's) are ignored.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source='' object=''
while [ $# -gt 0 ]; do
    case "$1" in
        -c) source=$2; shift 2 ;;
        -o) object=$2; shift 2 ;;
        *) shift ;;
    esac
done
if [ -z "$source" ] || [ -z "$object" ]; then
    echo "nvcc_emu.sh: usage: nvcc_emu.sh [flags] -c FILE.cu -o FILE.o" >&2
    exit 2
fi
# One constant differs from the GPU's build: a pass of the softmax forward takes 1024 rows, not
# 65536, so the test of several passes emulates 2051 rows of 512 threads, not 131075.
flags=(-O2 -Wall -Wextra -Werror -DDTC_LOSS_ROWS_PER_PASS=1024 -Icommon -Icommon/cuda -MMD -MP -x c++ -c -o "$object")
if grep -q '<<<' "$source"; then
    rewritten=${object%.o}.emu.cpp
    python3 "$here/rewrite_launches.py" "$source" "$rewritten"
    # -Wno-unknown-pragmas: #pragma unroll is nvcc's
    g++ -std=c++20 -Wno-unknown-pragmas -I"$here/include" "${flags[@]}" "$rewritten"
else
    g++ -std=c++17 -I"${CUDA_HOME:-/usr/local/cuda}/include" "${flags[@]}" "$source"
fi
