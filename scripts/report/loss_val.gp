# Lesson 00's loss per step on the training text, and on the validation text (a novel it
# never trains on) every --val-every steps. data: lesson 00's --csv.
load "scripts/report/style.gp"
set title "Lesson 00: training and validation loss"
set xlabel "optimizer step"
set ylabel "loss (cross-entropy per byte, nats)"
set yrange [0:*]
plot data using "step":"loss" with lines lt 1 title "training batch", \
     "" using "step":"val_loss" with points pt 7 ps 0.8 lt 4 title "validation"
