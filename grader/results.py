#!/usr/bin/env python3
"""Grading results in Gradescope's results.json format: written by the grader (grade.py
--json), read back by the class grader (scripts/grade_class.sh).

    results.py scores RESULTS.json NN[,NN...]
    results.py unsent RESULTS.json NN[,NN...]

prints "NN PASSED GRADED" for each lesson: the checks of that lesson that passed, of those
it graded. `unsent` scores the checks of lessons not handed in 0, each saying so (the
skeleton passes some checks: given code trains; a run exits normally).

Every PASS/FAIL line the grader prints is one test (score 1 of 1 when it passes, 0 when it
fails); the lines under it (a table of differing steps, a sanitizer's report) are that
test's output; the top-level score is the sum.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from whole_file import write_atomically  # noqa: E402  (the course's one way to write a file whole)


def tests_from(lines):
    """The tests of (lesson, line) pairs, in the order printed."""
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


def write_tests(tests, path):
    """Writes path whole: the tests, their total score and how many passed."""
    failed = sum(test["status"] == "failed" for test in tests)
    summary = {"score": sum(test["score"] for test in tests),
               "output": f"{len(tests) - failed} of {len(tests)} checks passed", "tests": tests}
    write_atomically(path, json.dumps(summary, indent=2) + "\n")


def write(printed, path):
    """Writes path whole from what the grader printed: texts of "LESSON<TAB>LINE" lines."""
    lines = "".join(printed).split("\n")  # a \r a lesson printed stays inside its line
    write_tests(tests_from(line.split("\t", 1) for line in lines if "\t" in line), path)


def of_lesson(test, lesson):
    return test["name"].startswith(f"lesson {lesson}:")


def score_unsent(path, lessons):
    """Rewrites path with every check of the lessons named failed, scoring 0: not handed in."""
    with open(path, encoding="utf-8") as file:
        tests = json.load(file)["tests"]
    for test in tests:
        if any(of_lesson(test, lesson) for lesson in lessons):
            test.update(score=0, status="failed",
                        output="not handed in (no exercise file differs from the course's): scores 0\n" +
                        test["output"])
    write_tests(tests, path)


def lesson_scores(path, lessons):
    """(lesson, checks passed, checks graded) for each lesson named, from a results.json."""
    with open(path, encoding="utf-8") as file:
        tests = json.load(file)["tests"]
    scores = []
    for lesson in lessons:
        graded = [test for test in tests if of_lesson(test, lesson)]
        scores.append((lesson, sum(test["score"] for test in graded), len(graded)))
    return scores


def main(args):
    if len(args) != 3 or args[0] not in ("scores", "unsent"):
        print("usage: results.py scores|unsent RESULTS.json NN[,NN...]", file=sys.stderr)
        return 2
    try:
        if args[0] == "unsent":
            score_unsent(args[1], args[2].split(","))
            return 0
        scores = lesson_scores(args[1], args[2].split(","))
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"results: {args[1]}: cannot read the scores: {error}", file=sys.stderr)
        return 2
    for lesson, score, graded in scores:
        print(lesson, score, graded)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
