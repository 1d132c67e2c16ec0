# Lesson 05's bucket-size sweep: one run per size; the largest size is one bucket. The bars
# are one standard deviation of the step time over the run's measured steps either side.
load "scripts/report/style.gp"
set title "Bucket size against step time (lesson 05, bucketed DDP)"
set xlabel "bucket size (MB of gradients, log scale)"
set ylabel "milliseconds per step"
set logscale x
set yrange [0:*]
plot data using "bucket_mb":"step_ms":"step_std_ms" with yerrorlines pt 7 title "step time (mean, +/- 1 std)", \
     "" using "bucket_mb":"comm_ms" with linespoints pt 5 title "time blocked in communication"
