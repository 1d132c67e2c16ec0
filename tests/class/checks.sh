# shellcheck shell=bash disable=SC2034 # failed is read by the scripts that source this
# Sourced by the class checks (check_class.sh, check_limits.sh, check_intake.sh), run from the
# course's root: one "ok" or "not ok" line per point, and whether the sandbox can start here.

failed=0
# check WHAT COMMAND...: runs COMMAND and says "ok WHAT", or "not ok WHAT" (then failed=1).
check() {
    local what=$1
    shift
    if "$@"; then echo "ok $what"; else echo "not ok $what"; failed=1; fi
}

# Exits 77, saying why on stderr ($1: the check's name), where the sandbox cannot start.
sandbox_or_skip() {
    local out
    if ! out=$(scripts/sandbox.sh --root . -- true 2>&1); then
        echo "$1: no sandbox on this machine: $out" >&2
        exit 77
    fi
}

# A checksum of every file of the course a grader must leave as it is.
course_sums() { find Makefile common lessons solutions scripts tests/expected -type f -print0 | sort -z | xargs -0 sha256sum; }
