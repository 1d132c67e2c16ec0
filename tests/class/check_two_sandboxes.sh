#!/usr/bin/env bash
# Two sandboxes at once: one started without --uid, and a grader ending what another
# submission's user left running beside it. The first runs on to its end: a sandbox without
# --uid runs as a user id of its own, never as one another sandbox or grader may end.
#
#   tests/class/check_two_sandboxes.sh       (exit 77 where the sandbox cannot start)
set -u
cd "$(dirname "$0")/../.." || exit 2
source tests/class/checks.sh
sandbox_or_skip check_two_sandboxes
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scripts/sandbox.sh --root . --write "$out" -- sh -c 'touch "$1/started"; sleep 3; touch "$1/ended"' sh "$out" &
sandboxed=$!
for _ in $(seq 300); do [ -e "$out/started" ] && break; sleep 0.1; done
uid=$(scripts/sandbox.sh --claim $$) && scripts/sandbox.sh --uid "$uid" --end
wait "$sandboxed"
status=$?
check "the sandbox without --uid ran on to its end (exit $status) while user $uid's processes were ended" \
    test "$status" = 0 -a -e "$out/ended"
exit $failed
