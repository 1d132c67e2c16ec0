#!/usr/bin/env bash
# The memory and undefined-behaviour checks `make check` runs, after building what they use:
#   - every test suite that runs in the test process itself (the files under tests/ that do
#     not start programs: they do not include shell.h), in the AddressSanitizer +
#     UndefinedBehaviorSanitizer build of the tests; a UBSan report ends its test, so the
#     test fails instead of the report scrolling by;
#   - valgrind's memcheck on lesson 00 and on lesson 05 at 2 ranks (tiny config, 3 steps),
#     built for x86-64-v3 (AVX2), since valgrind cannot run AVX-512 instructions.
#   - the layers of common/: no header in an include circle, no object in a call circle, no
#     MPI in a tool that does not communicate (scripts/check_layers.py);
#   - every shell script of the course read by shellcheck (its warnings and errors), so that
#     a quoting slip or a variable spelt two ways fails here rather than in someone's run.
# One PASS/FAIL line each; exit status 1 when any fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/summary_lib.sh
no_arguments "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

suites=$(grep -L '"shell.h"' tests/test_*.c | xargs grep -ohE '^Test\(\w+' | sed 's/Test(//' | sort -u)
for suite in $suites; do
    if UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 build/sanitize/tests/unit_tests --filter "$suite/*" \
        >"$work/$suite.log" 2>&1; then
        echo "PASS check $suite: $(grep -oE 'Tested: [0-9]+' "$work/$suite.log" | tail -1) tests under ASan + UBSan"
    else
        echo "FAIL check $suite under ASan + UBSan:"; grep -E 'ERROR|runtime error|FAIL|CRASH' "$work/$suite.log" |
            head -5 | sed 's/^/  /'
        status=1
    fi
done

memcheck() {
    local name=$1
    shift
    if "$@" >"$work/memcheck.log" 2>&1; then
        echo "PASS check memcheck $name: no error valgrind can see"
    else
        echo "FAIL check memcheck $name:"; grep '==' "$work/memcheck.log" | head -8 | sed 's/^/  /'
        status=1
    fi
}
valgrind=(valgrind --error-exitcode=9 -q)
memcheck "00_single_device" "${valgrind[@]}" build/valgrind/solutions/00_single_device train --config tiny --steps 3
memcheck "05_bucketed_ddp at 2 ranks" mpiexec -n 2 "${valgrind[@]}" build/valgrind/solutions/05_bucketed_ddp train \
    --config tiny --steps 3
scripts/check_layers.py build || status=1

# The course's shell scripts: the .sh files (a sourced one names its shell in a `# shellcheck
# shell=bash` line) and the files that start with a shell's #!.
shell_scripts() {
    find .ci data scripts tests -type f | sort | while read -r file; do
        case $file in
        *.sh) echo "$file" ;;
        *) head -n 1 "$file" | grep -qE '^#!.*[/ ](ba)?sh$' && echo "$file" ;;
        esac
    done
}
mapfile -t scripts < <(shell_scripts)
if shellcheck --external-sources --severity=warning --format=gcc "${scripts[@]}" >"$work/shellcheck.log" 2>&1; then
    echo "PASS check shellcheck: ${#scripts[@]} shell scripts, no warning"
else
    echo "FAIL check shellcheck ($(wc -l <"$work/shellcheck.log") findings):"; head -8 "$work/shellcheck.log" | sed 's/^/  /'
    status=1
fi
exit $status
