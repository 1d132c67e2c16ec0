#!/usr/bin/env bash
# Lesson 02 started as task TASK of 2 by a launcher whose tasks MPI sees one by one (Slurm's
# variables set, no mpiexec), with --csv into a fresh folder: prints any file it left there
# besides its output, then its output. Exits with the lesson's status.
#
#   tests/scenarios/lone_task.sh TASK
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -eq 1 ] || { header_help "$0" >&2; exit 2; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
SLURM_STEP_NUM_TASKS=2 SLURM_PROCID=$1 timeout 60 build/solutions/02_naive_ddp train --config course \
    --csv "$d/run.csv" >"$d/out" 2>&1
status=$?
for file in "$d"/*; do [ "${file##*/}" = out ] || echo "${file##*/}"; done
cat "$d/out"
exit $status
