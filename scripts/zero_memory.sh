#!/usr/bin/env bash
# Model-state memory per rank, measured by the tracking allocator, beside the ZeRO formulas
# (tools/predict.py memory) for fp32 AdamW (psi = parameter count): DDP 16psi, ZeRO-1
# 8psi + 8psi/N, ZeRO-2 4psi + 12psi/N, ZeRO-3 16psi/N; and lesson 10's mixed precision (bf16
# parameters and gradients, fp32 master, m and v) on each stage: bf16z1 4psi + 12psi/N, bf16z2
# 2psi + 14psi/N, bf16z3 16psi/N. Working buffers and activations on their own columns.
#
#   scripts/zero_memory.sh [--check] [--csv FILE] [--config NAME] [RANKS...]   (default ranks: 1 2 4)
#
# --check exits 1 when a measured model state is more than 5% off its formula; --csv writes
# the rows (stage,ranks,params_mb,grads_mb,adam_mb,state_mb,formula_mb,working_mb,activations_mb,master_mb);
# --config picks the preset (default course).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # header_help, from_caller
check=0 csv="" config=course
while [ $# -gt 0 ]; do
    case $1 in
    --check) check=1; shift ;;
    --csv) csv=$(from_caller "${2:?zero_memory: --csv needs a file}"); shift 2 ;;
    --config) config=${2:?zero_memory: --config needs a preset}; shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    -*) echo "zero_memory: unknown option $1 (--check, --csv FILE, --config NAME)" >&2; exit 2 ;;
    *) break ;;
    esac
done
ranks_list=("$@")
[ ${#ranks_list[@]} -gt 0 ] || ranks_list=(1 2 4)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stages=(03_flat_ddp:ddp 07_zero1:zero1 08_zero2:zero2)
[ -x build/solutions/09_zero3 ] && stages+=(09_zero3:zero3)
[ -x build/solutions/10_mixed_precision ] &&
    stages+=("10_mixed_precision --stage 1:bf16z1" "10_mixed_precision:bf16z2" "10_mixed_precision --stage 3:bf16z3")

for ranks in "${ranks_list[@]}"; do
    for entry in "${stages[@]}"; do
        read -r lesson flags <<<"${entry%%:*}"
        name=${entry#*:}
        # shellcheck disable=SC2086 # the entry's flags are words
        timeout 300 mpiexec -n "$ranks" "build/solutions/$lesson" train --config "$config" --steps 2 --val-every 0 \
            --gen-tokens 0 --summary "$work/$name.$ranks.csv" $flags >"$work/log" 2>&1 </dev/null ||
            { cat "$work/log" >&2; exit 1; }
        echo "${entry#*:} $ranks $(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i }
            NR == 2 { print $c["params_mb"], $c["grads_mb"], $c["adam_mb"], $c["working_mb"], $c["activations_mb"],
                      $c["master_mb"] }' \
            "$work/$name.$ranks.csv")"
    done
done >"$work/measured"
# psi from DDP: its parameters are the whole model, 4 bytes each
psi=$(awk '$1 == "ddp" { printf "%.0f", $3 / 4 * 1e6; exit }' "$work/measured")
rank_list=$(IFS=,; echo "${ranks_list[*]}")
for format in fp32 16-bit; do
    tools/predict.py memory --params "$psi" --ranks "$rank_list" --format "$format" | tail -n +2
done >"$work/formulas"
awk -v check="$check" -v csv="$csv" -v config="$config" -v psi="$psi" '
    # the formulas: params,format,ranks,ddp_gb,zero1_gb,zero2_gb,zero3_gb
    FILENAME ~ /formulas$/ {
        split($0, row, ","); prefix = row[2] == "fp32" ? "zero" : "bf16z"
        if (row[2] == "fp32") formula_mb["ddp " row[3]] = 1e3 * row[4]
        for (z = 1; z <= 3; z++) formula_mb[prefix z " " row[3]] = 1e3 * row[4 + z]
        next
    }
    { rows++; stage[rows] = $1; n[rows] = $2; params[rows] = $3; grads[rows] = $4; adam[rows] = $5
      master[rows] = $8; state[rows] = $3 + $4 + $5 + $8; working[rows] = $6; acts[rows] = $7
      if ($1 == "ddp") ddp[$2] = state[rows] }
    function formula(s, N) { return formula_mb[s " " N] }
    END {
        printf "model state per rank (MB = 10^6 bytes; psi = %.0f parameters, config %s)\n", psi, config
        if (csv != "")
            print "stage,ranks,params_mb,grads_mb,adam_mb,state_mb,formula_mb,working_mb,activations_mb,master_mb" > csv
        printf "%-6s %5s %12s %12s %10s %10s %12s %12s %12s\n", "stage", "ranks", "measured", "formula",
               "meas/form", "vs DDP", "formula/DDP", "working MB", "activations"
        bad = 0
        for (i = 1; i <= rows; i++) {
            f = formula(stage[i], n[i]); ratio = state[i] / f
            if (ratio > 1.05 || ratio < 0.95) bad = 1
            printf "%-6s %5d %12.3f %12.3f %10.4f %10.3f %12.3f %12.3f %12.3f\n", stage[i], n[i], state[i], f,
                   ratio, state[i] / ddp[n[i]], f / formula("ddp", n[i]), working[i], acts[i]
            if (csv != "")
                printf "%s,%d,%s,%s,%s,%.6f,%.6f,%s,%s,%s\n", stage[i], n[i], params[i], grads[i], adam[i], state[i], f,
                       working[i], acts[i], master[i] > csv
        }
        if (check && bad) { print "zero_memory: a model state is more than 5% off its formula"; exit 1 }
    }' "$work/formulas" "$work/measured"
