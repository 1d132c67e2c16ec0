#!/usr/bin/env bash
# make run: the course, end to end, then the course report.
#
#   scripts/run_course.sh [--small] [--student] [--cluster "RATES"] [--runs DIR] [--report DIR]
#
# Writes DIR (default runs/): lesson 00 on one device (train, then profile); lesson 01's
# collective benchmark (collectives.csv) and how far a started collective gets while a rank
# computes and tests it (progress.csv); lessons 02-10 on 2 ranks (NN_name.csv per step and
# NN_name.summary.csv); a short traced run of each lesson (traces/NN_name/, analysed); the
# step model's prediction of lessons 02-10 (predict/NN_name.csv and its step's timeline,
# docs/scale.md) and the same carried to 1024 ranks of a stated system (scale/,
# scripts/scale_figures.sh);
# lesson 05's bucket-size sweep (bucket_sweep.csv); PyTorch's own DDP and ZeRO-1 when
# python3-torch is installed, and its FSDP when 'make torch' has installed a PyTorch that
# runs it (scripts/pytorch_ddp.sh); one comparison table of them all (comparison.csv); and the model state per rank
# of DDP and ZeRO-1/2/3 at 1, 2 and 4 ranks (zero_memory.csv) with ZeRO's shard plan at 3
# ranks (shard_plan.csv). Then scripts/make_report.py
# turns them into the report (default reports/: index.html and summary.md).
#
# --small does the same on the tiny preset with a few steps each (well under a minute): for
# trying the report out, and what the report's test runs.
#
# --cluster "1 10" (root; make run CLUSTER="1 10") also runs lessons 02-05 and
# 07-10 across a network: at 2 ranks on shared memory, then one rank on each of two hosts
# of a cluster on this machine (scripts/cluster.sh) with links of each rate in Gbit/s, and
# lesson 01's all-reduce over the same links (scripts/bench_cluster.sh, on the course config,
# 3 interleaved rounds; --small: the tiny preset, 1 round). Into cluster.csv and
# cluster_busbw.csv; the report plots them beside the link's rate (docs/cluster.md).
#
# --student runs your versions instead (build/lessons/, what `make` built from your exercise
# files) of lessons 02-10, with the same flags, a per-step CSV and a short trace each, into
# DIR/yours/; then the report puts your loss curves and step timelines beside the
# reference's (run without --student first, with the same --small or not, for those). A
# lesson of yours that stops or hangs (each step has 60 s) is reported; the steps it ran
# still show, and one that ran none is left out.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
runs=runs report=reports small=0 student=0 cluster=""
while [ $# -gt 0 ]; do
    case $1 in
    --small) small=1; shift ;;
    --student) student=1; shift ;;
    --cluster) cluster=${2:?run_course: --cluster needs the link rates in Gbit/s, e.g. \"1 10\"}; shift 2 ;;
    --runs) runs=$(from_caller "${2:?run_course: --runs needs a folder}"); shift 2 ;;
    --report) report=$(from_caller "${2:?run_course: --report needs a folder}"); shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    *) echo "run_course: unknown argument $1 (--small, --student, --cluster RATES, --runs DIR, --report DIR)" >&2
       exit 2 ;;
    esac
done
if [ -n "$cluster" ]; then
    [ "$student" = 0 ] || { echo "run_course: --cluster runs the reference lessons: leave out --student" >&2; exit 2; }
    check_cluster_run "run_course: --cluster" "$cluster"
fi
ranks=${RANKS:-2}
if [ "$small" = 1 ]; then
    config=(--config tiny --steps 12 --val-every 6) profile=(--iters 3 --sweep-max-batch 8)
    collectives=(-b 1K -e 64K -f 8 -n 5) progress_sizes=(-b 1K -e 64K -f 8 -n 5) sweep_sizes=0.005,0.02,1
    zero_ranks=(1 2)
    cluster_flags=(tiny --busbw-sizes "-b 16K -e 1M -f 4 -n 5") cluster_rounds=1
else
    config=(--config course) profile=() collectives=() progress_sizes=(-b 1K -e 4M -f 4 -n 5)
    sweep_sizes=0.05,0.25,1,4,1000 zero_ranks=(1 2 4)
    cluster_flags=(small) cluster_rounds=3
fi
trace_steps=$([ "$small" = 1 ] && echo 6 || echo 30)

# The run's parts in order, with the seconds each took in one full run (2-core AMD EPYC,
# Zen 4): lesson 00 train, profile, lesson 01, lessons 02-10, traces, the step model's
# predictions and scale figures (measured on a Zen 5), bucket sweep, PyTorch, comparison, ZeRO
# memory, report. The estimate of the time left scales the parts still to come by how this
# run's pace so far compares with that one's. PyTorch's
# part there was DDP and ZeRO-1 alone (188 s); its two FSDP runs are counted as as long
# again (on a 2-core Emerald Rapids they took 0.99x as long as those two).
part_seconds=(164 5 6 93 87 83 87 90 88 90 89 90 15 5 6 376 1 8 15)
[ -n "$cluster" ] && part_seconds=("${part_seconds[@]:0:18}" 137 15)
[ "$student" = 1 ] && part_seconds=(95 90 90 90 95 95 95 95 95 15)
part_index=0

