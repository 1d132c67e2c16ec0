#!/usr/bin/env bash
# A trace across two hosts of a cluster (scripts/cluster.sh, whose hosts' monotonic clocks
# differ by 1000 s: scripts/cluster_exec.sh), each rank of 05_bucketed_ddp writing into a
# working folder of its own, as on machines that share no file system. Prints what each
# rank wrote ("rank 0 wrote merged.json rank_0.json, rank 1 rank_1.json") and how far apart
# the ranks' first events are in rank 0's merged trace ("2 ranks, first events within 0 s").
#
#   tests/scenarios/trace_across_hosts.sh CLUSTER
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -eq 1 ] || { header_help "$0" >&2; exit 2; }
# shellcheck disable=SC1090 # the cluster's own launch settings
source "/run/dtc-cluster/$1/env" || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
mkdir "$d/a" "$d/b"
run=("$PWD/build/solutions/05_bucketed_ddp" train --config course --steps 4 --trace t
    --train "$PWD/data/generated/train.bin" --val "$PWD/data/generated/val.bin")
timeout 120 mpiexec -n 1 -wdir "$d/a" "${run[@]}" : -n 1 -wdir "$d/b" "${run[@]}" >"$d/out" 2>&1 ||
    { cat "$d/out"; exit 1; }
written() { local names=("$1"/*); echo "${names[@]##*/}"; } # the file names, in ls's order
echo "rank 0 wrote $(written "$d/a/t"), rank 1 $(written "$d/b/t")"
python3 - "$d/a/t/merged.json" <<'PYTHON'
import json, sys
first = {}
for event in json.load(open(sys.argv[1]))["traceEvents"]:
    if event.get("ph") == "X":
        first[event["pid"]] = min(first.get(event["pid"], 1e300), event["ts"])
print(len(first), "ranks, first events within", round((max(first.values()) - min(first.values())) / 1e6), "s")
PYTHON
