#!/usr/bin/env bash
# Checks the course on a machine with an NVIDIA GPU, and keeps every log. The parts:
#   tests     the GPU tests (scripts/run_gpu_tests.sh: what make test-gpu runs)
#   grade     the solutions of lessons 00 and 02-10 graded with their training on the GPU
#             (scripts/grade.sh --device cuda): the CPU's expected values and tolerances,
#             with the largest relative difference of each column
#   sanitize  compute-sanitizer's memcheck, racecheck, synccheck and initcheck on lesson 00,
#             and on lessons 04, 05 and 09 at 2 ranks (the reference config, 4 steps); the four
#             tools at once, SANITIZE_TIMEOUT seconds a run at most (default 600)
#   trace     lessons 04, 05 and 09 at 1 rank over NCCL with --trace (the course config), and
#             the trace analyzer's compute, exposed communication and overlap per step
#   bench     scripts/bench_gpu.sh (tokens/s and MFU), and llm.c's fp32 trainer beside it
#             when --llmc names a checkout of llm.c (scripts/bench_llmc.sh; LLMC_BUILT=DIR
#             names its trainers built beforehand with scripts/bench_llmc.sh --build-into)
#
#   scripts/check_gpu.sh [--parts tests,grade,sanitize,trace,bench] [--out DIR] [--llmc DIR]
#
# It builds nothing: make test-gpu (or make all data, then make CUDA=1 all
# build/cuda/tests/gpu_tests) first. Each part writes DIR/PART.log (default DIR:
# reports/gpu_check) and adds one line to DIR/summary.txt; a part whose log is already there
# is refused before anything runs. Parts are independent: several can run at once, each its
# own call, but a benchmark shares the GPU with nothing if its figures are to mean anything.
# Exit status: 0 when every part passes, 1 when one fails, 2 on bad input or without a GPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/summary_lib.sh # header_help, gpu_probe, from_caller
gpu_build=${DTC_GPU_BUILD:-build/cuda}
[ -z "${LLMC_BUILT:-}" ] || LLMC_BUILT=$(from_caller "$LLMC_BUILT")

parts=tests,grade,sanitize,trace,bench out=reports/gpu_check llmc=""
while [ $# -gt 0 ]; do
    case $1 in
    --parts) parts=${2:?check_gpu: --parts needs a list like tests,grade}; shift 2 ;;
    --out) out=$(from_caller "${2:?check_gpu: --out needs a folder}"); shift 2 ;;
    --llmc) llmc=$(from_caller "${2:?check_gpu: --llmc needs an llm.c checkout}"); shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    *) echo "check_gpu: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
IFS=, read -r -a chosen <<<"$parts"
for part in "${chosen[@]}"; do
    [[ $part =~ ^(tests|grade|sanitize|trace|bench)$ ]] ||
        { echo "check_gpu: '$part' is not a part (tests, grade, sanitize, trace, bench)" >&2; exit 2; }
    [ ! -e "$out/$part.log" ] || { echo "check_gpu: $out/$part.log is there already: choose another --out" >&2; exit 2; }
done
[ -z "$llmc" ] || [ -f "$llmc/train_gpt2_fp32.cu" ] ||
    { echo "check_gpu: --llmc $llmc: no train_gpt2_fp32.cu there" >&2; exit 2; }
for program in "$gpu_build/solutions/00_single_device" build/tools/compare_runs; do
    [ -x "$program" ] || { echo "check_gpu: $program is not built (make test-gpu builds it)" >&2; exit 2; }
done
if ! probe=$(gpu_probe "$gpu_build/solutions/00_single_device"); then
    echo "check_gpu: no GPU: $(echo "$probe" | tail -n 1)" >&2
    exit 2
fi
mkdir -p "$out" || exit 2

# The lessons' solutions, by number.
solution() { echo "$gpu_build/solutions/$(scripts/lesson_binary.sh "$1")"; }

part_tests() {
    scripts/run_gpu_tests.sh
}

# The largest relative difference of each figure over the PASS lines of grade.sh's output,
# for the lessons in fp32 and for lesson 10 (16-bit, its own tolerance) apart.
largest_differences() {
    awk '/^grading / { mixed = ($2 ~ /10_mixed_precision/) }
        /^(PASS|FAIL) .* (loss|grad_norm|val_loss): .*largest relative difference/ {
            split($3, c, ":"); key = (mixed ? "lesson 10 " : "fp32 lessons ") c[1]
            match($0, /largest relative difference [^ ]+/)
            v = substr($0, RSTART + 28, RLENGTH - 28) # after "largest relative difference "
            if (v + 0 >= worst[key] + 0) worst[key] = v }
        END { for (k in worst) printf "  largest relative difference, %s: %s\n", k, worst[k] }' "$@" | sort
}

