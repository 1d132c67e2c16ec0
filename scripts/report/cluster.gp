# The data-parallel and ZeRO lessons at 2 ranks on shared memory and across hosts linked at
# each rate (scripts/bench_cluster.sh): step time per strategy, a bar per network, and inside
# each bar, hatched, the part of the step blocked in communication.
load "scripts/report/style.gp"
set title "Step time on shared memory and across two hosts (2 ranks)"
set ylabel "milliseconds per step"
n = words(networks)
width = 0.8 / n
x(i) = $0 + (i - (n + 1) / 2.0) * width
set boxwidth width
set style fill solid 0.9 border lc rgb "#444444"
set xtics () rotate by -30 left
do for [k = 1:words(strategies)] { set xtics add (word(strategies, k) k - 1) }
set xrange [-0.6:words(strategies) - 0.4]
set yrange [0:*]
plot for [i = 1:n] data using (x(i)):(column(word(networks, i) . "_step_ms")) with boxes \
         title word(networks, i) . ": step" lt i, \
     for [i = 1:n] data using (x(i)):(column(word(networks, i) . "_comm_ms")) with boxes fs pattern 2 \
         lc rgb "#222222" title (i == 1 ? "in communication" : "")
