# One optimizer step on every rank, from the trace: a row per track (compute, communication
# calls, waits), a box per event, each rank's time from the start of its own step.
load "scripts/report/style.gp"
set terminal svg size 760,(110 + 95 * ranks) font "sans,12" background "#ffffff" noenhanced
set output out
set title sprintf("One step of %s (step %s), per rank and track", name, step)
set xlabel "milliseconds from the start of the step"
set yrange [-(4 * ranks) + 0.5:0.5]
set ytics ()
set for [r = 0:ranks - 1] ytics add (sprintf("rank %d compute", r) -4 * r, sprintf("rank %d comm calls", r) -4 * r - 1, \
    sprintf("rank %d waits", r) -4 * r - 2)
set style fill solid 0.85 noborder
# tracks: the tracks that have events in this step (0 compute, 1 communication calls, 2 waits)
track_title(t) = t == 0 ? "compute" : t == 1 ? "communication call" : "wait"
track_colour(t) = t == 0 ? 1 : t == 1 ? 2 : 4
row(t) = -4 * column("rank") - t
box(t) = column("track") == t ? (column("start_ms") + column("end_ms")) / 2 : NaN

plot for [i = 1:words(tracks)] data using (box(int(word(tracks, i)))):(row(int(word(tracks, i)))):((column("end_ms") - column("start_ms")) / 2):(0.4) \
     with boxxyerror lt track_colour(int(word(tracks, i))) title track_title(int(word(tracks, i)))
