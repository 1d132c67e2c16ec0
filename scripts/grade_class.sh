#!/usr/bin/env bash
# Grades a class: every submission built against a pristine copy of the course and run in a
# sandbox (scripts/sandbox.sh), into one gradebook.
#
#   scripts/grade_class.sh SUBMISSIONS_DIR [--lessons 00,02,...] [--out DIR] [--jobs N]
#   (make grade-class SUBMISSIONS=DIR [LESSON=00,02] [OUT=DIR])
#
# SUBMISSIONS_DIR holds one entry per student, named by the student: a folder, a git
# repository (a folder with .git, or NAME.git), a NAME.tar.gz / NAME.tgz / NAME.tar or a
# NAME.zip. Two entries for one student (bob/ and bob.zip), or a student named as the
# gradebook's file, are refused before any grading.
# An archive with an entry that could land outside it (an absolute name, a `..` part, a
# link) is refused and the student gets 0, with the reason in the feedback. Of a folder, its
# files are taken (not its links); of a git repository, the files of its last commit as
# committed, read with nothing of the repository's run (no filter, hook or setting of its
# own) and its links and submodules left out (a `..` or absolute name refuses it, as above).
#
# From a submission only the exercise files are taken: for each lesson, the files that
# solutions/NN_name/ holds, found under a `lessons/` folder anywhere in it (not one reached
# through a link that leads outside the submission). Everything else is ignored and listed in
# the feedback, and a file named as an exercise file but found elsewhere is pointed at. A
# SUBMISSIONS_DIR that holds lessons/ (one student's submission, or the course) is refused.
# Each student's lessons are built in the sandbox against a copy of the course (common/, the
# given files, the Makefile) and graded by scripts/grade.sh with every run in
# the sandbox; the expected values, the instructor's files and the other submissions are never
# in view of the student's code.
#
# A submission may also hand in runs made on the student's own machine (a GPU, say): the
# --csv of a graded check, as runs/NN_name/CHECK.csv (dp_reference_n2.csv, train_reference.csv:
# the names of tests/expected/NN_name/). Each is compared with the expected values within the
# tolerance (tests/tolerance.sh; comm_bytes exactly) and counted apart from the grade: a CSV
# can be written by hand, so a match shows the figures are right, not that the student's code
# made them. A build graded here shows that.
#
# Writes into DIR (default grades/):
#   gradebook.csv            student (quoted as CSV quotes a name with a comma, a quote or
#                            a line break), one column per lesson (checks passed), total, and
#                            submitted_runs (of the runs handed in, how many match)
#   STUDENT/feedback.txt     what was taken and ignored, build messages, every check's message
#   STUDENT/results.json     the same results in Gradescope's results.json format
#   STUDENT/scores, runs     what the gradebook's row is made from
# Submissions are graded --jobs at a time (default: the number of cores), a line each on
# standard output as it is done, each with a user id
# of its own (and, where the kernel allows, a control group) in the sandbox, which no other
# grader running at the same time holds. GRADE_TIMEOUT
# (seconds a run may take, 300) bounds each run; GRADE_LIMITS, more scripts/sandbox.sh
# options (--memory-mb 4096 --procs 64, say), replaces its default limits. At the end it
# names the submissions with a run that timed out: the limit is wall time, so on a busy
# machine grade those again.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # header_help, from_caller
usage() { header_help "$0"; }

# The student's name: the entry's, less what it came as.
student_name() {
    local name
    name=$(basename "$1")
    name=${name%.tar.gz} name=${name%.tgz} name=${name%.tar} name=${name%.zip}
    echo "${name%.git}"
}

submissions="" lessons="" out=grades jobs=$(nproc)
while [ $# -gt 0 ]; do
    case $1 in
    --lessons) lessons=${2:?grade_class: --lessons needs a list like 00,02}; shift 2 ;;
    --out) out=$(from_caller "${2:?grade_class: --out needs a folder}"); shift 2 ;;
    --jobs) jobs=${2:?grade_class: --jobs needs a number}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    -*) echo "grade_class: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$submissions" ] || { echo "grade_class: one SUBMISSIONS_DIR only (see --help)" >&2; exit 2; }
       submissions=$(from_caller "$1"); shift ;;
    esac
