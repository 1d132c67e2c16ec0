#!/usr/bin/env bash
# Lesson 01 at 2 ranks writing its CSV onto a path that already holds a file (with a second
# name, a hard link, to see it by): the earlier file must stay as it was (the new one is
# renamed into place when complete), the path must then hold the new rows, and no temporary
# file may be left. Exit 0 when all of that holds.
#
#   tests/scenarios/collectives_csv_in_place.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
echo earlier >"$d/rows.csv"
ln "$d/rows.csv" "$d/link"
mpiexec -n 2 build/solutions/01_collectives -b 1M -e 1M --collective all_reduce --csv "$d/rows.csv" >/dev/null &&
    [ "$(cat "$d/link")" = earlier ] && grep -q '^mpi,2,all_reduce,' "$d/rows.csv" &&
    ! compgen -G "$d/*tmp*" >/dev/null
