#!/usr/bin/env bash
# Installs the Debian packages dtc needs, and only the missing ones. Says what it installs;
# uses sudo when not root. Safe to run again: with everything present it does nothing.
set -euo pipefail
source "$(dirname "$0")/summary_lib.sh"
no_arguments "$@"

packages=(build-essential pkg-config mpich libmpich-dev libopenblas-dev libcriterion-dev libcjson-dev clang valgrind shellcheck gnuplot-nox chromium python3 bubblewrap iproute2 git r-cran-janeaustenr python3-venv)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: missing packages (${missing[*]}) and no apt-get here: install them by hand" >&2
    exit 1
fi
as_root=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    as_root=(sudo)
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done"
