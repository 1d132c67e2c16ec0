#!/usr/bin/env bash
# The course report from a course run's files (what scripts/run_course.sh writes):
#
#   scripts/make_report.sh [--ranks N] [--config TEXT] [RUNS_DIR] [REPORT_DIR]
#       (defaults: 2, "--config course", runs, reports)
#
# With RUNS_DIR/yours/ (scripts/run_course.sh --student: your versions of lessons 02-10),
# the report also puts your loss curves and step timelines beside the reference's. With
# RUNS_DIR/cluster.csv and cluster_busbw.csv (scripts/run_course.sh --cluster), it shows the
# lessons and lesson 01's all-reduce across a network beside shared memory.
#
# Writes REPORT_DIR/index.html (one self-contained page: tables and inline SVG plots),
# REPORT_DIR/summary.md (the tables, linking the plots), REPORT_DIR/plots/*.svg and the
# prepared data the plots are drawn from, REPORT_DIR/data/*.csv. gnuplot draws every plot
# (scripts/report/*.gp); this script only picks columns and lays out the page. Each file is
# written whole: into a temporary file beside it, renamed over the previous one only once it
# is complete, so a run that fails leaves the earlier report's file as it was. REPORT_DIR
# must not be RUNS_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
ranks=2 config="--config course"
while [ $# -gt 0 ]; do
    case $1 in
    --ranks) ranks=${2:?make_report: --ranks needs a number}; shift 2 ;;
    --config) config=${2:?make_report: --config needs the run flags}; shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    -*) echo "make_report: unknown option $1 (--ranks N, --config TEXT)" >&2; exit 2 ;;
    *) break ;;
    esac
done
runs=${1:-runs} report=${2:-reports}
if [ "$runs" -ef "$report" ]; then
    echo "make_report: $report is the runs folder $runs: write the report into a folder of its own" >&2
    exit 2
fi
mapfile -t lessons < <(training_lessons)
command -v gnuplot >/dev/null || { echo "make_report: gnuplot is missing (make setup installs gnuplot-nox)" >&2; exit 1; }
for needed in comparison.csv collectives.csv bucket_sweep.csv zero_memory.csv shard_plan.csv \
    "${lessons[@]/%/.csv}" "${lessons[@]/#/traces/}"; do
    [ -e "$runs/$needed" ] || { echo "make_report: $runs/$needed is missing (run scripts/run_course.sh first)" >&2; exit 1; }
done
for lesson in "${lessons[@]}"; do
    for file in summary.csv timeline.csv memory.csv; do
        [ -f "$runs/traces/$lesson/$file" ] ||
            { echo "make_report: $runs/traces/$lesson/$file is missing (build/tools/analyze_traces makes it)" >&2; exit 1; }
    done
done

# --- every file lands whole -----------------------------------------------------------------

# A writer writes $unfinished, a temporary file beside its target (same folder, so the rename
# is atomic), which replaces the target only once the writer succeeded. A writer that fails
# stops the script (set -e) and the EXIT trap removes its temporary file: the previous file
# stays, never half of a new one.
unfinished=""
trap 'rm -f -- ${unfinished:+"$unfinished"}' EXIT
file_mode=$(printf '%o' $((0666 & ~$(umask)))) # what `>` would give; mktemp gives 0600

# publish_as TARGET COMMAND...: COMMAND writes the file $unfinished names, which then becomes
# TARGET. Call it as a plain command (not under if, && or ||): set -e must stay on inside
# COMMAND, so its first failure stops it before the rename.
publish_as() {
    local target=$1
    shift
    unfinished=$(mktemp "$target.tmp.XXXXXX")
    "$@"
    chmod "$file_mode" "$unfinished"
    mv -fT "$unfinished" "$target" # -T: a folder at TARGET is an error, not a place to move into
    unfinished=""
}
# publish TARGET COMMAND...: COMMAND's standard output becomes TARGET.
publish() {
    local target=$1
    shift
    publish_as "$target" into_unfinished "$@"
}
into_unfinished() { "$@" >"$unfinished"; }

