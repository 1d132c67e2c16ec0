#!/usr/bin/env bash
# ZeRO stages at 2 ranks x 1 thread on the course shape: step time relative to bucketed DDP
# (lesson 05), and the bytes each rank communicates per step against the formula, in
# multiples of the fp32 parameter bytes (psi): 2 psi for DDP (an all-reduce), ZeRO-1 and
# ZeRO-2 (a reduce-scatter and an all-gather), 3 psi for ZeRO-3 (an all-gather before
# forward and again before backward, and the reduce-scatter), and half of each stage's for
# lesson 10's mixed precision on it (the same collectives in bf16): 1 psi on ZeRO-1 and
# ZeRO-2, 1.5 psi on ZeRO-3; lesson 10 with --fp32-matmuls too, the cost of rounding every
# product's operands (the matmuls' and attention's) to bf16 on a CPU whose BLAS has no bf16
# GEMM. The kernels the lessons choose from the CPU's features; median step time of
# BENCH_ROUNDS runs (default 3). Where
# PyTorch is installed (scripts/pytorch_ddp.sh), its DDP and its ZeRO-1
# (ZeroRedundancyOptimizer) on the same shape follow, and where it runs FSDP (make torch),
# FSDP in both modes (grad_op beside ZeRO-2, full beside ZeRO-3), each with the model state
# per rank between steps and the torch and BLAS that ran it.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
no_arguments "$@"
unset OPENBLAS_CORETYPE
repeats=${BENCH_ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shape="--config course --steps 40 --val-every 0 --threads 1" # what PyTorch's runs take too
common="$shape --gen-tokens 0"

# Prints "median_step_seconds comm_mb_per_step" of $repeats runs of a lesson.
measure() {
    local lesson=$1 times=()
    shift
    for _ in $(seq "$repeats"); do
        # shellcheck disable=SC2086 # flag lists are words
        mpiexec -n 2 "build/solutions/$lesson" train $common "$@" --summary "$work/s.csv" >"$work/log" 2>&1 </dev/null ||
            { cat "$work/log" >&2; return 1; }
        times+=("$(summary_field "$work/s.csv" step_time_avg_s)")
    done
    echo "$(printf '%s\n' "${times[@]}" | median)" \
         "$(summary_field "$work/s.csv" comm_mb_per_step)"
}

psi_mb=$(build/solutions/00_single_device train $common --dry-run | awk '/^parameters/ { print $2 * 4 / 1e6 }')
echo "ZeRO stages, 2 ranks x 1 thread, course shape, 40 steps, median of $repeats; psi = $psi_mb MB of fp32 parameters"
printf '  %-26s %9s %12s %12s %10s %9s\n' stage "step ms" "x bucketed" "comm MB/step" "x psi" formula
read -r base_s base_mb < <(measure 05_bucketed_ddp)
row() {
    awk -v name="$1" -v s="$2" -v mb="$3" -v base="$base_s" -v psi="$psi_mb" -v f="$4" \
        'BEGIN { printf "  %-26s %9.2f %12.3f %12.3f %10.3f %9s\n", name, 1e3 * s, s / base, mb, mb / psi, f }'
}
row bucketed_ddp "$base_s" "$base_mb" "2 psi"
for entry in "07_zero1:zero1:2 psi" "08_zero2:zero2:2 psi" "09_zero3:zero3:3 psi" "09_zero3 --no-prefetch:zero3 (no prefetch):3 psi" \
    "10_mixed_precision --stage 1:bf16 zero1 (lesson 10):1 psi" "10_mixed_precision:bf16 zero2 (lesson 10):1 psi" \
    "10_mixed_precision --stage 3:bf16 zero3 (lesson 10):1.5 psi" \
    "10_mixed_precision --fp32-matmuls:bf16 zero2, fp32 matmuls:1 psi"; do
    IFS=: read -r command name formula <<<"$entry"
    # shellcheck disable=SC2086 # the lesson and its flags are words
    read -r s mb < <(measure $command)
    row "$name" "$s" "$mb" "$formula"
done

# Prints "median_step_seconds params_mb grads_mb adam_mb TORCH" of $repeats PyTorch runs at 2
# ranks (FLAGS: --zero1, --fsdp MODE or none; TORCH: its version and BLAS, as the run's
# header names them), or "skipped: WHY" (no PyTorch, or one that cannot run FSDP).
measure_pytorch() {
    local times=() summary=$work/pt/pytorch_ddp_summary.csv
    for _ in $(seq "$repeats"); do
        rm -f "$summary"
        # shellcheck disable=SC2086 # flag lists are words
        scripts/pytorch_ddp.sh run "$work/pt" --ranks 2 "$@" $shape >"$work/log" 2>&1 </dev/null ||
            { cat "$work/log" >&2; return 1; }
        [ -f "$summary" ] || { grep -m 1 -o 'skipped: .*' "$work/log"; return 0; }
        times+=("$(summary_field "$summary" step_time_avg_s)")
    done
    echo "$(printf '%s\n' "${times[@]}" | median)" "$(summary_field "$summary" params_mb)" \
        "$(summary_field "$summary" grads_mb)" "$(summary_field "$summary" adam_mb)" \
        "$(grep -m 1 -o 'torch [^ ]* | BLAS .*' "$work/log" | sed 's/ | BLAS/,/')"
}
# One row: NAME and the run's flags (--zero1, --fsdp MODE or none), or why it was skipped.
pytorch_row() {
    local name=$1 result s params_mb grads_mb adam_mb torch
    shift
    result=$(measure_pytorch "$@") # a run that fails stops the script, its log shown
    [ "${result%%:*}" = skipped ] && { echo "  $name: $result"; return 0; }
    read -r s params_mb grads_mb adam_mb torch <<<"$result"
    awk -v name="$name" -v s="$s" -v base="$base_s" -v p="$params_mb" -v g="$grads_mb" -v a="$adam_mb" \
        -v torch="$torch" \
        'BEGIN { printf "  %-22s %9.2f %11.3f %9.3f %9.3f %9.3f  %s\n", name, 1e3 * s, s / base, p, g, a, torch }'
}
echo "PyTorch on the same shape, 2 ranks x 1 thread (gloo), median of $repeats; model state per rank"
echo "between steps (the largest rank's)"
printf '  %-22s %9s %11s %9s %9s %9s  %s\n' run "step ms" "x bucketed" "params MB" "grads MB" "AdamW MB" torch
pytorch_row pytorch_ddp
pytorch_row pytorch_zero1 --zero1
pytorch_row pytorch_fsdp_grad_op --fsdp grad_op
pytorch_row pytorch_fsdp_full --fsdp full
# DDP and ZeRO-1 run on the first PyTorch found, FSDP on the first that runs it
# (scripts/pytorch_ddp.sh): where those differ, DDP runs again on FSDP's, so that FSDP is
# also compared with a DDP of the same build and BLAS.
if fsdp_python=$(scripts/pytorch_ddp.sh which fsdp) && [ "$fsdp_python" != "$(scripts/pytorch_ddp.sh which)" ]; then
    PYTHON=$fsdp_python pytorch_row pytorch_ddp
fi
