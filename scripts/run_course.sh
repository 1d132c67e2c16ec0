#!/usr/bin/env bash
# make run: the course, end to end, on the course configuration. Writes runs/.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p runs
echo "== lesson 00: single-device training (course config) =="
build/solutions/00_single_device train --config course --csv runs/00_single_device.csv \
    --save runs/00_single_device.bin
echo
echo "== lesson 00: profile =="
build/solutions/00_single_device profile --config course --mem-limit 64
echo
echo "per-step figures: runs/00_single_device.csv; checkpoint: runs/00_single_device.bin"
