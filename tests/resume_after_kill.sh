#!/usr/bin/env bash
# Resume after a crash, checked: a run of BINARY at RANKS ranks is killed with SIGKILL once
# it has written its first resume state (--save-every SAVE_EVERY), resumed at RESUME_RANKS
# ranks, and its steps after the resume compared with those of a run that was never stopped.
# At the same number of ranks they must be bit for bit the same (loss, grad norm, validation
# loss, and the final parameters' hash); at another number, within the course's tolerance
# (the sums run in another order).
#
#   tests/resume_after_kill.sh BINARY RANKS RESUME_RANKS [FLAGS...]
#
# FLAGS go to every run (besides --config reference --steps STEPS). STEPS (default 400) and
# SAVE_EVERY (default 50) come from the environment: fewer where a step is slow (the
# emulated GPU). Prints one line and exits 0 when the resumed run matches, 1 when it does
# not, 2 on bad input.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
source scripts/summary_lib.sh # header_help

[ $# -ge 3 ] || { header_help "$0" >&2; exit 2; }
binary=$1 ranks=$2 resume_ranks=$3 steps=${STEPS:-400} save_every=${SAVE_EVERY:-50}
shift 3
[[ $steps =~ ^[1-9][0-9]*$ && $save_every =~ ^[1-9][0-9]*$ && $save_every -lt $steps ]] ||
    { echo "resume_after_kill: STEPS $steps and SAVE_EVERY $save_every: whole numbers, SAVE_EVERY < STEPS" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { local n=$1; shift; mpiexec -n "$n" "$binary" train --config reference --steps "$steps" "$@"; }

run "$ranks" "$@" --csv "$work/whole.csv" >"$work/whole.log" 2>&1 || { cat "$work/whole.log"; exit 1; }

# its own session, so that the kill takes mpiexec and every rank at once
setsid mpiexec -n "$ranks" "$binary" train --config reference --steps "$steps" "$@" --save "$work/ck" \
    --save-every "$save_every" \
    >"$work/killed.log" 2>&1 &
session=$!
disown "$session" # no "Killed" notice from this shell
# until the first state is there, or the run has ended without one
while [ ! -e "$work/ck.state" ] && kill -0 "$session" 2>/dev/null; do sleep 0.05; done
kill -9 -- "-$session" 2>/dev/null
while kill -0 -- "-$session" 2>/dev/null; do sleep 0.05; done
[ -e "$work/ck.state" ] || { echo "no resume state was written:"; cat "$work/killed.log"; exit 1; }
if grep -q "^parameters identical" "$work/killed.log"; then
    echo "the run ended before it was killed: nothing was resumed"; exit 1
fi

run "$resume_ranks" "$@" --resume "$work/ck.state" --csv "$work/resumed.csv" >"$work/resumed.log" 2>&1 ||
    { cat "$work/resumed.log"; exit 1; }
first=$(sed -n 2p "$work/resumed.csv" | cut -d, -f1)
# the whole run's rows from the first resumed step on, beside the resumed run's
awk -F, -v first="$first" 'NR == 1 || $1 >= first' "$work/whole.csv" >"$work/whole_tail.csv"
hash_of() { sed -n 's/^parameters identical on all .* hash //p' "$1"; }
if [ "$ranks" = "$resume_ranks" ]; then
    columns() { cut -d, -f1-3,7 "$1"; }
    if ! cmp -s <(columns "$work/whole_tail.csv") <(columns "$work/resumed.csv"); then
        echo "resumed after step $((first - 1)): the steps differ from the run that never stopped"
        diff <(columns "$work/whole_tail.csv") <(columns "$work/resumed.csv") | head -5
        exit 1
    fi
    if [ "$(hash_of "$work/whole.log")" != "$(hash_of "$work/resumed.log")" ]; then
        echo "resumed after step $((first - 1)): the final parameters differ"; exit 1
    fi
    echo "resumed after step $((first - 1)): steps $first-$steps and the final parameters bit for bit the same"
else
    tests/scenarios/within_tolerance.sh "$work/whole_tail.csv" "$work/resumed.csv" "resumed at $resume_ranks ranks" ||
        exit 1
fi
