#!/usr/bin/env bash
# Runs the fuzzers that `make FUZZ=1 fuzzers` built (tests/fuzz/), one a reader. For each:
#   1. every input under tests/fuzz/regressions/TARGET/ (what earlier runs found) and every
#      seed under tests/fuzz/seeds/TARGET/ (files the course itself wrote), run once;
#   2. exploration from those seeds:
#        make fuzz (no --gate)  FUZZ_SECONDS each (default 20) from a random seed, a new one
#                               every run: the way to find what no input has found yet;
#        --gate (CI)            a fixed number of inputs from a fixed seed (FUZZ_SEED, default
#                               1; FUZZ_RUNS scales every target's count, default 1.0): the same
#                               tree gives the same result on any machine, so a submission
#                               fails only for what it changed.
# A crash, a sanitizer report or a leak fails it, and the input that did it is saved under
# build/fuzz/found/TARGET/. Once the reader is fixed, copy that input into
# tests/fuzz/regressions/TARGET/ under a name that says what it holds: from then on every run
# replays it first.
#
#   scripts/fuzz.sh [--gate] [TARGET...]   (make fuzz; .ci/run: --gate)
#   scripts/fuzz.sh --write-seeds          tests/fuzz/seeds/ written anew from a tiny lesson-00
#                                          run, when a file format changes
# TARGET: shard, checkpoint, resume, yelp_csv, trace.
set -euo pipefail
cd "$(dirname "$0")/.."

all_targets=(shard checkpoint resume yelp_csv trace)
# Inputs each target explores under --gate: about 10 s each on a 2-core x86-64 (the readers
# differ in speed by 10x: a trace is parsed as JSON, a shard's header is 12 bytes).
declare -A gate_runs=([shard]=200000 [checkpoint]=80000 [resume]=60000 [yelp_csv]=120000 [trace]=20000)

source scripts/summary_lib.sh # header_help
usage() { header_help "$0"; }

write_seeds() {
    local seeds=tests/fuzz/seeds
    [ -x build/solutions/00_single_device ] && [ -x build/tools/gen_reviews ] ||
        { echo "fuzz: --write-seeds needs the course built (make all data)" >&2; exit 2; }
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    build/solutions/00_single_device train --config tiny --steps 4 --save "$work/ck" --save-every 2 \
        --trace "$work/trace" >/dev/null
    build/tools/gen_reviews --train-mb 0.003 --test-mb 0.001 --out-dir "$work/reviews" >/dev/null
    rm -rf "$seeds"
    for target in "${all_targets[@]}"; do mkdir -p "$seeds/$target"; done
    cp "$work/ck" "$seeds/checkpoint/tiny.bin"
    cp "$work/ck.state" "$seeds/resume/tiny.state"
    cp "$work/trace/rank_0.json" "$seeds/trace/rank_0.json"
    cp "$work/reviews/train.csv" "$seeds/yelp_csv/reviews.csv"
    python3 - "$seeds/shard/small.bin" <<'PY'
import struct, sys
# 256 tokens: enough for a tiny run to train on (tests/scenarios/fuzz_seeds_read.sh)
header = struct.pack("<3i", 20240520, 1, 256) + bytes(1024 - 12)
open(sys.argv[1], "wb").write(header + struct.pack("<256H", *range(256)))
PY
    echo "fuzz: wrote $(find "$seeds" -type f | wc -l) seeds under $seeds"
}

gate=0
targets=()
for arg in "$@"; do
    case $arg in
        --gate) gate=1 ;;
        --write-seeds) write_seeds; exit 0 ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "fuzz: unknown option $arg" >&2; exit 2 ;;
        *) [ -n "${gate_runs[$arg]+set}" ] || { echo "fuzz: unknown target $arg (${all_targets[*]})" >&2; exit 2; }
           targets+=("$arg") ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
seconds=${FUZZ_SECONDS:-20} fixed_seed=${FUZZ_SEED:-1} runs_scale=${FUZZ_RUNS:-1.0}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_SECONDS=$seconds is not a whole number of seconds" >&2; exit 2; }
[[ $fixed_seed =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: FUZZ_SEED=$fixed_seed is not a positive whole number" >&2; exit 2; }
[[ $runs_scale =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "fuzz: FUZZ_RUNS=$runs_scale is not a number" >&2; exit 2; }
for target in "${targets[@]}"; do
    [ -x build/fuzz/fuzz/fuzz_$target ] || { echo "fuzz: no build/fuzz/fuzz/fuzz_$target (make FUZZ=1 fuzzers)" >&2; exit 2; }
    ls tests/fuzz/seeds/"$target"/* >/dev/null 2>&1 ||
        { echo "fuzz: no seeds under tests/fuzz/seeds/$target (scripts/fuzz.sh --write-seeds)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The first line of the log that says what went wrong.
first_error() {
    grep -m1 -aE 'ERROR|runtime error|SUMMARY|deadly signal' "$1" || echo "(no error line: see the fuzzer's exit status)"
}

# Every regression input and seed, once each: a failure names the input.
replay() {
    local target=$1 binary=$2 input
    for input in tests/fuzz/regressions/"$target"/* tests/fuzz/seeds/"$target"/*; do
        [ -e "$input" ] || continue
        if ! "$binary" "$input" >"$work/$target.replay.log" 2>&1; then
            echo "FAIL fuzz $target: $input fails: $(first_error "$work/$target.replay.log")"
            return 1
        fi
    done
}

status=0
for target in "${targets[@]}"; do
    binary=build/fuzz/fuzz/fuzz_$target found=build/fuzz/found/$target corpus=$work/corpus_$target
    mkdir -p "$found" "$corpus"
    regressions=(tests/fuzz/regressions/"$target"/*)
    replayed=0
    [ -e "${regressions[0]}" ] && replayed=${#regressions[@]}
    replay "$target" "$binary" || { status=1; continue; }
    if [ $gate -eq 1 ]; then
        runs=$(awk -v n="${gate_runs[$target]}" -v s="$runs_scale" 'BEGIN { printf "%d", n * s }')
        # the comparisons' operands (-use_cmp) and the corpus reloaded on a timer would bring in
        # addresses and timing: without them the same tree explores the same inputs on every machine
        explore=(-seed="$fixed_seed" -runs="$runs" -use_cmp=0 -reload=0)
        how="from seed $fixed_seed"
    else
        explore=(-max_total_time="$seconds")
        how="in $seconds s"
    fi
    # the biggest seed is a resume state of ~100 KB: inputs may grow past it
    start=$SECONDS
    if ! "$binary" "${explore[@]}" -max_len=262144 -artifact_prefix="$found/" -print_final_stats=0 \
        "$corpus" tests/fuzz/seeds/"$target" >"$work/$target.log" 2>&1; then
        echo "FAIL fuzz $target: $(first_error "$work/$target.log")"
        echo "  the input: $(ls -t "$found" | head -1 | sed "s|^|$found/|")"
        [ $gate -eq 1 ] || echo "  the run's seed: $(grep -m1 -oE 'Seed: [0-9]+' "$work/$target.log")"
        status=1
        continue
    fi
    inputs=$(grep -aoE '^#[0-9]+' "$work/$target.log" | tail -1)
    echo "PASS fuzz $target: $replayed regression input(s) replayed, ${inputs#\#} inputs explored $how ($((SECONDS - start)) s)"
done
exit $status
