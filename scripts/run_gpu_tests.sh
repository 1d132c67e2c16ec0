#!/usr/bin/env bash
# make test-gpu: the CUDA build's tests (tests/gpu/). On a machine without a GPU each test
# that needs one reports that it was skipped and why, and the rest (doctor's answer that
# there is no GPU, for one) still run.
set -uo pipefail
cd "$(dirname "$0")/.."
# One job: the tests share the machine's GPU, and several use it whole.
exec build/cuda/tests/gpu_tests --jobs 1 --verbose "$@"