mkdir -p "$report/plots" "$report/data"
data=$report/data plots=$report/plots
rm -f "$data/yours.csv" "$plots"/*yours.svg # from an earlier report with your runs
rm -f "$data"/cluster*.csv "$plots"/cluster*.svg # and with a run across a network

# --- the data each plot reads -------------------------------------------------------------

# Mean over ranks of one lesson's analyzer summary: compute, exposed and overlapped
# communication, idle (ms per step), overlap %.
breakdown_row() {
    awk -F, -v name="$1" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { n++; for (k in c) sum[k] += $c[k] }
        END { printf "%s,%.4f,%.4f,%.4f,%.4f,%.2f\n", name, sum["compute_ms"] / n, sum["comm_exposed_ms"] / n,
                     sum["comm_overlap_ms"] / n, sum["idle_ms"] / n, sum["overlap_pct"] / n }' "$2"
}
breakdown_csv() {
    echo "strategy,compute_ms,comm_exposed_ms,comm_overlap_ms,idle_ms,overlap_pct"
    for lesson in "${lessons[@]}"; do breakdown_row "$lesson" "$runs/traces/$lesson/summary.csv"; done
}
publish "$data/breakdown.csv" breakdown_csv

# Rows of a CSV whose column $2 equals $3, header kept.
select_rows() {
    awk -F, -v name="$2" -v value="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i; print; next }
        $c == value' "$1"
}
stages=$(distinct "$runs/zero_memory.csv" stage)
for stage in $stages; do publish "$data/memory_$stage.csv" select_rows "$runs/zero_memory.csv" stage "$stage"; done
publish "$data/memory_at_$ranks.csv" select_rows "$runs/zero_memory.csv" ranks "$ranks"
ops=$(distinct "$runs/collectives.csv" collective)
for op in $ops; do publish "$data/busbw_$op.csv" select_rows "$runs/collectives.csv" collective "$op"; done
for copied in bucket_sweep.csv comparison.csv; do publish "$data/$copied" cat "$runs/$copied"; done

# Loss curves: every lesson's per-step CSV, and PyTorch's when it ran.
loss_files=() loss_names=()
for lesson in "${lessons[@]}"; do loss_files+=("$runs/$lesson.csv") loss_names+=("$lesson"); done
for pytorch in pytorch:pytorch_ddp pytorch_zero1:pytorch_zero1 pytorch_fsdp_grad_op:pytorch_fsdp_grad_op \
    pytorch_fsdp_full:pytorch_fsdp_full; do # FOLDER:STRATEGY
    if [ -f "$runs/${pytorch%%:*}/pytorch_ddp.csv" ] && grep -q "^${pytorch#*:}," "$runs/comparison.csv"; then
        loss_files+=("$runs/${pytorch%%:*}/pytorch_ddp.csv") loss_names+=("${pytorch#*:}")
    fi
done

# |loss - lesson 00's loss| per step for every other strategy (empty where equal: no log of 0).
loss_drift_csv() {
    paste -d, "${loss_files[@]}" | awk -F, -v names="$(IFS=' '; echo "${loss_names[*]:1}")" '
        NR == 1 { for (i = 1; i <= NF; i++) if ($i == "loss") loss[++n] = i
                  printf "step"; split(names, name, " "); for (k = 2; k <= n; k++) printf ",%s", name[k - 1]; print ""; next }
        { printf "%s", $1
          for (k = 2; k <= n; k++) { d = $loss[k] - $loss[1]; d = d < 0 ? -d : d; printf ",%s", (d > 0 ? d : "") }
          print "" }'
}
publish "$data/loss_drift.csv" loss_drift_csv

# --- the plots ------------------------------------------------------------------------------

# plot SCRIPT NAME VARIABLES: scripts/report/SCRIPT.gp with gnuplot -e VARIABLES, into
# plots/NAME.svg.
plot() { publish_as "$plots/$2.svg" gnuplot_into_unfinished "$@"; }
gnuplot_into_unfinished() {
    local said
    # a warning (a data set with no valid points, say) is a wrong picture: stop on any output
    if ! said=$(gnuplot -e "out='$unfinished'; $3" "scripts/report/$1.gp" 2>&1) || [ -n "$said" ]; then
        echo "make_report: gnuplot failed on $2:" >&2
        printf '%s\n' "$said" >&2
        exit 1
    fi
}
words() { local IFS=' '; echo "$*"; }
plot loss_val loss_00_single_device "data='$runs/00_single_device.csv'"
plot loss loss "files='$(words "${loss_files[@]}")'; names='$(words "${loss_names[@]}")'"

# Your runs, where run_course.sh --student left them: the lessons with a loss curve, and those
# with a timeline; per lesson your last loss against the reference's and the largest
# relative difference over the steps both ran.
yours_loss=() yours_timelines=()
for lesson in "${lessons[@]:1}"; do
    [ -f "$runs/yours/$lesson.csv" ] && yours_loss+=("$lesson")
    [ -f "$runs/yours/traces/$lesson/timeline.csv" ] && yours_timelines+=("$lesson")
done
if ((${#yours_loss[@]} > 0)); then
    refs=() mine=()
    for lesson in "${yours_loss[@]}"; do refs+=("$runs/$lesson.csv") mine+=("$runs/yours/$lesson.csv"); done
    plot loss_yours loss_yours "refs='$(words "${refs[@]}")'; yours='$(words "${mine[@]}")'; names='$(words "${yours_loss[@]}")'"
    yours_csv() {
        echo "lesson,steps,last_loss,reference_last_loss,largest_rel_diff"
        for lesson in "${yours_loss[@]}"; do
            awk -F, -v lesson="$lesson" 'FNR == 1 { for (i = 1; i <= NF; i++) if ($i == "loss") c = i; file++; next }
                file == 1 { ref[$1] = $c; next }
                { n++; last = $c; last_ref = ref[$1]
                  if ($1 in ref) { d = ($c - ref[$1]) / ref[$1]; d = d < 0 ? -d : d; if (d > worst || d != d) worst = d } }
                END { printf "%s,%d,%s,%s,%.3g\n", lesson, n, last, last_ref, worst }' \
                "$runs/$lesson.csv" "$runs/yours/$lesson.csv"
        done
    }
    publish "$data/yours.csv" yours_csv
fi
plot loss_drift loss_drift "data='$data/loss_drift.csv'; names='$(words "${loss_names[@]:1}")'"
plot breakdown breakdown "data='$data/breakdown.csv'"
# plot_timeline NAME TITLE TRACE_DIR: one step of an analysed trace (analyze_traces --timeline).
# drawn_step TRACE_DIR: run_course.sh draws the next-to-last traced step; each step is marked
# "step#N" in the trace.
drawn_step() { echo $(($(grep -o '"name":"step#[0-9]*"' "$1/rank_0.json" | wc -l) - 1)); }
plot_timeline() {
    local trace_ranks
    trace_ranks=$(awk -F, 'NR > 1 { n++ } END { print n }' "$3/summary.csv")
    plot timeline "$1" "data='$3/timeline.csv'; name='$2'; step='$(drawn_step "$3")'; ranks=$trace_ranks; tracks='$(distinct "$3/timeline.csv" track)'"
}
for lesson in "${lessons[@]}"; do plot_timeline "timeline_$lesson" "$lesson" "$runs/traces/$lesson"; done
for lesson in "${yours_timelines[@]}"; do
    plot_timeline "timeline_${lesson}_yours" "your $lesson" "$runs/yours/traces/$lesson"
done
# Memory over one step, rank 0, for lesson 00, each ZeRO stage and mixed precision, on one scale: the highest
# stack of any of them (token shards left out, as the plot leaves them out).
memory_lessons=() memory_steps=()
for lesson in "${lessons[@]}"; do
    [[ $lesson == 00_* || $lesson == *zero* || $lesson == *mixed* ]] || continue
    memory_lessons+=("$lesson") memory_steps+=("$data/memory_step_$lesson.csv")
    publish "$data/memory_step_$lesson.csv" select_rows "$runs/traces/$lesson/memory.csv" rank 0
done
memory_top=$(awk -F, 'FNR == 1 { delete c; for (i = 1; i <= NF; i++) c[$i] = i; next }
    { s = 0; for (k in c) if (k ~ /_mb$/ && k != "data_mb" && k != "gathered_mb") s += $c[k]; if (s > top) top = s }
    END { print (top > 0 ? top * 1.1 : 1) }' "${memory_steps[@]}")
for lesson in "${memory_lessons[@]}"; do
    gathered=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "gathered_mb") c = i; next } $c > 0 { g = 1 }
        END { print g + 0 }' "$data/memory_step_$lesson.csv")
    in_use=gathered
    [[ $lesson != *mixed* ]] || in_use=widened # from the rank's own bf16 copy, not over the network
    plot memory_step "memory_step_$lesson" "data='$data/memory_step_$lesson.csv'; name='$lesson'; step='$(drawn_step "$runs/traces/$lesson")'; ymax=$memory_top; gathered=$gathered; in_use='$in_use'"
done
plot sweep bucket_sweep "data='$data/bucket_sweep.csv'"
plot memory memory "data='$data/memory_at_$ranks.csv'; ranks='$ranks'"
publish "$data/shard_plan.csv" cat "$runs/shard_plan.csv"
plan_ranks=$(distinct "$runs/shard_plan.csv" rank | wc -w) plan_units=$(distinct "$runs/shard_plan.csv" unit | wc -w)
plot shard_layout shard_layout "data='$data/shard_plan.csv'; ranks=$plan_ranks; units=$plan_units"
memory_files=() busbw_files=()
for stage in $stages; do memory_files+=("$data/memory_$stage.csv"); done
for op in $ops; do busbw_files+=("$data/busbw_$op.csv"); done
plot memory_ranks memory_ranks "files='$(words "${memory_files[@]}")'; names='$stages'"
plot busbw busbw "files='$(words "${busbw_files[@]}")'; names='$ops'; ranks='$ranks'"

# Across a network, where run_course.sh --cluster ran it: the first shape's rows, one row per
# strategy with each network's step and communication time (for the plot), and per lesson
# and network its tokens/s against the same lesson on shared memory (for the table).
cluster=0
if [ -f "$runs/cluster.csv" ] && [ -f "$runs/cluster_busbw.csv" ]; then
    cluster=1
    cluster_shape=$(distinct "$runs/cluster.csv" shape | cut -d' ' -f1)
    publish "$data/cluster.csv" select_rows "$runs/cluster.csv" shape "$cluster_shape"
    networks=$(distinct "$data/cluster.csv" network) cluster_lessons=$(distinct "$data/cluster.csv" lesson)
    cluster_steps_csv() {
        awk -F, -v networks="$networks" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
            !($c["lesson"] in seen) { seen[$c["lesson"]] = 1; order[++n] = $c["lesson"] }
            { step[$c["lesson"], $c["network"]] = $c["step_ms"]; comm[$c["lesson"], $c["network"]] = $c["comm_ms"] }
            END { k = split(networks, net, " "); printf "strategy"
                  for (j = 1; j <= k; j++) printf ",%s_step_ms,%s_comm_ms", net[j], net[j]; print ""
                  for (i = 1; i <= n; i++) { printf "%s", order[i]
                      for (j = 1; j <= k; j++) printf ",%s,%s", step[order[i], net[j]], comm[order[i], net[j]]; print "" } }' \
            "$data/cluster.csv"
    }
    publish "$data/cluster_steps.csv" cluster_steps_csv
    cluster_table_csv() {
        awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print $0 ",vs_shared_memory"; next }
            { rows[NR] = $0; lesson[NR] = $c["lesson"]; rate[NR] = $c["tokens_per_s"]
              if ($c["network"] == "shm") shm[$c["lesson"]] = $c["tokens_per_s"] }
            END { for (i = 2; i <= NR; i++)
                      printf "%s,%s\n", rows[i], shm[lesson[i]] ? sprintf("%.2f", rate[i] / shm[lesson[i]]) : "" }' \
            "$data/cluster.csv"
    }
    publish "$data/cluster_table.csv" cluster_table_csv
    plot cluster cluster "data='$data/cluster_steps.csv'; networks='$networks'; strategies='$cluster_lessons'"
    busbw_networks=$(distinct "$runs/cluster_busbw.csv" network) network_files=() link_files=() link_names=()
    for network in $busbw_networks; do
        publish "$data/cluster_busbw_$network.csv" select_rows "$runs/cluster_busbw.csv" network "$network"
        network_files+=("$data/cluster_busbw_$network.csv")
        [ "$network" = shm ] || { link_files+=("$data/cluster_busbw_$network.csv") link_names+=("$network"); }
    done
    plot cluster_busbw cluster_busbw "files='$(words "${network_files[@]}")'; names='$busbw_networks';
        links='$(words "${link_files[@]}")'; link_names='$(words "${link_names[@]}")'"
fi

# --- tables -----------------------------------------------------------------------------------

# table html|md CSV COLUMN:HEADING:FORMAT... : the named columns of a CSV as an HTML or
# Markdown table; an empty field shows as "-".
table() {
    local kind=$1 file=$2
    shift 2
    awk -F, -v kind="$kind" -v spec="$*" '
        BEGIN { n = split(spec, items, " ")
                for (i = 1; i <= n; i++) { split(items[i], part, ":"); col[i] = part[1]; head[i] = part[2]; fmt[i] = part[3]
                                           gsub(/_/, " ", head[i]) } }
        function cell(v, f) { return v == "" ? "-" : (f == "s" ? v : sprintf("%" f, v)) }
        NR == 1 { for (i = 1; i <= NF; i++) at[$i] = i
                  if (kind == "html") { printf "<table>\n<tr>"; for (i = 1; i <= n; i++) printf "<th>%s</th>", head[i]; print "</tr>" }
                  else { printf "|"; for (i = 1; i <= n; i++) printf " %s |", head[i]; printf "\n|"
                         for (i = 1; i <= n; i++) printf "---|"; print "" }
                  next }
        { if (kind == "html") { printf "<tr>"; for (i = 1; i <= n; i++) printf "<td>%s</td>", cell($at[col[i]], fmt[i]); print "</tr>" }
          else { printf "|"; for (i = 1; i <= n; i++) printf " %s |", cell($at[col[i]], fmt[i]); print "" } }
        END { if (kind == "html") print "</table>" }' "$file"
}

# The comparison with times in ms and speed against lesson 00 (column speedup, added here).
comparison_table_csv() {
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; print $0 ",step_ms,comm_ms,speedup"; next }
        { rows[NR] = $0; tps[NR] = $c["tokens_per_s"]; step[NR] = 1e3 * $c["step_time_avg_s"]
          comm[NR] = $c["comm_time_avg_s"] == "" ? "" : 1e3 * $c["comm_time_avg_s"]
          if ($c["strategy"] == "single_device") base = $c["tokens_per_s"] }
        END { for (i = 2; i <= NR; i++) printf "%s,%.3f,%s,%s\n", rows[i], step[i], comm[i] == "" ? "" : sprintf("%.3f", comm[i]),
                                                 base ? sprintf("%.2f", tps[i] / base) : "" }' \
        "$runs/comparison.csv"
}
publish "$data/comparison_table.csv" comparison_table_csv
comparison_cols="strategy:strategy:s ranks:ranks:s step_ms:step_ms:.2f comm_ms:comm_ms:.2f comm_frac_avg:comm_fraction:.3f
    tokens_per_s:tokens/s:.0f speedup:vs_lesson_00:.2f last_loss:last_loss:.6f comm_mb_per_step:comm_MB/step:.3f
    peak_tracked_mb:peak_tracked_MB/rank:.1f peak_rss_mb:peak_RSS_MB:.1f"
breakdown_cols="strategy:strategy:s compute_ms:compute_ms:.3f comm_exposed_ms:exposed_comm_ms:.3f
    comm_overlap_ms:overlapped_comm_ms:.3f idle_ms:idle_ms:.3f overlap_pct:overlap_%:.1f"
sweep_cols="bucket_mb:bucket_MB:g buckets:buckets:s step_ms:step_ms:.3f step_std_ms:std_ms:.3f comm_ms:comm_ms:.3f
    tokens_per_s:tokens/s:.0f"
memory_cols="stage:stage:s ranks:ranks:s params_mb:params_MB:.3f grads_mb:grads_MB:.3f adam_mb:AdamW_MB:.3f master_mb:master_MB:.3f
    state_mb:model_state_MB:.3f formula_mb:formula_MB:.3f working_mb:working_MB:.3f activations_mb:activations_MB:.3f"
yours_cols="lesson:lesson:s steps:steps:s last_loss:your_last_loss:.6f reference_last_loss:reference:.6f
    largest_rel_diff:largest_relative_difference:.3g"
cluster_cols="lesson:strategy:s network:network:s step_ms:step_ms:.2f comm_ms:comm_ms:.2f tokens_per_s:tokens/s:.0f
    vs_shared_memory:tokens/s_vs_shared_memory:.2f"
cluster_busbw_cols="network:network:s size:size_(B):.0f busbw_GBps:busbw_(GB/s):.3f link_GBps:link_(GB/s):.3f"
busbw_cols="collective:collective:s size:size_(B):.0f count:count:.0f redop:redop:s in_place:in-place:s
    time_us:time_(us):.1f algbw_GBps:algbw_(GB/s):.3f busbw_GBps:busbw_(GB/s):.3f wrong:#wrong:s"

# --- the pages ------------------------------------------------------------------------------

# An SVG from plots/ for inlining: without its XML prologue, its ids made unique to the page.
inline_svg() {
    sed -e '/^<?xml/d' -e "s/gnuplot_/$1_gnuplot_/g" -e "s/gpPt/$1_gpPt/g" -e "s/<svg /<svg class=\"plot\" /" \
        "$plots/$1.svg"
}
figure() { printf '<figure id="%s">\n' "$1"; inline_svg "$1"; printf '<figcaption>%s</figcaption>\n</figure>\n' "$2"; }
machine="$(nproc) cores, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown CPU)"
made="$(date -u '+%Y-%m-%d %H:%M UTC') on $(uname -n), $machine"

cluster_html() {
    echo '<h2 id="cluster">Across a network: two hosts on this machine</h2>'
    echo "<p class=\"note\">scripts/bench_cluster.sh ($cluster_shape shape, see docs/cluster.md): each lesson at 2 ranks on"
    echo "shared memory, then one rank on each of two hosts whose links are shaped to each rate; medians of interleaved"
    echo "rounds, warm-up steps left out. The hosts share this machine's cores; the link is the only thing added.</p>"
    figure cluster "Step time per strategy and network; hatched, the part of the step blocked in communication (what the compute did not hide)."
    table html "$data/cluster_table.csv" $cluster_cols
    figure cluster_busbw "Lesson 01's all-reduce across each link, against the link's rate (dashed): 1 Gbit/s carries 0.125 GB/s. A message that fits in the link's token bucket (1 ms at its rate) can cross faster than the rate."
    table html "$runs/cluster_busbw.csv" $cluster_busbw_cols
}

index_html() {
    cat <<EOF
<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>dtc course report</title>
<style>
body { font-family: sans-serif; max-width: 62em; margin: 2em auto; padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
figure { margin: 1.5em 0; } svg.plot { max-width: 100%; height: auto; }
figcaption, .note { color: #555; font-size: 0.9em; }
</style></head><body>
<h1>dtc course report</h1>
<p class="note">Run flags: <code>$config</code>, $ranks ranks for the data-parallel lessons. Made $made.
Every number below comes from the files in <code>$runs/</code>; the plot data is in <code>data/</code>.</p>
<h2 id="comparison">Every strategy side by side</h2>
<p class="note">Step and comm time are the slowest rank's mean after the warm-up steps; comm time is time blocked
in communication calls; comm MB counts an all-reduce of n bytes as 2n; vs lesson 00 is tokens/s against the
single device.</p>
EOF
    table html "$data/comparison_table.csv" $comparison_cols
    if [ -f "$data/yours.csv" ]; then
        echo '<h2 id="yours">Your runs beside the reference</h2>'
        echo "<p class=\"note\">Your versions (build/lessons/, scripts/run_course.sh --student) with the same flags;"
        echo "a lesson that stopped with an error shows the steps it ran. Your step timelines follow each reference's below.</p>"
        table html "$data/yours.csv" $yours_cols
        figure loss_yours "Your loss per step (dashed) over the reference's (solid), lesson by lesson."
    fi
    echo '<h2 id="loss">Loss curves</h2>'
    figure loss_00_single_device "Lesson 00's loss on the training text per step, and on the validation text (a novel it never trains on) every few steps."
    figure loss "Training loss per step, every strategy on the same global batch: the curves lie on one another."
    figure loss_drift "How far each strategy's loss is from lesson 00's. The tests hold them to lesson 00 within 1e-5 (relative) on the reference config, and lesson 10, which computes and sends in bf16, within 1e-3; summing in another order rounds differently, and over a long run the difference grows until the runs are distinct samples of the same training."
    echo '<h2 id="breakdown">Where the step time goes</h2>'
    echo "<p class=\"note\">From a traced run of each lesson (build/tools/analyze_traces), mean over ranks and over the traced steps after the warm-up ones, as in the table above. On a CPU overlapped communication is 0: each rank is one thread, which is not computing while it is inside a communication call, and MPICH moves a started collective only inside such calls (docs/traces.md). What starting early buys there is less waiting at the end.</p>"
    figure breakdown "Compute, communication with nothing beside it (exposed), communication beside compute (overlapped) and idle time, per step."
    table html "$data/breakdown.csv" $breakdown_cols
    echo '<h2 id="timelines">One step, per rank</h2>'
    echo '<p class="note">Each rank from the start of its own step. Open the traces themselves in Perfetto: see docs/traces.md.</p>'
    for lesson in "${lessons[@]}"; do
        figure "timeline_$lesson" "$lesson: $runs/traces/$lesson/merged.json"
        [ -f "$plots/timeline_${lesson}_yours.svg" ] &&
            figure "timeline_${lesson}_yours" "Your $lesson: $runs/yours/traces/$lesson/merged.json"
    done
    echo '<h2 id="sweep">Bucket size (lesson 05)</h2>'
    figure bucket_sweep "One short run per bucket size (the bars: one standard deviation of its step time either side); the largest size puts every gradient in one bucket."
    table html "$data/bucket_sweep.csv" $sweep_cols
    echo '<h2 id="memory">Memory per rank: DDP, ZeRO-1/2/3, and each in mixed precision</h2>'
    figure memory "Parameters, gradients and AdamW state per rank at $ranks ranks, as the tracking allocator measured them; the dot is the stage's formula (ZeRO-1: 8 + 8/N bytes per parameter, ...; lesson 10's mixed precision on ZeRO-1, 2 and 3, bf16z1-3: 4 + 12/N, 2 + 14/N and 16/N, its fp32 master shard stacked on top), which padded shards exceed by a few bytes."
    figure memory_ranks "Model state per rank as ranks grow: DDP stays flat, each ZeRO stage shards more of it."
    for lesson in "${memory_lessons[@]}"; do
        figure "memory_step_$lesson" "$lesson: what rank 0 keeps allocated during one step, by kind (from the trace's memory counter; token shards, host memory on any device, left out). Every lesson allocates at set-up and keeps it, so the bands are flat: their heights are the stage's savings. In ZeRO-3 the black line is the parameters a unit has gathered and is using, inside the communication memory that holds the gather buffers; in lesson 10 it is the unit widened from bf16 to fp32 for the model to compute with. In lesson 10 the parameters band is bf16 (2 bytes each) and the optimizer band holds the fp32 master beside AdamW's m and v."
    done
    figure shard_layout "ZeRO's shard plan (07_zero1 plan): each unit padded up to a multiple of the ranks and cut into one equal shard per rank."
    table html "$runs/zero_memory.csv" $memory_cols
    echo '<h2 id="collectives">Collectives (lesson 01)</h2>'
    figure busbw "Bus bandwidth per operation and message size, $ranks ranks; ring is lesson 01's own all-reduce."
    table html "$runs/collectives.csv" $busbw_cols
    [ "$cluster" = 0 ] || cluster_html
    echo '</body></html>'
}
publish "$report/index.html" index_html

summary_md() {
    echo "# dtc course report"
    echo
    echo "Run flags: \`$config\`, $ranks ranks. Made $made. The page with every plot inline: \`index.html\`."
    echo
    echo "## Every strategy side by side"
    echo
    table md "$data/comparison_table.csv" $comparison_cols
    echo
    echo "![lesson 00's training and validation loss](plots/loss_00_single_device.svg)"
    echo "![loss curves](plots/loss.svg) ![distance from lesson 00](plots/loss_drift.svg)"
    echo
    if [ -f "$data/yours.csv" ]; then
        echo "## Your runs beside the reference"
        echo
        table md "$data/yours.csv" $yours_cols
        echo
        echo "![your loss over the reference's](plots/loss_yours.svg)"
        for lesson in "${yours_timelines[@]}"; do
            echo "![reference $lesson](plots/timeline_$lesson.svg) ![your $lesson](plots/timeline_${lesson}_yours.svg)"
        done
        echo
    fi
    echo "## Where the step time goes (traced runs, mean over ranks)"
    echo
    table md "$data/breakdown.csv" $breakdown_cols
    echo
    echo "![step-time breakdown](plots/breakdown.svg)"
    echo
    echo "## Bucket size (lesson 05)"
    echo
    table md "$data/bucket_sweep.csv" $sweep_cols
    echo
    echo "![bucket sweep](plots/bucket_sweep.svg)"
    echo
    echo "## Memory per rank: DDP and ZeRO-1/2/3"
    echo
    table md "$runs/zero_memory.csv" $memory_cols
    echo
    echo "![memory per rank](plots/memory.svg) ![memory against ranks](plots/memory_ranks.svg)"
    for lesson in "${memory_lessons[@]}"; do echo "![memory over one step of $lesson](plots/memory_step_$lesson.svg)"; done
    echo "![shard plan](plots/shard_layout.svg)"
    echo
    echo "## Collectives (lesson 01): ![busbw](plots/busbw.svg)"
    if [ "$cluster" = 1 ]; then
        echo
        echo "## Across a network: two hosts on this machine ($cluster_shape shape)"
        echo
        table md "$data/cluster_table.csv" $cluster_cols
        echo
        echo "![step time across a network](plots/cluster.svg) ![all-reduce across a link](plots/cluster_busbw.svg)"
    fi
}
publish "$report/summary.md" summary_md
echo "report: $report/index.html, $report/summary.md ($(find "$plots" -name '*.svg' | wc -l) plots)"
