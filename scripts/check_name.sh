# shellcheck shell=bash
# Sourced by scripts that name a grading check as the grader does (make_expected.sh, the tests'
# scenarios): check_name WORDS... prints the name of the check line WORDS, which is also the
# name of its expected-values file ("dp reference 2 --accum 4" is dp_reference_n2_accum_4).
# The rule is grader/grade.py's check_name, the one place it is written.
check_name() {
    python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); from grade import check_name; print(check_name(sys.argv[2:]))' \
        "$(dirname "${BASH_SOURCE[0]}")/../grader" "$@"
}
