#!/usr/bin/env bash
# Packs the course for a machine that reaches no package registry (a cluster's GPU node, say):
# one archive that runs the lessons, the tests, the grader and the benchmarks there without
# installing anything and without touching /.
#
#   scripts/pack_offline.sh [--out FILE] [--data all|shards]
#
# What goes in, under one folder dtc/:
#   - the course's files (what git tracks here) and the built programs: build/lessons,
#     build/solutions, build/tools, build/tests, and build/cuda's where `make CUDA=1` built
#     them (build them first: make all data, make CUDA=1 all build/cuda/tests/gpu_tests);
#   - the data: data/generated whole (--data all, the default), or only the token shards the
#     lessons read (--data shards: the texts they were made from, 26 MB, are left out);
#   - offline/: every shared library those programs load that a bare Linux may lack (the
#     MPI runtime, OpenBLAS, Criterion and what they load in turn), the MPI launcher
#     (mpiexec, Hydra), the headers and link names to build the course there with the node's
#     own compiler, and offline/env.sh, which points PATH, LD_LIBRARY_PATH and the compiler at
#     them; and ip and tc (Debian's iproute2), which scripts/cluster.sh makes its hosts and
#     shapes their links with, so that a node with enough cores can run the cluster's
#     checks (scripts/predict_cluster.sh, as root).
# Left out: the C library and the C++ runtime (every node has them; the programs need a glibc
# at least as new as this machine's), and the CUDA libraries (cuBLAS, the CUDA runtime, NCCL),
# which a GPU node's CUDA installation provides: env.sh finds them (docs/gpu.md, "A node
# without a registry").
# FILE defaults to dtc-offline.tar.gz; an existing FILE is refused, never overwritten.
# On the node:  tar xf dtc-offline.tar.gz && cd dtc && source offline/env.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh # header_help, from_caller

out=dtc-offline.tar.gz data=all
while [ $# -gt 0 ]; do
    case $1 in
    --out) out=$(from_caller "${2:?pack_offline: --out needs a file name}"); shift 2 ;;
    --data) data=${2:?pack_offline: --data needs all or shards}; shift 2 ;;
    -h | --help) header_help "$0"; exit 0 ;;
    *) echo "pack_offline: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
