#!/usr/bin/env bash
# Lessons 02-05 and 07-10 on two hosts against the same two ranks on one: what a network
# link costs each strategy. Each lesson runs at 2 ranks x 1 thread on shared memory,
# then with one rank on each host of a cluster made by scripts/cluster.sh (root), its links
# shaped to each rate of --gbit. Figures are the medians over BENCH_ROUNDS interleaved rounds
# (default 3) of the summary's steady state (warm-up steps left out): step time, the time a
# step spent inside communication calls (communication the compute did not hide, and a rank's
# wait for the slower one), the exposed communication (the step beyond the slowest rank's time
# outside the calls: docs/02_naive_ddp.md), and tokens/s. Shapes as in scripts/bench_dp.sh:
# small (the course's) and big; tiny (the tiny preset, a few steps) for trying it out.
#
#   sudo scripts/bench_cluster.sh [--gbit "1 10"] [--csv FILE] [--busbw FILE] [small|big|tiny ...]
#
# --csv FILE also writes every median as rows: shape,lesson,network,step_ms,comm_ms,tokens_per_s,
# exposed_ms.
# --busbw FILE also runs lesson 01's all-reduce at 2 ranks on each network and writes its
# rows with the network and the link's rate in GB/s (empty for shared memory) in front;
# --busbw-sizes "FLAGS" sets lesson 01's size flags [-b 1M -e 16M -f 4 -n 5].
# The cluster (named "bench") is taken down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
usage() { header_help "$0"; }

link_rates="1 10" csv="" busbw="" busbw_sizes="-b 1M -e 16M -f 4 -n 5" shapes=()
while [ $# -gt 0 ]; do
    case $1 in
        --gbit) needs_value bench_cluster --gbit $# && link_rates=$2 && shift ;;
        --csv) needs_value bench_cluster --csv $# && csv=$(from_caller "$2") && shift ;;
        --busbw) needs_value bench_cluster --busbw $# && busbw=$(from_caller "$2") && shift ;;
        --busbw-sizes) needs_value bench_cluster --busbw-sizes $# && busbw_sizes=$2 && shift ;;
        -h | --help) usage && exit 0 ;;
        small | big | tiny) shapes+=("$1") ;;
        *) echo "bench_cluster: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
    esac
    shift
done
check_cluster_run "bench_cluster: --gbit" "$link_rates"
for output in csv busbw; do
    file=${!output}
    [ -z "$file" ] || [ -d "$(dirname "$file")" ] || { echo "bench_cluster: --$output: no folder $(dirname "$file")" >&2; exit 2; }
done

rounds=${BENCH_ROUNDS:-3}
lessons=(02_naive_ddp 03_flat_ddp 04_overlap_ddp 05_bucketed_ddp 07_zero1 08_zero2 09_zero3 10_mixed_precision)
networks=(shm)
for rate in $link_rates; do networks+=("${rate}gbit"); done
work=$(mktemp -d)
trap 'rm -rf "$work"; scripts/cluster.sh down --name bench' EXIT
rows=$work/rows.csv
echo "shape,lesson,network,step_ms,comm_ms,tokens_per_s,exposed_ms" >"$rows"

# The launcher for 2 ranks on a network: shared memory, or one rank on each of two hosts whose
# links carry RATEgbit (the cluster made or reshaped to it). Sets the array $launch.
launcher_for() {
    launch=(mpiexec -n 2)
    [ "$1" = shm ] && return
    scripts/cluster.sh up --name bench --hosts 2 --link-gbit "${1%gbit}" >/dev/null
    cluster_launcher bench
}

# One run of a lesson on a network; appends "step_ms comm_ms exposed_ms tokens/s" to
# $work/SHAPE.LESSON.NETWORK.
run_on() {
    local shape=$1 lesson=$2 network=$3 launch
    launcher_for "$network"
    rm -f "$work/s.csv"
    # shellcheck disable=SC2046 # flag lists are words
    "${launch[@]}" "build/solutions/$lesson" train $(shape_flags "$shape") --steps "$(shape_steps "$shape")" \
        --val-every 0 --gen-tokens 0 --threads 1 --summary "$work/s.csv" $(lesson_flags "$lesson") \
        >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
    echo "$(summary_ms "$work/s.csv" step_time_avg_s comm_time_avg_s exposed_time_avg_s)" \
        "$(printf '%.0f' "$(summary_field "$work/s.csv" tokens_per_s)")" >>"$work/$shape.$lesson.$network"
}

bench_shape() {
    local shape=$1 lesson network
    for _ in $(seq "$rounds"); do
        for network in "${networks[@]}"; do
            for lesson in "${lessons[@]}"; do run_on "$shape" "$lesson" "$network"; done
        done
    done
    echo "== $shape shape ($(shape_flags "$shape")), 2 ranks x 1 thread, median of $rounds interleaved rounds =="
    printf '  %-15s' strategy
    for network in "${networks[@]}"; do printf ' | %-37s' "$network: step ms, comm ms, exposed ms, tok/s"; done
    printf '\n'
    for lesson in "${lessons[@]}"; do
        printf '  %-15s' "${lesson#[01]?_}"
        for network in "${networks[@]}"; do
            local file=$work/$shape.$lesson.$network step comm rate exposed
            step=$(median_of "$file" 1) comm=$(median_of "$file" 2) exposed=$(median_of "$file" 3)
            rate=$(median_of "$file" 4)
            printf ' | %8s %8s %8s %10s' "$step" "$comm" "$exposed" "$rate"
            echo "$shape,${lesson#[01]?_},$network,$step,$comm,$rate,$exposed" >>"$rows"
        done
        printf '\n'
    done
}

# Lesson 01's all-reduce on each network, its CSV rows prefixed with network,link_GBps.
bench_busbw() {
    local network launch link
    : >"$work/busbw.csv"
    for network in "${networks[@]}"; do
        launcher_for "$network"
        link=$([ "$network" = shm ] || awk -v g="${network%gbit}" 'BEGIN { print g / 8 }')
        # shellcheck disable=SC2086 # the size flags are words
        "${launch[@]}" build/solutions/01_collectives --collective all_reduce $busbw_sizes --csv "$work/b.csv" \
            >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
        echo "== lesson 01 all-reduce, 2 ranks, $network =="
        [ -s "$work/busbw.csv" ] || echo "network,link_GBps,$(head -n 1 "$work/b.csv")" >"$work/busbw.csv"
        awk -F, -v prefix="$network,$link" 'NR > 1 { print prefix "," $0 }' "$work/b.csv" | tee -a "$work/busbw.csv"
    done
}

for_each_shape bench_shape "${shapes[@]}"
[ -z "$csv" ] || write_whole "$csv" cat "$rows"
[ -z "$busbw" ] || { bench_busbw && write_whole "$busbw" cat "$work/busbw.csv"; }
