#!/usr/bin/env bash
# make test: the Criterion suite (unit tests of common/ and data/, and the lesson
# integration tests, which run the built programs and the grader).
#
#   scripts/run_tests.sh              everything: the rest two at a time, then the cluster suite alone
#   scripts/run_tests.sh ARGS...      build/tests/unit_tests ARGS... (--filter 'suite/*', --verbose)
#
# The `cluster` suite makes network namespaces and interfaces on this machine (scripts/cluster.sh,
# as root; skipped otherwise). An MPI job that starts while an interface comes or goes can
# fail in MPI_Init (UCX: "No such device"), so no other test runs beside it.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
[ $# -eq 0 ] || exec build/tests/unit_tests --jobs 2 "$@"
# Two jobs: one per core on the course machines; the integration tests start processes.
build/tests/unit_tests --jobs 2 --filter '!(cluster/*)' || status=$?
build/tests/unit_tests --jobs 1 --filter 'cluster/*' || status=$?
exit "${status:-0}"
