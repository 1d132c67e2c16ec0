#!/usr/bin/env bash
# The ring rule's peers, on the log of the reference ring at 4 ranks: as it is, then with
# every point-to-point call turned the other way round (a ring the other way, which keeps
# the rule), rank 0's first call sending to rank 2 (no neighbour of rank 0), and rank 0's
# first call sending to rank 3, from which it also receives. Prints check_schedule's lines
# for each, after a line naming it.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timeout 120 mpiexec -n 4 build/solutions/01_collectives --verify-ring --comm-log "$work/ring.csv" >/dev/null
python3 - "$work" <<'PYTHON'
import csv, sys
work = sys.argv[1]
rows = list(csv.reader(open(f"{work}/ring.csv", newline="")))
header, events = rows[0], rows[1:]
column = {name: i for i, name in enumerate(header)}
to, source = column["to"], column["from"]
def write(name, changed):
    csv.writer(open(f"{work}/{name}.csv", "w", newline="")).writerows([header] + changed)
write("reversed", [e[:to] + [e[source], e[to]] + e[source + 1:] if e[to] or e[source] else e for e in events])
first = next(i for i, e in enumerate(events) if e[column["rank"]] == "0" and e[to])
for name, peer in (("far", "2"), ("back", "3")):
    changed = [list(e) for e in events]
    changed[first][to] = peer
    write(name, changed)
PYTHON
for log in ring reversed far back; do
    echo "== $log"
    build/tools/check_schedule 01 "$work/$log.csv" --ranks 4 || true
done
