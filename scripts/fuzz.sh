#!/usr/bin/env bash
# Runs the fuzzers that `make FUZZ=1 fuzzers` built (tests/fuzz/): each for FUZZ_SECONDS
# (default 20) from seeds a real run writes (a tiny lesson-00 run's checkpoint, resume state
# and trace, a small shard, reviews in the CSV format), then every input in
# tests/fuzz/regressions/TARGET/ once. A crash, a sanitizer report or a leak fails it; the
# input that did it is saved under build/fuzz/found/TARGET/ — copy it into
# tests/fuzz/regressions/TARGET/ once the reader is fixed, so it is replayed from then on.
#
#   scripts/fuzz.sh [TARGET...]   (make fuzz; TARGET: shard, checkpoint, resume, yelp_csv, trace)
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-20}
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(shard checkpoint resume yelp_csv trace)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Seeds, one folder per target, from what the course itself writes.
seeds=build/fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds"/{shard,checkpoint,resume,yelp_csv,trace}
build/solutions/00_single_device train --config tiny --steps 4 --save "$work/ck" --save-every 2 \
    --trace "$work/trace" >/dev/null
cp "$work/ck" "$seeds/checkpoint/tiny.bin"
cp "$work/ck.state" "$seeds/resume/tiny.state"
cp "$work/trace/rank_0.json" "$seeds/trace/rank_0.json"
build/tools/gen_reviews --train-mb 0.003 --test-mb 0.001 --out-dir "$work/reviews" >/dev/null
cp "$work/reviews/train.csv" "$seeds/yelp_csv/reviews.csv"
python3 - "$seeds/shard/small.bin" <<'PY'
import struct, sys
header = struct.pack("<3i", 20240520, 1, 64) + bytes(1024 - 12)
open(sys.argv[1], "wb").write(header + struct.pack("<64H", *range(64)))
PY

status=0
for target in "${targets[@]}"; do
    binary=build/fuzz/fuzz/fuzz_$target
    [ -x "$binary" ] || { echo "fuzz: no $binary (make FUZZ=1 fuzzers)" >&2; exit 2; }
    found=build/fuzz/found/$target corpus=$work/corpus_$target
    mkdir -p "$found" "$corpus"
    # the biggest seed is a resume state of ~100 KB: inputs may grow past it
    if ! "$binary" -max_total_time="$seconds" -max_len=262144 -artifact_prefix="$found/" -print_final_stats=0 \
        "$corpus" "$seeds/$target" >"$work/$target.log" 2>&1; then
        echo "FAIL fuzz $target: $(grep -m1 -E 'ERROR|runtime error|SUMMARY' "$work/$target.log")"
        echo "  the input: $(ls -t "$found" | head -1 | sed "s|^|$found/|")"
        status=1
        continue
    fi
    runs=$(grep -oE '#[0-9]+' "$work/$target.log" | tail -1)
    regressions=(tests/fuzz/regressions/"$target"/*)
    if [ -e "${regressions[0]}" ] && ! "$binary" "${regressions[@]}" >"$work/$target.replay.log" 2>&1; then
        echo "FAIL fuzz $target: a regression input fails again: $(grep -m1 -E 'ERROR|runtime error' \
            "$work/$target.replay.log")"
        status=1
        continue
    fi
    echo "PASS fuzz $target: ${runs#\#} inputs in ${seconds} s, $([ -e "${regressions[0]}" ] && \
        echo "${#regressions[@]}" || echo 0) regression input(s) replayed"
done
exit $status
