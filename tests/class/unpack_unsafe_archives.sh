#!/usr/bin/env bash
# scripts/unpack_submission.py on every unsafe archive tests/class/unsafe_archives.py makes
# (a name that leaves the folder, a link, a device, a FIFO, a damaged file, a format it does
# not take): prints what it said and "exit STATUS" for each, and "something was written"
# whenever the folder it was to unpack into exists afterwards.
#
#   tests/class/unpack_unsafe_archives.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
python3 tests/class/unsafe_archives.py "$d/in" || exit 9
for archive in "$d"/in/*; do
    python3 scripts/unpack_submission.py "$archive" "$d/out" 2>&1
    echo "exit $?"
    if [ -e "$d/out" ]; then
        echo 'something was written'
        rm -rf "$d/out"
    fi
done
