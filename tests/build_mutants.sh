#!/usr/bin/env bash
# Builds the mutants the grading tests must see fail: each is a lesson's reference solution
# with one deliberate mistake, made by a sed script listed in tests/mutants/NN_name.txt:
#
#   name | exercise file | sed script
#
# The binary lands at build/mutants/NN_name/name. A script that leaves the file unchanged
# is an error: that mutant would test nothing. Run by make (it passes CC, CFLAGS_ALL, LDLIBS).
set -euo pipefail
cd "$(dirname "$0")/.."
: "${CC:?} ${CFLAGS_ALL:?} ${LDLIBS:?}"

build_mutant() {
    local lesson=$1 name=$2 file=$3 script=$4
    local dir=build/mutants/$lesson/$name.src objects includes
    mkdir -p "$dir"
    sed -e "$script" "solutions/$lesson/$file" >"$dir/$file"
    if cmp -s "solutions/$lesson/$file" "$dir/$file"; then
        echo "build_mutants: $lesson/$name: the sed script changes nothing in $file" >&2
        return 1
    fi
    objects=$(make -s --no-print-directory print-solution-objs LESSON="$lesson" | tr ' ' '\n' |
              grep -v "/solutions/$lesson/${file%.c}.o$")
    includes=$(make -s --no-print-directory print-lesson-includes LESSON="$lesson")
    # shellcheck disable=SC2086 # word splitting of the flag lists is intended
    $CC $CFLAGS_ALL $includes -c "$dir/$file" -o "$dir/${file%.c}.o"
    # shellcheck disable=SC2086
    $CC $CFLAGS_ALL $objects "$dir/${file%.c}.o" build/libdtc.a -o "build/mutants/$lesson/$name" $LDLIBS
}

for list in tests/mutants/*.txt; do
    lesson=$(basename "$list" .txt)
    while IFS='|' read -r name file script; do
        [[ $name =~ ^[[:space:]]*(#|$) ]] && continue
        name=${name//[[:space:]]/} file=${file//[[:space:]]/}
        build_mutant "$lesson" "$name" "$file" "${script# }"
    done <"$list"
done
