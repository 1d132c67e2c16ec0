# Your lessons' training loss (scripts/run_course.sh --student) over the reference's: one
# colour per lesson, the reference solid, yours dashed. refs, yours, names: space-separated.
load "scripts/report/style.gp"
set title "Training loss per step: yours (dashed) over the reference (solid)"
set xlabel "optimizer step"
set ylabel "training loss (cross-entropy, nats)"
plot for [i = 1:words(refs)] word(refs, i) using "step":"loss" with lines lt i title word(names, i), \
     for [i = 1:words(yours)] word(yours, i) using "step":"loss" with lines lt i dt 2 title word(names, i) . " (yours)"
