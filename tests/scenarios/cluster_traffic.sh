#!/usr/bin/env bash
# On a cluster (scripts/cluster.sh): tests/comm_check's collectives at 2 ranks, one a host,
# printing how many ranks reached the other over TCP on eth0 (UCX's endpoint lines: 2 when
# both did), then the cluster's status (each host's link and the bytes it sent).
#
#   tests/scenarios/cluster_traffic.sh CLUSTER
set -u
cd "$(dirname "$0")/../.." || exit 2
source scripts/summary_lib.sh # header_help
[ $# -eq 1 ] || { header_help "$0" >&2; exit 2; }
# shellcheck disable=SC1090 # the cluster's own launch settings
source "/run/dtc-cluster/$1/env" || exit 2
UCX_LOG_LEVEL=info timeout 120 mpiexec -n 2 build/tests/comm_check 2>&1 | grep -c 'ep_cfg.*tag(tcp/eth0)'
scripts/cluster.sh status --name "$1"
