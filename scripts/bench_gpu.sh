#!/usr/bin/env bash
# make bench on a machine with a GPU: lesson 00 on the GPU (the CUDA build, build/cuda/).
#   - the GPT-2 124M shape (--config gpt2: L12 H12 C768 T1024 B8, V256), fp32 and TF32;
#   - the same with GPT-2's real vocabulary (V 50257, padded to 50304), fp32 and TF32;
#   - the course config (L4 H4 C128 T128 B8), fp32.
# Each figure is the median tokens/s of BENCH_ROUNDS profile runs (default 3), with the MFU
# that run printed against the GPU's data-sheet peak for its number format.
# Then lesson 10 at 1 rank on the GPT-2 124M shape: the median step time of BENCH_ROUNDS
# training runs (20 steps; the summary leaves out its warm-up steps) with --fp32-matmuls in
# plain fp32 and in TF32, and with its matmuls on bf16 operands (cuBLAS's bf16 GEMMs), each
# with the MFU of its summary, against the peak of its products' format.
# Without a CUDA build or a GPU it says so and exits 0: the CPU benchmarks stand alone.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
no_arguments "$@"
repeats=${BENCH_ROUNDS:-3}
binary=build/cuda/solutions/00_single_device

if [[ ! -x $binary ]]; then
    echo "GPU benchmarks skipped: no CUDA build ($binary; make CUDA=1)"
    exit 0
fi
if ! probe=$(gpu_probe "$binary"); then
    echo "GPU benchmarks skipped: $(echo "$probe" | tail -n 1)"
    exit 0
fi
echo "GPU: $(echo "$probe" | head -n 1 | cut -d'|' -f2 | sed 's/^ *//; s/ *$//')"

printf '\nlesson 00 on the GPU, median of %d runs (10 timed steps each)\n' "$repeats"
printf '  %-34s %12s %8s\n' "configuration" "tokens/s" "MFU"
row() {
    local label=$1
    shift
    read -r rate mfu < <(gpu_profile_medians "$binary" "$repeats" "$@")
    printf '  %-34s %12.0f %8s\n' "$label" "$rate" "$mfu"
}
row "GPT-2 124M shape, V256, fp32" --config gpt2
row "GPT-2 124M shape, V256, TF32" --config gpt2 --tf32
row "GPT-2 124M shape, V50257, fp32" --config gpt2 --vocab 50257
row "GPT-2 124M shape, V50257, TF32" --config gpt2 --vocab 50257 --tf32
row "course config, fp32" --config course

# Lesson 10's step time (median over $repeats runs, in ms) and the MFU its summary printed
# (median), with the flags given.
lesson10_step_ms() {
    local times=() mfus=() summary output
    summary=$(mktemp)
    for _ in $(seq "$repeats"); do
        output=$("${binary%/*}/10_mixed_precision" train --config gpt2 --device cuda --steps 20 --val-every 0 \
            --gen-tokens 0 --summary "$summary" "$@")
        times+=("$(summary_field "$summary" step_time_avg_s)")
        mfus+=("$(echo "$output" | awk '$1 == "MFU" { sub(/%$/, "", $2); print $2 }')")
    done
    rm -f "$summary"
    local mfu=n/a # where the GPU has no known peak
    if ! printf '%s\n' "${mfus[@]}" | grep -qv '^[0-9.]*$'; then
        mfu=$(printf '%s\n' "${mfus[@]}" | median)
    fi
    echo "$(printf '%s\n' "${times[@]}" | median | awk '{ print 1e3 * $1 }') $mfu"
}

printf '\nlesson 10 on the GPU, 1 rank, GPT-2 124M shape, median of %d runs (20 steps each)\n' "$repeats"
printf '  %-34s %12s %16s %8s\n' "matmuls" "step ms" "x fp32 matmuls" "MFU"
for entry in "fp32:--fp32-matmuls" "TF32:--fp32-matmuls --tf32" "bf16 operands (cublasGemmEx):"; do
    # shellcheck disable=SC2086 # the flags, or none
    read -r ms mfu < <(lesson10_step_ms ${entry#*:})
    fp32_ms=${fp32_ms:-$ms} # the first row is the baseline
    awk -v name="${entry%%:*}" -v ms="$ms" -v base="$fp32_ms" -v mfu="$mfu" \
        'BEGIN { printf "  %-34s %12.2f %16.3f %8s\n", name, ms, ms / base, mfu (mfu == "n/a" ? "" : "%") }'
done
