#!/usr/bin/env bash
# Two runs' CSVs compared on loss, grad norm and validation loss, step by step, within the
# course's tolerance (tests/tolerance.sh): build/tools/compare_runs' lines, and its status
# (0 when they agree, 1 when not). --drift: ACTUAL computed in bf16 (lesson 10), EXPECTED in
# fp32: loss and validation loss within how far bf16 may drift (DRIFT_RTOL there).
#
#   tests/scenarios/within_tolerance.sh [--drift] EXPECTED ACTUAL [LABEL]
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
drift=0
[ "${1:-}" != --drift ] || { drift=1; shift; }
[ $# -ge 2 ] || { header_help "$0" >&2; exit 2; }
source tests/tolerance.sh
[ $drift = 0 ] || exec build/tools/compare_runs "$1" "$2" --columns loss,val_loss --rtol "$DRIFT_RTOL" \
    --atol "$LOSS_ATOL" ${3:+--label "$3"}
exec build/tools/compare_runs "$1" "$2" --columns loss,grad_norm,val_loss --rtol "$LOSS_RTOL" --atol "$LOSS_ATOL" \
    ${3:+--label "$3"}
