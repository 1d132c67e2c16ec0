#!/usr/bin/env bash
# The fixed-sizes table of lesson 01 (backend x workers x size -> seconds) for a run of world sizes:
#   scripts/collectives_table.sh [RANKS...]     (default: 2 4)
# More ranks than cores oversubscribes the CPU and the times stop meaning anything
# about the network or memory: see docs/01_collectives.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
for n in "$@"; do
    [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] || { echo "collectives_table: '$n' is not a count of ranks (2 or more)" >&2; exit 2; }
done
ranks=("$@")
[ ${#ranks[@]} -eq 0 ] && ranks=(2 4)
cores=$(nproc)
first=1
for n in "${ranks[@]}"; do
    [ "$n" -gt "$cores" ] && echo "note: $n ranks on $cores cores (oversubscribed)" >&2
    if [ $first -eq 1 ]; then
        mpiexec -n "$n" build/solutions/01_collectives --table
        first=0
    else
        mpiexec -n "$n" build/solutions/01_collectives --table | tail -n +3
    fi
done
