#!/usr/bin/env bash
# make bench: lesson 00 throughput on L4 H4 C128 T128 B8 V256, one thread, with
# OpenBLAS's auto-detected kernels (the environment may force OPENBLAS_CORETYPE; the
# benchmark unsets it and prints the core it got). Repeats and reports the median.
set -euo pipefail
cd "$(dirname "$0")/.."
repeats=${BENCH_REPEATS:-5}
unset OPENBLAS_CORETYPE
binary=build/solutions/00_single_device
rates=()
for i in $(seq "$repeats"); do
    out=$("$binary" profile --config course --threads 1 --warmup-iters 5 --iters 30 --sweep-max-batch 1)
    [ "$i" -eq 1 ] && echo "$out" | head -n 1
    rate=$(echo "$out" | awk '/^  tokens\/s/ {print $2; exit}')
    rates+=("$rate")
    echo "  run $i: $rate tokens/s"
done
median=$(printf '%s\n' "${rates[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
echo "lesson 00 median: $median tokens/s over $repeats runs (target >= 12000 on this 2-core machine)"
