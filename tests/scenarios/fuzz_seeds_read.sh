#!/usr/bin/env bash
# Every seed the fuzzers explore from (tests/fuzz/seeds/) handed to the course's own reader of
# it, as a user would hand it: a seed the course no longer reads (its format changed) would
# leave the fuzzer exploring refusals only. Prints "TARGET STATUS" after each reader (0: read),
# with what the reader said when it refused.
#
#   tests/scenarios/fuzz_seeds_read.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
seeds=tests/fuzz/seeds
lesson=build/solutions/00_single_device

say() { # NAME COMMAND...: the command's words when it fails, then "NAME STATUS"
    local name=$1
    shift
    "$@" >"$d/out" 2>&1
    local status=$?
    [ $status -eq 0 ] || tail -3 "$d/out"
    echo "$name $status"
}

say checkpoint $lesson train --config tiny --steps 1 --val-every 0 --init-from $seeds/checkpoint/tiny.bin
say resume $lesson train --config tiny --steps 4 --save-every 2 --save "$d/ck" --resume $seeds/resume/tiny.state
say shard $lesson train --config tiny --steps 1 --val-every 0 --train $seeds/shard/small.bin
mkdir "$d/trace" && cp $seeds/trace/rank_0.json "$d/trace/"
say trace build/tools/analyze_traces "$d/trace"
say yelp_csv build/tools/import_tokens --format yelp $seeds/yelp_csv/reviews.csv "$d/reviews.bin"
