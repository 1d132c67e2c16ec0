#!/usr/bin/env bash
# Prints the lesson folder name for a lesson number: 00 -> 00_single_device.
set -euo pipefail
number=${1:?usage: lesson_binary.sh NN}
matches=(lessons/"$number"_*)
if [ ! -d "${matches[0]}" ]; then
    echo "no lesson numbered '$number' (have: $(ls lessons | tr '\n' ' '))" >&2
    exit 2
fi
basename "${matches[0]}"
