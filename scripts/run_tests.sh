#!/usr/bin/env bash
# make test: the Criterion suite (unit tests of common/ and data/, and the lesson
# integration tests, which run the built programs and the grader).
set -uo pipefail
cd "$(dirname "$0")/.."
# Two jobs: one per core on the course machines; the integration tests start processes.
exec build/tests/unit_tests --jobs 2 "$@"
