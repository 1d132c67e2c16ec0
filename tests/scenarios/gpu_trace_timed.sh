#!/usr/bin/env bash
# A trace of lesson LESSON of the CUDA build in BUILD at 1 rank over NCCL is timed on the GPU:
# both files say "timing":"device"; on the compute track (one stream) the units' forward and
# backward spans follow one another without overlapping, inside their step's slice; each step
# has COLLECTIVE, a collective of the gradients, on the communication track, each within its
# step and after backward has begun; and the trace analyzer reads it. Exit 0 when all hold.
#
#   tests/scenarios/gpu_trace_timed.sh BUILD LESSON COLLECTIVE [FLAGS...]
set -eu
cd "$(dirname "$0")/../.."
source scripts/summary_lib.sh # header_help
[ $# -ge 3 ] || { header_help "$0" >&2; exit 2; }
build=$1 lesson=$2 collective=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$build/solutions/$lesson" train --config reference --steps 4 --val-every 0 --gen-tokens 0 --device cuda \
    --comm nccl --trace "$dir" "$@" >"$dir/run.out" 2>&1 || { cat "$dir/run.out"; exit 1; }
build/tools/analyze_traces "$dir" >"$dir/analysis.out" || { cat "$dir/analysis.out"; exit 1; }
# (times are written to 0.001 us: two that are equal may differ by rounding)
python3 - "$dir" "$collective" <<'PY'
import json, sys
folder, collective = sys.argv[1], sys.argv[2]
for name in ("rank_0.json", "merged.json"):
    timing = json.load(open(f"{folder}/{name}"))["otherData"]["timing"]
    assert timing == "device", f"{name}: timing {timing!r}, not 'device'"
events = [e for e in json.load(open(f"{folder}/merged.json"))["traceEvents"] if e.get("ph") == "X"]
steps = sorted((e for e in events if e["name"].startswith("step#")), key=lambda e: e["ts"])
assert len(steps) == 4, f"{len(steps)} step slices, not 4"
for step in steps:
    start, end = step["ts"], step["ts"] + step["dur"]
    inside = [e for e in events if start <= e["ts"] < end and e is not step]
    units = sorted((e for e in inside if e["tid"] == 0 and " unit " in e["name"]), key=lambda e: e["ts"])
    assert units, f"{step['name']}: no forward or backward span"
    for before, after in zip(units, units[1:]):
        assert before["ts"] + before["dur"] <= after["ts"] + 0.01, \
            f"{step['name']}: {before['name']} and {after['name']} overlap on the compute stream"
    for e in inside:
        assert e["dur"] >= 0 and e["ts"] + e["dur"] <= end + 0.01, f"{step['name']}: {e['name']} leaves its step"
    comms = [e for e in inside if e["tid"] == 1 and e["name"] == collective]
    assert comms, f"{step['name']}: no {collective} on the communication track"
    first_backward = min(e["ts"] for e in units if e["name"].startswith("backward"))
    for e in comms:
        assert e["ts"] >= first_backward, f"{step['name']}: a {collective} starts before backward does"
print(f"{len(events)} events, timed on the device: consistent")
PY
grep -E '^0 ' "$dir/analysis.out"
