#!/usr/bin/env bash
# A cluster on this machine, from real parts: N hosts, each a Linux network namespace with
# its own network stack, address, host name and monotonic clock, joined by a switch (a bridge, in a namespace
# of its own) through links shaped to a bandwidth. MPI traffic between hosts goes over TCP
# on those links, as between machines; ranks on the same host share memory, as on one.
#
#   scripts/cluster.sh up [--hosts N] [--link-gbit X] [--name NAME]   (root)
#   scripts/cluster.sh down [--name NAME]                            (root)
#   scripts/cluster.sh status [--name NAME]              (the bytes: root)
#
#   --hosts N       hosts, 2 to 16 [2]
#   --link-gbit X   each host's link, both directions, in Gbit/s (0.01 to 100) [1]
#   --name NAME     the cluster's name: a letter, then up to 9 letters or digits [dtc]
#
# Then, in any shell:
#   source /run/dtc-cluster/NAME/env
#   mpiexec -n 2 build/solutions/05_bucketed_ddp train --config course
# The env file points MPICH's launcher (hydra) at the hostfile /run/dtc-cluster/NAME/hosts,
# one line per host, and at scripts/cluster_exec.sh, which starts hydra's proxy inside the
# host's namespace; ranks go to hosts in turn (mpiexec -ppn K: K ranks per host). Between
# hosts, MPI uses UCX's TCP transport on the host's link (UCX_TLS=self,tcp: on one kernel
# UCX would otherwise find the other hosts' memory and share it); within a host, MPICH's
# shared memory.
#
# Each link is shaped by a token bucket (tc's tbf) on both of its ends. No latency is added:
# the kernel here has no netem, the queueing discipline that delays packets. Hosts are
# addressed in 198.18.0.0/15 (set aside for network benchmarks, RFC 2544), one /24 per
# cluster; the namespaces have no route anywhere else, so no traffic leaves the machine.
# `up` is idempotent (run again, it reshapes the links or rebuilds a cluster of another
# size); `down` removes the namespaces, the links and /run/dtc-cluster/NAME. `status` says
# what is up, with the bytes each link has carried (reading them enters the namespaces: as
# root only; any user sees the hosts).
set -euo pipefail
source "$(dirname "$0")/summary_lib.sh" # header_help
usage() { header_help "$0"; }

action="" hosts=2 gbit=1 name=dtc
while [ $# -gt 0 ]; do
    case $1 in
        up | down | status) action=$1 ;;
        --hosts) hosts=${2:-} && shift ;;
        --link-gbit) gbit=${2:-} && shift ;;
        --name) name=${2:-} && shift ;;
        -h | --help) usage && exit 0 ;;
        *) echo "cluster: unknown argument '$1' (see --help)" >&2 && exit 2 ;;
    esac
    shift
