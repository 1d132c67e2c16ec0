#!/usr/bin/env bash
# Data-parallel and ZeRO lessons on two hosts against the same two ranks on one: what a
# network link costs each strategy. Each lesson runs at 2 ranks x 1 thread on shared memory,
# then with one rank on each host of a cluster made by scripts/cluster.sh (root), its links
# shaped to each rate of --gbit. Figures are the medians over BENCH_ROUNDS interleaved rounds
# (default 3) of the summary's steady state (warm-up steps left out): step time, the time a
# step spent inside communication calls (communication the compute did not hide), and
# tokens/s. Shapes as in scripts/bench_dp.sh: small (the course's) and big.
#
#   sudo scripts/bench_cluster.sh [--gbit "1 10"] [--csv FILE] [small|big ...]
#
# --csv FILE also writes every median as rows: shape,lesson,network,step_ms,comm_ms,tokens_per_s.
# The cluster (named "bench") is taken down at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
usage() { header_help "$0"; }

rates="1 10" csv="" shapes=()
while [ $# -gt 0 ]; do
    case $1 in
        --gbit) rates=${2:-} && shift ;;
        --csv) csv=${2:-} && shift ;;
        -h | --help) usage && exit 0 ;;
        small | big) shapes+=("$1") ;;
        *) echo "bench_cluster: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
    esac
    shift
done
[ "$(id -u)" = 0 ] || { echo "bench_cluster: the cluster needs root (network namespaces)" >&2; exit 2; }
for rate in $rates; do
    [[ $rate =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "bench_cluster: --gbit: '$rate' is not a rate" >&2; exit 2; }
done
[ -z "$csv" ] || [ -d "$(dirname "$csv")" ] || { echo "bench_cluster: --csv: no folder $(dirname "$csv")" >&2; exit 2; }

rounds=${BENCH_ROUNDS:-3}
lessons=(02_naive_ddp 03_flat_ddp 04_overlap_ddp 05_bucketed_ddp 07_zero1 08_zero2 09_zero3)
networks=(shm)
for rate in $rates; do networks+=("${rate}gbit"); done
work=$(mktemp -d)
trap 'rm -rf "$work"; scripts/cluster.sh down --name bench' EXIT
rows=$work/rows.csv
echo "shape,lesson,network,step_ms,comm_ms,tokens_per_s" >"$rows"

# One run of a lesson on a network; appends "step_ms comm_ms tokens/s" to $work/SHAPE.LESSON.NETWORK.
run_on() {
    local shape=$1 lesson=$2 network=$3 launch=()
    if [ "$network" != shm ]; then
        scripts/cluster.sh up --name bench --hosts 2 --link-gbit "${network%gbit}" >/dev/null
        launch=(env "HYDRA_HOST_FILE=/run/dtc-cluster/bench/hosts" HYDRA_LAUNCHER=rsh
            "HYDRA_LAUNCHER_EXEC=$PWD/scripts/cluster_exec.sh" HYDRA_IFACE=bench-ctl)
    fi
    rm -f "$work/s.csv"
    # shellcheck disable=SC2046 # flag lists are words
    "${launch[@]}" mpiexec -n 2 "build/solutions/$lesson" train $(shape_flags "$shape") --steps "$(shape_steps "$shape")" \
        --val-every 0 --gen-tokens 0 --threads 1 --summary "$work/s.csv" $(lesson_flags "$lesson") \
        >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 {
        printf "%.2f %.2f %.0f\n", 1e3 * $c["step_time_avg_s"], 1e3 * $c["comm_time_avg_s"], $c["tokens_per_s"] }' \
        "$work/s.csv" >>"$work/$shape.$lesson.$network"
}

bench_shape() {
    local shape=$1 lesson network
    for _ in $(seq "$rounds"); do
        for network in "${networks[@]}"; do
            for lesson in "${lessons[@]}"; do run_on "$shape" "$lesson" "$network"; done
        done
    done
    echo "== $shape shape ($(shape_flags "$shape")), 2 ranks x 1 thread, median of $rounds interleaved rounds =="
    printf '  %-14s' strategy
    for network in "${networks[@]}"; do printf ' | %-28s' "$network: step ms, comm ms, tok/s"; done
    printf '\n'
    for lesson in "${lessons[@]}"; do
        printf '  %-14s' "${lesson#0?_}"
        for network in "${networks[@]}"; do
            local file=$work/$shape.$lesson.$network step comm rate
            step=$(median_of "$file" 1) comm=$(median_of "$file" 2) rate=$(median_of "$file" 3)
            printf ' | %8s %8s %10s' "$step" "$comm" "$rate"
            echo "$shape,${lesson#0?_},$network,$step,$comm,$rate" >>"$rows"
        done
        printf '\n'
    done
}

for_each_shape bench_shape "${shapes[@]}"
if [ -n "$csv" ]; then # whole: a temporary file beside it, renamed into place
    unfinished=$(mktemp "$csv.tmp.XXXXXX")
    cp "$rows" "$unfinished" && chmod 644 "$unfinished" && mv -fT "$unfinished" "$csv"
fi
