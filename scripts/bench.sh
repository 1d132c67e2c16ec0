#!/usr/bin/env bash
# make bench:
#  1. lesson 00 throughput on L4 H4 C128 T128 B8 V256 (842,496 parameters), one thread.
#     The figure that counts uses OpenBLAS's auto-detected kernels (the environment may
#     force OPENBLAS_CORETYPE; that is unset here); the AVX2 kernels are measured beside it.
#     Each is the median of BENCH_REPEATS runs (default 5).
#  2. lesson 01: 2-rank all-reduce bandwidth, the library against the ring.
#  3. lessons 02-06 on 2 ranks x 1 thread against lesson 00 on one, and PyTorch DDP when
#     python3-torch is installed, on the course shape and on L6 H4 C256 T256 B8
#     (scripts/bench_dp.sh).
#  4. the ZeRO stages at 2 ranks: step time against bucketed DDP, bytes per step against
#     the formulas (scripts/bench_zero.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
repeats=${BENCH_REPEATS:-5}
binary=build/solutions/00_single_device
target=12000

# Prints the median tokens/s of $repeats profile runs under the given environment.
median_rate() {
    local rates=() out rate
    for _ in $(seq "$repeats"); do
        out=$(env "$@" "$binary" profile --config course --threads 1 --warmup-iters 5 --iters 30 --sweep-max-batch 1)
        rate=$(echo "$out" | awk '/^  tokens\/s/ {print $2; exit}')
        rates+=("$rate")
        echo "$out" | head -n 1 >&2
        echo "    $rate tokens/s" >&2
    done
    printf '%s\n' "${rates[@]}" | median
}

auto=$(median_rate -u OPENBLAS_CORETYPE)
avx2=$(median_rate OPENBLAS_CORETYPE=Haswell)
echo
echo "lesson 00, course config, 1 thread, median of $repeats runs:"
awk -v a="$auto" -v h="$avx2" -v t="$target" 'BEGIN {
    printf "  auto-detected kernels: %6d tokens/s  (%.2fx the %d target)\n", a, a / t, t
    printf "  AVX2 kernels (Haswell): %5d tokens/s\n", h }'

# Lesson 01: 2-rank all-reduce busbw, the library against the ring solution, one run.
echo
echo "lesson 01, 2 ranks, all-reduce busbw (GB/s), library vs ring solution, one run:"
mpiexec -n 2 build/solutions/01_collectives -o ring -b 1M -e 64M -f 4 -w 5 -n 20 -c 0 |
    awk '$1 == "all_reduce" {lib[$2] = $6}
         $1 == "ring" {printf "  %9.0f MB  library %6.3f  ring %6.3f  ring/library %.2f\n", $2 / 1e6, lib[$2], $6, $8}'

echo
scripts/bench_dp.sh

echo
scripts/bench_zero.sh
