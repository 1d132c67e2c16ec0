#!/usr/bin/env bash
# Lesson 00 on one thread with the kernels chosen automatically (from the CPU's features)
# and with each OpenBLAS kernel set this CPU can run forced in OPENBLAS_CORETYPE, one per
# vector width (AVX-512, AVX2, AVX, SSE; build/tools/cpu_kernels lists them), beside
# PyTorch eager on one thread given the same kernels as the automatic choice, when
# python3-torch is installed. Two shapes: the
# course's (L4 H4 C128 T128, batch 8) and a larger one (L6 H4 C256 T256, batch 8). Rounds
# are interleaved (each round runs every configuration once); each figure is the median
# over BENCH_ROUNDS rounds (default 3) of the summary's steady-state tokens/s. GFLOP/s and
# MFU use lesson 00's FLOPs per token and one core's FMA peak, measured by its profile once
# per round (the highest counts). The ceiling line says how fast lesson 00 could be with the
# same kernels if every kernel but the matrix products took no time: the most any
# implementation sharing PyTorch's matrix products could gain on it; the line after it, how
# close lesson 00 comes (each round's run against the same round's profile).
#
#   scripts/bench_kernels.sh [small|big|tiny ...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
unset OPENBLAS_CORETYPE
rounds=${BENCH_ROUNDS:-3}
lesson=build/solutions/00_single_device
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bench_shape() {
    local shape=$1 flags steps train chosen flops_per_token peak
    flags=$(shape_flags "$shape")
    steps=$(shape_steps "$shape")
    chosen=$(chosen_kernels)
    train="$flags --steps $steps --val-every 0 --gen-tokens 0 --threads 1 --summary $work/s.csv"
    local sets
    mapfile -t sets < <(echo auto; build/tools/cpu_kernels)
    rm -f "$work"/{auto,pytorch,profiles,round_ceilings} "${sets[@]/#/$work/}"
    for _ in $(seq "$rounds"); do
        # shellcheck disable=SC2086 # flag lists are words
        $lesson profile $flags --threads 1 --warmup-iters 1 --iters 2 --sweep-max-batch 1 | tee "$work/profile" \
            >>"$work/profiles"
        matmul_ceiling "$work/profile" >>"$work/round_ceilings"
        for set in "${sets[@]}"; do
            local kernels=(env -u OPENBLAS_CORETYPE)
            [ "$set" = auto ] || kernels=(env OPENBLAS_CORETYPE="$set")
            # shellcheck disable=SC2086
            record_run "$work" "$set" "$work/s.csv" "${kernels[@]}" $lesson train $train
        done
        # shellcheck disable=SC2086
        # scripts/pytorch_ddp.sh gives PyTorch the automatic choice, $chosen
        record_run "$work" pytorch "$work/pt/pytorch_ddp_summary.csv" \
            scripts/pytorch_ddp.sh run "$work/pt" --eager $flags --steps "$steps"
    done
    # A peak is a maximum, and a busy moment of the machine only lowers a measurement of it:
    # the highest of the rounds' measurements counts.
    flops_per_token=$(awk '/^  FLOPs per token/ { print $4 }' "$work/profile")
    peak=$(awk '/^  MFU/ { p = $4 * ($5 == "TFLOP/s" ? 1e12 : 1e9); if (p > max) max = p } END { print max }' \
        "$work/profiles")
    local auto
    auto=$(median_of "$work/auto" 1)
    echo "== $shape shape ($flags), 1 thread, $steps steps, median of $rounds interleaved rounds =="
    printf '  %-28s %10s %9s %9s %7s\n' "kernels" tokens/s "x auto" GFLOP/s MFU
    for set in "${sets[@]}"; do
        local rate label=$set
        rate=$(median_of "$work/$set" 1)
        [ "$set" = auto ] && label="auto ($chosen)"
        awk -v l="$label" -v r="$rate" -v a="$auto" -v f="$flops_per_token" -v p="$peak" 'BEGIN {
            printf "  %-28s %10.0f %9.2f %9.1f %6.1f%%\n", l, r, r / a, r * f / 1e9, 100 * r * f / p }'
    done
    if [ -s "$work/pytorch" ]; then
        local pytorch
        pytorch=$(median_of "$work/pytorch" 1)
        awk -v l="pytorch eager ($chosen)" -v r="$pytorch" -v a="$auto" -v f="$flops_per_token" -v p="$peak" 'BEGIN {
            printf "  %-28s %10.0f %9.2f %9.1f %6.1f%%   lesson 00 (auto) = %.2fx pytorch eager\n",
                l, r, r / a, r * f / 1e9, 100 * r * f / p, a / r }'
    else
        echo "  pytorch eager: skipped: python3-torch is not installed (apt-get install python3-torch)"
    fi
    local ceiling
    ceiling=$(matmul_ceiling "$work/profiles")
    printf '  ceiling: %.0f tokens/s if lesson 00 did nothing but its matrix products (%s kernels)' "$ceiling" "$chosen"
    [ -s "$work/pytorch" ] && printf ', i.e. at most %sx pytorch eager' "$(ratio "$ceiling" "$(median_of "$work/pytorch" 1)")"
    printf '\n'
    # Each round's lesson 00 against the ceiling of the same round's profile, a minute apart:
    # a slow minute of the machine falls on both, where the ceiling above (the fastest round)
    # and lesson 00's median come from different minutes.
    printf '  lesson 00 (auto) at %s%% of the ceiling: the median of the rounds'"'"' own ratios\n' \
        "$(awk '{ print $1 }' "$work/auto" | paste -d ' ' - "$work/round_ceilings" |
            awk '{ printf "%.1f\n", 100 * $1 / $2 }' | median)"
    echo "  peak: $(awk '/^  MFU/ { sub(/.*\(/, ""); sub(/\)$/, ""); print; exit }' "$work/profile"), the highest of $rounds measurements: $(awk -v p="$peak" 'BEGIN { printf "%.1f GFLOP/s", p / 1e9 }')"
}

echo "lesson 00, kernel sets; targets: auto within 10% of the best set, MFU >= 60%, >= 2x pytorch eager"
for_each_shape bench_shape "$@"
