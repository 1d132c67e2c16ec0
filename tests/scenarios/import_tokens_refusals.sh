#!/usr/bin/env bash
# build/tools/import_tokens handed a FIFO as its input, then an output in a folder that does
# not exist, a device (/dev/null), and its own input: prints what it said and "NAME STATUS"
# after each ("fifo 1", "missing folder 2", "device 2", "itself 2"), then the input's text,
# which must be as it was ("words").
#
#   tests/scenarios/import_tokens_refusals.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkfifo "$d/fifo"
echo words >"$d/in.txt"
import=build/tools/import_tokens
timeout 10 $import --format text "$d/fifo" "$d/out.bin" 2>&1
echo "fifo $?"
$import --format text "$d/in.txt" /nonexistent/out.bin 2>&1
echo "missing folder $?"
$import --format text "$d/in.txt" /dev/null 2>&1
echo "device $?"
$import --format text "$d/in.txt" "$d/in.txt" 2>&1
echo "itself $?"
cat "$d/in.txt"
