#!/usr/bin/env bash
# Lesson 00 killed (SIGKILL) at its 20th step, writing --csv onto DIR/run.csv, which already
# holds "earlier": prints run.csv (still "earlier"), the header of the temporary file the run
# was writing beside it, and "rows kept" when that file holds more than 20 lines.
#
#   tests/scenarios/killed_run_keeps_csv.sh DIR
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -eq 1 ] && [ -d "$1" ] || { header_help "$0" >&2; exit 2; }
w=$1
echo earlier >"$w/run.csv"
build/solutions/00_single_device train --config course --steps 2000 --csv "$w/run.csv" >"$w/out" 2>&1 &
job=$!
for _ in $(seq 400); do grep -q '^step    20/' "$w/out" && break; sleep 0.05; done
# bash reports a job killed by a signal on the shell's own stderr, while it kills or waits:
# kept out of what this script prints
exec 3>&2 2>/dev/null
kill -KILL $job
wait $job
exec 2>&3 3>&-
cat "$w/run.csv"
head -n 1 "$w"/run.csv.tmp.*
[ "$(cat "$w"/run.csv.tmp.* | wc -l)" -gt 20 ] && echo rows kept
