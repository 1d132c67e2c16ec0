#!/usr/bin/env bash
# The pictures in the lesson docs and docs/traces.md: headless-Chromium screenshots of the
# course report's plots (from a real `make run`), as PNG files in docs/images/: lesson 00's
# loss curve, one step's timeline per lesson, the step-time breakdown, and the model state
# per rank against the ZeRO formulas.
#
#   scripts/docs_images.sh [REPORT_DIR]      (default reports)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
report=${1:-reports}
chromium=${CHROMIUM:-chromium}
command -v "$chromium" >/dev/null || { echo "docs_images: no $chromium (make setup installs it)" >&2; exit 1; }
mkdir -p docs/images
timelines=()
for lesson in lessons/*/; do
    lesson=$(basename "$lesson")
    [ "$lesson" = 01_collectives ] || timelines+=("timeline_$lesson")
done
for name in loss_00_single_device breakdown memory memory_ranks shard_layout "${timelines[@]}"; do
    svg=$report/plots/$name.svg
    [ -f "$svg" ] || { echo "docs_images: $svg is missing (run make run first)" >&2; exit 1; }
    size=$(awk -F'"' '/^ width=/ { w = $2 } /^ width=.*height=/ { h = $4 } END { print w "," h }' "$svg")
    "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size="$size" \
        --screenshot="$PWD/docs/images/$name.png" "file://$PWD/$svg" 2>/dev/null
    echo "docs/images/$name.png ($size)"
done
