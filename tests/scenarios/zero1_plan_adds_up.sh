#!/usr/bin/env bash
# `07_zero1 plan --csv` at 3 ranks on the reference config: 12 rows (a unit and rank each),
# and every unit's real elements, over its ranks, add up to the unit's size. Prints the
# first unit that does not; exit 0 when all do.
#
#   tests/scenarios/zero1_plan_adds_up.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
plan=$(mktemp)
trap 'rm -f "$plan"' EXIT
build/solutions/07_zero1 plan --config reference --ranks 3 --csv "$plan" >/dev/null || exit 1
awk -F, 'NR > 1 { real[$1] += $7; count[$1] = $2; rows++ }
         END { if (rows != 12) { print rows " rows"; exit 1 }
               for (unit in count) if (real[unit] != count[unit]) { print "unit " unit; exit 1 } }' "$plan"
