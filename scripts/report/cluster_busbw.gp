# Lesson 01's all-reduce at 2 ranks on shared memory and across each link (one file per
# network), beside each link's rate: the most a link carries, in the same units.
load "scripts/report/style.gp"
set title "All-reduce bus bandwidth across a link, 2 ranks (lesson 01)"
set xlabel "message size (log scale)"
set ylabel "bus bandwidth (GB/s, 1 GB = 10^9 bytes; log scale)"
set logscale x 2
set logscale y
set xtics 4
set format x "%.0b %BB"
plot for [i = 1:words(files)] word(files, i) using "size":"busbw_GBps" with linespoints pt 7 lt i \
         title word(names, i), \
     for [i = 1:words(links)] word(links, i) using "size":"link_GBps" with lines dt 2 lt (i + 1) \
         title word(link_names, i) . ": the link's rate"
