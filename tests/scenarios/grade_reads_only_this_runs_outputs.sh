#!/usr/bin/env bash
# What one run leaves is never graded as another's. Prints, one line each:
#   "stale: LESSON VERDICT" for lessons 02 and 03 graded together (--check dp_reference_n2),
#     lesson 02 the reference and lesson 03 a program that writes nothing and exits 1;
#   "planted: VERDICT, victim unchanged|victim written": lesson 00 graded from a program whose
#     train run leaves a link where the estimate's output is written, to a file of its own.
#
#   tests/scenarios/grade_reads_only_this_runs_outputs.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # no_arguments
no_arguments "$@"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/build/lessons"
ln -s "$PWD/build/solutions/02_naive_ddp" "$work/build/lessons/02_naive_ddp"
printf '#!/bin/sh\nexit 1\n' >"$work/build/lessons/03_flat_ddp"
chmod +x "$work/build/lessons/03_flat_ddp"
scripts/grade.sh 02,03 --build "$work/build" --check dp_reference_n2 >"$work/stale.out" 2>&1
grep -E '^lesson 0[23]: ' "$work/stale.out" | sed 's/^/stale: /'

echo "the victim" >"$work/victim"
cat >"$work/plants_a_link" <<SCRIPT
#!/bin/sh
# the train run: a link beside its --csv, where the grader writes the estimate's output
if [ "\$1" = train ]; then
    for last; do :; done
    ln -s "$work/victim" "\$(dirname "\$last")/estimate_course.csv"
fi
exec "$PWD/build/solutions/00_single_device" "\$@"
SCRIPT
chmod +x "$work/plants_a_link"
scripts/grade.sh 00 "$work/plants_a_link" --check train_reference,estimate_course >"$work/planted.out" 2>&1
verdict=$(grep -E '^lesson 00: ' "$work/planted.out")
if [ "$(cat "$work/victim")" = "the victim" ]; then victim=unchanged; else victim=written; fi
echo "planted: $verdict, victim $victim"