done
fail() { echo "cluster: $*" >&2; exit 2; }
[ -n "$action" ] || fail "say up, down or status (see --help)"
[[ $hosts =~ ^[0-9]+$ ]] && [ "$hosts" -ge 2 ] && [ "$hosts" -le 16 ] || fail "--hosts: '$hosts' is not a count from 2 to 16"
[[ $gbit =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v g="$gbit" 'BEGIN { exit !(g >= 0.01 && g <= 100) }' ||
    fail "--link-gbit: '$gbit' is not a rate from 0.01 to 100 Gbit/s"
[[ $name =~ ^[a-z][a-z0-9]{0,9}$ ]] || fail "--name: '$name' is not a letter then up to 9 letters or digits"
[ "$action" = status ] || [ "$(id -u)" = 0 ] || fail "$action makes network namespaces: run it as root"
PATH=$PATH:/usr/sbin:/sbin # where Debian puts ip and tc, off a user's PATH
for command in ip tc; do
    command -v "$command" >/dev/null || fail "$command is missing: apt-get install iproute2, or source the" \
        "offline/env.sh of a copy from scripts/pack_offline.sh, which brings it"
done

state=/run/dtc-cluster/$name
switch=$name-switch
control=$name-ctl # the launching side's link to the switch: hydra's proxies call back on it
course=$(cd "$(dirname "$0")/.." && pwd)

# The /24 of 198.18.0.0/15 this cluster has, or the first no address of this machine is in.
subnet() {
    if [ -f "$state/subnet" ]; then
        cat "$state/subnet"
        return
    fi
    local k used
    used=$(ip -o -4 addr show | awk '{ print $4 }')
    for k in $(seq 0 511); do
        local net="198.$((18 + k / 256)).$((k % 256))"
        grep -q "^$net\." <<<"$used" || { echo "$net" && return; }
    done
    fail "every /24 of 198.18.0.0/15 is in use on this machine"
}

# The links' token bucket, in bytes: 1 ms at the rate, 64 KB at least.
burst_bytes() { awk -v g="$gbit" 'BEGIN { b = g * 1e9 / 8 / 1000; printf "%d\n", (b < 65536 ? 65536 : b) }'; }

# A link of `gbit` on both ends of host i's cable: tbf with the bucket of burst_bytes.
shape() {
    local i=$1 burst
    burst=$(burst_bytes)
    ip netns exec "$switch" tc qdisc replace dev "$name-h$i" root tbf rate "${gbit}gbit" burst "$burst" latency 20ms
    ip netns exec "$name-host$i" tc qdisc replace dev eth0 root tbf rate "${gbit}gbit" burst "$burst" latency 20ms
}

down() {
    local ns
    for ns in $(ip netns list | awk '{ print $1 }' | grep -E "^$name-(host[0-9]+|switch)$" || true); do
        ip netns delete "$ns"
    done
    ip link delete "$control" 2>/dev/null || true # gone with the switch's end, unless it was left alone
    rm -rf "$state"
}

up() {
    if [ -f "$state/hosts" ] && [ "$(wc -l <"$state/hosts")" -eq "$hosts" ]; then
        for i in $(seq 1 "$hosts"); do shape "$i"; done
        echo "$gbit" >"$state/link-gbit"
        burst_bytes >"$state/link-burst"
        echo "cluster $name: already up with $hosts hosts; links now $gbit Gbit/s"
        return
    fi
    local net
    net=$(subnet)
    down
    mkdir -p "$state"
    echo "$net" >"$state/subnet"
    ip netns add "$switch"
    ip netns exec "$switch" ip link add br0 type bridge
    ip netns exec "$switch" ip link set br0 up
    ip link add "$control" type veth peer name ctl netns "$switch"
    ip netns exec "$switch" ip link set ctl master br0 up
    ip addr add "$net.254/24" dev "$control"
    ip link set "$control" up
    : >"$state/hosts.new"
    for i in $(seq 1 "$hosts"); do
        local ns=$name-host$i
        ip netns add "$ns"
        ip link add "$name-h$i" netns "$switch" type veth peer name eth0 netns "$ns"
        ip netns exec "$switch" ip link set "$name-h$i" master br0 up
        ip netns exec "$ns" ip addr add "$net.$i/24" dev eth0
        ip netns exec "$ns" ip link set eth0 up
        ip netns exec "$ns" ip link set lo up
        shape "$i"
        echo "$net.$i" >>"$state/hosts.new"
    done
    echo "$gbit" >"$state/link-gbit"
    burst_bytes >"$state/link-burst"
    cat >"$state/env" <<EOF
# MPICH's launcher (hydra) starts ranks on cluster $name's hosts: source this file, then mpiexec.
export HYDRA_HOST_FILE=$state/hosts
export HYDRA_LAUNCHER=rsh
export HYDRA_LAUNCHER_EXEC=$course/scripts/cluster_exec.sh
export HYDRA_IFACE=$control
EOF
    mv "$state/hosts.new" "$state/hosts" # last: a cluster with a hostfile is a whole one
    echo "cluster $name: $hosts hosts ($net.1 to $net.$hosts), links of $gbit Gbit/s (tbf, no added latency)"
    echo "  source $state/env, then: mpiexec -n $hosts build/solutions/05_bucketed_ddp train --config course"
}

status() {
    if [ ! -f "$state/hosts" ]; then
        echo "cluster $name: down"
        return 3
    fi
    echo "cluster $name: $(wc -l <"$state/hosts") hosts, links of $(cat "$state/link-gbit") Gbit/s (tbf, no added latency)"
    echo "  hostfile $state/hosts; source $state/env to launch on it"
    local i=0 address sent received
    if [ "$(id -u)" != 0 ]; then
        awk -v name="$name" '{ print "  " name "-host" NR "  " $1 }' "$state/hosts"
        echo "  (the bytes each link carried: run it as root, which can enter the hosts' namespaces)"
        return 0
    fi
    while read -r address; do
        i=$((i + 1))
        sent=$(ip netns exec "$name-host$i" tc -s qdisc show dev eth0 | awk '/Sent/ { print $2; exit }')
        received=$(ip netns exec "$switch" tc -s qdisc show dev "$name-h$i" | awk '/Sent/ { print $2; exit }')
        echo "  $name-host$i  $address  sent ${sent:-?} bytes, received ${received:-?} bytes"
    done <"$state/hosts"
}

"$action"
