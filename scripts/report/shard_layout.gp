# ZeRO's shard plan (07_zero1 plan --csv): every unit cut into one shard per rank, each row a
# unit, each box the part of it one rank owns (its place in the unit, as a fraction of the
# padded unit), padding in grey; each row's label says how much of the unit is padding.
load "scripts/report/style.gp"
set terminal svg size 760,(150 + 34 * units) font "sans,12" background "#ffffff" noenhanced
set output out
set title sprintf("Shard plan over %d ranks: the part of each unit each rank owns", ranks)
set xlabel "position in the unit, as a fraction of its padded length"
set xrange [0:1]
set xtics 0, 0.25, 1
set yrange [-units + 0.5:0.5]
unit_label(dummy) = sprintf("unit %d: %d + %d padding", column("unit"), column("count"), column("padded") - column("count"))
set style fill solid 0.85 noborder
left(c) = column(c) / column("padded")
real_end(dummy) = (column("first") + column("real")) / column("padded")
shard_end(dummy) = (column("first") + column("shard_count")) / column("padded")
plot for [r = 0:ranks - 1] data using (column("rank") == r ? (left("first") + real_end(0)) / 2 : NaN):(-column("unit")):\
         ((real_end(0) - left("first")) / 2):(0.35):ytic(unit_label(0)) with boxxyerror lt r + 1 title sprintf("rank %d", r), \
     data using (column("padding") > 0 ? (real_end(0) + shard_end(0)) / 2 : NaN):(-column("unit")):\
         ((shard_end(0) - real_end(0)) / 2):(0.35) with boxxyerror lc rgb "#999999" title "padding"
