#!/usr/bin/env bash
# Data-parallel throughput: each lesson 02-06 on 2 ranks x 1 thread against lesson 00 on one
# device x 1 thread, and PyTorch's DDP over gloo (2 ranks x 1 thread) when python3-torch is
# installed. Every program runs the same OpenBLAS kernels: the C programs choose theirs from
# the CPU's features, and PyTorch, whose OpenBLAS would pick by itself, is given the same in
# OPENBLAS_CORETYPE by scripts/pytorch_ddp.sh. Two shapes: the course's (L4 H4 C128 T128, global batch 8) and a
# larger one (L6 H4 C256 T256, global batch 8). Rounds are interleaved (each round runs
# every configuration once, so a slow minute of the machine falls on all of them); each
# figure is the median over BENCH_ROUNDS rounds (default 3) of the summary's steady-state
# tokens/s (warm-up steps left out). The ceiling line is the most the ranks could reach with
# these kernels: each rank's share of the batch timed by lesson 00's profile, counting only
# its matrix products.
#
#   scripts/bench_dp.sh [small|big|tiny ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
unset OPENBLAS_CORETYPE
rounds=${BENCH_ROUNDS:-3}
ranks=2
lessons=(02_naive_ddp 03_flat_ddp 04_overlap_ddp 05_bucketed_ddp 06_grad_accum)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bench_shape() {
    local shape=$1 flags steps common kernels
    flags=$(shape_flags "$shape")
    steps=$(shape_steps "$shape")
    kernels=$(chosen_kernels)
    common="$flags --steps $steps --val-every 0 --gen-tokens 0 --threads 1 --summary $work/s.csv"
    rm -f "$work"/{single,pytorch,rank_profiles} "${lessons[@]/#/$work/}"
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086 # flag lists are words
        record_run "$work" single "$work/s.csv" build/solutions/00_single_device train $common
        # shellcheck disable=SC2086
        build/solutions/00_single_device profile $flags --batch $(($(shape_batch "$shape") / ranks)) --threads 1 \
            --warmup-iters 1 --iters 2 --sweep-max-batch 1 >>"$work/rank_profiles"
        for lesson in "${lessons[@]}"; do
            # shellcheck disable=SC2046,SC2086
            record_run "$work" "$lesson" "$work/s.csv" mpiexec -n "$ranks" "build/solutions/$lesson" train $common \
                $(lesson_flags "$lesson")
        done
        # shellcheck disable=SC2086
        record_run "$work" pytorch "$work/pt/pytorch_ddp_summary.csv" \
            scripts/pytorch_ddp.sh run "$work/pt" $flags --steps "$steps"
    done
    local single pytorch=""
    single=$(median_of "$work/single" 1)
    [ -s "$work/pytorch" ] && pytorch=$(median_of "$work/pytorch" 1)
    echo "== $shape shape ($flags), $ranks ranks x 1 thread, $steps steps, OpenBLAS $kernels kernels, median of $rounds interleaved rounds =="
    printf '  %-16s %10s %12s %10s\n' strategy tokens/s "x lesson 00" "comm frac"
    printf '  %-16s %10.0f %12.2f %10s\n' single_device "$single" 1 -
    for lesson in "${lessons[@]}"; do
        local rate
        rate=$(median_of "$work/$lesson" 1)
        printf '  %-16s %10.0f %12s %10.4f' "${lesson#0?_}" "$rate" "$(ratio "$rate" "$single")" \
            "$(median_of "$work/$lesson" 2)"
        [ -n "$pytorch" ] && printf '   %s x pytorch_ddp' "$(ratio "$rate" "$pytorch")"
        printf '\n'
    done
    if [ -n "$pytorch" ]; then
        printf '  %-16s %10.0f %12s %10s\n' pytorch_ddp "$pytorch" "$(ratio "$pytorch" "$single")" -
    else
        echo "  pytorch_ddp: skipped: python3-torch is not installed (apt-get install python3-torch)"
    fi
    local ceiling
    ceiling=$(($(matmul_ceiling "$work/rank_profiles") * ranks))
    printf '  ceiling: %.0f tokens/s if each rank did nothing but its matrix products (no other kernel, no communication)' "$ceiling"
    [ -n "$pytorch" ] && printf ', i.e. at most %sx pytorch_ddp' "$(ratio "$ceiling" "$pytorch")"
    printf '\n'
}

echo "data-parallel lessons; target: bucketed_ddp >= 1.8x lesson 00 and >= 2x pytorch_ddp"
for_each_shape bench_shape "$@"
