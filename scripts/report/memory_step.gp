# One step of one lesson, rank 0: the tracking allocator's bytes in use by kind, stacked
# (analyze_traces --timeline writes them from the trace's memory counter), and for ZeRO-3 the
# parameters a unit has gathered and is using (lesson 10: widened from bf16), drawn inside
# the communication band that holds their buffers. Token shards (data) are left out: host
# memory on any device, the same for every lesson. Variables: data, name, step, ymax (the same for every lesson drawn),
# gathered (1 when the lesson hands the model its parameters through the acquire hook, 0 when
# not: no line then), in_use (what those parameters are: "gathered", lesson 10's "widened").
load "scripts/report/style.gp"
set title sprintf("Memory in use on rank 0 over one step of %s (step %s)", name, step)
set xlabel "milliseconds from the start of the step"
set ylabel "MB (1 MB = 10^6 bytes)"
set yrange [0:ymax]
set style fill solid 0.85 noborder
params = 'column("parameters_mb")'
grads = params . ' + column("gradients_mb")'
adam = grads . ' + column("adamw_m_mb") + column("adamw_v_mb") + column("master_weights_mb")'
acts = adam . ' + column("activations_mb") + column("backward_scratch_mb")'
comm = acts . ' + column("communication_mb") + column("other_mb")'
bands = 'data using "time_ms":(0):(@params) with filledcurves lt 1 title "parameters", \
    "" using "time_ms":(@params):(@grads) with filledcurves lt 2 title "gradients", \
    "" using "time_ms":(@grads):(@adam) with filledcurves lt 3 title "AdamW m and v (and fp32 master)", \
    "" using "time_ms":(@adam):(@acts) with filledcurves lt 5 title "activations and scratch", \
    "" using "time_ms":(@acts):(@comm) with filledcurves lt 8 title "communication and other"'
if (gathered) {
    plot @bands, "" using "time_ms":(@acts + column("gathered_mb")) with lines lw 2 lc rgb "#000000" \
        title sprintf("%s parameters in use", in_use)
} else {
    plot @bands
}
