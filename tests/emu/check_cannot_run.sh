#!/usr/bin/env bash
# Builds tests/emu/fixtures/dynamic_shared.cu (a kernel with dynamic shared memory, which
# the emulated GPU cannot run) the way make test-emu builds the course's kernels, links it
# with the emulation, and runs it: plain, then with the GPU tests' skip hook.
#
#   tests/emu/check_cannot_run.sh
#
# Prints what each run said; exits with the plain run's status (77: skipped, as it should).
set -euo pipefail
cd "$(dirname "$0")/../.."
cuda=${CUDA_HOME:-/usr/local/cuda}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tests/emu/nvcc_emu.sh -c tests/emu/fixtures/dynamic_shared.cu -o "$work/kernel.o"
gcc -std=c11 -O1 -D_DEFAULT_SOURCE -I"$cuda/include" -c tests/emu/emu_runtime.c -o "$work/runtime.o"
g++ -std=c++20 -O1 -Itests/emu/include -Itests/emu -c tests/emu/emu_grid.cpp -o "$work/grid.o"
for hooked in 0 1; do
    define=()
    [ $hooked = 1 ] && define=(-DHOOKED)
    g++ -std=c++20 -O1 -I"$cuda/include" "${define[@]}" -c tests/emu/fixtures/run_dynamic_shared.cpp -o "$work/main.o"
    g++ "$work/main.o" "$work/kernel.o" "$work/runtime.o" "$work/grid.o" -o "$work/run$hooked" -lpthread
done
"$work/run1"
status=0
"$work/run0" || status=$?
exit $status
