#!/usr/bin/env bash
# A lesson of the CUDA build in BUILD, on the GPU (--device cuda --comm COMM), against
# lesson 00 on the CPU: 8 steps of the reference preset with validation at 4 and 8, within
# the CPU's tolerance (tests/scenarios/within_tolerance.sh; lesson 10, in bf16, within its
# drift from fp32). LAUNCH starts it ("" alone,
# "mpiexec -n 2", "env CUDA_VISIBLE_DEVICES=0 mpiexec -n 2"); what it prints must hold
# MUST_PRINT. FLAGS go to the lesson alone. The lesson's stderr passes through (the
# emulated GPU says there what it cannot run).
#
#   tests/scenarios/gpu_matches_lesson_00.sh BUILD "LAUNCH" LESSON COMM "MUST_PRINT" [FLAGS...]
#
# Exit 0 when they agree.
set -eu
cd "$(dirname "$0")/../.."
source scripts/summary_lib.sh # header_help
[ $# -ge 5 ] || { header_help "$0" >&2; exit 2; }
build=$1 lesson=$3 comm=$4 must_print=$5
read -r -a launch <<<"$2"
shift 5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
run=(--config reference --steps 8 --val-every 4)
build/solutions/00_single_device train "${run[@]}" --csv "$dir/one.csv" >/dev/null
timeout 600 "${launch[@]}" "$build/solutions/$lesson" train "${run[@]}" --device cuda --comm "$comm" "$@" \
    --step-timeout 120 --csv "$dir/gpu.csv" >"$dir/out.txt"
grep -q -- "$must_print" "$dir/out.txt" || { cat "$dir/out.txt"; exit 1; }
drift=()
[[ $lesson != 10_* ]] || drift=(--drift)
tests/scenarios/within_tolerance.sh "${drift[@]}" "$dir/one.csv" "$dir/gpu.csv" "$lesson over $comm"