[[ $data =~ ^(all|shards)$ ]] || { echo "pack_offline: --data $data: choose all or shards" >&2; exit 2; }
[ ! -e "$out" ] || { echo "pack_offline: $out is there already: choose another --out" >&2; exit 2; }
[[ $out == *.tar.gz ]] || { echo "pack_offline: --out $out: the archive's name must end in .tar.gz" >&2; exit 2; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 ||
    { echo "pack_offline: run it in a git checkout of the course (it packs what git tracks)" >&2; exit 2; }
for program in build/solutions/00_single_device build/tools/compare_runs data/generated/train.bin; do
    [ -e "$program" ] || { echo "pack_offline: $program is missing: make all data first" >&2; exit 2; }
done
for command in mpiexec.hydra hydra_pmi_proxy ldd; do
    command -v "$command" >/dev/null || { echo "pack_offline: $command is not on the PATH (MPICH's launcher)" >&2; exit 2; }
done

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/dtc
mkdir -p "$root/offline/bin" "$root/offline/lib" "$root/offline/include"

# The course's files, and the programs built from them (the objects stay behind).
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$root"
program_dirs=()
for dir in build/lessons build/solutions build/tools build/tests \
    build/cuda/lessons build/cuda/solutions build/cuda/tools build/cuda/tests; do
    [ -d "$dir" ] && program_dirs+=("$dir")
done
tar -cf - "${program_dirs[@]}" | tar -xf - -C "$root"
data_files=(data/generated)
[ "$data" = all ] || mapfile -t data_files < <(find data/generated -maxdepth 1 -type f \( -name '*.bin' -o -name corpus \))
tar -cf - "${data_files[@]}" | tar -xf - -C "$root"

# The launcher, by its own name and by the names the course calls it.
cp -L "$(command -v mpiexec.hydra)" "$(command -v hydra_pmi_proxy)" "$root/offline/bin/"
ln -s mpiexec.hydra "$root/offline/bin/mpiexec"
ln -s mpiexec.hydra "$root/offline/bin/mpirun"
# The cluster's tools (scripts/cluster.sh), where this machine has them.
cluster_tools=""
for command in ip tc; do
    path=$(PATH=$PATH:/usr/sbin:/sbin command -v "$command") || continue
    cp -L "$path" "$root/offline/bin/"
    cluster_tools+=" $command"
done

# A library every Linux has, or that a GPU node's CUDA installation provides.
provided() {
    [[ $1 =~ ^(linux-vdso|ld-linux|libc|libm|libdl|librt|libpthread|libresolv|libutil|libstdc\+\+|libgcc_s)\. ]] ||
        [[ $1 =~ ^lib(cuda|cudart|cublas|cublasLt|nccl|nvidia-ml)\. ]]
}
# What the loader says of every program here and of the launcher (ldd says nothing of a file
# that is not a program): read once, for what is missing and for what to copy.
loaded=$(find "${program_dirs[@]}" "$root/offline/bin" -type f -perm -u+x -print0 | xargs -0 -r ldd 2>/dev/null)
missing=$(awk '/not found/ { print $1 }' <<<"$loaded" | sort -u)
[ -z "$missing" ] || { echo "pack_offline: these libraries are not found here: $missing" >&2; exit 1; }
# The MPI, BLAS and test libraries, and theirs, are always the copy's own (the launcher must
# match the MPI library); anything else they load (zlib, OpenSSL, Kerberos ...) goes to
# offline/lib/system/, which env.sh uses only for what the node lacks.
course_library() {
    [[ $1 =~ ^lib(mpich|openblas|criterion|nanomsg|ucp|ucs|uct|ucm|hwloc|gfortran|quadmath|numa|slurm|cjson)[.-] ]]
}
mkdir -p "$root/offline/lib/system"
while read -r name path; do
    if course_library "$name"; then
        cp -L "$path" "$root/offline/lib/$name"
    elif ! provided "$name"; then
        cp -L "$path" "$root/offline/lib/system/$name"
    fi
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$loaded" | sort -u)
# UCX, MPICH's transport, loads its transports from a folder of its own at run time.
ucx_modules=$(dirname "$(ldconfig -p | awk '/libucp.so.0 / { print $NF; exit }')")/ucx
if [ -d "$ucx_modules" ]; then
    mkdir -p "$root/offline/lib/ucx"
    cp -L "$ucx_modules"/*.so.0 "$root/offline/lib/ucx/"
fi

# To build there: the headers and the names the linker looks for, from this machine's
# packages (pkg-config says where they are).
for package in mpich openblas; do
    for dir in $(pkg-config --cflags-only-I "$package" | sed 's/-I//g'); do
        cp -rL "$dir"/. "$root/offline/include/"
    done
done
[ -d /usr/include/criterion ] && cp -rL /usr/include/criterion "$root/offline/include/"
for name in mpich openblas criterion; do
    library=$(ls "$root/offline/lib/lib$name".so.* 2>/dev/null | head -n 1)
    [ -z "$library" ] || ln -sf "$(basename "$library")" "$root/offline/lib/lib$name.so"
done
cp scripts/offline_env.sh "$root/offline/env.sh"

tar -C "$stage" -czf "$out" dtc
echo "pack_offline: $out ($(du -h "$out" | cut -f1)): $(find "$root/offline/lib" -maxdepth 1 -name '*.so.*' | wc -l) libraries" \
    "of its own and $(find "$root/offline/lib/system" -name '*.so*' | wc -l) for a node that lacks them," \
    "the programs of ${program_dirs[*]}, data ($data), the cluster's tools:${cluster_tools:- none (no iproute2 here)}"
