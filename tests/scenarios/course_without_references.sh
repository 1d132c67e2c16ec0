#!/usr/bin/env bash
# The course handed out without its references: a copy of the tracked files but solutions/.
# Prints how many of `make -n all`'s lines name a lesson build and a reference build, then
# what `make build/solutions/02_naive_ddp` said and "status S", then the same of
# `make build/lessons/06_grad_accum` (a lesson that builds on lesson 05's reference).
#
#   tests/scenarios/course_without_references.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
git ls-files -z | grep -zv '^solutions/' | xargs -0 cp -a --parents -t "$copy"
cd "$copy" || exit 2
make() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "$@"; }
plan=$(make -n all 2>&1)
echo "make -n all: $(grep -c 'build/lessons/' <<<"$plan") lines of lesson builds, $(grep -v '^echo ' <<<"$plan" | grep -c 'solutions/') of reference builds"
make build/solutions/02_naive_ddp 2>&1
echo "status $?"
make build/lessons/06_grad_accum 2>&1
echo "status $?"
