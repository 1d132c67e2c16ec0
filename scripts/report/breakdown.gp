# Where one step's time goes, per strategy, from the traces (mean over ranks): compute,
# communication with no compute beside it, communication beside compute, idle.
load "scripts/report/style.gp"
set title "Step-time breakdown per strategy (from the traces, mean over ranks)"
set ylabel "milliseconds per step"
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb "#444444"
set boxwidth 0.7
set xtics rotate by -30 left
set yrange [0:*]
plot data using "compute_ms":xtic(1) title "compute" lt 1, \
     "" using "comm_exposed_ms" title "exposed communication" lt 4, \
     "" using "comm_overlap_ms" title "overlapped communication" lt 3, \
     "" using "idle_ms" title "idle" lt 8
