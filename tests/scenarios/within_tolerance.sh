#!/usr/bin/env bash
# Two runs' CSVs compared on loss, grad norm and validation loss, step by step, within the
# course's tolerance (tests/tolerance.sh): build/tools/compare_runs' lines, and its status
# (0 when they agree, 1 when not).
#
#   tests/scenarios/within_tolerance.sh EXPECTED ACTUAL [LABEL]
set -u
cd "$(dirname "$0")/../.." || exit 2
[ $# -ge 2 ] || { sed -n '2,/^set -u/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2; exit 2; }
source tests/tolerance.sh
exec build/tools/compare_runs "$1" "$2" --columns loss,grad_norm,val_loss --rtol "$LOSS_RTOL" --atol "$LOSS_ATOL" \
    ${3:+--label "$3"}
