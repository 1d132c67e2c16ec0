# shellcheck shell=bash
# Sourced by the bench, course and report scripts: reading run summaries and reducing repeats.

# write_whole TARGET COMMAND...: COMMAND's output becomes TARGET whole: it goes to a temporary
# file beside TARGET, renamed over it (with the mode `>` would give) only once COMMAND has
# succeeded, so a failure leaves the previous TARGET as it was. Returns COMMAND's status.
write_whole() {
    local target=$1 unfinished status=0
    shift
    unfinished=$(mktemp "$target.tmp.XXXXXX") || return 1
    "$@" >"$unfinished" || status=$?
    if [ "$status" = 0 ]; then
        chmod "$(printf '%o' $((0666 & ~$(umask))))" "$unfinished" && mv -fT "$unfinished" "$target" || status=$?
    fi
    [ "$status" = 0 ] || rm -f "$unfinished"
    return "$status"
}

# Refuses (status 2, one line starting with PROGRAM) a cluster run that cannot start: link
# rates (Gbit/s, space-separated) that are not numbers, or a user who is not root.
check_cluster_run() {
    local program=$1 rate
    [ -n "${2// /}" ] || { echo "$program: no rate given" >&2; exit 2; }
    for rate in $2; do
        [[ $rate =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "$program: '$rate' is not a rate in Gbit/s" >&2; exit 2; }
    done
    [ "$(id -u)" = 0 ] || { echo "$program: the cluster makes network namespaces: run it as root" >&2; exit 2; }
}

# The data-parallel lessons, each with its strategy's name in `tools/predict.py step`.
# shellcheck disable=SC2034 # for the scripts that source this file
STEP_MODEL_LESSONS=(02_naive_ddp:naive 03_flat_ddp:flat 04_overlap_ddp:overlap 05_bucketed_ddp:bucketed
    06_grad_accum:accumulate 07_zero1:zero1 08_zero2:zero2 09_zero3:zero3 10_mixed_precision:mixed)

# The step model's compute (docs/scale.md) into DIR: lesson 00 on one rank at ROWS rows
# (DIR/compute_R), at ROWS/ACCUM (DIR/compute_micro_R: one of lesson 06's micro-batches) and
# lesson 10's own (DIR/compute_16bit_R), each traced for STEPS steps by RUNS runs side by side,
# as RUNS ranks share this machine; then lesson 05's plan (DIR/plan.csv). The rest: the run's
# flags.
step_model_compute() {
    local dir=$1 runs=$2 rows=$3 accum=$4 steps=$5 entry lesson name batch r
    shift 5
    for entry in "00_single_device compute $rows" "00_single_device compute_micro $((rows / accum))" \
        "10_mixed_precision compute_16bit $rows"; do
        read -r lesson name batch <<<"$entry"
        for r in $(seq "$runs"); do
            build/solutions/"$lesson" train "$@" --batch "$batch" --steps "$steps" --val-every 0 --gen-tokens 0 \
                --log-every 1000000 --trace "$dir/${name}_$r" >/dev/null </dev/null &
        done
        wait
        [ -f "$dir/${name}_1/rank_0.json" ] || { echo "tracing $lesson for the step model failed" >&2; return 1; }
    done
    # shellcheck disable=SC2046 # the flags are words
    build/solutions/05_bucketed_ddp plan "$@" $(lesson_flags 05_bucketed_ddp) --csv "$dir/plan.csv" >/dev/null
}

# tools/predict.py step for STRATEGY from DIR's compute (step_model_compute: every run side by
# side, of which the model takes the slowest; ACCUM micro-batches for accumulate); the rest: its
# flags.
predict_from() {
    local strategy=$1 dir=$2 accum=$3 trace=compute extra=() traces=() r=1
    shift 3
    [ "$strategy" = accumulate ] && trace=compute_micro extra=(--accum "$accum")
    [ "$strategy" = mixed ] && trace=compute_16bit
    while [ -d "$dir/${trace}_$r" ]; do # every run side by side: the step waits for the slowest
        traces+=(--trace "$dir/${trace}_$r")
        r=$((r + 1))
    done
    tools/predict.py step "$strategy" "${traces[@]}" --units "$dir/plan.csv" "${extra[@]}" "$@"
}

# mpiexec -n RANKS (2 unless said) with one rank on each host of the cluster NAME
# (scripts/cluster.sh up --hosts RANKS): the variables its env file exports, as the array $launch.
cluster_launcher() {
    local exports
    mapfile -t exports < <(sed -n 's/^export //p' "/run/dtc-cluster/$1/env")
    # shellcheck disable=SC2034 # for the caller
    launch=(env "${exports[@]}" mpiexec -n "${2:-2}")
}

# A script's --help: its header comment, from line 2 to the line before its first `set -`.
header_help() { sed -n '2,/^set -/p' "$1" | sed '$d' | sed 's/^# \{0,1\}//'; }

# PATH as the user meant it: the scripts work from the course's top folder (each goes there
# first), so a relative path given to one is taken from the folder it was started in
# (OLDPWD, until the script changes folder again). Empty stays empty.
from_caller() { case $1 in "" | /*) printf '%s\n' "$1" ;; *) printf '%s\n' "${OLDPWD:-$PWD}/$1" ;; esac; }

# -h or --help as a script's first argument: its header (header_help), then exit 0.
help_if_asked() { case ${1:-} in -h | --help) header_help "$0"; exit 0 ;; esac; }

# PROGRAM's FLAG with COUNT ($#) words left, the flag's included: refused (status 2) when no
# value follows it.
needs_value() { [ "$3" -ge 2 ] || { echo "$1: $2 needs a value (see --help)" >&2; exit 2; }; }

# For a script that takes no arguments: help_if_asked, and anything else refused (status 2)
# before it starts.
no_arguments() {
    help_if_asked "$@"
    [ $# -eq 0 ] || { echo "$(basename "$0" .sh): takes no arguments, not '$1' (see --help)" >&2; exit 2; }
}

# The distinct values of a CSV column (by name), in order of first appearance, space-separated.
distinct() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; next }
        !seen[$c]++ { printf "%s ", $c }' "$1"
}

# A field of a one-row summary CSV (`train --summary`), by column name.
summary_field() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR == 2 { print $c }' "$1"
}

# Fields of a one-row summary CSV by column name, each a time in seconds, as milliseconds
# ("%.2f"), on one line.
summary_ms() {
    local file=$1
    shift
    awk -F, -v names="$*" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i } NR == 2 {
        n = split(names, name, " ")
        for (k = 1; k <= n; k++) printf "%s%.2f", (k > 1 ? " " : ""), 1e3 * $c[name[k]]
        printf "\n" }' "$file"
}

# The median of the numbers on standard input, one per line (of an even count, the mean of
# the middle two).
median() {
    sort -g | awk '{ v[NR] = $1 } END { h = int((NR + 1) / 2)
        if (NR == 0 || NR % 2) print v[h]; else printf "%.10g\n", (v[h] + v[h + 1]) / 2 }'
}

# Whether lesson 00 (a CUDA build's, $1) can run on a GPU: prints its one-step profile, or
# why not (its last line is the reason), and returns that run's status.
gpu_probe() { "$1" profile --config tiny --device cuda --iters 1 --warmup-iters 0 --throughput-only 2>&1; }

# Lesson 00 ($1, a CUDA build's) profiled on the GPU $2 times with the flags after them:
# prints "tokens/s MFU", the medians (MFU "n/a" for a GPU whose peak it does not know).
gpu_profile_medians() {
    local binary=$1 rounds=$2 rates=() mfus=() out
    shift 2
    for _ in $(seq "$rounds"); do
        out=$("$binary" profile --device cuda --warmup-iters 3 --iters 10 --throughput-only "$@")
        rates+=("$(echo "$out" | awk '/^  tokens\/s/ {print $2; exit}')")
        mfus+=("$(echo "$out" | awk '/^  MFU/ {sub("%", "", $2); print $2; exit}')")
    done
    local mfu=n/a
    [[ ${mfus[0]} != n/a ]] && mfu="$(printf '%s\n' "${mfus[@]}" | median)%"
    echo "$(printf '%s\n' "${rates[@]}" | median) $mfu"
}

# The median of column $2 of file $1 (numbers separated by spaces).
median_of() { awk -v c="$2" '{ print $c }' "$1" | median; }

# For the benchmarks' interleaved rounds: runs a command that writes the one-row summary $3
# and appends "tokens/s comm_fraction" from it to $1/$2; appends nothing when the command
# wrote no summary (PyTorch skipped). The command's output goes to $1/log, shown if it fails.
record_run() {
    local work=$1 label=$2 summary=$3
    shift 3
    rm -f "$summary"
    "$@" >"$work/log" 2>&1 </dev/null || { cat "$work/log" >&2; return 1; }
    [ -f "$summary" ] || return 0
    echo "$(summary_field "$summary" tokens_per_s) $(summary_field "$summary" comm_frac_avg)" >>"$work/$label"
}

# The ceiling the matrix-product kernels put on a run: the tokens/s a step would reach if its
# matrix products were all it did (every other kernel, and all communication, free). $1 holds
# one or more outputs of lesson 00's `profile`; each "matmul" row of their "where a step's
# time goes" tables reads "matmul DIR ROWS x IN -> OUT CALLS MS/STEP ...", ROWS being the
# tokens of a step. The fastest table counts (a busy moment only slows a measurement).
matmul_ceiling() {
    awk '/^== where a step/ { if (ms > 0 && (best == 0 || ms < best)) best = ms; ms = 0 }
        $1 == "matmul" { ms += $9; tokens = $3 }
        END { if (ms > 0 && (best == 0 || ms < best)) best = ms; printf "%.0f\n", tokens / (best / 1000) }' "$1"
}

# a / b to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The lessons that train, from lessons/ (as the Makefile finds them): every one but 01, the
# collectives benchmark. One name a line, in order.
training_lessons() {
    local dir
    for dir in lessons/[0-9][0-9]_*/; do
        dir=${dir%/} && dir=${dir#lessons/}
        [ "$dir" = 01_collectives ] || echo "$dir"
    done
}

# The flags a lesson runs with in the course's tables (lesson 06 accumulates 2 micro-batches).
lesson_flags() { [ "$1" = 06_grad_accum ] && echo "--accum 2" || echo ""; }

# The two shapes the benchmarks measure: the course's (L4 H4 C128 T128, batch 8) and a
# larger one (L6 H4 C256 T256, batch 8); and tiny (L1 H2 C16 T16, batch 4), for trying a
# benchmark out in seconds. The steps a run of each takes, and its global batch.
shape_flags() {
    case $1 in
    small) echo "--config course" ;;
    big) echo "--config course --layers 6 --channels 256 --seq 256 --max-seq 256" ;;
    tiny) echo "--config tiny" ;;
    *) echo "unknown shape '$1' (small, big or tiny)" >&2; return 2 ;;
    esac
}
shape_steps() { case $1 in small) echo 40 ;; tiny) echo 8 ;; *) echo 14 ;; esac; }
shape_batch() { [ "$1" = tiny ] && echo 4 || echo 8; }

# Runs the function $1 on each shape named after it, or on both when none is: a benchmark
# script's main loop. An unknown shape stops the script before any run.
for_each_shape() {
    local run=$1 shape
    shift
    local shapes=("$@")
    [ ${#shapes[@]} -gt 0 ] || shapes=(small big)
    for shape in "${shapes[@]}"; do shape_flags "$shape" >/dev/null; done
    for shape in "${shapes[@]}"; do "$run" "$shape"; done
}

# The OpenBLAS kernel set lesson 00 runs with here when nothing forces one (its header's
# "matrix products:" line), e.g. SkylakeX: what PyTorch is given, so that both run the same.
chosen_kernels() {
    env -u OPENBLAS_CORETYPE build/solutions/00_single_device profile --config tiny --warmup-iters 0 --iters 1 \
        --sweep-max-batch 1 | sed -n 's/^matrix products: OpenBLAS \([A-Za-z0-9_]*\) kernels.*/\1/p'
}
