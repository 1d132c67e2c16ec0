#!/usr/bin/env bash
# What `make data GPT2=1` needs to write GPT-2 tokens offline, into build/gpt2/ (made once):
# a Python environment with tiktoken (PyPI), and GPT-2's byte-pair encoding, gpt2.tiktoken,
# taken from the openai-whisper package on PyPI, which ships it (tiktoken itself would
# download it at run time). Its sha256 is checked against the one tiktoken expects of
# r50k_base, GPT-2's encoding. Safe to run again: with everything present it does nothing.
#
#   scripts/setup_gpt2.sh [DIR]      (default build/gpt2)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/summary_lib.sh
help_if_asked "$@"
dir=${1:-build/gpt2}
whisper=openai-whisper==20250625 sha256=306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930
[ -f "$dir/venv/.ready" ] && [ -f "$dir/gpt2.tiktoken" ] && exit 0
mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ ! -f "$dir/venv/.ready" ]; then
    echo "setup_gpt2: a Python environment with tiktoken in $dir/venv"
    rm -rf "$dir/venv"
    python3 -m venv "$dir/venv" || { echo "setup_gpt2: python3 -m venv failed (make setup installs python3-venv)" >&2; exit 1; }
    "$dir/venv/bin/python" -m pip install -q 'tiktoken>=0.7,<1' ||
        { rm -rf "$dir/venv"; echo "setup_gpt2: could not install tiktoken from PyPI" >&2; exit 1; }
    touch "$dir/venv/.ready"
fi
if [ ! -f "$dir/gpt2.tiktoken" ]; then
    echo "setup_gpt2: GPT-2's encoding from $whisper (PyPI)"
    "$dir/venv/bin/python" -m pip download -q --no-deps --no-binary :all: "$whisper" -d "$work" ||
        { echo "setup_gpt2: could not download $whisper from PyPI" >&2; exit 1; }
    tar -xzf "$work"/openai_whisper-*.tar.gz -C "$work" --wildcards '*/whisper/assets/gpt2.tiktoken'
    found=$(find "$work" -name gpt2.tiktoken)
    echo "$sha256  $found" | sha256sum -c --quiet - ||
        { echo "setup_gpt2: $whisper's gpt2.tiktoken is not GPT-2's encoding (sha256 differs)" >&2; exit 1; }
    mv "$found" "$dir/gpt2.tiktoken"
fi
