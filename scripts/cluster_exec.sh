#!/usr/bin/env bash
# MPICH's launcher (hydra, as rsh) calls this to start a command on a host of a cluster made
# by scripts/cluster.sh: `cluster_exec.sh ADDRESS COMMAND`. The command runs in the host's
# network namespace, under the host's own name, as a remote shell would run it there, with
# a monotonic clock of its own (host i's reads 1000 i seconds ahead of the machine's), as
# every machine's starts at its own boot. MPI
# between hosts is told to use UCX's TCP transport (UCX_TLS=self,tcp) unless the caller set
# UCX_TLS: on one kernel, UCX would otherwise see the other hosts' memory and share it.
set -euo pipefail
address=${1:?usage: cluster_exec.sh ADDRESS COMMAND}
shift
for hostfile in /run/dtc-cluster/*/hosts; do
    [ -f "$hostfile" ] || continue
    index=$(grep -nx -F "$address" "$hostfile" | cut -d: -f1 || true)
    if [ -n "$index" ]; then
        name=$(basename "$(dirname "$hostfile")")
        host=$name-host$index
        exec ip netns exec "$host" unshare --uts --time --monotonic $((1000 * index)) sh -c 'hostname "$1" && export UCX_TLS="${UCX_TLS:-self,tcp}" &&
            export UCX_NET_DEVICES="${UCX_NET_DEVICES:-eth0}" && exec sh -c "$2"' sh "$host" "$*"
    fi
done
echo "cluster_exec: no cluster made by scripts/cluster.sh has a host at '$address'" >&2
exit 255
