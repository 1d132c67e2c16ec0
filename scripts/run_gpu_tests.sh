#!/usr/bin/env bash
# make test-gpu: the CUDA build's tests (tests/gpu/). On a machine without a GPU each test
# that needs one reports that it was skipped and why, and the rest (doctor's answer that
# there is no GPU, for one) still run. Criterion's synthesis line counts only the tests that
# ran, so the skipped ones are counted after it.
# DTC_GPU_BUILD names the build to test (build/cuda; make test-emu sets build/emu, the
# emulated GPU); the tests read it too, for the programs they run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/summary_lib.sh
help_if_asked "$@"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# One job: the tests share the machine's GPU, and several use it whole. The emulated GPU is
# each process's own, so make test-emu runs them GPU_TEST_JOBS (2) at a time, one a core.
export DTC_GPU_BUILD=${DTC_GPU_BUILD:-build/cuda}
"$DTC_GPU_BUILD/tests/gpu_tests" --jobs "${GPU_TEST_JOBS:-1}" --verbose "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
# (tests left out by --filter say "Test is disabled": those are not counted)
skipped=$(grep '^\[SKIP\]' "$log" | grep -vc 'Test is disabled$')
if [ "$skipped" -gt 0 ]; then
    # each reason once, with how many tests gave it: "31 no GPU: ...; 2 the fault is made by ..."
    reasons=$(grep '^\[SKIP\]' "$log" | grep -v 'Test is disabled$' | sed 's/^[^:]*::[^:]*: //' | sort | uniq -c |
        sort -rn | sed 's/^ *//' | awk 'NR > 1 { printf "; " } { printf "%s", $0 }')
    echo "run_gpu_tests: $skipped test(s) skipped ($reasons)"
fi
exit "$status"
