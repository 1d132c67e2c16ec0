#!/usr/bin/env bash
# Gradescope's entry point (scripts/gradescope/run_autograder) on one submission, lesson
# 02's solution as a student would hand it in, in a Gradescope-like folder of its own:
# prints the score and the text of the results.json it leaves. Exit 1 if it failed.
#
#   tests/class/gradescope_once.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/submission/lessons/02_naive_ddp"
ln -s "$PWD" "$root/source"
cp solutions/02_naive_ddp/naive_ddp.c "$root/submission/lessons/02_naive_ddp/"
AUTOGRADER_ROOT=$root GRADED_LESSONS=02 scripts/gradescope/run_autograder 2>/dev/null || exit 1
python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["score"], r["output"])' \
    "$root/results/results.json"
