#!/usr/bin/env bash
# Makes a class of submissions for lessons 00 and 02 into DIR (which must not exist): one
# correct, the rest each trying something a grader must withstand. The snippets beside this
# script are appended to lesson 02's reference solution.
#
#   tests/class/make_class.sh DIR [--limits HOST_ADDRESS PORT]
#
#   alice/           folder   correct, and a run of its own that matches  full marks, 1 of 1 runs
#   bob/             git repo 02: a sum instead of the average, and the expected values
#                             copied over its --csv at exit              02 fails its figures;
#                             a run whose loss is off, one no check has  0 of 2 runs
#   dave.tar.gz      archive  02: correct, and writes into the course, another submission
#                             and outside its folder                     full marks, nothing written
#   erin.zip         zip      02: a sum, and its --csv made a link to the expected values
#   frank/           folder   00 correct, 02 does not compile           00 full, 02 zero
#   heidi/           folder   02: exits 0 before training
#   ivan/            folder   02: crashes before training
#   judy/            folder   00 the skeleton as handed out (her work    00 zero, 02 full
#                             in work/, not taken), 02 correct
#   carol.tar.gz     archive  an entry with an absolute name            refused, zero
#   gina.zip         zip      an entry with a `..` part                 refused, zero
#
# With --limits, the class is alice and submissions that each run into a limit of the
# sandbox on lesson 02 (lesson 00 correct): they fork without end, loop forever, allocate
# without end, write a huge file, open network connections (to a public address, and to
# HOST_ADDRESS:PORT and 127.0.0.1:PORT, where the test listens), or call MPI_Abort.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:?usage: make_class.sh DIR [--limits HOST_ADDRESS PORT]}
limits=${2:-}
[ ! -e "$dir" ] || { echo "make_class: $dir exists" >&2; exit 2; }
mkdir -p "$dir"
dir=$(realpath "$dir")
course=$(pwd)
snippets=tests/class

# lessons/ of a submission in folder $1: lesson 00 correct, lesson 02 the reference plus
# what $2 (a sed edit) and $3 (a snippet, or nothing) make of it.
submission() {
    local to=$1 edit=$2 snippet=${3:-}
    mkdir -p "$to/lessons/00_single_device" "$to/lessons/02_naive_ddp"
    cp solutions/00_single_device/*.c "$to/lessons/00_single_device/"
    sed "$edit" solutions/02_naive_ddp/naive_ddp.c >"$to/lessons/02_naive_ddp/naive_ddp.c"
    [ -z "$snippet" ] ||
        sed "s|@COURSE@|$course|g; s|@SUBMISSIONS@|$dir|g; s|@HOST_ADDRESS@|${host:-}|g; s|@HOST_PORT@|${port:-0}|g" \
            "$snippets/$snippet" >>"$to/lessons/02_naive_ddp/naive_ddp.c"
}

# A zip of folder $2's files into $1, names as given by $3 (a Python expression of `name`).
zip_of() {
    python3 - "$1" "$2" "$3" <<'PY'
import os, sys, zipfile
out, folder, rename = sys.argv[1], sys.argv[2], sys.argv[3]
with zipfile.ZipFile(out, "w") as z:
    for root, _, files in os.walk(folder):
        for f in files:
            name = os.path.relpath(os.path.join(root, f), folder)
            z.write(os.path.join(root, f), eval(rename))
PY
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

submission "$dir/alice" ''
echo "my notes" >"$dir/alice/NOTES.txt"
mkdir -p "$dir/alice/runs/02_naive_ddp"
cp tests/expected/02_naive_ddp/dp_reference_n2.csv "$dir/alice/runs/02_naive_ddp/"

if [ "$limits" = --limits ]; then
    host=${3:?make_class: --limits needs HOST_ADDRESS PORT} port=${4:?make_class: --limits needs HOST_ADDRESS PORT}
    submission "$dir/forker" '' fork_without_end.c
    submission "$dir/looper" '' loop_forever.c
    submission "$dir/hoarder" '' allocate_without_end.c
    submission "$dir/filler" '' write_a_huge_file.c
    submission "$dir/caller" '' reach_the_network.c
    submission "$dir/aborter" '1i #include <mpi.h>
/^static void naive_ddp_before_step/,/^{/ s/^{/{ MPI_Abort(MPI_COMM_WORLD, 3);/'
    exit 0
fi

submission "$work/bob" 's/REDUCE_AVG/REDUCE_SUM/' copy_answers_at_exit.c
mkdir -p "$work/bob/runs/02_naive_ddp"
awk -F, -v OFS=, 'NR == 3 { $2 = $2 * 1.001 } { print }' tests/expected/02_naive_ddp/dp_reference_n2.csv \
    >"$work/bob/runs/02_naive_ddp/dp_reference_n2.csv"
echo "step,loss" >"$work/bob/runs/02_naive_ddp/dp_cluster_n64.csv"
git -C "$work/bob" init -q && git -C "$work/bob" add -A &&
    git -C "$work/bob" -c user.name=bob -c user.email=bob@example.org commit -qm submission
git clone -q --bare "$work/bob" "$dir/bob.git"

submission "$work/dave" '' write_everywhere.c
tar -czf "$dir/dave.tar.gz" -C "$work/dave" lessons

submission "$work/erin" 's/REDUCE_AVG/REDUCE_SUM/' link_csv_to_answers.c
zip_of "$dir/erin.zip" "$work/erin" 'name'

submission "$dir/frank" 's/REDUCE_AVG));/REDUCE_AVG))/'
submission "$dir/heidi" '' exit_before_training.c
submission "$dir/ivan" '' crash.c
submission "$dir/judy" ''
cp lessons/00_single_device/memory_estimate.c "$dir/judy/lessons/00_single_device/"
mkdir "$dir/judy/work" && cp solutions/00_single_device/memory_estimate.c "$dir/judy/work/"

mkdir -p "$work/carol/x" && echo "words" >"$work/carol/x/a.txt"
tar -czf "$dir/carol.tar.gz" --absolute-names "$work/carol/x/a.txt" 2>/dev/null
zip_of "$dir/gina.zip" "$work/carol" '"../" + name'