part_grade() {
    local number status=0
    for number in 00 02 03 04 05 06 07 08 09 10; do
        scripts/grade.sh "$number" "$(solution "$number")" --device cuda || status=1
        echo
    done
    return $status
}

# compute-sanitizer TOOL on one run; LAUNCHER is "" or "mpiexec -n 2". CUDA calls that return
# an error are not reported (--report-api-errors no): NCCL, which a run at 1 rank uses, asks
# about kernels it holds no code for on this GPU and carries on (4 such errors on an H200 with
# NCCL 2.28.3), while the course checks every CUDA call it makes and stops the run on an
# error, which fails the check anyway. Memory, races, syncs and reads before writes are all
# still checked, in NCCL's kernels too.
sanitize_run() {
    local tool=$1 launcher=$2 number=$3 status
    shift 3
    echo "== $tool: $launcher $(solution "$number") train --config reference --device cuda --steps 4 $*"
    # shellcheck disable=SC2086 # LAUNCHER is words
    timeout "${SANITIZE_TIMEOUT:-600}" $launcher compute-sanitizer --tool "$tool" --report-api-errors no \
        --error-exitcode 99 --print-limit 20 \
        "$(solution "$number")" train --config reference --device cuda --steps 4 --gen-tokens 8 "$@"
    status=$?
    [ $status -eq 0 ] && echo "PASS $tool lesson $number" || echo "FAIL $tool lesson $number (exit $status)"
    return $status
}

# The four tools at once, each its own sequence of runs (a sanitized run is slow, and mostly on
# the host): their logs follow one another, tool by tool.
part_sanitize() {
    command -v compute-sanitizer >/dev/null || { echo "FAIL compute-sanitizer is not on the PATH"; return 1; }
    local tool status=0 logs
    logs=$(mktemp -d)
    for tool in memcheck racecheck synccheck initcheck; do
        {
            sanitize_run "$tool" "" 00
            sanitize_run "$tool" "mpiexec -n 2" 04
            sanitize_run "$tool" "mpiexec -n 2" 05 --bucket-mb 0.1
            sanitize_run "$tool" "mpiexec -n 2" 09
        } >"$logs/$tool" 2>&1 &
    done
    wait
    for tool in memcheck racecheck synccheck initcheck; do
        cat "$logs/$tool"
        grep -q '^FAIL ' "$logs/$tool" && status=1
        [ "$(grep -c '^PASS ' "$logs/$tool")" -eq 4 ] || status=1
    done
    rm -rf "$logs"
    return $status
}

part_trace() {
    local number dir status=0
    for number in 04 05 09; do
        dir=$(mktemp -d)
        echo "== $(solution "$number") train --config course --steps 10 --device cuda --comm nccl --trace DIR"
        if "$(solution "$number")" train --config course --steps 10 --val-every 0 --gen-tokens 0 --device cuda \
            --comm nccl --trace "$dir" >"$dir/run.out" 2>&1; then
            build/tools/analyze_traces "$dir" || status=1
            # the tracks each rank's events are on, with how many events each holds
            grep -o '"tid":[0-9]*' "$dir/merged.json" | sort | uniq -c | sed 's/^/  events on /'
        else
            status=1
            tail -n 5 "$dir/run.out"
        fi
        rm -rf "$dir"
    done
    return $status
}

part_bench() {
    scripts/bench_gpu.sh || return 1
    [ -z "$llmc" ] || scripts/bench_llmc.sh ${LLMC_BUILT:+--built "$LLMC_BUILT"} "$llmc"
}

failed=0
for part in "${chosen[@]}"; do
    log=$out/$part.log
    started=$SECONDS
    "part_$part" >"$log" 2>&1
    status=$?
    verdict=$([ $status -eq 0 ] && echo PASS || echo FAIL)
    [ $status -eq 0 ] || failed=1
    {
        echo "$verdict $part ($((SECONDS - started)) s, $log)"
        case $part in
        tests) grep -E '^\[====\] Synthesis|^run_gpu_tests:' "$log" | sed 's/^/  /' ;;
        grade) grep -E '^lesson [0-9]+: ' "$log" | sed 's/^/  /'; largest_differences "$log" ;;
        sanitize) echo "  runs clean: $(grep -c '^PASS ' "$log")" ;;
        trace) grep -E '^[0-9]+ ' "$log" | sed 's/^/  /' ;;
        esac
    } | tee -a "$out/summary.txt"
done
exit $failed
