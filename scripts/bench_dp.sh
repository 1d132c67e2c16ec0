#!/usr/bin/env bash
# Data-parallel throughput: each lesson 02-06 on 2 ranks x 1 thread against lesson 00 on one
# device x 1 thread, OpenBLAS's auto-detected kernels, and PyTorch's DDP over gloo when
# python3-torch is installed. Two shapes: the course's (L4 H4 C128 T128, global batch 8) and
# a larger one (L6 H4 C256 T256, global batch 8). Each figure is the median tokens/s of
# BENCH_REPEATS runs (default 3) of the summary's steady state (warm-up steps left out).
#
#   scripts/bench_dp.sh [small|big ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
unset OPENBLAS_CORETYPE
repeats=${BENCH_REPEATS:-3}
ranks=2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

shape_flags() {
    case $1 in
    small) echo "--config course" ;;
    big) echo "--config course --layers 6 --channels 256 --seq 256 --max-seq 256" ;;
    *) echo "bench_dp: unknown shape '$1' (small or big)" >&2; return 2 ;;
    esac
}
shape_steps() { [ "$1" = small ] && echo 40 || echo 14; }

# Runs a command that writes a summary to $work/s.csv $repeats times; prints
# "median_tokens_per_s median_comm_fraction".
measure() {
    local rates=() fractions=()
    for _ in $(seq "$repeats"); do
        rm -f "$work/s.csv"
        "$@" >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
        rates+=("$(summary_field "$work/s.csv" tokens_per_s)")
        fractions+=("$(summary_field "$work/s.csv" comm_frac_avg)")
    done
    echo "$(printf '%s\n' "${rates[@]}" | median) $(printf '%s\n' "${fractions[@]}" | median)"
}

bench_shape() {
    local shape=$1 flags steps common single pytorch=""
    flags=$(shape_flags "$shape")
    steps=$(shape_steps "$shape")
    common="$flags --steps $steps --val-every 0 --gen-tokens 0 --threads 1 --summary $work/s.csv"
    echo "== $shape shape ($flags), $ranks ranks x 1 thread, $steps steps, median of $repeats =="
    # shellcheck disable=SC2086 # flag lists are words
    read -r single _ < <(measure build/solutions/00_single_device train $common)
    printf '  %-16s %10s %12s %10s\n' strategy tokens/s "x lesson 00" "comm frac"
    printf '  %-16s %10.0f %12.2f %10s\n' single_device "$single" 1 -
    if scripts/pytorch_ddp.sh run "$work/pytorch" $flags --steps "$steps" >"$work/pt.log" 2>&1 &&
        [ -f "$work/pytorch/pytorch_ddp_summary.csv" ]; then
        pytorch=$(summary_field "$work/pytorch/pytorch_ddp_summary.csv" tokens_per_s)
    fi
    for lesson in 02_naive_ddp 03_flat_ddp 04_overlap_ddp 05_bucketed_ddp 06_grad_accum; do
        local rate fraction
        # shellcheck disable=SC2046,SC2086
        read -r rate fraction < <(measure mpiexec -n "$ranks" "build/solutions/$lesson" train $common \
            $(lesson_flags "$lesson"))
        printf '  %-16s %10.0f %12s %10.4f' "${lesson#0?_}" "$rate" "$(ratio "$rate" "$single")" "$fraction"
        [ -n "$pytorch" ] && printf '   %s x pytorch_ddp' "$(ratio "$rate" "$pytorch")"
        printf '\n'
    done
    if [ -n "$pytorch" ]; then
        printf '  %-16s %10.0f %12s %10s   (one run)\n' pytorch_ddp "$pytorch" "$(ratio "$pytorch" "$single")" -
    else
        echo "  pytorch_ddp: $(tail -n 1 "$work/pt.log")"
    fi
}

shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || shapes=(small big)
echo "data-parallel lessons, OpenBLAS auto-detected kernels; target: bucketed_ddp >= 1.8x lesson 00 and >= 2x pytorch_ddp"
for shape in "${shapes[@]}"; do
    bench_shape "$shape"
done
