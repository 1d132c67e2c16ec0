#!/usr/bin/env bash
# Builds the mutants the grading tests must see fail: each is a lesson's reference solution
# with one deliberate mistake, made by a sed script listed in tests/mutants/NN_name.txt;
# and the variants they must see pass: correct solutions written another way, listed the
# same way in tests/variants/NN_name.txt:
#
#   name | exercise file | sed script
#
# The binary lands at BUILD/mutants/NN_name/name (BUILD/variants/... for a variant) (BUILD is build, or build/sanitize for the
# sanitizer build the grader also runs). A script that leaves the file unchanged is an
# error: that mutant would test nothing. Run by make (it passes CC, CFLAGS_ALL, LDLIBS,
# BUILD and SANITIZE).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CC:?} ${CFLAGS_ALL:?} ${LDLIBS:?} ${BUILD:?} ${SANITIZE:?}"

build_mutant() {
    local kind=$1 lesson=$2 name=$3 file=$4 script=$5
    local dir=$BUILD/$kind/$lesson/$name.src objects includes
    mkdir -p "$dir"
    sed -e "$script" "solutions/$lesson/$file" >"$dir/$file"
    if cmp -s "solutions/$lesson/$file" "$dir/$file"; then
        echo "build_mutants: $lesson/$name: the sed script changes nothing in $file" >&2
        return 1
    fi
    objects=$(MAKEFLAGS= make -s --no-print-directory SANITIZE="$SANITIZE" print-solution-objs LESSON="$lesson" | tr ' ' '\n' |
              grep -v "/solutions/$lesson/${file%.c}.o$")
    includes=$(MAKEFLAGS= make -s --no-print-directory print-lesson-includes LESSON="$lesson")
    # shellcheck disable=SC2086 # word splitting of the flag lists is intended
    $CC $CFLAGS_ALL $includes -c "$dir/$file" -o "$dir/${file%.c}.o"
    # shellcheck disable=SC2086
    $CC $CFLAGS_ALL $objects "$dir/${file%.c}.o" "$BUILD/libdtc.a" -o "$BUILD/$kind/$lesson/$name" $LDLIBS
}

for list in tests/mutants/*.txt tests/variants/*.txt; do
    kind=$(basename "$(dirname "$list")")
    lesson=$(basename "$list" .txt)
    while IFS='|' read -r name file script; do
        [[ $name =~ ^[[:space:]]*(#|$) ]] && continue
        name=${name//[[:space:]]/} file=${file//[[:space:]]/}
        build_mutant "$kind" "$lesson" "$name" "$file" "${script# }"
    done <"$list"
done
