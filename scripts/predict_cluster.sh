#!/usr/bin/env bash
# The step model (tools/predict.py step) against lessons 02-10 across hosts, in one run: each
# lesson at each count of --ranks (2 unless said), one rank on each host of a cluster made by
# scripts/cluster.sh (root) whose links carry each rate of --gbit, predicted three ways
# (--progress async, calls and tests) and measured. Every rank takes the same share of the
# batch whatever the count (the shape's batch over 2 ranks: 4 rows, 2 on the tiny shape), so
# N ranks train on N times its rows. Per shape and count: lesson 00's compute traced at one
# rank's share (at one micro-batch of it for lesson 06; lesson 10's own for lesson 10), N runs
# side by side as the N hosts share this machine's cores, and lesson 05's plan. Per count:
# lesson 01 across links of 100 Gbit/s, faster than TCP between the hosts moves, for what a
# byte costs without shaping (the links' token bucket, cluster.sh, lets that many bytes
# through after a pause). Per rate and count: the link fitted to lesson 01 across it (three
# runs, each row's median; rows of 64 KB to 16 MB), its bucket, the steps a started collective
# takes (three runs of 01_collectives --progress), then each lesson measured: its summary's
# mean step, time in communication calls and exposed communication (the step beyond the
# slowest rank's time outside the calls), the median of 3 runs on the small shape (a few
# seconds each) and 1 on the others. More ranks than cores measure the scheduler rather than
# the link: the script says so and goes on.
# Prints a table per shape, rate and count: the three predictions (tests's exposed communication in
# brackets), the measured runs (step/comm/exposed, ms), each prediction's step error, and tests's
# exposed communication against the measured one (docs/scale.md, "Across two hosts").
# Shapes as in scripts/bench_dp.sh: small (the course's), big, and tiny for trying it out.
#
#   sudo scripts/predict_cluster.sh [--gbit "1 10"] [--ranks "2 3 4"] [--csv FILE] [small|big|tiny ...]
#
# --csv FILE also writes the rows: shape,network,ranks,lesson,async_ms,calls_ms,tests_ms,
# tests_exposed_ms,step_ms,comm_ms,exposed_ms (the measured three, medians over the runs). The cluster
# (named "predict") is taken down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
usage() { header_help "$0"; }

link_rates="1 10" rank_counts=2 csv="" shapes=()
while [ $# -gt 0 ]; do
    case $1 in
        --gbit) needs_value predict_cluster --gbit $# && link_rates=$2 && shift ;;
        --ranks) needs_value predict_cluster --ranks $# && rank_counts=$2 && shift ;;
        --csv) needs_value predict_cluster --csv $# && csv=$(from_caller "$2") && shift ;;
        -h | --help) usage && exit 0 ;;
        small | big | tiny) shapes+=("$1") ;;
        *) echo "predict_cluster: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
    esac
    shift
done
check_cluster_run "predict_cluster: --gbit" "$link_rates"
for ranks in $rank_counts; do
    if ! [[ $ranks =~ ^[0-9]+$ ]] || [ "$ranks" -lt 2 ] || [ "$ranks" -gt 16 ]; then
        echo "predict_cluster: --ranks: '$ranks' is not a count of ranks from 2 to 16" >&2
        exit 2
    fi
