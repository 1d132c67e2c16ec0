#!/usr/bin/env bash
# Grades lessons against the expected values in tests/expected/ and the rules they teach.
#
#   scripts/grade.sh [NN[,NN...] [BINARY]] [--build DIR] [--device cpu|cuda] [--json FILE] [--check NAME[,NAME...]]
#   (make grade [LESSON=NN] [CHECK=NAME[,NAME...]] [JSON=FILE])
#
# NN: the lesson, or a list of them (all lessons when left out; several end with one table).
# BINARY defaults to the student build, DIR/lessons/NN_name (DIR: --build, default build);
# its sanitizer build is the same path under DIR/sanitize/. A lesson's checks are listed in tests/expected/NN_name.checks, one per line:
#   train PRESET [FLAGS]   `BINARY train --config PRESET FLAGS`: loss, grad norm and validation
#                          loss per step against expected/NN_name/train_PRESET.csv, within the tolerance
#   estimate PRESET [FLAGS]
#                          `BINARY estimate --config PRESET FLAGS` against estimate_PRESET[_FLAGS].csv, exactly
#   plan PRESET [FLAGS]    `BINARY plan --config PRESET FLAGS`: the plan your query gives (lesson 05's
#                          buckets, lesson 07's shards), every column of plan_PRESET[_FLAGS].csv
#                          exactly, at a unit of more elements than a 32-bit int counts
#   ring N                 `mpiexec -disable-auto-cleanup -n N BINARY --verify-ring`: the ring all-reduce against exact sums,
#                          and its communication log against the ring's rule (grader/check_schedule.c)
#   dp PRESET N [FLAGS]    `mpiexec -disable-auto-cleanup -n N BINARY train --config PRESET FLAGS`: identical parameters on
#                          every rank at the end; loss, grad norm and validation loss per step within
#                          the lesson's tolerance (tests/tolerance.sh) and the bytes communicated per
#                          step exactly, against
#                          expected/NN_name/dp_PRESET_nN[_FLAGS].csv; and the run's communication log
#                          against the lesson's schedule and memory rules
#   drift PRESET N [FLAGS] the same run: loss and validation loss per step against lesson 00's fp32
#                          expected/00_single_device/train_PRESET.csv, within how far a 16-bit run may
#                          drift from an fp32 one (tests/tolerance.sh, DRIFT_RTOL)
#   sanitize CHECK...      the run of CHECK (one of the lines above), 4 steps of it, with the
#                          AddressSanitizer + UndefinedBehaviorSanitizer build: any report fails
# Every PASS/FAIL line is one check; a failed one is followed by the commands that reproduce it.
# --device cuda runs every train, dp and drift check on the GPU (a CUDA build: --build
# build/cuda), ranks sharing one GPU through MPI: the GPU against the CPU's expected values,
# at the CPU's tolerance. Estimates and lesson 01's ring (host memory) run as they do on the
# CPU, and sanitize lines are left out (the sanitizers check the CPU build).
# --json FILE also writes the results in Gradescope's results.json format. --check NAME (or
# CHECK=NAME) runs only the line whose name (as printed: dp_reference_n2_bucket-mb_0.1) is NAME;
# a list, NAME,NAME..., the lines named in it.
# With GRADE_SANDBOX set to a scripts/sandbox.sh command (what scripts/grade_class.sh
# sets), every run of the lesson happens in that sandbox, writing only into a folder of its
# own; its outputs are compared outside it, and an output that is not a regular file it
# wrote (a symbolic link to the expected values, say) counts as missing.
# A lesson whose files in lessons/ do not compile grades as one failed check that quotes the
# compiler's first error ("lesson 04: FAIL (does not compile: FILE:LINE:COL: error: ...)");
# the compiler's warnings, which never fail a grade, are listed after the verdict.
# Graded from your own build (no BINARY), a lesson's result also says how many of its hints
# you have seen (make hint): "hints seen: 1 of 3", never part of the score.
# Exit status: 0 when every check passes, 1 when one fails, 2 on bad input.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/summary_lib.sh # header_help
source tests/tolerance.sh
source scripts/check_name.sh

usage() { header_help "$0"; }

