# Lesson 05's bucket-size sweep: one run per size; the largest size is one bucket.
load "scripts/report/style.gp"
set title "Bucket size against step time (lesson 05, bucketed DDP)"
set xlabel "bucket size (MB of gradients, log scale)"
set ylabel "milliseconds per step"
set logscale x
set yrange [0:*]
plot data using "bucket_mb":"step_ms" with linespoints pt 7 title "step time", \
     "" using "bucket_mb":"comm_ms" with linespoints pt 5 title "time blocked in communication"
