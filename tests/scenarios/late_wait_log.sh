#!/usr/bin/env bash
# The ZeRO-3 gathers rule on a log in which rank 0 waits for unit 1's all-gather only after
# unit 1's forward has begun: how a run would log it whose gather happened to arrive in
# time. The mistake itself (wait_after_compute, tests/mutants/09_zero3.txt) is caught by its
# numbers first, since new memory starts as NaN; this log is the rule's own test. Prints
# check_schedule's lines for the reference run's log as it is, a line "--", then for the same
# log with that one wait moved; exits 1 when the moved log passes.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timeout 120 mpiexec -n 2 build/solutions/09_zero3 train --config reference --comm-log "$work/run.csv" >/dev/null
python3 - "$work/run.csv" "$work/late.csv" <<'PYTHON'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
header, events = rows[0], rows[1:]
column = {name: i for i, name in enumerate(header)}
def first(kind, unit=""):
    return next(i for i, e in enumerate(events) if e[column["rank"]] == "0" and e[column["step"]] == "1"
                and e[column["event"]] == kind and e[column["unit"]] == unit)
wait, compute = first("wait"), first("forward_start", "1")
moved = events[wait + 1:compute + 1] + [events[wait]]
for place, event in zip(events[wait:compute + 1], moved):  # the log's order: seq and time stay in place
    event[column["seq"]], event[column["time_ms"]] = place[column["seq"]], place[column["time_ms"]]
events[wait:compute + 1] = moved
csv.writer(open(sys.argv[2], "w", newline="")).writerows([header] + events)
PYTHON
build/tools/check_schedule 09 "$work/run.csv" --ranks 2 --config reference
echo --
! build/tools/check_schedule 09 "$work/late.csv" --ranks 2 --config reference
