#!/usr/bin/env bash
# llm.c's fp32 CUDA trainer beside lesson 00 on the GPU, on the same model: GPT-2 124M's shape
# (L12 H12 C768, T1024, B8) with GPT-2's vocabulary (V 50257, padded to 50304).
#
#   scripts/bench_llmc.sh LLMC_DIR
#   scripts/bench_llmc.sh --build-into DIR LLMC_DIR    only builds llm.c's two trainers into DIR
#   scripts/bench_llmc.sh --built DIR LLMC_DIR         uses the two trainers built there
#
# Building on another machine than the GPU's (--build-into, with NVCC_ARCH=sm_90 say, where
# the default -arch=native finds no GPU) keeps a short lease on a GPU for the measurements.
#
# LLMC_DIR is a checkout of llm.c (github.com/karpathy/llm.c) that you fetched yourself; the
# course holds none of its code. Its train_gpt2_fp32.cu is built here twice, in a temporary
# folder: as it is, and with its TF32 switch turned off. As it is, it multiplies on TF32
# tensor cores wherever the GPU has them (compute capability 8 and up), which is what our
# --tf32 does; turned off, it computes in plain fp32 as our default does. Both start from
# the same checkpoint, lesson 00's initial weights written with --save (llm.c's format), and
# read GPT-2 tokens in llm.c's shard format (data/generated/gpt2_train.bin, from make data
# GPT2=1, or the course's byte tokens, which are GPT-2 token ids too, without it).
# Each row is the median tokens/s of llm.c's own step lines after its first 3 steps, and of
# BENCH_ROUNDS lesson 00 profile runs (default 3). Needs nvcc and a GPU; without them it
# says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # help_if_asked, header_help, median, gpu_profile_medians, from_caller
help_if_asked "$@"
build_into="" built=""
case ${1:-} in
--build-into) build_into=$(from_caller "${2:?bench_llmc: --build-into needs a folder}"); shift 2 ;;
--built) built=$(from_caller "${2:?bench_llmc: --built needs a folder}"); shift 2 ;;
esac
[ $# -eq 1 ] || { header_help "$0" >&2; exit 2; }
llmc=$(from_caller "$1") gpu_build=${DTC_GPU_BUILD:-build/cuda}
[ -z "$built" ] || { [ -x "$built/llmc_tf32" ] && [ -x "$built/llmc_fp32" ]; } ||
    { echo "bench_llmc: --built $built holds no llmc_tf32 and llmc_fp32 (--build-into makes them)" >&2; exit 2; }
[ -z "$build_into" ] || [ ! -e "$build_into/llmc_tf32" ] ||
    { echo "bench_llmc: --build-into $build_into holds a build already: choose another folder" >&2; exit 2; }
repeats=${BENCH_ROUNDS:-3} steps=24
[ -f "$llmc/train_gpt2_fp32.cu" ] && [ -d "$llmc/llmc" ] ||
    { echo "bench_llmc: $llmc holds no train_gpt2_fp32.cu and llmc/ (a checkout of llm.c)" >&2; exit 2; }
binary=$gpu_build/solutions/00_single_device
[ -n "$build_into" ] || [ -x "$binary" ] || { echo "bench_llmc: skipped: no CUDA build ($binary; make CUDA=1)"; exit 0; }
nvcc=${NVCC:-$(command -v nvcc || echo "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc")}
[ -n "$built" ] || [ -x "$nvcc" ] || { echo "bench_llmc: skipped: no nvcc"; exit 0; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Builds llm.c's trainer twice into $work: as it ships (llmc_tf32) and with TF32 off (llmc_fp32).
build_llmc() {
    echo "llm.c: building train_gpt2_fp32.cu ($llmc) with $("$nvcc" --version | tail -n 1)"
    cp -r "$llmc/train_gpt2_fp32.cu" "$llmc/llmc" "$work/"
    local switch='int enable_tf32 = deviceProp.major >= 8 ? 1 : 0;' variant
    grep -qF "$switch" "$work/train_gpt2_fp32.cu" ||
        { echo "bench_llmc: this llm.c has no line '$switch' to turn TF32 off" >&2; return 1; }
    sed "s/$switch/int enable_tf32 = 0;/" "$work/train_gpt2_fp32.cu" >"$work/train_gpt2_fp32_off.cu" # (BRE: all literal)
    for variant in tf32:train_gpt2_fp32.cu fp32:train_gpt2_fp32_off.cu; do
        if ! (cd "$work" && "$nvcc" -O3 --use_fast_math -std=c++17 -arch="${NVCC_ARCH:-native}" "${variant#*:}" \
            -lcublas -lcublasLt -o "llmc_${variant%%:*}") >"$work/build.out" 2>&1; then
            echo "bench_llmc: building ${variant#*:} failed:" >&2; tail -n 20 "$work/build.out" >&2; return 1
        fi
    done
}
if [ -n "$built" ]; then
    cp "$built/llmc_tf32" "$built/llmc_fp32" "$work/"
else
    build_llmc || exit 1
fi
if [ -n "$build_into" ]; then
    mkdir -p "$build_into" && cp "$work/llmc_tf32" "$work/llmc_fp32" "$build_into/"
    echo "bench_llmc: built $build_into/llmc_tf32 and $build_into/llmc_fp32"
    exit 0
fi
shape=(--config gpt2 --vocab 50257)

tokens=data/generated/gpt2_train.bin
[ -f "$tokens" ] || tokens=data/generated/train.bin
# llm.c trains one pass over its shard: a shard of `steps` batches (and a 1-batch validation
# shard) bounds the run. Both are llm.c's format, as the course's shards are.
python3 - "$tokens" "$work" $((steps * 8 * 1024 + 1)) $((8 * 1024 + 1)) <<'EOF'
import struct, sys
source, work, train_tokens, val_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(source, "rb") as f:
    header = struct.unpack("256i", f.read(1024))
    assert header[0] == 20240520 and header[1] == 1, f"{source}: not a token shard"
    tokens = f.read(2 * header[2])
assert len(tokens) >= 2 * (train_tokens + val_tokens), f"{source}: too few tokens"
for name, start, count in (("train.bin", 0, train_tokens), ("val.bin", train_tokens, val_tokens)):
    with open(f"{work}/{name}", "wb") as out:
        out.write(struct.pack("256i", 20240520, 1, count, *[0] * 253))
        out.write(tokens[2 * start:2 * (start + count)])
EOF

"$binary" train "${shape[@]}" --steps 0 --val-every 0 --gen-tokens 0 --device cuda --train "$tokens" \
    --save "$work/gpt2_124M.bin" >/dev/null

# llm.c's median tokens/s after its first 3 steps: llmc_run VARIANT
llmc_run() {
    if ! (cd "$work" && "./llmc_$1" -i train.bin -j val.bin -b 8 -t 1024 -v 100000 -m 1 -s 100000 -g 1) \
        >"$work/$1.out" 2>&1; then
        echo "bench_llmc: llm.c ($1) failed:" >&2; tail -n 5 "$work/$1.out" >&2; return 1
    fi
    awk '/^step +[0-9]+\/[0-9]+: train loss/ { if (++n > 3) { gsub(/[(,]/, " "); print $(NF - 1) } }' "$work/$1.out" |
        median
}
# lesson 00's median tokens/s over $repeats profile runs: ours FLAGS...
ours() { gpu_profile_medians "$binary" "$repeats" "${shape[@]}" --train "$tokens" "$@" | cut -d' ' -f1; }

# Each figure as it is measured, so that a run cut short still says what it had.
llmc_tf32=$(llmc_run tf32) || exit 1
echo "bench_llmc: llm.c as it ships (TF32): $llmc_tf32 tokens/s"
llmc_fp32=$(llmc_run fp32) || exit 1
echo "bench_llmc: llm.c with TF32 off: $llmc_fp32 tokens/s"
ours_fp32=$(ours)
echo "bench_llmc: lesson 00, fp32: $ours_fp32 tokens/s"
ours_tf32=$(ours --tf32)
printf '\nllm.c beside lesson 00, GPT-2 124M shape, V50257 (padded 50304), B8 T1024, on %s\n' \
    "$(grep -m1 '^| device' "$work/tf32.out" | cut -d'|' -f3 | sed 's/^ *//; s/ *$//')"
printf '  %-44s %12s %14s\n' "program" "tokens/s" "x llm.c"
awk -v lf="$llmc_fp32" -v lt="$llmc_tf32" -v of="$ours_fp32" -v ot="$ours_tf32" 'BEGIN {
    printf "  %-44s %12.0f %14s\n", "llm.c train_gpt2_fp32.cu, TF32 off (fp32)", lf, "1.000"
    printf "  %-44s %12.0f %14.3f\n", "lesson 00, fp32", of, of / lf
    printf "  %-44s %12.0f %14s\n", "llm.c train_gpt2_fp32.cu as it ships (TF32)", lt, "1.000"
    printf "  %-44s %12.0f %14.3f\n", "lesson 00, --tf32", ot, ot / lt }'
