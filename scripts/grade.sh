#!/usr/bin/env bash
# The grader (make grade): grader/grade.py, whose --help says what it checks and how.
exec python3 "$(dirname "$0")/../grader/grade.py" "$@"
