#!/usr/bin/env bash
# Builds the mutants the grading tests must see fail: each is a lesson's reference solution
# with one deliberate mistake, made by a sed script listed in tests/mutants/NN_name.txt;
# and the variants they must see pass: correct solutions written another way, listed the
# same way in tests/variants/NN_name.txt:
#
#   name | exercise file | sed script
#
# and the designs they must see pass: whole exercise files, each a design of its own, at
# tests/designs/NN_name/name.c (the lesson's one exercise file replaced by it).
# The binary lands at BUILD/mutants/NN_name/name (BUILD/variants/... for a variant,
# BUILD/designs/... for a design) (BUILD is build, or build/sanitize for the sanitizer build
# the grader also runs). A script that leaves the file unchanged is an
# error: that mutant would test nothing. Run by make (it passes CC, CFLAGS_ALL, LDLIBS,
# BUILD and SANITIZE).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CC:?} ${CFLAGS_ALL:?} ${LDLIBS:?} ${BUILD:?} ${SANITIZE:?}"

build_mutant() {
    local kind=$1 lesson=$2 name=$3 file=$4 script=$5
    local dir=$BUILD/$kind/$lesson/$name.src
    mkdir -p "$dir"
    sed -e "$script" "solutions/$lesson/$file" >"$dir/$file"
    if cmp -s "solutions/$lesson/$file" "$dir/$file"; then
        echo "build_mutants: $lesson/$name: the sed script changes nothing in $file" >&2
        return 1
    fi
    link_exercise "$kind" "$lesson" "$name" "$file"
}

# A design: the whole file, in place of the lesson's exercise file.
build_design() {
    local lesson=$1 source=$2 name file
    name=$(basename "$source" .c)
    file=$(cd "solutions/$lesson" && ls -- *.c)
    mkdir -p "$BUILD/designs/$lesson/$name.src"
    cp "$source" "$BUILD/designs/$lesson/$name.src/$file"
    link_exercise designs "$lesson" "$name" "$file"
}

# Compiles BUILD/KIND/LESSON/NAME.src/FILE and links it with the lesson's other objects.
link_exercise() {
    local kind=$1 lesson=$2 name=$3 file=$4 dir=$BUILD/$1/$2/$3.src objects includes
    objects=$(MAKEFLAGS='' make -s --no-print-directory SANITIZE="$SANITIZE" print-solution-objs LESSON="$lesson" | tr ' ' '\n' |
              grep -v "/solutions/$lesson/${file%.c}.o$")
    # the reference's folder too: it may hold a header of its own (solutions/07_zero1/zero1_parts.h)
    includes="$(MAKEFLAGS='' make -s --no-print-directory print-lesson-includes LESSON="$lesson") -Isolutions/$lesson"
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
for source in tests/designs/*/*.c; do
    [ -e "$source" ] || continue
    build_design "$(basename "$(dirname "$source")")" "$source"
done
