#!/usr/bin/env bash
# Lesson 00 of the CUDA build in BUILD on the GPU, the reference run, against the CPU's
# expected values (tests/expected/00_single_device/train_reference.csv): in plain fp32
# within the CPU's tolerance (loss, grad norm, validation loss); with --tf32 within 1e-2
# relative in loss and validation loss (TF32 rounds every product's inputs to 10 mantissa
# bits). Exit 0 when it is within.
#
#   tests/scenarios/gpu_expected_values.sh BUILD [--tf32]
set -eu
cd "$(dirname "$0")/../.."
source scripts/summary_lib.sh # header_help
[ $# -ge 1 ] || { header_help "$0" >&2; exit 2; }
build=$1 tf32=${2:-}
flags=()
[ "$tf32" != --tf32 ] || flags=(--tf32)
expected=tests/expected/00_single_device/train_reference.csv
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/solutions/00_single_device" train --config reference --device cuda "${flags[@]}" --csv "$dir/gpu.csv" \
    >/dev/null
if [ "$tf32" = --tf32 ]; then
    build/tools/compare_runs "$expected" "$dir/gpu.csv" --columns loss,val_loss --rtol 1e-2 --atol 1e-4 \
        --label 'GPU TF32'
else
    tests/scenarios/within_tolerance.sh "$expected" "$dir/gpu.csv" 'GPU fp32'
fi
