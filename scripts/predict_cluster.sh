#!/usr/bin/env bash
# The step model (tools/predict.py step) against lessons 02-10 across hosts, in one run: each
# lesson at 2 ranks, one on each host of a cluster made by scripts/cluster.sh (root) whose
# links carry each rate of --gbit, predicted three ways (--progress async, calls and tests)
# and measured. Per shape: lesson 00's compute traced at one rank's share of the batch (at
# one micro-batch of it for lesson 06; lesson 10's own for lesson 10), two runs side by side
# as the two hosts share this machine's cores, and lesson 05's plan. Per rate: the link
# fitted to lesson 01 across it (rows of 64 KB to 16 MB), the steps a started collective
# takes (01_collectives --progress), then each lesson measured: its summary's mean step and
# time in communication calls, the mean of 2 runs on the small shape and 1 on the others.
# Prints a table per shape and rate: the three predictions (tests's exposed communication in
# brackets), the measured runs (step/comm, ms), each prediction's step error, and tests's
# exposed communication against the time in calls (docs/scale.md, "Across two hosts").
# Shapes as in scripts/bench_dp.sh: small (the course's), big, and tiny for trying it out.
#
#   sudo scripts/predict_cluster.sh [--gbit "1 10"] [--csv FILE] [small|big|tiny ...]
#
# --csv FILE also writes the rows: shape,network,lesson,async_ms,calls_ms,tests_ms,
# tests_exposed_ms,step_ms,comm_ms (the measured two, means over the runs). The cluster
# (named "predict") is taken down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
usage() { header_help "$0"; }

link_rates="1 10" csv="" shapes=()
while [ $# -gt 0 ]; do
    case $1 in
        --gbit) link_rates=${2:-} && shift ;;
        --csv) csv=${2:-} && shift ;;
        -h | --help) usage && exit 0 ;;
        small | big | tiny) shapes+=("$1") ;;
        *) echo "predict_cluster: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
    esac
    shift
done
check_cluster_run "predict_cluster: --gbit" "$link_rates"
[ -z "$csv" ] || [ -d "$(dirname "$csv")" ] || { echo "predict_cluster: --csv: no folder $(dirname "$csv")" >&2; exit 2; }
[ ${#shapes[@]} -gt 0 ] || shapes=(small big)
for shape in "${shapes[@]}"; do shape_flags "$shape" >/dev/null; done

work=$(mktemp -d)
trap 'rm -rf "$work"; scripts/cluster.sh down --name predict >/dev/null 2>&1' EXIT
rows=$work/rows.csv
echo "shape,network,lesson,async_ms,calls_ms,tests_ms,tests_exposed_ms,step_ms,comm_ms" >"$rows"

accum=$(lesson_flags 06_grad_accum | awk '{ print $2 }') # lesson 06's micro-batches, as it runs

# The step model's compute of a shape, into $work/SHAPE (summary_lib.sh).
compute_of() {
    mkdir -p "$work/$1"
    # shellcheck disable=SC2046 # flag lists are words
    step_model_compute "$work/$1" 2 $(($(shape_batch "$1") / 2)) "$accum" 12 $(shape_flags "$1")
}

# "step_ms exposed_ms" of one prediction.
predicted() {
    local shape=$1 strategy=$2 progress=$3 extra=()
    [ "$progress" = tests ] && extra=(--progress-rows "$work/progress.csv")
    predict_from "$strategy" "$work/$shape" "$accum" --ranks 2 --progress "$progress" --links "$work/links.csv" \
        --min-size 64K --max-size 16M "${extra[@]}" --csv "$work/p.csv" >/dev/null
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["step_ms"], $c["exposed_ms"] }' \
        "$work/p.csv"
}

# Each run of a lesson on the cluster: "step_ms comm_ms" a line.
measured() {
    local shape=$1 lesson=$2 runs=1 r
    [ "$shape" = small ] && runs=2
    for r in $(seq "$runs"); do
        rm -f "$work/s.csv"
        # shellcheck disable=SC2046
        "${launch[@]}" build/solutions/"$lesson" train $(shape_flags "$shape") --steps "$(shape_steps "$shape")" \
            --val-every 0 --gen-tokens 0 --threads 1 --summary "$work/s.csv" $(lesson_flags "$lesson") \
            >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 {
            printf "%.2f %.2f\n", 1e3 * $c["step_time_avg_s"], 1e3 * $c["comm_time_avg_s"] }' "$work/s.csv"
    done
}

# One table: a row per lesson.
check_shape() {
    local shape=$1 network=$2 entry lesson strategy
    echo "== $shape shape ($(shape_flags "$shape")), $network, 2 ranks on 2 hosts: predicted and measured, ms =="
    printf '| lesson | async | calls | tests (exposed) | measured step/comm | step error async / calls / tests | exposed error tests |\n'
    printf '|---|---|---|---|---|---|---|\n'
    for entry in "${STEP_MODEL_LESSONS[@]}"; do
        lesson=${entry%%:*} strategy=${entry#*:}
        {
            predicted "$shape" "$strategy" async
            predicted "$shape" "$strategy" calls
            predicted "$shape" "$strategy" tests
            measured "$shape" "$lesson"
        } | awk -v lesson="${lesson:0:2} $strategy" -v prefix="$shape,$network,$lesson" -v rows="$rows" '
            NR <= 3 { step[NR] = $1; exposed[NR] = $2; next }
            { runs = runs (runs == "" ? "" : ", ") sprintf("%.2f/%.2f", $1, $2); s += $1; c += $2; n++ }
            function error(p, m) { return sprintf("%+.0f%%", 100 * (p / m - 1)) }
            END {
                s /= n; c /= n
                printf "| %s | %.2f | %.2f | %.2f (%.2f) | %s | %s / %s / %s | %s |\n", lesson, step[1], step[2],
                    step[3], exposed[3], runs, error(step[1], s), error(step[2], s), error(step[3], s),
                    error(exposed[3], c)
                printf "%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", prefix, step[1], step[2], step[3], exposed[3], s, c >>rows
            }'
    done
    echo
}

for shape in "${shapes[@]}"; do compute_of "$shape"; done
for rate in $link_rates; do
    scripts/cluster.sh up --name predict --hosts 2 --link-gbit "$rate" >/dev/null
    cluster_launcher predict
    "${launch[@]}" build/solutions/01_collectives -b 1K -e 16M -f 4 -w 3 -n 10 --csv "$work/links.csv" \
        >/dev/null </dev/null
    "${launch[@]}" build/solutions/01_collectives --progress -b 1K -e 4M -f 4 -n 7 -w 2 \
        --csv "$work/progress.csv" >/dev/null </dev/null
    for shape in "${shapes[@]}"; do check_shape "$shape" "${rate}gbit"; done
done
[ -z "$csv" ] || write_whole "$csv" cat "$rows"
