# How far each strategy's loss is from lesson 00's at the same step (log scale): float sums in
# another order agree to rounding at first, and the difference grows as training goes on.
# Points, not lines: a step where the two agree exactly has no point (no log of 0), and a line
# would join its neighbours across it as if the distance were in between.
load "scripts/report/style.gp"
set title "Distance from lesson 00's loss, per step"
set xlabel "optimizer step"
set ylabel "|loss - lesson 00 loss| (log scale)"
set logscale y
set format y "%.0e"
plot for [i = 1:words(names)] data using "step":word(names, i) with points pt (i % 7) + 1 ps 0.5 lt i + 1 title word(names, i)
