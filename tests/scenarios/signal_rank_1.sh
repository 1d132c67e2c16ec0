#!/usr/bin/env bash
# Starts 05_bucketed_ddp at 2 ranks the way the course's scripts do (mpiexec
# -disable-auto-cleanup, so the ranks that remain can speak), sends SIGNAL to rank 1 once
# the first step is done, and prints how the job ended ("exit STATUS after S s"), what it
# printed but its config and step lines, and "a rank was left running" if one was. The
# binary is copied, so that no other run's ranks are signalled.
#
#   tests/scenarios/signal_rank_1.sh SIGNAL          (STOP, KILL, ...)
#
# Exit 0 when the job failed within 60 s, as it must.
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -eq 1 ] || { header_help "$0" >&2; exit 2; }
signal=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp build/solutions/05_bucketed_ddp "$d/ddp"
start=$(date +%s)
timeout 120 mpiexec -disable-auto-cleanup -n 2 "$d/ddp" train --config course --steps 2000 --wait-timeout 2 \
    >"$d/out" 2>&1 &
job=$!
for _ in $(seq 400); do grep -q '^step     1/' "$d/out" && break; sleep 0.05; done
sleep 0.3
kill "-$signal" "$(sed -n 's/.*rank 1 = pid \([0-9]*\).*/\1/p' "$d/out")"
wait $job
status=$?
seconds=$(($(date +%s) - start))
echo "exit $status after $seconds s"
grep -v '^config\|^step' "$d/out"
pgrep -f "^$d/ddp train" && echo 'a rank was left running'
pkill -KILL -f "^$d/ddp train"
[ $status -ne 0 ] && [ $seconds -lt 60 ]
