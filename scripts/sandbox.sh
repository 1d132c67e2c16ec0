#!/usr/bin/env bash
# Runs a command written by someone else (a student's lesson, or its build) in a sandbox:
#
#   scripts/sandbox.sh --root TREE [--write DIR]... [--uid UID] [--memory-mb N] [--cpu-s N]
#                      [--procs N] [--file-mb N] -- COMMAND...
#   scripts/sandbox.sh --claim PID          (prints a user id no other sandbox holds: PID holds it)
#   scripts/sandbox.sh --uid UID --end      (ends what is left of UID's processes and group; frees UID)
#
# The command sees only: the system's programs and libraries (/usr, read-only), TREE
# (read-only, at its own path, and its working directory), TREE/data/generated as the
# course's data (read-only), each --write DIR (read-write: where its outputs go), and its
# own empty /tmp and /dev/shm. No network (a network namespace of its own, loopback only),
# no view of other processes, no other files of the machine: not the course's expected
# values, not the instructor's files, not another submission.
#
# Run as root, the command runs as UID (without --uid, one it claims for itself: the first
# from 60000 that no running sandbox or grader holds; the grader claims one for each
# submission), with no capabilities, so the process limit counts its processes alone and no
# file it can see is its to change unless --write gave it. Two sandboxes never share a user
# id unless told to: ending one user's processes (--end) would end the other's. Limits, per
# process (prlimit): address space --memory-mb (0 = none: AddressSanitizer builds reserve terabytes of it),
# CPU seconds --cpu-s, processes --procs, largest file written --file-mb. The caller bounds
# the wall time (timeout). Where the kernel's control groups (v1: cpu, memory, pids) can be
# made, as root, every process of UID runs in a group of its own, dtc-sandbox/UID: its
# processes together get at most --procs processes and --memory-mb of memory, and an equal
# share of the CPU with every other group, however many processes it runs, so one
# submission that forks or spins without end does not slow another's runs. bubblewrap (Debian's bubblewrap) makes the namespaces: chosen
# because it is the sandbox Flatpak builds on, small, and needs no daemon.
set -euo pipefail
source "$(dirname "$0")/summary_lib.sh" # header_help
usage() { header_help "$0"; }

root="" uid="" memory_mb=8192 cpu_s=600 procs=256 file_mb=1024 writable=() end=0
groups=/sys/fs/cgroup
claims=/run/dtc-sandbox
[ -w /run ] || claims=${TMPDIR:-/tmp}/dtc-sandbox-$(id -u)

# A user id for process $1 alone: a folder claims it, taken over only when that process has
# ended. One claimer at a time (a lock on the claims' folder): two claimers reading the same
# folder at once could each take it for free, and then ending one's processes would end the
# other's.
claim() {
    local id holder owner=$1
    [[ $owner =~ ^[0-9]+$ ]] || { echo "sandbox: --claim needs the process id that holds the claim" >&2; return 2; }
    mkdir -p "$claims"
    exec 9>>"$claims/.lock"
    flock 9 # let go when this process ends, just after
    for id in $(seq 60000 60999); do
        if ! mkdir "$claims/$id" 2>/dev/null; then
            holder=$(cat "$claims/$id/pid" 2>/dev/null) || continue
            kill -0 "$holder" 2>/dev/null && continue
            rm -rf "${claims:?}/$id" && mkdir "$claims/$id" || continue
        fi
        echo "$owner" >"$claims/$id/pid"
        echo "$id"
        return 0
    done
    echo "sandbox: every user id from 60000 to 60999 is held" >&2
    return 1
}
while [ $# -gt 0 ]; do
    case $1 in
    --claim) claim "${2:-}"; exit ;;
    --end) end=1; shift ;;
    --root) root=${2:?sandbox: --root needs a folder}; shift 2 ;;
    --write) writable+=("${2:?sandbox: --write needs a folder}"); shift 2 ;;
    --uid) uid=${2:?sandbox: --uid needs a number}; shift 2 ;;
    --memory-mb) memory_mb=${2:?}; shift 2 ;;
    --cpu-s) cpu_s=${2:?}; shift 2 ;;
    --procs) procs=${2:?}; shift 2 ;;
    --file-mb) file_mb=${2:?}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) echo "sandbox: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