done
[ -n "$submissions" ] || { usage >&2; exit 2; }
[ -d "$submissions" ] || { echo "grade_class: $submissions is not a folder" >&2; exit 2; }
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "grade_class: --jobs '$jobs' is not a positive number" >&2; exit 2; }
if [ -z "$lessons" ]; then
    lessons=$(find tests/expected -maxdepth 1 -name '[0-9][0-9]_*.checks' -printf '%f\n' | cut -c1-2 | sort | paste -sd,)
fi
IFS=, read -r -a numbers <<<"$lessons"
names=()
for n in "${numbers[@]}"; do names+=("$(scripts/lesson_binary.sh "$n")") || exit 2; done
submissions=$(realpath "$submissions")
out=$(realpath -m "$out")
case $out/ in "$submissions"/*) echo "grade_class: --out $out is inside the submissions" >&2; exit 2 ;; esac
mapfile -d '' -t entries < <(find "$submissions" -mindepth 1 -maxdepth 1 -print0 | sort -z)
[ ${#entries[@]} -gt 0 ] || { echo "grade_class: no submissions in $submissions" >&2; exit 2; }
# One student's submission, or the course itself, given for the class: each of its folders
# would be graded as a student.
if [ -d "$submissions/lessons" ]; then
    echo "grade_class: $submissions holds lessons/, as one submission does: give the folder that holds" \
        "a submission per student" >&2
    exit 2
fi
declare -A entry_of=() # each student's entry: two would share one folder of grades
for entry in "${entries[@]}"; do
    student=$(student_name "$entry")
    [ -n "$student" ] || { echo "grade_class: $(basename "$entry") names no student" >&2; exit 2; }
    case $student in gradebook.csv | gradebook.csv.tmp) # the grades folder's own file
        echo "grade_class: $(basename "$entry"): a student cannot be named $student (the gradebook's file)" >&2
        exit 2 ;;
    esac
    [ -z "${entry_of[$student]:-}" ] || { echo "grade_class: $(basename "${entry_of[$student]}") and" \
        "$(basename "$entry") are both $student's submission: keep one of them" >&2; exit 2; }
    entry_of[$student]=$entry
done
if ! scripts/sandbox.sh --root . -- true; then
    echo "grade_class: the sandbox cannot start here (above: why)" >&2
    exit 2
fi
mkdir -p "$out"

# The course, built once: every student's build starts from these objects.
make --no-print-directory -s data grading-tools BUILT="${names[*]}" built-lessons
make --no-print-directory -s SANITIZE=1 BUILT="${names[*]}" built-lessons

# The regular files under folder $1 (no link is followed or copied) into folder $2.
copy_files() {
    mkdir -p "$2" && (cd "$1" && find . -type f -print0 | tar --null -T - -cf -) | tar -x -C "$2" --no-same-owner
}

# git on the repository $1, reading neither the system's nor the grader's configuration.
student_git() { GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git --no-pager --git-dir="$1" "${@:2}"; }

# The files of the last commit of the git repository $1 (its .git folder, or a bare one) into
# folder $2, as committed, with no command of the repository's run. git reads a copy of the
# repository's regular files that keeps none of its configuration (where a filter, a hook, a
# file-system monitor or a remote to fetch missing objects from is named) but its object
# format, nor its alternates or commondir (which name another repository); it writes blobs
# only, with `git cat-file`, which applies no filter. A link or a submodule is left out (said
# on stderr); a name with a `..` part, or an absolute one, refuses the whole repository.
receive_git() {
    local repo=$2.git to=$2 format entry info path
    copy_files "$1" "$repo" && mkdir -p "$repo/refs" && rm -f "$repo/commondir" "$repo"/objects/info/*alternates ||
        return 1
    format=$(git config --file "$repo/config" extensions.objectformat) || true
    [ "$format" = sha256 ] || format=sha1
    printf '[core]\n\trepositoryformatversion = 1\n\tbare = true\n[extensions]\n\tobjectformat = %s\n' "$format" \
        >"$repo/config"
    student_git "$repo" ls-tree -r -z --full-tree HEAD >"$repo.tree" || return 1
    while IFS= read -r -d '' entry; do
        info=${entry%%$'\t'*} path=${entry#*$'\t'} # "MODE TYPE SHA", the name
        case /$path/ in
        */../* | //*) echo "entry '$path' has a '..' part or an absolute name: refused"; return 1 ;;
        esac
        case ${info%% *} in
        100644 | 100755) mkdir -p "$to/$(dirname "$path")" &&
            student_git "$repo" cat-file blob "${info##* }" >"$to/$path" || return 1 ;;
        *) echo "$path: a link or a submodule in the repository: not taken" ;;
        esac
    done <"$repo.tree" >&2
}

# A submission's files, whatever it came as, into folder $2 (plain files and folders only).
receive() {
    local from=$1 to=$2
    if [ -d "$from/.git" ] && [ ! -L "$from/.git" ]; then
        mkdir -p "$to" && receive_git "$from/.git" "$to"
    elif [ -d "$from" ] && [[ $from == *.git ]]; then
        mkdir -p "$to" && receive_git "$from" "$to"
    elif [ -d "$from" ]; then
        copy_files "$from" "$to"
    else
        python3 scripts/unpack_submission.py "$from" "$to"
    fi
}

# The shallowest folder in $1 that find's tests $2... select, as find's format $3 names it
# (%p the folder itself, %h the one it is in).
shallowest() {
    local under=$1 format=$2
    shift 2
    find "$under" -type d "$@" -printf "%d $format\n" 2>/dev/null | sort -n | head -n 1 | cut -d' ' -f2-
}

# The folder in $1 that holds the lessons (NN_name folders).
lessons_folder() { shallowest "$1" %h -name '[0-9][0-9]_*' -path '*lessons/*'; }

# A copy of the course to build against: the sources a lesson needs and the objects of the
# pristine build, their times kept so that make rebuilds only what the student wrote.
pristine_tree() {
    local tree=$1
    mkdir -p "$tree/data/generated" "$tree/build/sanitize"
    cp -a Makefile common lessons solutions "$tree/"
    cp -a build/obj build/libdtc.a "$tree/build/"
    cp -a build/sanitize/obj build/sanitize/libdtc.a "$tree/build/sanitize/"
}

# Whether the real path of file $2 (every link on the way followed) is inside folder $1.
inside() { case $(realpath -e -- "$2") in "$(realpath -e -- "$1")"/*) return 0 ;; *) return 1 ;; esac; }

# The files of submission $1 named as exercise file $3 (NN_name/FILE) but elsewhere than $2,
# where it is taken from, each said: a student who worked in another folder learns why that
# work was not graded.
misplaced() {
    local path
    find "$1" -type f -name "${3#*/}" | { grep -vxF -- "$2" || true; } | sort | head -n 3 | while IFS= read -r path; do
        echo "  (${path#"$1"/}: not taken; the exercise file is taken from lessons/$3)"
    done
}

