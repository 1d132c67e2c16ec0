#!/usr/bin/env python3
"""Writes grading results in Gradescope's results.json format.

    grade_results.py RESULTS.tsv OUT.json

RESULTS.tsv is what scripts/grade.sh collects: one line per line it printed while grading,
"LESSON<TAB>LINE". Every PASS/FAIL line is one check and becomes one test (score 1 of 1 when
it passes, 0 when it fails); the lines that follow it (a table of differing steps, a
sanitizer's report) are that test's output. The top-level score is the sum.
"""
import json
import sys

from whole_file import write_atomically


def tests_from(lines):
    tests = []
    for lesson, line in lines:
        verdict = line.split(" ", 1)[0]
        if verdict in ("PASS", "FAIL"):
            label = line[len(verdict) + 1:].split(":", 1)[0]
            passed = verdict == "PASS"
            tests.append({"name": f"lesson {lesson}: {label}", "score": 1 if passed else 0, "max_score": 1,
                          "status": "passed" if passed else "failed", "output": line})
        elif tests and line.strip():
            tests[-1]["output"] += "\n" + line
    return tests


def main():
    if len(sys.argv) != 3:
        print("usage: grade_results.py RESULTS.tsv OUT.json", file=sys.stderr)
        return 2
    try:
        with open(sys.argv[1], encoding="utf-8") as f:
            lines = [line.rstrip("\n").split("\t", 1) for line in f if "\t" in line]
    except OSError as error:
        print(f"grade_results: {sys.argv[1]}: cannot read: {error.strerror}", file=sys.stderr)
        return 2
    tests = tests_from(lines)
    failed = sum(t["status"] == "failed" for t in tests)
    results = {"score": sum(t["score"] for t in tests), "output":
               f"{len(tests) - failed} of {len(tests)} checks passed", "tests": tests}
    try:
        write_atomically(sys.argv[2], json.dumps(results, indent=2) + "\n")
    except OSError as error:
        print(f"grade_results: {sys.argv[2]}: cannot write: {error.strerror}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
