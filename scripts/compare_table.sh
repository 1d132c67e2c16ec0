#!/usr/bin/env bash
# Prints one comparison table from run summaries (the one-row CSVs that `train --summary`
# writes): strategy, ranks, step time, comm time, comm fraction, tokens/s, last loss; and
# writes the rows together as one CSV when --csv OUT is given. comm MB is per step per
# rank, an all-reduce of n bytes counted 2n; state MB is the model state per rank
# (parameters, gradients, AdamW m and v); a field a summary lacks shows as "-".
#
#   scripts/compare_table.sh [--csv OUT] SUMMARY.csv...
#
# OUT may not be one of the summaries; it is written whole or not at all.
set -euo pipefail
source "$(dirname "$0")/summary_lib.sh" # header_help, write_whole
help_if_asked "$@"
out=
if [ "${1:-}" = --csv ]; then
    out=${2:?compare_table: --csv needs a file}
    shift 2
fi
[ $# -gt 0 ] || { echo "usage: compare_table.sh [--csv OUT] SUMMARY.csv... (see --help)" >&2; exit 2; }
for summary in "$@"; do
    [ -f "$summary" ] || { echo "compare_table: $summary: no such file" >&2; exit 2; }
    [ -z "$out" ] || [ ! "$out" -ef "$summary" ] ||
        { echo "compare_table: --csv $out would overwrite the summary it reads; choose another path" >&2; exit 2; }
done
# The CSV takes the first summary's columns; each row is matched by column name, since a
# summary from elsewhere (PyTorch's) has fewer columns or another order.
rows_together() {
    awk -F, 'FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i
                        if (NR == 1) { n = split($0, names, ","); print }
                        next }
        { line = ""
          for (i = 1; i <= n; i++) line = line (i > 1 ? "," : "") ((names[i] in col) ? $col[names[i]] : "")
          print line }' "$@"
}
[ -z "$out" ] || write_whole "$out" rows_together "$@"

awk -F, '
    FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
    function get(name) { return (name in col) ? $col[name] : "" }
    function ms(name) { v = get(name); return v == "" ? "-" : sprintf("%.2f", 1e3 * v) }
    function fixed(name, fmt) { v = get(name); return v == "" ? "-" : sprintf(fmt, v) }
    function state() { if (get("params_mb") == "") return "-"
                       return sprintf("%.3f", get("params_mb") + get("grads_mb") + get("adam_mb") + get("master_mb")) }
    BEGIN { printf "%-20s %5s %14s %14s %10s %10s %11s %9s %9s %11s\n", "strategy", "ranks", "step ms (std)",
                   "comm ms (std)", "comm frac", "tokens/s", "last loss", "comm MB", "state MB", "peak RSS MB" }
    { printf "%-20s %5s %7s (%4s) %7s (%4s) %10s %10s %11s %9s %9s %11s\n", get("strategy"), get("ranks"),
             ms("step_time_avg_s"), ms("step_time_std_s"), ms("comm_time_avg_s"), ms("comm_time_std_s"),
             fixed("comm_frac_avg", "%.4f"), fixed("tokens_per_s", "%.0f"), fixed("last_loss", "%.6f"),
             fixed("comm_mb_per_step", "%.2f"), state(), fixed("peak_rss_mb", "%.1f") }
' "$@"
