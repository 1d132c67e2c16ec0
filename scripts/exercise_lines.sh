#!/usr/bin/env bash
# How much of each lesson a student writes and how much is given: per lesson, the exercise
# file (the one file of lessons/NN that solutions/NN also holds), the lines the reference
# solution adds to the skeleton, and the lines of the lesson folder that are given (its
# other files, and the parts of the exercise file the skeleton already has). Lines of code
# only: blank lines and comment lines are not counted.
#
#   scripts/exercise_lines.sh [REV]      (default: the working tree; REV: a git revision)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
tree=.
if [ $# -gt 0 ]; then
    git rev-parse --verify -q "$1^{commit}" >/dev/null || { echo "exercise_lines: $1 is not a git revision" >&2; exit 2; }
    tree=$(mktemp -d)
    trap 'rm -rf "$tree"' EXIT
    git archive "$1" lessons solutions | tar -x -C "$tree"
fi

# Lines of code on stdin: not blank, not inside or opening a comment.
code_lines() {
    awk '/^[[:space:]]*$/ { next }
         in_comment { if (/\*\//) in_comment = 0; next }
         /^[[:space:]]*\/\// { next }
         /^[[:space:]]*\/\*/ { if (!/\*\//) in_comment = 1; next }
         { n++ } END { print n + 0 }'
}

printf '| %-18s | %-20s | %7s | %5s |\n' lesson "exercise file" written given
printf '|%s|%s|%s|%s|\n' "--------------------" "----------------------" "---------" "-------"
for solution in "$tree"/solutions/*/*.c; do
    lesson=$(basename "$(dirname "$solution")") file=$(basename "$solution")
    skeleton=$tree/lessons/$lesson/$file
    written=$(diff --unchanged-line-format= --old-line-format= --new-line-format='%L' "$skeleton" "$solution" |
              code_lines || true)
    kept=$(diff --unchanged-line-format='%L' --old-line-format= --new-line-format= "$skeleton" "$solution" |
           code_lines || true)
    others=$(find "$tree/lessons/$lesson" -name '*.[ch]' ! -name "$file" -exec cat {} + | code_lines)
    printf '| %-18s | %-20s | %7d | %5d |\n' "$lesson" "$file" "$written" $((kept + others))
done