number="" binary="" json="" only=${CHECK:-} build=build device=cpu
while [ $# -gt 0 ]; do
    case $1 in
    -h|--help) usage; exit 0 ;;
    --json) json=${2:?grade: --json needs a file}; shift 2 ;;
    --build) build=${2:?grade: --build needs a folder}; shift 2 ;;
    --device) device=${2:?grade: --device needs cpu or cuda}; shift 2
              [[ $device =~ ^(cpu|cuda)$ ]] || { echo "grade: --device '$device' is not cpu or cuda" >&2; exit 2; } ;;
    --check) only=${2:?grade: --check needs a check name}; shift 2 ;;
    -*) echo "grade: unknown flag $1 (see --help)" >&2; exit 2 ;;
    *) if [ -z "$number" ]; then number=$1; elif [ -z "$binary" ]; then binary=$1
       else echo "grade: too many arguments (see --help)" >&2; exit 2; fi
       shift ;;
    esac
done

if [ -n "$json" ]; then # found before grading, not after it
    [ -d "$(dirname "$json")" ] && [ -w "$(dirname "$json")" ] ||
        { echo "grade: --json $json: cannot write into $(dirname "$json")" >&2; exit 2; }
    [ ! -e "$json" ] || [ -f "$json" ] || { echo "grade: --json $json: exists and is not a regular file" >&2; exit 2; }
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.tsv # lesson TAB line: every line graded, for the JSON and the table
: >"$results"
outputs=$work/out # what a run writes (--csv, --comm-log): in the sandbox, its only writable folder
mkdir -p "$outputs"
[ -z "${GRADE_SANDBOX:-}" ] || chmod 711 "$work" # the sandbox's user reaches its folder, and sees nothing else

# The words that start a run of the lesson's code: in the sandbox when GRADE_SANDBOX is set
# (for a sanitizer build without its address-space limit: the sanitizers reserve terabytes).
student_run() {
    local sandbox=()
    if [ -n "${GRADE_SANDBOX:-}" ]; then
        read -r -a sandbox <<<"$GRADE_SANDBOX"
        sandbox+=(--write "$outputs")
        [ "$1" != sanitized ] || sandbox+=(--memory-mb 0)
        sandbox+=(--)
    fi
    shift
    timeout "${GRADE_TIMEOUT:-300}" "${sandbox[@]}" "$@"
}

# A run's output that is not a regular file it wrote is not read: a link could point at
# the expected values. Outside the sandbox nothing can have made one, so nothing changes.
own_outputs() {
    local file
    for file in "$@"; do
        if [ -L "$file" ] || { [ -e "$file" ] && [ ! -f "$file" ]; }; then
            echo "  (the run's $(basename "$file") is not a regular file it wrote: not read)"
            rm -rf "$file"
        fi
    done
}

# The sanitizer build of a lesson binary: .../build/X -> .../build/sanitize/X.
sanitizer_build() {
    local binary=$1
    case $binary in
    build/*) echo "build/sanitize/${binary#build/}" ;;
    */build/*) echo "${binary%%/build/*}/build/sanitize/${binary#*/build/}" ;;
    *) echo "$binary" ;;
    esac
}

# The columns a plan check compares: every one of the expected file's after the first (the unit).
plan_columns() { head -n 1 "$1" | cut -d, -f2-; }

# What a training run adds for --device: nothing on the CPU.
device_flags() { [ "$device" = cpu ] || echo " --device $device"; }

# The words of the command that runs `mode args...` with BINARY (no output files).
run_command() {
    local binary=$1 mode=$2 preset=${3:-}
    case $mode in
    train) echo "$binary train --config $preset ${*:4}$(device_flags)" ;;
    estimate) echo "$binary estimate --config $preset ${*:4}" ;;
    plan) echo "$binary plan --config $preset ${*:4}" ;;
    ring) echo "mpiexec -disable-auto-cleanup -n $preset $binary --verify-ring" ;;
    dp|drift) echo "mpiexec -disable-auto-cleanup -n $4 $binary train --config $preset ${*:5}$(device_flags)" ;;
    esac
}

# The schedule flags of a check line: what the run was started with, for check_schedule.
schedule_flags() {
    local mode=$1 preset=$2
    case $mode in
    dp) echo "--ranks $3 --config $preset ${*:4}" ;;
    ring) echo "--ranks $preset" ;;
    esac
}

# What a sanitizer run adds to its line's command: 4 steps, and the step timeout.
sanitize_flags() {
    [ "$1" = ring ] || echo "--steps 4 --step-timeout ${GRADE_STEP_TIMEOUT:-60} --wait-timeout ${GRADE_WAIT_TIMEOUT:-30}"
}

