# Lesson 01's collective benchmark: bus bandwidth against message size, one file per operation.
load "scripts/report/style.gp"
set title sprintf("Collective bus bandwidth, %s ranks (lesson 01)", ranks)
set xlabel "message size (log scale)"
set ylabel "bus bandwidth (GB/s, 1 GB = 10^9 bytes)"
set logscale x 2
set xtics 4
set format x "%.0b %BB"
set yrange [0:*]
plot for [i = 1:words(files)] word(files, i) using "size":"busbw_GBps" with linespoints pt 7 title word(names, i)
