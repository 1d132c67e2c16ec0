#!/usr/bin/env bash
# make bench, in one run on this machine (compare its figures with each other, not with
# another machine's):
#  1. lesson 00 on one thread with the kernels chosen automatically and with each OpenBLAS
#     kernel set this CPU can run, against PyTorch eager on the same kernels, with GFLOP/s
#     and MFU against one core's measured FMA peak (scripts/bench_kernels.sh).
#  2. lesson 01: 2-rank all-reduce bandwidth, the library against the ring.
#  3. lessons 02-06 on 2 ranks x 1 thread against lesson 00 on one, and PyTorch DDP over
#     gloo on the same kernels (scripts/bench_dp.sh).
#  4. the ZeRO stages at 2 ranks: step time against bucketed DDP, bytes per step against
#     the formulas (scripts/bench_zero.sh).
# Parts 1 and 3 run the course shape and L6 H4 C256 T256 in interleaved rounds
# (BENCH_ROUNDS, default 3); PyTorch's rows need python3-torch (apt-get install python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
no_arguments "$@"
echo "CPU: $(grep -m 1 '^model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') (family $(grep -m 1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m 1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' '))"
echo
scripts/bench_kernels.sh

# Lesson 01: 2-rank all-reduce busbw, the library against the ring solution, one run.
echo
echo "lesson 01, 2 ranks, all-reduce busbw (GB/s), library vs ring solution, one run:"
rows=$(mktemp)
mpiexec -n 2 build/solutions/01_collectives --collective ring -b 1M -e 64M -f 4 -w 5 -n 20 -c 0 --csv "$rows" >/dev/null
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["collective"] == "all_reduce" { library[$c["size"]] = $c["busbw_GBps"] }
    $c["collective"] == "ring" { printf "  %5d MiB  library %6.3f  ring %6.3f  ring/library %s\n", $c["size"] / 1048576,
                                        library[$c["size"]], $c["busbw_GBps"], $c["ring_vs_library"] }' "$rows"
rm -f "$rows"

echo
scripts/bench_dp.sh

echo
scripts/bench_zero.sh