# The exercise files of a lesson: a sanitizer report is traced back to the first frame in one.
# A course handed out without a lesson's reference has them only in lessons/: then every
# file there.
exercise_files() {
    local folder=solutions/$1
    compgen -G "$folder/*.c" >/dev/null || folder=lessons/$1
    (cd "$folder" && ls -- *.c | paste -sd'|')
}

# First sanitizer report in log, as one line naming where it happened.
sanitizer_finding() {
    local log=$1 lesson=$2 files kind frame
    files=$(exercise_files "$lesson")
    kind=$(grep -m1 -oE 'ERROR: AddressSanitizer: [A-Za-z-]+|runtime error: .*' "$log")
    [ -n "$kind" ] || return 1
    frame=$(grep -m1 -E "(^|/)($files):[0-9]+" "$log" | grep -oE "in [^ ]+ [^ ]*($files):[0-9]+|[^ ]*($files):[0-9]+(:[0-9]+)?" | head -n1)
    [ -n "$frame" ] || frame=$(grep -m1 -E '^ *#0 ' "$log" | sed 's/^ *#0 0x[0-9a-f]* //')
    echo "${kind#ERROR: }, ${frame:-no frame}"
}

# The columns of a run's CSV against the expected values: one PASS/FAIL line each, also
# when the run wrote nothing (each column then fails, saying so).
compare_columns() {
    local expected=$1 actual=$2 name=$3 columns=$4 rtol=$5 atol=$6 column
    local why="no figures (the run ended before writing them)"
    if [ -s "$actual" ]; then
        build/tools/compare_runs "$expected" "$actual" --label "$name" --columns "$columns" --rtol "$rtol" \
            --atol "$atol" "${@:7}" 2>"$work/compare.err"
        local status=$?
        [ $status -ne 2 ] && return $status
        why="could not compare: $(head -n 1 "$work/compare.err")"
    fi
    for column in ${columns//,/ }; do echo "FAIL $name $column: $why"; done
    return 1
}

# Loss, grad norm and validation loss against the expected values, each within the lesson's
# tolerance for it (tests/tolerance.sh: column_tolerance).
compare_figures() {
    local expected=$1 actual=$2 name=$3 lesson=$4 column status=0
    for column in loss grad_norm val_loss; do
        # shellcheck disable=SC2046 # the rtol and the atol
        compare_columns "$expected" "$actual" "$name" "$column" $(column_tolerance "$lesson" "$column") || status=1
    done
    return $status
}

# The last lines a failed run wrote itself: mpiexec's banner about a rank that ended says
# nothing the lesson's own lines do not.
own_last_lines() {
    grep -v -e '^=' -e '^$' -e 'YOUR APPLICATION TERMINATED' -e 'This typically refers to a problem' \
        -e 'Please see the FAQ page' "$1" | tail -n "$2"
}

# The run itself, as one check: PASS when it exits 0, else FAIL with its last lines.
run_verdict() {
    local name=$1 status=$2 output=$3 passed=$4
    if [ "$status" -eq 0 ]; then
        echo "PASS $name run: $passed"
        return 0
    fi
    echo "FAIL $name run: the lesson exited with an error$([ "$status" -eq 124 ] && echo " (timed out)"):"
    own_last_lines "$output" 6 | sed 's/^/  /'
    return 1
}

# One check line: prints its PASS/FAIL lines, the same number whatever happens; returns 1
# when any fails.
# shellcheck disable=SC2046 # a run's command is words: $(run_command ...) splits on purpose
run_check() {
    local number=$1 lesson=$2 binary=$3 mode=$4 preset=${5:-} name expected actual log out status=0
    shift 3
    name=$(check_name "$@")
    expected=tests/expected/$lesson/$name.csv
    actual=$outputs/$name.csv
    log=$outputs/$name.log.csv
    out=$work/$name.out
    case $mode in
    train)
        student_run lesson $(run_command "$binary" "$@") --csv "$actual" >"$out" 2>&1
        run_verdict "$name" $? "$out" "exited normally" || status=1
        own_outputs "$actual"
        compare_figures "$expected" "$actual" "$name" "$lesson" || status=1 ;;
    estimate)
        student_run lesson $(run_command "$binary" "$@") >"$actual" 2>"$out"
        run_verdict "$name" $? "$out" "exited normally" || status=1
        compare_columns "$expected" "$actual" "$name" bytes 0 0 || status=1 ;;
    plan)
        student_run lesson $(run_command "$binary" "$@") --csv "$actual" >"$out" 2>&1
        run_verdict "$name" $? "$out" "exited normally" || status=1
        own_outputs "$actual"
        compare_columns "$expected" "$actual" "$name" "$(plan_columns "$expected")" 0 0 || status=1 ;;
    ring)
        student_run lesson $(run_command "$binary" "$@") --comm-log "$log" >"$out" 2>&1
        local ring_status=$? exact
        own_outputs "$log"
        exact=$(grep -c '^PASS ring all-reduce' "$out")
        if [ $ring_status -eq 0 ]; then
            echo "PASS $name sums: exact on all $exact uneven counts"
        else
            echo "FAIL $name sums: $exact of 8 counts exact$([ $ring_status -eq 124 ] && echo " (timed out)")"
            status=1
        fi
        sed 's/^/  /' "$out"
        # shellcheck disable=SC2046
        schedule "$number" "$log" "$name" "the program ended before writing it" $(schedule_flags "$@") || status=1 ;;
    dp)
        student_run lesson $(run_command "$binary" "$@") \
            --step-timeout "${GRADE_STEP_TIMEOUT:-60}" --wait-timeout "${GRADE_WAIT_TIMEOUT:-30}" \
            --csv "$actual" --comm-log "$log" >"$out" 2>&1
        run_verdict "$name" $? "$out" "exited normally, with identical parameters on every rank" || status=1
        own_outputs "$actual" "$log"
        compare_figures "$expected" "$actual" "$name" "$lesson" || status=1
        compare_columns "$expected" "$actual" "$name" comm_bytes 0 0 --after-validation-between || status=1
        # shellcheck disable=SC2046 # the flags are words
        schedule "$number" "$log" "$name" "the run ended before writing it" $(schedule_flags "$@") || status=1 ;;
    drift)
        expected=tests/expected/00_single_device/train_$preset.csv
        student_run lesson $(run_command "$binary" "$@") \
            --step-timeout "${GRADE_STEP_TIMEOUT:-60}" --wait-timeout "${GRADE_WAIT_TIMEOUT:-30}" --csv "$actual" >"$out" 2>&1
        run_verdict "$name" $? "$out" "exited normally" || status=1
        own_outputs "$actual"
        compare_columns "$expected" "$actual" "$name vs fp32 (lesson 00)" loss,val_loss "$DRIFT_RTOL" "$LOSS_ATOL" ||
            status=1 ;;
    sanitize)
        local sanitized finding
        sanitized=$(sanitizer_build "$binary")
        [ -x "$sanitized" ] || { echo "FAIL $name: $sanitized is not built (make SANITIZE=1 $sanitized)"; return 1; }
        # shellcheck disable=SC2046
        ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            student_run sanitized $(run_command "$sanitized" "${@:2}") $(sanitize_flags "$2") >"$out" 2>&1
        local run_status=$?
        if finding=$(sanitizer_finding "$out" "$lesson"); then
            echo "FAIL $name: $finding"; return 1
        # wrong sums are the ring check's to report (exit 1); anything else is this one's
        elif [ $run_status -ne 0 ] && ! { [ "$2" = ring ] && [ $run_status -eq 1 ]; }; then
            echo "FAIL $name: the sanitizer build exited with an error:"; own_last_lines "$out" 6 | sed 's/^/  /'; return 1
        fi
        echo "PASS $name: no AddressSanitizer or UndefinedBehaviorSanitizer report" ;;
    *)
        echo "FAIL $name: grade does not know the check '$mode' (tests/expected/$lesson.checks)"; return 1 ;;
    esac
    return $status
}

