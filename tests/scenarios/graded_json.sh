#!/usr/bin/env bash
# scripts/grade.sh LESSON BINARY --json, and what its results.json (Gradescope's format)
# holds: "TESTS SCORE MAX_SCORE [NAMES OF THE FAILED TESTS]", as Python prints them.
#
#   tests/scenarios/graded_json.sh LESSON BINARY
set -eu
cd "$(dirname "$0")/../.."
source scripts/summary_lib.sh # header_help
[ $# -eq 2 ] || { header_help "$0" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
scripts/grade.sh "$1" "$2" --json "$dir/r.json" >/dev/null || true # a failing grade still writes it
python3 - "$dir/r.json" <<'PYTHON'
import json, sys
results = json.load(open(sys.argv[1]))
tests = results["tests"]
print(len(tests), results["score"], sum(t["max_score"] for t in tests),
      [t["name"] for t in tests if t["status"] == "failed"])
PYTHON
