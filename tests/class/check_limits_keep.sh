#!/usr/bin/env bash
# Grades the --limits class of tests/class/make_class.sh (lessons 00 and 02, two at a time,
# small limits) and checks that each submission ran into a limit and nothing else: the
# correct one graded beside them still gets what the reference gets, each of the others
# loses lesson 02 only, no connection reached a listener outside the sandbox, nothing of
# theirs is left running, and the course is as it was. Prints "ok ..." or "not ok ..." per
# point; exit status 1 when any fails, 77 when this machine cannot make the sandbox.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
work=$(mktemp -d)
listener=""
trap "cp -r \"\$work/grades\" /tmp/limits_grades" EXIT
source tests/class/checks.sh # check, sandbox_or_skip, course_sums
sandbox_or_skip check_limits

# A listener outside the sandbox, on every address of this machine: it notes each connection.
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("0.0.0.0", 0))
s.listen()
print(s.getsockname()[1], flush=True)
while True:
    c, peer = s.accept()
    print("connection from", peer[0], flush=True)
    c.close()' >"$work/listener.log" &
listener=$!
for _ in $(seq 50); do [ -s "$work/listener.log" ] && break; sleep 0.1; done
port=$(head -n 1 "$work/listener.log")
host=$(hostname -I 2>/dev/null | awk '{ print $1 }')

tests/class/make_class.sh "$work/class" --limits "${host:-127.0.0.1}" "$port" || exit 1
course_sums >"$work/course_before"
started=$(date +%s)
GRADE_TIMEOUT=30 GRADE_LIMITS="--memory-mb 2048 --procs 64 --file-mb 16 --cpu-s 120" \
    scripts/grade_class.sh "$work/class" --lessons 00,02 --out "$work/grades" --jobs 2 >"$work/grade_class.out" 2>&1 ||
    { cat "$work/grade_class.out"; exit 1; }
echo "graded in $(($(date +%s) - started)) s:"
cat "$work/grades/gradebook.csv"

full() { scripts/grade.sh "$1" "build/solutions/$(scripts/lesson_binary.sh "$1")" | grep -c '^PASS '; }
full00=$(full 00) full02=$(full 02)
score() { awk -F, -v s="$1" -v c="$2" '$1 == s { print $(c + 1) }' "$work/grades/gradebook.csv"; }

check "alice (correct, graded beside them) gets full marks: $(score alice 1)/$full00, $(score alice 2)/$full02" \
    test "$(score alice 1)" = "$full00" -a "$(score alice 2)" = "$full02"
for s in forker looper hoarder filler aborter; do
    check "$s keeps lesson 00 ($(score $s 1)/$full00) and loses on lesson 02 ($(score $s 2)/$full02)" \
        test "$(score $s 1)" = "$full00" -a "$(score $s 2)" -lt "$full02"
done
check "caller's code ran (lesson 00 full: $(score caller 1)/$full00)" test "$(score caller 1)" = "$full00"
check "no connection of caller's reached out" test "$(wc -l <"$work/listener.log")" -eq 1
check "caller was told of none" bash -c "! grep -q 'NETWORK REACHED' '$work/grades/caller/feedback.txt'"
check "the looper's run was ended by the time limit" grep -q "(timed out)" "$work/grades/looper/feedback.txt"
check "grade_class names the looper among the submissions whose runs timed out" \
    grep -qE "^grade_class: runs of [0-9]+ submission\(s\) timed out \(GRADE_TIMEOUT 30 s\): (.* )?looper( |;)" \
    "$work/grade_class.out"
# Their builds, as the feedback names them ("grading /tmp/tmp.X/tree/build/..."): no process runs one.
left_running() {
    local tree
    for tree in $(sed -n 's|^grading \(.*/tree\)/build/.*|\1|p' "$work"/grades/*/feedback.txt | sort -u); do
        pgrep -f "^$tree/" && return 0
    done
    return 1
}
check "nothing of theirs is left running" bash -c "$(declare -f left_running); work=$work; ! left_running"
check "the course is as it was" diff <(course_sums) "$work/course_before"
exit $failed
