# The step model carried to many ranks (tools/predict.py scale --csv): tokens/s per rank against
# the rank count, a line per strategy, and the one rank alone (compute only) as the roof.
# Variables: data, out, name (the shape and the stated system, for the title), strategies
# (words); png=1 draws a PNG (for docs/) instead. One rank alone, with nothing to send, makes
# a rank's tokens/s over its efficiency, in every row.
load "scripts/report/style.gp"
if (exists("png")) { set terminal pngcairo size 900,480 font "sans,11" background "#ffffff" noenhanced; set output out }
stats data using (column("tokens_per_s_per_rank") / column("efficiency")) name "ALONE" nooutput
alone = ALONE_max
set title sprintf("%s: tokens/s per rank as ranks grow (the step model)", name)
set xlabel "ranks"
set ylabel "tokens/s per rank"
set logscale x 2
set yrange [0:*]
set format x "%.0f"
plot for [i = 1:words(strategies)] data using (strcol("strategy") eq word(strategies, i) ? column("ranks") : NaN):"tokens_per_s_per_rank" \
         with linespoints pt 7 ps 0.6 title word(strategies, i), \
     alone title "one rank alone (compute only)" with lines dt 2 lc rgb "#444444"
