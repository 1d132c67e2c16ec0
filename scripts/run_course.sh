#!/usr/bin/env bash
# make run: the course, end to end, on the course configuration. Writes runs/.
#   lesson 00 on one device (train, then profile), lessons 02-09 on 2 ranks, PyTorch's own
#   DDP when python3-torch is installed, and one comparison table of them all (with the
#   model state per rank), then the ZeRO memory table at 1, 2 and 4 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
mkdir -p runs
ranks=${RANKS:-2}
summaries=()

echo "== lesson 00: single-device training (course config) =="
build/solutions/00_single_device train --config course --csv runs/00_single_device.csv \
    --summary runs/00_single_device.summary.csv --save runs/00_single_device.bin
summaries+=(runs/00_single_device.summary.csv)
echo
echo "== lesson 00: profile =="
build/solutions/00_single_device profile --config course --mem-limit 64

for lesson in 02_naive_ddp 03_flat_ddp 04_overlap_ddp 05_bucketed_ddp 06_grad_accum 07_zero1 08_zero2 09_zero3; do
    echo
    echo "== lesson $lesson: $ranks ranks (course config) =="
    # shellcheck disable=SC2046 # the flags are words
    mpiexec -n "$ranks" "build/solutions/$lesson" train --config course $(lesson_flags "$lesson") \
        --csv "runs/$lesson.csv" --summary "runs/$lesson.summary.csv" </dev/null
    summaries+=("runs/$lesson.summary.csv")
done

echo
echo "== PyTorch DDP (gloo, $ranks ranks) =="
if scripts/pytorch_ddp.sh run runs/pytorch --config course; then
    [ -f runs/pytorch/pytorch_ddp_summary.csv ] && summaries+=(runs/pytorch/pytorch_ddp_summary.csv)
fi

echo
echo "== comparison (course config; per-step figures in runs/*.csv) =="
scripts/compare_table.sh --csv runs/comparison.csv "${summaries[@]}"
echo "table: runs/comparison.csv; checkpoint: runs/00_single_device.bin"
echo
echo "== model state per rank, ZeRO stages against the formulas =="
scripts/zero_memory.sh
