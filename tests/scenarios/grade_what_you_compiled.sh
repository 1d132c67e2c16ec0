#!/usr/bin/env bash
# make grade LESSON=02 on a copy of the course (the sources and the objects of this build,
# their times kept, so that make rebuilds only what changes): first with an exercise file
# that does not compile, over an older build of it, then with the reference's file plus an
# unused variable. Prints what make grade said and "status S" after each, and "older build
# left" or "older build gone" after the first.
#
#   tests/scenarios/grade_what_you_compiled.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | xargs -0 cp -a --parents -t "$copy"
mkdir -p "$copy/build/sanitize/lessons" "$copy/build/lessons"
cp -a build/obj build/libdtc.a build/tools "$copy/build/"
cp -a build/sanitize/obj build/sanitize/libdtc.a "$copy/build/sanitize/"
cp -a build/lessons/02_naive_ddp "$copy/build/lessons/"
rm -rf "$copy/data/generated" && ln -s "$PWD/data/generated" "$copy/data/generated"
cd "$copy" || exit 2
exercise=lessons/02_naive_ddp/naive_ddp.c
grade() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL STRICT=0 make --no-print-directory grade LESSON=02 \
              CHECK=dp_reference_n2 2>&1; echo "status $?"; }

echo "this line is not C" >>"$exercise"
grade
[ -e build/lessons/02_naive_ddp ] && echo "older build left" || echo "older build gone"

cp solutions/02_naive_ddp/naive_ddp.c "$exercise"
sed -i '0,/^{$/s//{\n    int left_over_from_an_edit = 0;/' "$exercise"
grade
