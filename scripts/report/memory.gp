# Model state per rank (parameters, gradients, AdamW m and v, and mixed precision's fp32
# master) of DDP, the ZeRO stages and lesson 10 on each of them (bf16z1-3), measured by the
# tracking allocator at the course's rank count, each bar with its formula (16, 8 + 8/N,
# 4 + 12/N, 16/N; 4 + 12/N, 2 + 14/N, 16/N bytes per parameter) as a mark: padding puts a
# bar above it.
load "scripts/report/style.gp"
set title sprintf("Model state per rank at %s ranks: measured, and the formula", ranks)
set ylabel "MB per rank (1 MB = 10^6 bytes)"
set style data histograms
set style histogram rowstacked
set style fill solid 0.9 border lc rgb "#444444"
set boxwidth 0.6
set yrange [0:*]
plot data using "params_mb":xtic(1) title "parameters" lt 1, \
     "" using "grads_mb" title "gradients" lt 2, \
     "" using "adam_mb" title "AdamW m and v" lt 3, \
     "" using "master_mb" title "fp32 master (lesson 10)" lt 4, \
     "" using 0:"formula_mb" with points pt 7 ps 1.5 lc rgb "#000000" title "formula"