# The log against the lesson's rules; every rule fails, saying why, when there is no log.
schedule() {
    local number=$1 log=$2 name=$3 why=$4
    shift 4
    if [ -s "$log" ]; then
        build/tools/check_schedule "$number" "$log" --label "$name" "$@" 2>"$work/schedule.err"
        local status=$?
        [ $status -ne 2 ] && return $status
        why="the log could not be read: $(head -n 1 "$work/schedule.err")"
    else
        why="no communication log: $why"
    fi
    build/tools/check_schedule "$number" "$log" --label "$name" --no-log "$why" "$@"
}

# The comparisons compare_figures makes, as commands.
print_compare_figures() {
    local expected=$1 lesson=$2 column rtol atol
    for column in loss grad_norm val_loss; do
        read -r rtol atol <<<"$(column_tolerance "$lesson" "$column")"
        echo "    build/tools/compare_runs $expected run.csv --columns $column --rtol $rtol --atol $atol"
    done
}

# The commands that redo a failed check by hand.
print_reproduce() {
    local number=$1 lesson=$2 binary=$3 mode=$4 name run expected
    shift 3
    name=$(check_name "$@")
    expected=tests/expected/$lesson/$name.csv
    run=$(run_command "$binary" "$@")
    echo "  reproduce:"
    case $mode in
    train)
        echo "    $run --csv run.csv"
        print_compare_figures "$expected" "$lesson" ;;
    dp)
        echo "    $run --csv run.csv --comm-log run_log.csv"
        print_compare_figures "$expected" "$lesson"
        echo "    build/tools/compare_runs $expected run.csv --columns comm_bytes --rtol 0 --atol 0 --after-validation-between"
        echo "    build/tools/check_schedule $number run_log.csv $(schedule_flags "$@")" ;;
    drift)
        echo "    $run --csv run.csv"
        echo "    build/tools/compare_runs tests/expected/00_single_device/train_$2.csv run.csv --columns loss,val_loss --rtol $DRIFT_RTOL --atol $LOSS_ATOL" ;;
    estimate)
        echo "    $run > estimate.csv"
        echo "    build/tools/compare_runs $expected estimate.csv --columns bytes --rtol 0 --atol 0" ;;
    plan)
        echo "    $run --csv plan.csv"
        echo "    build/tools/compare_runs $expected plan.csv --columns $(plan_columns "$expected") --rtol 0 --atol 0" ;;
    ring)
        echo "    $run --comm-log run_log.csv"
        echo "    build/tools/check_schedule $number run_log.csv $(schedule_flags "$@")" ;;
    sanitize)
        echo "    make SANITIZE=1 $(sanitizer_build "$binary")"
        echo "    ASAN_OPTIONS=detect_leaks=0 $(run_command "$(sanitizer_build "$binary")" "${@:2}") $(sanitize_flags "$2")" ;;
    esac
}

