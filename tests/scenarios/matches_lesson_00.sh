#!/usr/bin/env bash
# A data-parallel lesson against lesson 00 on the same global batch: 8 steps of the
# reference preset with validation at 4 and 8, lesson 00 on one device and LESSON at RANKS
# ranks. Every rank must end with the same parameters, and the two runs' loss, grad norm
# and validation loss must agree within the course's tolerance (tests/tolerance.sh); for
# lesson 10, which computes in bf16, the loss and validation loss within the drift a bf16
# run may show against an fp32 one (DRIFT_RTOL there).
#
#   tests/scenarios/matches_lesson_00.sh [--env FILE] [--both "FLAGS"] LESSON RANKS [FLAGS...]
#
# --both: flags for both runs (--batch 6 at 3 ranks); FLAGS go to LESSON's run alone.
# --env: a file sourced first (a cluster's launch settings, written by scripts/cluster.sh).
# Exit 0 when they agree; otherwise what differs.
set -eu
cd "$(dirname "$0")/../.."
source scripts/summary_lib.sh # header_help
usage() { header_help "$0" >&2; exit 2; }
env_file="" both=""
while [ $# -gt 0 ]; do
    case $1 in
    --env) env_file=${2:?--env needs a file}; shift 2 ;;
    --both) both=${2?--both needs flags}; shift 2 ;;
    *) break ;;
    esac
done
[ $# -ge 2 ] || usage
lesson=$1 ranks=$2
shift 2
# shellcheck disable=SC1090 # a cluster's own settings
[ -z "$env_file" ] || source "$env_file"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
read -r -a run <<<"--config reference --steps 8 --val-every 4 $both"
build/solutions/00_single_device train "${run[@]}" --csv "$dir/one.csv" >/dev/null
# the job's own status is not asked for: across hosts MPICH's clean-up may stall after the
# run (docs/cluster.md); the line below is printed once every step is done
timeout 300 mpiexec -n "$ranks" "build/solutions/$lesson" train "${run[@]}" "$@" --step-timeout 120 \
    --csv "$dir/many.csv" | grep "parameters identical on all $ranks rank(s)"
drift=()
[[ $lesson != 10_* ]] || drift=(--drift)
tests/scenarios/within_tolerance.sh "${drift[@]}" "$dir/one.csv" "$dir/many.csv" "$lesson at $ranks"
