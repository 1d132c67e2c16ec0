#!/usr/bin/env bash
# Regenerates a lesson's expected values from its reference solution build. The only way
# files under tests/expected/ are made; review the diff and say in the commit why they moved.
#
#   scripts/make_expected.sh NN
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/check_name.sh
source scripts/summary_lib.sh
help_if_asked "$@"
lesson=$(scripts/lesson_binary.sh "${1:?usage: make_expected.sh NN}")
binary=build/solutions/$lesson
out=tests/expected/$lesson
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Keeps only what is graded (timings differ run to run): step, loss, grad_norm, lr,
# val_loss and, for multi-rank runs, comm_bytes.
keep_graded() {
    awk -F, -v extra="$1" 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i }
        { line = $col["step"] "," $col["loss"] "," $col["grad_norm"] "," $col["lr"] "," $col["val_loss"]
          if (extra != "") line = line "," $col[extra]
          print line }'
}

# Which checks a lesson has is listed in its grading spec; the presets come from common/.
while read -r -a words; do
    [ "${#words[@]}" -eq 0 ] && continue
    mode=${words[0]} preset=${words[1]}
    name=$(check_name "${words[@]}")
    case $mode in
    train)
        "$binary" train --config "$preset" --csv "$work/run.csv" >/dev/null </dev/null
        keep_graded "" <"$work/run.csv" >"$work/$name.csv" ;;
    estimate)
        "$binary" estimate --config "$preset" "${words[@]:2}" >"$work/$name.csv" ;;
    plan)
        "$binary" plan --config "$preset" "${words[@]:2}" --csv "$work/$name.csv" >/dev/null ;;
    dp)
        mpiexec -n "${words[2]}" "$binary" train --config "$preset" "${words[@]:3}" --csv "$work/run.csv" >/dev/null </dev/null
        keep_graded comm_bytes <"$work/run.csv" >"$work/$name.csv" ;;
    *)
        continue ;; # checks without stored values: ring (exact sums), sanitize (no report)
    esac
    mkdir -p "$out"
    mv "$work/$name.csv" "$out/$name.csv"
    echo "wrote $out/$name.csv"
done <"tests/expected/$lesson.checks"
