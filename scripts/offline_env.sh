# shellcheck shell=bash
# The environment of an unpacked offline copy of the course (scripts/pack_offline.sh puts
# this file in it as offline/env.sh). In the copy's top folder:
#     source offline/env.sh
# It points the shell at the copy's MPI launcher and libraries, and the compiler at its
# headers, so that the lessons, tests and grader run, and `make` builds, with nothing
# installed. The CUDA libraries come from the node: CUDA_HOME (default /usr/local/cuda), or
# the NVIDIA packages of the node's Python (nvidia-nccl, nvidia-cublas) where the toolkit
# has no NCCL. Sourcing it twice changes nothing more.
dtc_offline=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
case ":$PATH:" in *":$dtc_offline/bin:"*) ;; *) export PATH=$dtc_offline/bin:$PATH ;; esac

# Where a CUDA library the node provides lives, if the loader would not find it: prints a
# folder, or nothing.
dtc_cuda_library_dir() {
    local name=$1 dir
    ldconfig -p 2>/dev/null | grep -q "$name " && return 0
    for dir in "${CUDA_HOME:-/usr/local/cuda}/lib64" $(python3 -c 'import nvidia, os
for p in nvidia.__path__:
    for d in sorted(os.listdir(p)): print(os.path.join(p, d, "lib"))' 2>/dev/null); do
        [ -e "$dir/$name" ] && { echo "$dir"; return 0; }
    done
}
# The libraries under system/ that the node lacks, linked from missing/ (made again each time)
rm -rf "$dtc_offline/lib/missing" && mkdir -p "$dtc_offline/lib/missing"
for dtc_name in "$dtc_offline"/lib/system/*.so*; do
    { ldconfig -p || /sbin/ldconfig -p; } 2>/dev/null | grep -q " ${dtc_name##*/} " ||
        ln -s "../system/${dtc_name##*/}" "$dtc_offline/lib/missing/"
done
dtc_library_path=$dtc_offline/lib:$dtc_offline/lib/missing
for dtc_name in libcudart.so.13 libcublas.so.13 libnccl.so.2; do
    dtc_dir=$(dtc_cuda_library_dir "$dtc_name")
    case ":$dtc_library_path:" in *":$dtc_dir:"*) ;; *) [ -z "$dtc_dir" ] || dtc_library_path+=:$dtc_dir ;; esac
done
case ":${LD_LIBRARY_PATH:-}:" in
*":$dtc_offline/lib:"*) ;;
*) export LD_LIBRARY_PATH=$dtc_library_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ;;
esac
# MPICH's transport (UCX) loads its transports from here
export UCX_MODULE_DIR=$dtc_offline/lib/ucx
# gcc reads these: the headers and link names of MPI, OpenBLAS and Criterion
case ":${CPATH:-}:" in *":$dtc_offline/include:"*) ;; *) export CPATH=$dtc_offline/include${CPATH:+:$CPATH} ;; esac
case ":${LIBRARY_PATH:-}:" in *":$dtc_offline/lib:"*) ;; *) export LIBRARY_PATH=$dtc_offline/lib${LIBRARY_PATH:+:$LIBRARY_PATH} ;; esac
unset dtc_name dtc_dir dtc_library_path
unset -f dtc_cuda_library_dir
