#!/usr/bin/env bash
# How scripts/grade_class.sh takes in submissions that come in an odd shape: a class of
# lesson 01 (the ring), each student's ring_allreduce.c the reference's unless said. Prints
# "ok ..." or "not ok ..." per point; exit status 1 when any fails, 77 when this machine
# cannot make the sandbox (the reason on stderr).
#
#   tests/class/check_intake.sh git     git repositories that name commands of their own (a
#                                       filter, a file-system monitor, a hook): none runs, the
#                                       files are taken as committed; one owned by another
#                                       user is read too; one with a `..` name is refused
#   tests/class/check_intake.sh links   a repository whose lessons/01_collectives is a link to
#                                       another student's folder: nothing is taken through it
#   tests/class/check_intake.sh names   students named with a comma, a quote, a line break:
#                                       one gradebook row and one folder of grades each
#   tests/class/check_intake.sh runs    runs handed in for lesson 10 (the class graded on 01
#                                       and 10): one named after a drift check of the lesson is
#                                       compared, one named after none is not
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
scenario=${1:?usage: check_intake.sh git|links|names|runs}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
source tests/class/checks.sh # check, sandbox_or_skip
sandbox_or_skip check_intake
class=$work/class grades=$work/grades
# A correct lesson 01 in folder $1.
correct() { mkdir -p "$1/lessons/01_collectives" && cp solutions/01_collectives/*.c "$1/lessons/01_collectives/"; }
# Folder $1 made a git repository of its files, committed.
commit_all() {
    git -C "$1" init -q && git -C "$1" add -A && git -C "$1" -c user.name=s -c user.email=s@example.org commit -qm work
}

correct "$class/ref" # a folder: its score is full marks
case $scenario in
git)
    # Every command the repositories name would leave a file ran_* in $work.
    correct "$class/alice"
    echo '* filter=mark' >"$class/alice/.gitattributes"
    commit_all "$class/alice"
    git clone -q --bare "$class/alice" "$class/bob.git" # the same tree, whose .gitattributes names the filter
    for repo in "$class/alice/.git" "$class/bob.git"; do
        git --git-dir="$repo" config filter.mark.smudge "sh -c 'touch $work/ran_smudge; cat'"
        git --git-dir="$repo" config filter.mark.process "sh -c 'touch $work/ran_process; exit 1'"
        git --git-dir="$repo" config core.fsmonitor "sh -c 'touch $work/ran_fsmonitor'"
        git --git-dir="$repo" config core.pager "sh -c 'touch $work/ran_pager; cat'"
        for hook in post-checkout post-index-change reference-transaction; do
            printf '#!/bin/sh\ntouch %s/ran_%s\n' "$work" "$hook" >"$repo/hooks/$hook"
            chmod +x "$repo/hooks/$hook"
        done
    done
    if [ "$(id -u)" = 0 ]; then # a repository of another user's: git calls it dubious
        correct "$class/carl" && commit_all "$class/carl" && chown -R 65534 "$class/carl"
    fi
    # A commit whose tree holds a folder named `..` (git itself makes none), whose file is listed as ../x.
    git init -q --bare "$class/mallory.git"
    mallory() { git --git-dir="$class/mallory.git" "$@"; }
    tree() { # a tree of one entry: "MODE NAME" SHA
        python3 -c 'import sys; sys.stdout.buffer.write(sys.argv[1].encode() + b"\0" + bytes.fromhex(sys.argv[2]))' "$@" |
            mallory hash-object -w -t tree --literally --stdin
    }
    inner=$(tree "100644 x" "$(echo words | mallory hash-object -w --stdin)")
    outer=$(tree "40000 .." "$inner")
    mallory update-ref HEAD "$(mallory -c user.name=m -c user.email=m@example.org commit-tree "$outer" -m up)"
    ;;
links)
    correct "$class/carol"
    mkdir -p "$class/dave/lessons/00_single_device" # a lesson folder beside the link
    echo "my notes" >"$class/dave/lessons/00_single_device/notes.txt"
    ln -s "$class/carol/lessons/01_collectives" "$class/dave/lessons/01_collectives"
    commit_all "$class/dave"
    ;;
names)
    students=("Smith, Jane" $'ann\nlee' 'Dara "D" Oyelaran')
    for s in "${students[@]}"; do correct "$class/$s"; done
    ;;
runs)
    # lesson 00's fp32 figures themselves: a drift run could not agree with them better
    correct "$class/gail"
    mkdir -p "$class/gail/runs/10_mixed_precision"
    for check in drift_reference_n2 drift_reference_n99; do
        cp tests/expected/00_single_device/train_reference.csv "$class/gail/runs/10_mixed_precision/$check.csv"
    done
    lessons=01,10
    ;;
*) echo "check_intake: no scenario '$scenario' (git, links, names or runs)" >&2; exit 2 ;;
esac

GRADE_TIMEOUT=${GRADE_TIMEOUT:-120} scripts/grade_class.sh "$class" --lessons "${lessons:-01}" --out "$grades" --jobs 2 \
    >"$work/grade_class.out" 2>&1 || { cat "$work/grade_class.out"; exit 1; }
cat "$grades/gradebook.csv"
score() { awk -F, -v s="$1" '$1 == s { print $2 }' "$grades/gradebook.csv"; }
full=$(score ref)
check "ref (a folder) gets more than the skeleton does: $full" test "$full" -gt 1
feedback() { grep -qF -- "$2" "$grades/$1/feedback.txt"; }

case $scenario in
git)
    ran=$(find "$work" -maxdepth 1 -name 'ran_*' -printf '%f ')
    check "no command a repository names ran${ran:+: $ran}" test -z "$ran"
    check "alice (a repository with a filter) gets full marks: $(score alice)/$full" test "$(score alice)" = "$full"
    check "bob (bare, the same) gets full marks: $(score bob)/$full" test "$(score bob)" = "$full"
    if [ "$(id -u)" = 0 ]; then
        check "carl (a repository of another user's) gets full marks: $(score carl)/$full" \
            test "$(score carl)" = "$full"
    fi
    check "mallory's repository (a '..' name) is refused: $(score mallory)" test "$(score mallory)" = 0
    check "mallory is told why" feedback mallory "entry '../x' has a '..' part or an absolute name: refused"
    ;;
links)
    check "carol gets full marks: $(score carol)/$full" test "$(score carol)" = "$full"
    check "dave gets nothing through his link to carol's folder: $(score dave)/$full" test "$(score dave)" -lt "$full"
    check "dave is told why" feedback dave "lessons/01_collectives: a link or a submodule in the repository: not taken"
    ;;
names)
    for s in "${students[@]}"; do
        check "$(printf %q "$s") has a folder of grades of their own" test -s "$grades/$s/feedback.txt"
    done
    check "the gradebook, read as CSV, has one row per student, with full marks" python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
full, students = sys.argv[2], sys.argv[3:]
sys.exit(sorted(rows[1:]) != sorted([s, full, full, ""] for s in students) or len(rows[0]) != 4)' \
        "$grades/gradebook.csv" "$full" ref "${students[@]}"
    ;;
runs)
    runs=$(awk -F, '$1 == "gail" { print $NF }' "$grades/gradebook.csv")
    check "gail's run named after a drift check of lesson 10 matches, the other does not: $runs" test "$runs" = "1 of 2"
    check "gail is told the other is named after no check" \
        feedback gail "FAIL runs/10_mixed_precision/drift_reference_n99.csv: no graded check of lesson 10 has this name"
    ;;
esac
exit $failed
