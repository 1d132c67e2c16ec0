#!/usr/bin/env bash
# scripts/pack_offline.sh's archive, unpacked in a clean folder, runs lesson 00 and lesson 05
# at 2 ranks, and the cluster's ip and tc, with this machine's MPI, OpenBLAS, Criterion and
# iproute2 hidden (every file of their Debian packages, and the loader's cache, masked in a
# bubblewrap sandbox): what it needs, it brings. Prints what it did; exit status 1 on the
# first thing that does not hold.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

scripts/pack_offline.sh --out "$work/dtc.tar.gz" --data shards
scripts/pack_offline.sh --out "$work/dtc.tar.gz" 2>&1 && { echo "an existing archive was overwritten"; exit 1; }
mkdir "$work/node" && tar -xzf "$work/dtc.tar.gz" -C "$work/node"

# The packages that gave the copy its own libraries and its launcher, masked file by file.
packages=$(for library in "$work"/node/dtc/offline/lib/*.so.*; do
    dpkg -S "$(basename "$library")" 2>/dev/null | head -n 1 | cut -d: -f1
done | sort -u)
masks=(--ro-bind /dev/null /etc/ld.so.cache)
for package in $packages mpich iproute2; do
    while read -r path; do
        [ -f "$path" ] && masks+=(--ro-bind /dev/null "$(readlink -f "$path")")
    done < <(dpkg -L "$package")
done
echo "masked: $(echo $packages mpich iproute2 | wc -w) packages, $((${#masks[@]} / 3)) files"

bwrap --bind / / --dev /dev --proc /proc "${masks[@]}" bash -euo pipefail -c '
    cd "$1/node/dtc"
    source offline/env.sh
    [ "$(command -v mpiexec)" = "$PWD/offline/bin/mpiexec" ] || { echo "mpiexec is not the copy'\''s own"; exit 1; }
    for tool in ip tc; do
        [ "$(PATH=$PATH:/usr/sbin:/sbin command -v $tool)" = "$PWD/offline/bin/$tool" ] ||
            { echo "$tool is not the copy'\''s own"; exit 1; }
    done
    ip -V && tc -V
    build/solutions/00_single_device train --config tiny --steps 2 --val-every 0 --gen-tokens 0 | tail -n 1
    mpiexec -n 2 build/solutions/05_bucketed_ddp train --config tiny --steps 2 --val-every 0 --gen-tokens 0 | tail -n 1
' bash "$work"
