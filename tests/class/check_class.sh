#!/usr/bin/env bash
# Grades the class of tests/class/make_class.sh with scripts/grade_class.sh (lessons 00 and
# 02) and checks that the grader withstood it: the correct submissions get what the
# reference gets from scripts/grade.sh, every dishonest or broken one less on lesson 02
# (and no less on lesson 00), refused archives zero, and nothing outside the grader's own
# folders changed. Prints "ok ..." or "not ok ..." per point; exit status 1 when any fails,
# 77 when this machine cannot make the sandbox (the reason on stderr).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source tests/class/checks.sh # check, sandbox_or_skip, course_sums
sandbox_or_skip check_class

tests/class/make_class.sh "$work/class" || exit 1
course_sums >"$work/course_before"
(cd "$work/class/alice" && find . -type f -print0 | sort -z | xargs -0 sha256sum) >"$work/alice_before"

GRADE_TIMEOUT=${GRADE_TIMEOUT:-120} scripts/grade_class.sh "$work/class" --lessons 00,02 --out "$work/grades" \
    --jobs 2 >"$work/grade_class.out" 2>&1 || { cat "$work/grade_class.out"; exit 1; }
cat "$work/grades/gradebook.csv"

# What the reference gets, graded as make grade grades it (no sandbox): full marks.
full() { scripts/grade.sh "$1" "build/solutions/$(scripts/lesson_binary.sh "$1")" | grep -c '^PASS '; }
full00=$(full 00) full02=$(full 02)
score() { awk -F, -v s="$1" -v c="$2" '$1 == s { print $(c + 1) }' "$work/grades/gradebook.csv"; }
feedback() { grep -qF -- "$2" "$work/grades/$1/feedback.txt"; }

for s in alice dave; do
    check "$s (correct) gets full marks: $(score $s 1)/$full00, $(score $s 2)/$full02" \
        test "$(score $s 1)" = "$full00" -a "$(score $s 2)" = "$full02"
done
for s in bob erin heidi ivan frank; do
    check "$s keeps lesson 00 ($(score $s 1)/$full00) and loses on lesson 02 ($(score $s 2)/$full02)" \
        test "$(score $s 1)" = "$full00" -a "$(score $s 2)" -lt "$full02"
done
check "bob, who copies the expected values at exit, fails the figures" feedback bob "FAIL dp_reference_n2 loss"
check "erin's link to the expected values is not read" feedback erin "is not a regular file it wrote: not read"
check "frank's lesson 02 does not build and scores 0" test "$(score frank 2)" = 0
check "frank is told why" feedback frank "lesson 02: the build failed:"
check "judy's lesson 00, the skeleton, scores 0: $(score judy 1); her lesson 02 full: $(score judy 2)" \
    test "$(score judy 1)" = 0 -a "$(score judy 2)" = "$full02"
check "judy is told why" feedback judy "lesson 00: not handed in (no exercise file differs from the course's)"
check "judy is told where her work was not taken from" \
    feedback judy "  (work/memory_estimate.c: not taken; the exercise file is taken from lessons/00_single_device/memory_estimate.c)"
check "alice is told what was ignored" feedback alice "  NOTES.txt"
check "bob's commands to reproduce name his own copy's paths" \
    feedback bob " -n 2 build/lessons/02_naive_ddp train --config reference --csv run.csv"
check "alice's feedback holds no grader's folder" bash -c "! grep -q '/tmp/tmp\.' '$work/grades/alice/feedback.txt'"
mkdir "$work/ring" && chmod 711 "$work" && scripts/sandbox.sh --root . --write "$work/ring" -- \
    mpiexec -n 2 build/solutions/01_collectives --verify-ring >"$work/ring/out" 2>&1
check "MPI in the sandbox says nothing of the machine it cannot see" \
    bash -c "grep -q '^PASS ring' '$work/ring/out' && ! grep -qE 'hwloc|UCX +ERROR' '$work/ring/out'"
check "a line per student as it is done" grep -qxF "grade_class: alice: lesson 00 $full00 of $full00, lesson 02 $full02 of $full02" \
    "$work/grade_class.out"
runs() { awk -F, -v s="$1" '$1 == s { print $NF }' "$work/grades/gradebook.csv"; }
check "alice's run matches: $(runs alice)" test "$(runs alice)" = "1 of 1"
check "bob's runs do not: $(runs bob)" test "$(runs bob)" = "0 of 2"
check "bob is told which step is off" feedback bob "FAIL runs/02_naive_ddp/dp_reference_n2 loss: 1 of 30 rows differ; first at step=2"
check "bob is told a run matches no check" feedback bob "runs/02_naive_ddp/dp_cluster_n64.csv: no graded check of lesson 02"
for s in carol gina; do check "$s's archive is refused: 0" test "$(score $s 1)$(score $s 2)" = 00; done
check "carol is told why" feedback carol "has an absolute name: refused"
check "gina is told why" feedback gina "has a '..' part: refused"
check "the course is as it was" diff <(course_sums) "$work/course_before"
check "alice's submission is as it was" \
    diff <(cd "$work/class/alice" && find . -type f -print0 | sort -z | xargs -0 sha256sum) "$work/alice_before"
check "nothing was written outside the submission's folder" test ! -e /var/tmp/marker_from_a_submission
exit $failed