# "42 s", "3 min 05 s".
duration() { (($1 < 60)) && echo "$1 s" || printf '%d min %02d s\n' $(($1 / 60)) $(($1 % 60)); }

# Starts the next part: "== [k/N] title | time so far, about T left ==".
part() {
    local i measured_done=0 measured_left=0 spent=$SECONDS progress=""
    for ((i = 0; i < ${#part_seconds[@]}; i++)); do
        if ((i < part_index)); then
            measured_done=$((measured_done + part_seconds[i]))
        else
            measured_left=$((measured_left + part_seconds[i]))
        fi
    done
    part_index=$((part_index + 1))
    if ((part_index > 1)); then
        progress=" | $(duration "$spent") so far"
        ((spent > 0)) && progress+=", about $(duration $((spent * measured_left / measured_done))) left"
    fi
    echo "== [$part_index/${#part_seconds[@]}] $1$progress =="
}
mkdir -p "$runs/traces"
summaries=()

# Runs one lesson on $ranks ranks (lesson 00 on one) with the course flags and any more given:
# the reference, or with --student yours.
builds=$([ "$student" = 1 ] && echo build/lessons || echo build/solutions)
train() {
    local lesson=$1 launcher=(mpiexec -disable-auto-cleanup -n "$ranks")
    shift
    [ "$lesson" = 00_single_device ] && launcher=()
    # shellcheck disable=SC2046 # the flags are words
    "${launcher[@]}" "$builds/$lesson" train "${config[@]}" $(lesson_flags "$lesson") "$@" </dev/null
}
mapfile -t lessons < <(training_lessons | grep -v '^00_') # the data-parallel ones

# A short traced run of one lesson into DIR (more flags after it), quiet: trace_run LESSON DIR ...
trace_run() {
    local lesson=$1 dir=$2
    shift 2
    rm -rf "${dir:?}"
    train "$lesson" --steps "$trace_steps" --val-every 0 --gen-tokens 0 --log-every 1000000 --trace "$dir" "$@" >/dev/null
}

# One of your lessons: the run and a short trace, into $runs/yours/; 1 if any part failed.
# What a failed run wrote stays (a curve that leaves the reference's shows where it goes
# wrong), unless it holds no step at all.
run_yours() {
    local lesson=$1 yours=$runs/yours status=0
    rm -f "${yours:?}/$lesson.csv" "$yours/$lesson.summary.csv"
    train "$lesson" --step-timeout 60 --csv "$yours/$lesson.csv" --summary "$yours/$lesson.summary.csv" || status=1
    (($(wc -l <"$yours/$lesson.csv" 2>/dev/null || echo 0) > 2)) || rm -f "$yours/$lesson.csv"
    trace_run "$lesson" "$yours/traces/$lesson" --step-timeout 60 || status=1
    build/tools/analyze_traces "$yours/traces/$lesson" --timeline $((trace_steps - 1)) >/dev/null 2>&1 ||
        rm -rf "${yours:?}/traces/$lesson"
    return $status
}

# The step model's prediction of each data-parallel lesson, into $runs/predict/NN_name.csv,
# from lesson 00's compute at one rank's share of the batch ($ranks runs side by side, as the
# ranks share this machine; lesson 06's at one micro-batch of it; lesson 10's from lesson 10
# itself on one rank, whose 16-bit matmuls lesson 00 does not have), lesson 05's units and
# buckets, lesson 01's collectives, and the steps a started one takes (progress.csv).
predict_lessons() {
    local dir=$runs/predict batch length rows accum entry lesson strategy
    rm -rf "${dir:?}" && mkdir -p "$dir"
    read -r batch length < <(build/solutions/00_single_device train "${config[@]}" --dry-run |
        awk '$1 == "config" { value[$2] = $3 } END { print value["batch"], value["seq"] }')
    accum=$(lesson_flags 06_grad_accum | awk '{ print $2 }')
    rows=$((batch / ranks)) # one rank's share of the batch
    step_model_compute "$dir" "$ranks" "$rows" "$accum" "$trace_steps" "${config[@]}"
    for entry in "${STEP_MODEL_LESSONS[@]}"; do
        strategy=${entry#*:} lesson=${entry%%:*}
        # MPI moves a started collective only inside its calls: --progress tests (docs/scale.md)
        predict_from "$strategy" "$dir" "$accum" --ranks "$ranks" --progress tests \
            --progress-rows "$runs/progress.csv" --links "$runs/collectives.csv" --max-size 4M \
            --tokens $((rows * length)) --csv "$dir/$lesson.csv" --timeline "$dir/$lesson.timeline.csv" |
            sed -n 2p | sed "s/^/-- $lesson: /"
    done
}

if [ "$student" = 1 ]; then
    [ -f "$runs/comparison.csv" ] || { echo "run_course: --student puts your runs beside the reference's:" \
        "run scripts/run_course.sh$([ "$small" = 1 ] && echo " --small") --runs $runs first" >&2; exit 1; }
    mkdir -p "$runs/yours/traces"
    for lesson in "${lessons[@]}"; do
        part "your lesson $lesson: $ranks ranks (${config[*]}), then a short trace"
        run_yours "$lesson" ||
            echo "-- your $lesson stopped with an error (above); make grade LESSON=${lesson%%_*} says what is wrong"
        echo
    done
    part "the course report, your runs beside the reference"
    scripts/make_report.py --ranks "$ranks" --config "${config[*]}" "$runs" "$report"
    exit 0
fi

part "lesson 00: single-device training (${config[*]})"
train 00_single_device --csv "$runs/00_single_device.csv" --summary "$runs/00_single_device.summary.csv" \
    --save "$runs/00_single_device.bin"
summaries+=("$runs/00_single_device.summary.csv")
echo
part "lesson 00: profile"
build/solutions/00_single_device profile "${config[@]}" "${profile[@]}" --mem-limit 64

echo
part "lesson 01: collectives, $ranks ranks"
mpiexec -n "$ranks" build/solutions/01_collectives "${collectives[@]}" --csv "$runs/collectives.csv" </dev/null
echo "-- a started collective, computed beside and tested: $runs/progress.csv (tools/predict.py progress)"
mpiexec -n "$ranks" build/solutions/01_collectives --progress "${progress_sizes[@]}" --csv "$runs/progress.csv" \
    </dev/null >/dev/null

for lesson in "${lessons[@]}"; do
    echo
    part "lesson $lesson: $ranks ranks (${config[*]})"
    train "$lesson" --csv "$runs/$lesson.csv" --summary "$runs/$lesson.summary.csv"
    summaries+=("$runs/$lesson.summary.csv")
done

echo
part "traces: $trace_steps steps of each lesson, analysed (traces/NN_name/summary.csv)"
for lesson in 00_single_device "${lessons[@]}"; do
    trace_run "$lesson" "$runs/traces/$lesson"
    echo "-- $lesson"
    build/tools/analyze_traces "$runs/traces/$lesson" --timeline $((trace_steps - 1))
done

echo
part "predicted against measured: the step model (tools/predict.py) of lessons 02-10; carried to scale"
predict_lessons
scripts/scale_figures.sh --out "$runs/scale" --svg
echo
part "lesson 05: bucket-size sweep, $ranks ranks"
mpiexec -n "$ranks" build/solutions/05_bucketed_ddp sweep "${config[@]}" --sizes "$sweep_sizes" \
    --csv "$runs/bucket_sweep.csv" </dev/null

echo
part "PyTorch's DDP, ZeRO-1 and FSDP (gloo, $ranks ranks)"
for pytorch in pytorch: pytorch_zero1:--zero1 "pytorch_fsdp_grad_op:--fsdp grad_op" "pytorch_fsdp_full:--fsdp full"; do
    summary=$runs/${pytorch%%:*}/pytorch_ddp_summary.csv # FOLDER:FLAGS
    rm -f "$summary"
    # shellcheck disable=SC2086 # the flags are words
    if scripts/pytorch_ddp.sh run "$runs/${pytorch%%:*}" --ranks "$ranks" ${pytorch#*:} "${config[@]}"; then
        [ -f "$summary" ] && summaries+=("$summary")
    fi
done

echo
part "comparison (${config[*]}; per-step figures in $runs/*.csv)"
scripts/compare_table.sh --csv "$runs/comparison.csv" "${summaries[@]}"
echo "table: $runs/comparison.csv; checkpoint: $runs/00_single_device.bin"
echo
part "model state per rank, ZeRO stages against the formulas; the shard plan at 3 ranks"
scripts/zero_memory.sh --csv "$runs/zero_memory.csv" --config "${config[1]}" "${zero_ranks[@]}"
build/solutions/07_zero1 plan "${config[@]}" --ranks 3 --csv "$runs/shard_plan.csv"

rm -f "$runs/cluster.csv" "$runs/cluster_busbw.csv" # only this run's comparison goes in the report
if [ -n "$cluster" ]; then
    echo
    part "across a network: lessons 02-05, 07-10 and lesson 01's all-reduce on two hosts, links at $cluster Gbit/s"
    BENCH_ROUNDS=$cluster_rounds scripts/bench_cluster.sh --gbit "$cluster" --csv "$runs/cluster.csv" \
        --busbw "$runs/cluster_busbw.csv" "${cluster_flags[@]}"
fi

echo
part "the course report"
scripts/make_report.py --ranks "$ranks" --config "${config[*]}" "$runs" "$report"