# The group of UID under each controller, when control groups v1 can be made here.
group_dirs() {
    local controller
    [ "$(id -u)" -eq 0 ] || return 0
    for controller in cpu memory pids; do
        [ -w "$groups/$controller" ] && [ -f "$groups/$controller/cgroup.procs" ] || return 0
    done
    for controller in cpu memory pids; do echo "$groups/$controller/dtc-sandbox/$uid"; done
}
if [ "$end" -eq 1 ]; then
    [ -n "$uid" ] || { echo "sandbox: --end needs --uid" >&2; exit 2; }
    for dir in $(group_dirs); do
        [ -d "$dir" ] || continue
        xargs -r kill -KILL <"$dir/cgroup.procs" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$dir" 2>/dev/null && break; sleep 0.1; done
    done
    [ "$(id -u)" -ne 0 ] || pkill -KILL -u "$uid" 2>/dev/null || true # left outside a group
    rm -rf "${claims:?}/$uid"
    exit 0
fi
[ $# -gt 0 ] || { echo "sandbox: no command given (see --help)" >&2; exit 2; }
[ -d "$root" ] || { echo "sandbox: --root $root is not a folder" >&2; exit 2; }
[ -n "$uid" ] || uid=$(claim $$) || exit 2 # held while this process, become the sandbox, runs
for n in "$uid" "$memory_mb" "$cpu_s" "$procs" "$file_mb"; do
    [[ $n =~ ^[0-9]+$ ]] || { echo "sandbox: '$n' is not a whole number" >&2; exit 2; }
done
command -v bwrap >/dev/null || { echo "sandbox: bwrap is missing (make setup installs bubblewrap)" >&2; exit 2; }
root=$(realpath "$root")

# The system, read-only; Debian's /lib, /bin and /sbin are links into /usr. Of /sys, the CPUs'
# topology (MPI's hwloc reads it) and an empty list of network devices (UCX reads one): without
# them each rank prints an error line into the student's feedback, and the host's devices
# would list links the sandbox's network cannot reach.
view=(--ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin
    --symlink usr/sbin /sbin --ro-bind /etc/alternatives /etc/alternatives
    --ro-bind /etc/ld.so.cache /etc/ld.so.cache --dev /dev --proc /proc
    --ro-bind /sys/devices/system/cpu /sys/devices/system/cpu --dir /sys/class/net
    --size $((512 << 20)) --tmpfs /tmp --size $((2048 << 20)) --tmpfs /dev/shm
    --ro-bind "$root" "$root")
# The course's data, when the tree has an empty place for it; never the expected values.
if [ -d data/generated ] && [ -d "$root/data/generated" ] && [ "$(realpath data/generated)" != "$root/data/generated" ]; then
    view+=(--ro-bind "$(realpath data/generated)" "$root/data/generated")
fi
[ ! -d "$root/tests/expected" ] || view+=(--tmpfs "$root/tests/expected")
for dir in "${writable[@]}"; do
    [ -d "$dir" ] || { echo "sandbox: --write $dir is not a folder" >&2; exit 2; }
    dir=$(realpath "$dir")
    [ "$(id -u)" -ne 0 ] || chown "$uid" "$dir"
    view+=(--bind "$dir" "$dir")
done

# This shell enters UID's groups; the sandbox it becomes, and all its processes, stay there.
for dir in $(group_dirs); do
    mkdir -p "$dir"
    case $dir in
    */pids/*) echo "$procs" >"$dir/pids.max" ;;
    */memory/*) [ "$memory_mb" -eq 0 ] || echo $((memory_mb << 20)) >"$dir/memory.limit_in_bytes" ;;
    esac
    echo $$ >"$dir/cgroup.procs"
done

limits=(prlimit --cpu="$cpu_s" --nproc="$procs" --fsize=$((file_mb << 20)))
[ "$memory_mb" -eq 0 ] || limits+=(--as=$((memory_mb << 20)))
as_user=()
[ "$(id -u)" -ne 0 ] || as_user=(setpriv --reuid="$uid" --regid="$uid" --clear-groups --inh-caps=-all --)
exec "${as_user[@]}" bwrap "${view[@]}" --unshare-all --die-with-parent --new-session --hostname sandbox \
    --chdir "$root" --setenv HOME /tmp --setenv TMPDIR /tmp "${limits[@]}" -- "$@"