done
[ -n "${rank_counts// /}" ] || { echo "predict_cluster: --ranks: no count of ranks given" >&2; exit 2; }
[ -z "$csv" ] || [ -d "$(dirname "$csv")" ] || { echo "predict_cluster: --csv: no folder $(dirname "$csv")" >&2; exit 2; }
[ ${#shapes[@]} -gt 0 ] || shapes=(small big)
for shape in "${shapes[@]}"; do shape_flags "$shape" >/dev/null; done
for ranks in $rank_counts; do
    [ "$ranks" -le "$(nproc)" ] || echo "predict_cluster: $ranks ranks on $(nproc) cores: their runs measure the" \
        "scheduler more than the link (docs/scale.md)" >&2
done

work=$(mktemp -d)
trap 'rm -rf "$work"; scripts/cluster.sh down --name predict >/dev/null 2>&1' EXIT
rows=$work/rows.csv
echo "shape,network,ranks,lesson,async_ms,calls_ms,tests_ms,tests_exposed_ms,step_ms,comm_ms,exposed_ms" >"$rows"

accum=$(lesson_flags 06_grad_accum | awk '{ print $2 }') # lesson 06's micro-batches, as it runs

# A rank's rows of the shape's batch, at every count of ranks.
rank_rows() { echo $(($(shape_batch "$1") / 2)); }

# The step model's compute of a shape at N ranks, N runs side by side, into $work/SHAPE-N
# (summary_lib.sh).
compute_of() {
    mkdir -p "$work/$1-$2"
    # shellcheck disable=SC2046 # flag lists are words
    step_model_compute "$work/$1-$2" "$2" "$(rank_rows "$1")" "$accum" 12 $(shape_flags "$1")
}

# "step_ms exposed_ms" of one prediction at N ranks.
predicted() {
    local shape=$1 ranks=$2 strategy=$3 progress=$4 extra=() run
    [ "$progress" = tests ] && for run in 1 2 3; do extra+=(--progress-rows "$work/progress-$run.csv"); done
    predict_from "$strategy" "$work/$shape-$ranks" "$accum" --ranks "$ranks" --progress "$progress" \
        "${link_flags[@]}" --min-size 64K --max-size 16M "${extra[@]}" --csv "$work/p.csv" >/dev/null
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 { print $c["step_ms"], $c["exposed_ms"] }' \
        "$work/p.csv"
}

# Each run of a lesson on the cluster at N ranks: "step_ms comm_ms exposed_ms" a line.
measured() {
    local shape=$1 ranks=$2 lesson=$3 runs=1 _
    [ "$shape" = small ] && runs=3
    for _ in $(seq "$runs"); do
        rm -f "$work/s.csv"
        # shellcheck disable=SC2046
        "${launch[@]}" build/solutions/"$lesson" train $(shape_flags "$shape") \
            --batch $((ranks * $(rank_rows "$shape"))) --steps "$(shape_steps "$shape")" --val-every 0 \
            --gen-tokens 0 --threads 1 --summary "$work/s.csv" $(lesson_flags "$lesson") \
            >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
        summary_ms "$work/s.csv" step_time_avg_s comm_time_avg_s exposed_time_avg_s
    done
}

# One table: a row per lesson.
check_shape() {
    local shape=$1 network=$2 ranks=$3 entry lesson strategy
    echo "== $shape shape ($(shape_flags "$shape")), $network, $ranks ranks on $ranks hosts: predicted and measured, ms =="
    printf '| lesson | async | calls | tests (exposed) | measured step/comm/exposed | step error async / calls / tests | exposed error tests |\n'
    printf '|---|---|---|---|---|---|---|\n'
    for entry in "${STEP_MODEL_LESSONS[@]}"; do
        lesson=${entry%%:*} strategy=${entry#*:}
        measured "$shape" "$ranks" "$lesson" >"$work/runs"
        {
            predicted "$shape" "$ranks" "$strategy" async
            predicted "$shape" "$ranks" "$strategy" calls
            predicted "$shape" "$ranks" "$strategy" tests
            echo "$(median_of "$work/runs" 1) $(median_of "$work/runs" 2) $(median_of "$work/runs" 3)"
        } | awk -v lesson="${lesson:0:2} $strategy" -v prefix="$shape,$network,$ranks,$lesson" -v rows="$rows" \
            -v runs="$(awk '{ printf "%s%s/%s/%s", (NR > 1 ? ", " : ""), $1, $2, $3 }' "$work/runs")" '
            NR <= 3 { step[NR] = $1; exposed[NR] = $2; next }
            { s = $1; c = $2; x = $3 } # the medians of the runs
            function error(p, m) { return sprintf("%+.0f%%", 100 * (p / m - 1)) }
            END {
                printf "| %s | %.2f | %.2f | %.2f (%.2f) | %s | %s / %s / %s | %s |\n", lesson, step[1], step[2],
                    step[3], exposed[3], runs, error(step[1], s), error(step[2], s), error(step[3], s),
                    error(exposed[3], x)
                printf "%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", prefix, step[1], step[2], step[3], exposed[3], s, c, x \
                    >>rows
            }'
    done
    echo
}

# Lesson 01 three times across the cluster's links with the flags given, into $work/NAME-1.csv
# .. NAME-3.csv: the step model fits the link to each row's median over them (a slow minute in
# one run is left out), and the chains to the rows of all.
three_runs() {
    local name=$1 run
    shift
    for run in 1 2 3; do
        "${launch[@]}" build/solutions/01_collectives "$@" --csv "$work/$name-$run.csv" >/dev/null </dev/null
    done
}
links=(-b 1K -e 16M -f 4 -w 3 -n 10) # the rows the links are fitted to

for ranks in $rank_counts; do
    for shape in "${shapes[@]}"; do compute_of "$shape" "$ranks"; done
    scripts/cluster.sh up --name predict --hosts "$ranks" --link-gbit 100 >/dev/null
    cluster_launcher predict "$ranks"
    three_runs "unshaped-$ranks" "${links[@]}"
done
for rate in $link_rates; do
    for ranks in $rank_counts; do
        scripts/cluster.sh up --name predict --hosts "$ranks" --link-gbit "$rate" >/dev/null
        cluster_launcher predict "$ranks"
        three_runs links "${links[@]}"
        three_runs progress --progress -b 1K -e 4M -f 4 -n 7 -w 2
        link_flags=(--bucket "$(cat /run/dtc-cluster/predict/link-burst),$rate")
        for run in 1 2 3; do
            link_flags+=(--links "$work/links-$run.csv" --unshaped-links "$work/unshaped-$ranks-$run.csv")
        done
        for shape in "${shapes[@]}"; do check_shape "$shape" "${rate}gbit" "$ranks"; done
    done
done
[ -z "$csv" ] || write_whole "$csv" cat "$rows"
