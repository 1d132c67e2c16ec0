#!/usr/bin/env bash
# Runs 02_naive_ddp at 2 ranks with rank 0 on a slow disk (every fsync takes SECONDS longer:
# tests/slow_rank.c), saving midway (--save-every 2) and at the end, with every output and
# --wait-timeout 1, and prints how the job ended ("exit STATUS after S s"), its output and
# the files it left. With --stop, rank 0 is stopped (SIGSTOP) 2 s after the first step,
# in the middle of its first save.
#
#   tests/scenarios/slow_rank_0.sh SECONDS [--stop]
#
# Exits with the job's status.
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -ge 1 ] || { header_help "$0" >&2; exit 2; }
slow_seconds=$1 stop=${2:-}
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cp build/solutions/02_naive_ddp "$d/ddp"
start=$(date +%s)
timeout 120 mpiexec -disable-auto-cleanup -n 2 env LD_PRELOAD="$PWD/build/tests/slow_rank.so" \
    SLOW_RANK=0 SLOW_FSYNC_SECONDS="$slow_seconds" "$d/ddp" train --config course --steps 4 --save-every 2 \
    --save "$d/model.bin" --csv "$d/run.csv" --comm-log "$d/comm.log" --wait-timeout 1 >"$d/out" 2>&1 &
job=$!
if [ "$stop" = --stop ]; then
    for _ in $(seq 400); do grep -q '^step     1/' "$d/out" && break; sleep 0.05; done
    sleep 2
    kill -STOP "$(sed -n 's/.*rank 0 = pid \([0-9]*\).*/\1/p' "$d/out")"
fi
wait $job
status=$?
echo "exit $status after $(($(date +%s) - start)) s"
cat "$d/out"
ls "$d"
pkill -KILL -f "^$d/ddp train"
exit $status