# Takes the exercise files from the submission into the tree; notes what it took. A file
# reached through a link that leads outside the submission (none should arrive: receive
# takes none) is not taken. A lesson none of whose files differs from the course's own (each
# missing, or the skeleton unchanged) is not handed in: its number goes in TREE.unsent, and
# it scores nothing, whatever checks the skeleton passes (given code that trains, a run that
# exits normally).
take_exercises() {
    local sent=$1 tree=$2 feedback=$3 from name file changed
    from=$(lessons_folder "$sent")
    : >"$tree.taken"
    : >"$tree.unsent"
    echo "exercise files taken:" >>"$feedback"
    for name in "${names[@]}"; do
        changed=0
        for file in solutions/"$name"/*; do
            file=$(basename "$file")
            if [ -z "$from" ] || [ ! -f "$from/$name/$file" ] || [ -L "$from/$name/$file" ]; then
                echo "  lessons/$name/$file: not in the submission (the skeleton is graded)" >>"$feedback"
            elif ! inside "$sent" "$from/$name/$file"; then
                echo "  lessons/$name/$file: a link leads outside the submission: not taken" \
                    "(the skeleton is graded)" >>"$feedback"
            else
                cmp -s "$from/$name/$file" "$tree/lessons/$name/$file" || changed=1
                cp "$from/$name/$file" "$tree/lessons/$name/$file"
                touch "$tree/lessons/$name/$file"
                echo "  lessons/$name/$file" >>"$feedback"
                echo "$from/$name/$file" >>"$tree.taken"
            fi
            misplaced "$sent" "$from/$name/$file" "$name/$file" >>"$feedback"
        done
        if [ "$changed" -eq 0 ]; then
            echo "  lesson ${name%%_*}: not handed in (no exercise file differs from the course's): it scores 0" \
                >>"$feedback"
            echo "${name%%_*}" >>"$tree.unsent"
        fi
    done
    echo "ignored (not an exercise file):" >>"$feedback"
    find "$sent" -type f | sort | grep -vxF -f "$tree.taken" | sed "s|^$sent/|  |" | head -n 50 >>"$feedback" || true
}

# Builds the student's lessons in the sandbox; a lesson that does not build is graded as
# not built (every other lesson as usual).
build_lessons() {
    local tree=$1 uid=$2 feedback=$3 name
    chown -R "$uid" "$tree/build" 2>/dev/null || true
    for name in "${names[@]}"; do
        for target in "build/lessons/$name" "SANITIZE=1 build/sanitize/lessons/$name"; do
            # shellcheck disable=SC2086 # the target's words
            # shellcheck disable=SC2086 # GRADE_LIMITS is words
            if ! scripts/sandbox.sh --root "$tree" --write "$tree/build" --uid "$uid" ${GRADE_LIMITS:-} -- \
                make --no-print-directory -s $target >"$tree.build.log" 2>&1; then
                echo "lesson ${name%%_*}: the build failed:" >>"$feedback"
                head -n 30 "$tree.build.log" | sed 's/^/  /' >>"$feedback"
            fi
        done
    done
}

# The runs the student made themselves (runs/NN_name/CHECK.csv), against the expected values,
# outside the sandbox with the course's own compare_runs; prints "MATCHED HANDED_IN".
submitted_runs() {
    local sent=$1 feedback=$2 from name csv check expected matched=0 handed=0 agrees column rtol atol preset graded
    from=$(shallowest "$sent" %p -name runs)
    if [ -n "$from" ]; then
        graded=$(scripts/grade.sh "$lessons" --list) # "NN NAME": the checks a run may be named after
        echo "runs handed in (made on the student's machine: this shows the figures match, not that" \
            "their code made them):" >>"$feedback"
        for name in "${names[@]}"; do
            for csv in "$from/$name"/*.csv; do
                [ -f "$csv" ] && [ ! -L "$csv" ] && inside "$sent" "$csv" || continue
                check=$(basename "$csv" .csv) expected=tests/expected/$name/$check.csv
                handed=$((handed + 1))
                if [[ $check == drift_* ]]; then
                    preset=${check#drift_} # the run's own figures against lesson 00's fp32 ones
                    expected=tests/expected/00_single_device/train_${preset%_n*}.csv
                fi
                if ! grep -qxF "${name%%_*} $check" <<<"$graded" || [ ! -f "$expected" ] ||
                    [[ $check != train_* && $check != dp_* && $check != drift_* ]]; then
                    echo "  FAIL runs/$name/$check.csv: no graded check of lesson ${name%%_*} has this name" >>"$feedback"
                    continue
                fi
                if [ "$(stat -c %s "$csv")" -gt $((1 << 20)) ]; then
                    echo "  FAIL runs/$name/$check.csv: larger than a run's figures (1 MB)" >>"$feedback"
                    continue
                fi
                agrees=1
                if [[ $check == drift_* ]]; then
                    build/tools/compare_runs "$expected" "$csv" --label "runs/$name/$check vs fp32 (lesson 00)" \
                        --columns loss,val_loss --rtol "$DRIFT_RTOL" --atol "$LOSS_ATOL" >>"$feedback" 2>&1 || agrees=0
                    matched=$((matched + agrees))
                    continue
                fi
                for column in loss grad_norm val_loss; do
                    read -r rtol atol <<<"$(column_tolerance "$name" "$column")"
                    build/tools/compare_runs "$expected" "$csv" --label "runs/$name/$check" --columns "$column" \
                        --rtol "$rtol" --atol "$atol" >>"$feedback" 2>&1 || agrees=0
                done
                [[ $check != dp_* ]] || build/tools/compare_runs "$expected" "$csv" --label "runs/$name/$check" \
                    --columns comm_bytes --rtol 0 --atol 0 --after-validation-between >>"$feedback" 2>&1 || agrees=0
                matched=$((matched + agrees))
            done
        done
    fi
    echo "$matched $handed"
}

# Checks passed per lesson, from results.json: "NN SCORE" lines.
lesson_scores() { python3 grader/results.py scores "$1" "$lessons"; }

grade_student() {
    local entry=$1 uid student work feedback
    uid=$(scripts/sandbox.sh --claim $$) || return 1 # this grader's shell holds it
    student=$(student_name "$entry")
    work=$(mktemp -d)
    chmod 711 "$work" # the sandbox's user reaches the tree in it, and sees nothing else
    mkdir -p "$out/$student"
    feedback=$out/$student/feedback.txt
    echo "submission: $(basename "$entry")" >"$feedback"
    if ! receive "$entry" "$work/sent" 2>>"$feedback"; then
        echo "the submission could not be received: graded 0" >>"$feedback"
        printf '{"score": 0, "output": "the submission could not be received", "tests": []}\n' >"$out/$student/results.json"
    else
        pristine_tree "$work/tree"
        take_exercises "$work/sent" "$work/tree" "$feedback"
        submitted_runs "$work/sent" "$feedback" >"$out/$student/runs"
        build_lessons "$work/tree" "$uid" "$feedback"
        echo >>"$feedback"
        GRADE_SANDBOX="scripts/sandbox.sh --root $work/tree --uid $uid ${GRADE_LIMITS:-}" \
            scripts/grade.sh "$lessons" --build "$work/tree/build" --json "$out/$student/results.json" \
            >>"$feedback" 2>&1 || true
        # the student's own tree is the course: the commands to reproduce a check name its paths
        sed -i "s|$work/tree/||g" "$feedback" "$out/$student/results.json"
        [ ! -s "$work/tree.unsent" ] ||
            python3 grader/results.py unsent "$out/$student/results.json" "$(paste -sd, "$work/tree.unsent")"
    fi
    [ -s "$out/$student/results.json" ] ||
        printf '{"score": 0, "output": "grading failed", "tests": []}\n' >"$out/$student/results.json"
    lesson_scores "$out/$student/results.json" >"$out/$student/scores"
    echo "grade_class: $student: $(awk '{ printf "%slesson %s %s of %s", sep, $1, $2, $3; sep = ", " }' "$out/$student/scores")"
    scripts/sandbox.sh --uid "$uid" --end # whatever it left running
    rm -rf "$work"
}

source tests/tolerance.sh
export -f copy_files student_git receive_git receive student_name shallowest inside lessons_folder pristine_tree \
    misplaced take_exercises submitted_runs build_lessons lesson_scores grade_student column_tolerance
export out lessons LOSS_RTOL LOSS_ATOL MIXED_LOSS_RTOL MIXED_GRAD_NORM_RTOL DRIFT_RTOL
export NAMES="${names[*]}"
printf '%s\0' "${entries[@]}" |
    xargs -0 -n 1 -P "$jobs" bash -c 'IFS=" " read -r -a names <<<"$NAMES"; grade_student "$1"' _

# A field of the gradebook, as scripts/make_report.py's csv_line writes one: quoted (each quote
# doubled) when it holds a comma, a quote or a line break.
csv_field() { if [[ $1 == *[,\"$'\r\n']* ]]; then printf '"%s"' "${1//\"/\"\"}"; else printf '%s' "$1"; fi; }

{
    printf 'student'; for n in "${numbers[@]}"; do printf ',lesson_%s' "$n"; done; printf ',total,submitted_runs\n'
    for entry in "${entries[@]}"; do
        student=$(student_name "$entry")
        runs=$(cat "$out/$student/runs" 2>/dev/null || echo "0 0")
        csv_field "$student"
        awk -v runs="$runs" '{ row = row "," $2; total += $2 }
            END { split(runs, r, " "); print row "," total "," (r[2] > 0 ? r[1] " of " r[2] : "") }' \
            "$out/$student/scores"
    done
} >"$out/gradebook.csv.tmp" && mv -f "$out/gradebook.csv.tmp" "$out/gradebook.csv"
echo "grade_class: ${#entries[@]} submission(s) graded: $out/gradebook.csv"

# A run that reached GRADE_TIMEOUT lost its checks. The limit is wall time, so on a machine
# busy with other work a correct run can reach it too: name those submissions.
timed_out=()
for entry in "${entries[@]}"; do
    student=$(student_name "$entry")
    grep -qE '^FAIL .* run: the lesson exited with an error \(timed out\):$' "$out/$student/feedback.txt" \
        2>/dev/null && timed_out+=("$student")
done
[ ${#timed_out[@]} -eq 0 ] || echo "grade_class: runs of ${#timed_out[@]} submission(s) timed out" \
    "(GRADE_TIMEOUT ${GRADE_TIMEOUT:-300} s): ${timed_out[*]}; if this machine was busy, grade them again"
