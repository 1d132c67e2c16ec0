#!/usr/bin/env bash
# Lesson 01's all-reduce at 2 ranks, 16 MiB a million times (mpiexec -disable-auto-cleanup,
# --wait-timeout 2), with one rank stopped (SIGSTOP) once the measurements have begun:
# prints the job's output, and "a rank was left running" if one was. The binary is copied,
# so that no other run's ranks are stopped.
#
#   tests/scenarios/stop_a_collectives_rank.sh
#
# Exit 0 when the job failed within 30 s, as it must.
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp build/solutions/01_collectives "$d/c"
start=$(date +%s)
timeout 100 mpiexec -disable-auto-cleanup -n 2 "$d/c" -b 16M -e 16M -n 1000000 --collective all_reduce \
    --wait-timeout 2 >"$d/out" 2>&1 &
job=$!
for _ in $(seq 200); do grep -q 'collective' "$d/out" && break; sleep 0.05; done
sleep 0.3
kill -STOP "$(pgrep -f "^$d/c" | tail -1)"
wait $job
status=$?
cat "$d/out"
pgrep -f "^$d/c" && echo 'a rank was left running'
pkill -KILL -f "^$d/c"
[ $status -ne 0 ] && [ $(($(date +%s) - start)) -lt 30 ]
