#!/usr/bin/env bash
# The step model carried to scale (docs/scale.md, "Carried to scale"): GPT-2 124M and 1.5B on a
# stated system of 8 GPUs a node, N = 8 ... 1024, every strategy, from tools/predict.py scale.
# Writes into OUT (default runs/scale): the shapes' plans (05_bucketed_ddp plan at several
# bucket sizes), one CSV per shape and bucket size, and a plot per shape (scale_124m.png,
# scale_1558m.png; --svg for SVG). Needs `make` (for 05_bucketed_ddp) and gnuplot.
#
#   scripts/scale_figures.sh [--out DIR] [--svg]
#
# The stated system, one H100 SXM5 a rank (NVIDIA's H100 data sheet: 989 TFLOP/s dense bf16,
# 3.35 TB/s of HBM3, NVLink 900 GB/s a GPU, both ways together; DGX H100: a 400 Gbit/s
# ConnectX-7 port a GPU): 40% of the bf16 peak achieved (an assumption), NVLink at 450 GB/s
# each way with 2 us a ring step (assumed), the network at 50 GB/s a rank with 5 us (assumed);
# 8 sequences of 1024 tokens a rank and step.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # from_caller
out=runs/scale format=png
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$(from_caller "${2:?scale_figures: --out needs a folder}"); shift 2 ;;
    --svg) format=svg; shift ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale_figures: unknown argument $1 (--out DIR, --svg)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
system=(--tokens 8192 --seq 1024 --tflops 395.6 --memory-gbps 3350 --node-link "450,2" --network "50,5")
declare -A shapes=([124m]="--config gpt2 --vocab 50257" [1558m]="--config gpt2 --vocab 50257 --layers 48 --channels 1600 --heads 25")
declare -A names=([124m]="GPT-2 124M" [1558m]="GPT-2 1.5B")
for shape in 124m 1558m; do
    for cap in 25 100 300 1000; do
        # shellcheck disable=SC2086 # the flags are words
        build/solutions/05_bucketed_ddp plan ${shapes[$shape]} --bucket-mb "$cap" --csv "$out/plan_${shape}_$cap.csv" >/dev/null
        tools/predict.py scale --units "$out/plan_${shape}_$cap.csv" "${system[@]}" --csv "$out/scale_${shape}_$cap.csv" \
            >/dev/null
    done
    extra=()
    [ "$format" = png ] && extra=(-e "png=1")
    gnuplot "${extra[@]}" -e "data='$out/scale_${shape}_25.csv'; out='$out/scale_$shape.$format'" \
        -e "name='${names[$shape]}'; strategies='naive flat overlap bucketed zero1 zero2 zero3 mixed'" \
        scripts/report/scale.gp
    echo "$out/scale_$shape.$format: ${names[$shape]}; tables in $out/scale_${shape}_*.csv (the bucket size last)"
done
