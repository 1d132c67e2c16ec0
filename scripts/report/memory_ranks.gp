# Model state per rank against the number of ranks, measured, one file per stage.
load "scripts/report/style.gp"
set title "Model state per rank against ranks (measured)"
set xlabel "ranks"
set ylabel "MB per rank (1 MB = 10^6 bytes)"
set xtics 1
set yrange [0:*]
plot for [i = 1:words(files)] word(files, i) using "ranks":"state_mb" with linespoints pt 7 title word(names, i)
