#!/usr/bin/env bash
# Lesson 05's bucket sweep asked to write its CSV onto its own validation shard (a copy of
# data/generated/val.bin): prints what the sweep said, and "the input was changed" if the
# copy no longer matches the shard. Exits with the sweep's status.
#
#   tests/scenarios/sweep_keeps_its_input.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp data/generated/val.bin "$d/v.bin"
build/solutions/05_bucketed_ddp sweep --config tiny --val "$d/v.bin" --csv "$d/v.bin" 2>&1
status=$?
cmp -s "$d/v.bin" data/generated/val.bin || echo 'the input was changed'
exit $status
