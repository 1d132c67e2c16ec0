# Training loss per step of every strategy, overlaid: the data-parallel lessons reproduce the
# single device, so the curves lie on top of each other. files and names: space-separated.
load "scripts/report/style.gp"
set title "Training loss per step (all strategies overlaid)"
set xlabel "optimizer step"
set ylabel "training loss (cross-entropy, nats)"
plot for [i = 1:words(files)] word(files, i) using "step":"loss" with lines dt i title word(names, i)