# Exits 2 when --check names a check that lesson NUMBER does not have: said before any run.
require_named_checks() {
    local lesson wanted names=","
    lesson=$(scripts/lesson_binary.sh "$1") || exit 2
    [ -f "tests/expected/$lesson.checks" ] || { echo "grade: no checks listed in tests/expected/$lesson.checks" >&2; exit 2; }
    while read -r -a words; do
        [ "${#words[@]}" -eq 0 ] || names=$names$(check_name "${words[@]}"),
    done <"tests/expected/$lesson.checks"
    local -a wanted_names=()
    IFS=, read -r -a wanted_names <<<"$only"
    for wanted in "${wanted_names[@]}"; do
        [[ $names == *,"$wanted",* ]] || { echo "grade: lesson $1 has no check named '$wanted'" >&2; exit 2; }
    done
}

# What the compiler said of KIND (error or warning) when it last built the lesson's files in
# lessons/ (make keeps it beside each object, OBJECT.log), a line each.
compiler_said() {
    cat "$build"/obj/lessons/"$1"/*.o.log 2>/dev/null | grep -E "^[^ ]+:[0-9]+:[0-9]+: $2:" || true
}

# The lesson's compiler warnings, after its verdict: they never change a grade.
list_warnings() {
    local warnings
    warnings=$(compiler_said "$1" warning)
    [ -n "$warnings" ] || return 0
    echo "the compiler's warnings for lessons/$1 (they do not change the grade):"
    head -n 20 <<<"$warnings" | sed 's/^/  /'
}

# Grades one lesson; sets lesson_checks and lesson_failed.
grade_lesson() {
    local number=$1 binary=$2 lesson checks_file hints=""
    lesson=$(scripts/lesson_binary.sh "$number") || exit 2
    # your own build: how many of the lesson's hints you have seen, beside the result (never scored)
    [ -n "$binary" ] || hints="   hints seen: $(scripts/hint.sh "$number" --seen 2>/dev/null || echo none)"
    [ -n "$binary" ] || binary=$build/lessons/$lesson
    binary=${binary#./} # its sanitizer build is the same path under build/sanitize/
    checks_file=tests/expected/$lesson.checks
    [ -f "$checks_file" ] || { echo "grade: no checks listed in $checks_file" >&2; exit 2; }
    if [ ! -x "$binary" ]; then # a build that failed grades as one failed check
        local error line verdict="1 of 1 checks failed"
        error=$(compiler_said "$lesson" error | head -n 1)
        line="FAIL build: ${error:+does not compile: }${error:-$binary is not built (make $binary)}"
        [ -z "$error" ] || verdict="does not compile: $error"
        echo "$line"
        printf '%s\t%s\n' "$number" "$line" >>"$results"
        echo "lesson $number: FAIL ($verdict)$hints"
        lesson_checks=1 lesson_failed=1
        return
    fi
    local kernels="chosen from the CPU's features"
    [ -z "${OPENBLAS_CORETYPE:-}" ] || kernels="OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
    local where=""
    [ "$device" = cpu ] || where=", training runs on --device $device"
    echo "grading $binary (OpenBLAS kernels: $kernels$where)"
    lesson_checks=0 lesson_failed=0
    : >"$work/failed_lines"
    local name
    while read -r -a words; do
        [ "${#words[@]}" -eq 0 ] && continue
        name=$(check_name "${words[@]}")
        [ -n "$only" ] && [[ ,$only, != *,"$name",* ]] && continue
        if [ "${words[0]}" = sanitize ] && [ "$device" != cpu ]; then
            echo "($name left out on --device $device: the sanitizers check the CPU build)"
            continue
        fi
        run_check "$number" "$lesson" "$binary" "${words[@]}" </dev/null >"$work/check.out" 2>&1
        local status=$?
        if [ $status -ne 0 ] && ! grep -qE '^FAIL ' "$work/check.out"; then
            echo "FAIL $name: the check failed without saying why (exit status $status)" \
                >>"$work/check.out"
        fi
        [ $status -ne 0 ] && print_reproduce "$number" "$lesson" "$binary" "${words[@]}" >>"$work/check.out"
        cat "$work/check.out"
        grep -E '^FAIL ' "$work/check.out" >>"$work/failed_lines"
        sed "s/^/$number\t/" "$work/check.out" >>"$results"
        lesson_checks=$((lesson_checks + $(grep -cE '^(PASS|FAIL) ' "$work/check.out")))
        lesson_failed=$((lesson_failed + $(grep -cE '^FAIL ' "$work/check.out")))
    done <"$checks_file"
    if [ "$lesson_failed" -eq 0 ]; then
        echo "lesson $number: PASS ($lesson_checks of $lesson_checks checks passed)$hints"
    else
        # a long grade's failures have scrolled away: each again, on one line, above the verdict
        echo "the failed checks of lesson $number again:"
        cut -c1-160 "$work/failed_lines" | sed 's/^/  /'
        echo "lesson $number: FAIL ($lesson_failed of $lesson_checks checks failed)$hints"
    fi
    list_warnings "$lesson"
}

if [ -n "$number" ] && [[ $number != *,* ]]; then
    require_named_checks "$number"
    grade_lesson "$number" "$binary"
    failed=$lesson_failed
else
    [ -z "$binary" ] || { echo "grade: a binary needs a single lesson number" >&2; exit 2; }
    numbers=()
    if [ -n "$number" ]; then
        IFS=, read -r -a numbers <<<"$number"
    else
        for checks_file in tests/expected/[0-9][0-9]_*.checks; do numbers+=("$(basename "$checks_file" | cut -c1-2)"); done
    fi
    for n in "${numbers[@]}"; do require_named_checks "$n"; done
    failed=0
    table=$work/table
    for n in "${numbers[@]}"; do
        lesson=$(scripts/lesson_binary.sh "$n") || exit 2
        grade_lesson "$n" ""
        echo "${lesson} ${lesson_checks} ${lesson_failed}" >>"$table"
        failed=$((failed + lesson_failed))
        echo
    done
    printf '%-18s %7s %7s  %s\n' lesson checks failed result
    while read -r lesson checks lesson_failed; do
        printf '%-18s %7d %7d  %s\n' "$lesson" "$checks" "$lesson_failed" \
            "$([ "$lesson_failed" -eq 0 ] && echo PASS || echo FAIL)"
    done <"$table"
fi
[ -z "$json" ] || python3 scripts/grade_results.py "$results" "$json" || exit 2
[ "$failed" -eq 0 ]
