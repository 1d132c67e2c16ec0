#!/usr/bin/env bash
# A sharded run writes one whole checkpoint (gathered), and runs start from it: ZeRO-3 and
# ZeRO-1 at 2 ranks save the same bytes (their parameters are the same bit for bit), and
# from ZeRO-3's checkpoint lesson 00 and ZeRO-3 continue the same trajectory within the
# course's tolerance. Exit 0 when all of that holds.
#
#   tests/scenarios/sharded_checkpoints.sh
set -eu
cd "$(dirname "$0")/../.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=(--config reference --steps 4 --gen-tokens 0)
timeout 300 mpiexec -n 2 build/solutions/09_zero3 train "${run[@]}" --save "$dir/z3.bin" >/dev/null
timeout 300 mpiexec -n 2 build/solutions/07_zero1 train "${run[@]}" --save "$dir/z1.bin" >/dev/null
cmp "$dir/z1.bin" "$dir/z3.bin"
build/solutions/00_single_device train "${run[@]}" --init-from "$dir/z3.bin" --csv "$dir/one.csv" >/dev/null
timeout 300 mpiexec -n 2 build/solutions/09_zero3 train "${run[@]}" --init-from "$dir/z3.bin" \
    --csv "$dir/many.csv" >/dev/null
tests/scenarios/within_tolerance.sh "$dir/one.csv" "$dir/many.csv" resumed
