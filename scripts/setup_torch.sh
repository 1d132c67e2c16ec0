#!/usr/bin/env bash
# PyPI's PyTorch in a Python environment of its own, build/torch/ (made once): the PyTorch
# that runs FSDP beside lessons 08 and 09. Debian 12's python3-torch (1.13) runs DDP and
# ZeroRedundancyOptimizer but cannot import FSDP on Python 3.11; PyPI's torch can. It is
# large: PyPI has no CPU-only build, so the CUDA libraries come with it (about 5.5 GB on
# disk, a few minutes to fetch). Nothing in 'make test' needs it: the PyTorch rows of
# 'make run' and 'make bench', and scripts/pytorch_ddp.sh, use it when it is there.
# Safe to run again: with everything present it does nothing.
#
#   scripts/setup_torch.sh [DIR]      (default build/torch)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/summary_lib.sh
source scripts/summary_lib.sh
case "${1:-}" in -h | --help) header_help "$0"; exit 0 ;; -*) echo "setup_torch: unknown flag $1" >&2; exit 2 ;; esac
[ $# -le 1 ] || { echo "setup_torch: one folder at most" >&2; exit 2; }
dir=${1:-build/torch}
torch=torch==2.15.0 # the version the course's FSDP figures were measured with
[ -f "$dir/.ready" ] && exit 0
echo "setup_torch: a Python environment with $torch (PyPI, about 5.5 GB) in $dir"
rm -rf "$dir"
python3 -m venv "$dir" || { echo "setup_torch: python3 -m venv failed (make setup installs python3-venv)" >&2; exit 1; }
"$dir/bin/python" -m pip install -q "$torch" numpy ||
    { rm -rf "$dir"; echo "setup_torch: could not install $torch from PyPI" >&2; exit 1; }
"$dir/bin/python" -c 'from torch.distributed.fsdp import fully_shard' ||
    { rm -rf "$dir"; echo "setup_torch: $torch installed but cannot import FSDP's fully_shard" >&2; exit 1; }
touch "$dir/.ready"
