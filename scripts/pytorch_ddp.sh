#!/usr/bin/env bash
# PyTorch's DDP, ZeRO-1 and FSDP beside our C code: an optional cross-check and baseline rows.
#
#   scripts/pytorch_ddp.sh check
#       Lesson 00 (single device), PyTorch DDP at 2 ranks, PyTorch's ZeRO-1 (DDP with
#       ZeroRedundancyOptimizer) and, where the PyTorch runs it, FSDP in both modes (grad_op,
#       full) at 2 ranks train the reference preset from the same initial weights; each
#       PyTorch run's loss, grad norm and validation loss must agree with lesson 00's within
#       tests/tolerance.sh. Exit 0 agree, 1 disagree, 77 skipped (no PyTorch), 2 anything
#       else went wrong.
#   scripts/pytorch_ddp.sh run OUT_DIR [--config PRESET] [--ranks N [--zero1 | --fsdp MODE] | --eager]
#                          [lesson 00 flags]
#       Saves lesson 00's initial weights for that configuration in OUT_DIR/init.bin and
#       trains them with PyTorch DDP (2 ranks unless --ranks; --zero1 shards AdamW's state
#       with ZeroRedundancyOptimizer), with FSDP instead of DDP (--fsdp grad_op or full), or
#       with --eager in one process without DDP: OUT_DIR/pytorch_ddp.csv and
#       OUT_DIR/pytorch_ddp_summary.csv. Exit 0 (also when skipped: no PyTorch, or one
#       without FSDP). Paths inside the flags (--train, --val) are relative to the
#       repository root.
#   scripts/pytorch_ddp.sh which [fsdp]
#       Prints the interpreter that runs would use (with fsdp: FSDP runs); exit 1 if none.
#
# PyTorch is never required. DDP, ZeRO-1 and eager runs take the first of these that
# imports torch: PYTHON=..., python3, and Debian's /usr/bin/python3 with python3-torch,
# whose matrix products run on OpenBLAS: run gives it the kernels the lessons choose, in
# OPENBLAS_CORETYPE unless that is set already. FSDP runs take the first that can run FSDP:
# PYTHON=..., build/torch/bin/python (PyPI's PyTorch 2, which 'make torch' installs; its
# products run on MKL), python3 and /usr/bin/python3 (Debian 12's python3-torch cannot).
# Without one the script says so and skips.
set -euo pipefail

# shellcheck source=scripts/summary_lib.sh
source "$(dirname "$0")/summary_lib.sh"
usage() { header_help "$0"; }

die() {
    echo "pytorch_ddp: $*" >&2
    exit 2
}

# Paths from the caller's directory must survive the cd to the repository root.
absolute() {
    case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac
}

# The first interpreter that can import torch (an activated virtual environment or pyenv
# python3 usually cannot, Debian's /usr/bin/python3 can once python3-torch is installed);
# with "fsdp", the first whose torch runs FSDP, as pytorch_ddp.py's fsdp_missing() judges.
find_torch_python() {
    local candidate candidates=(python3 /usr/bin/python3)
    local test='import torch'
    if [ "${1:-}" = fsdp ]; then
        candidates=(build/torch/bin/python python3 /usr/bin/python3)
        test='import sys; sys.path[:0] = ["scripts"]; import pytorch_ddp; sys.exit(pytorch_ddp.fsdp_missing() is not None)'
    fi
    [ -z "${PYTHON:-}" ] || candidates=("$PYTHON" "${candidates[@]}")
    for candidate in "${candidates[@]}"; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "$test" >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

skip_message() {
    echo "pytorch_ddp: skipped: python3-torch is not installed (apt-get install python3-torch)"
}

fsdp_skip_message() {
    echo "pytorch_ddp: FSDP skipped: no PyTorch here runs it (Debian 12's python3-torch cannot;" \
        "make torch installs PyPI's, which can)"
}

lesson=build/solutions/00_single_device
compare=build/tools/compare_runs

need_built() {
    local program
    for program in "$lesson" "$compare"; do
        [ -x "$program" ] || die "$program is missing: run 'make all data' first"
    done
}

# Lesson 00 writes its initial weights (the flags' configuration) to $1 without training.
save_initial_weights() {
    local checkpoint=$1
    shift
    "$lesson" train "$@" --steps 0 --gen-tokens 0 --save "$checkpoint" >/dev/null ||
        die "lesson 00 could not save the initial weights to $checkpoint"
}

# compare_with_lesson_00 PYTHON WORK NAME [FLAG]: PyTorch at 2 ranks on the reference preset
# from WORK/init.bin, against lesson 00's WORK/lesson00.csv. Status as compare_runs: 0 or 1.
compare_with_lesson_00() {
    local python=$1 work=$2 name=$3 status=0
    shift 3
    "$python" scripts/pytorch_ddp.py --config reference --ranks 2 "$@" --init-from "$work/init.bin" \
        --csv "$work/$name.csv" >"$work/$name.log" 2>&1 ||
        die "pytorch_ddp.py failed: $(tail -n 1 "$work/$name.log")"
    "$compare" "$work/lesson00.csv" "$work/$name.csv" --columns loss,grad_norm,val_loss \
        --rtol "$LOSS_RTOL" --atol "$LOSS_ATOL" --label "$name vs lesson 00" || status=$?
    [ "$status" -le 1 ] || die "compare_runs could not compare the two runs"
    return "$status"
}
check_dir=
remove_check_dir() {
    [ -z "$check_dir" ] || rm -rf "$check_dir"
}

check() {
    local python=$1 work
    work=$(mktemp -d "${TMPDIR:-/tmp}/pytorch_ddp_check.XXXXXX")
    check_dir=$work
    trap remove_check_dir EXIT
    # shellcheck source=tests/tolerance.sh
    source tests/tolerance.sh
    save_initial_weights "$work/init.bin" --config reference
    "$lesson" train --config reference --gen-tokens 0 --init-from "$work/init.bin" \
        --csv "$work/lesson00.csv" >"$work/lesson00.log" ||
        die "lesson 00 failed: $(tail -n 1 "$work/lesson00.log")"
    local status=0
    compare_with_lesson_00 "$python" "$work" pytorch_ddp || status=$?
    compare_with_lesson_00 "$python" "$work" pytorch_zero1 --zero1 || status=$?
    if python=$(find_torch_python fsdp); then
        compare_with_lesson_00 "$python" "$work" pytorch_fsdp_grad_op --fsdp grad_op || status=$?
        compare_with_lesson_00 "$python" "$work" pytorch_fsdp_full --fsdp full || status=$?
    else
        fsdp_skip_message
    fi
    return "$status"
}

# Splits "--ranks N", "--eager", "--zero1" and "--fsdp MODE" (ours) from the lesson 00 flags,
# which go to both programs, and trains on FSDP's interpreter when --fsdp, else on DDP's. A
# PyTorch on OpenBLAS (Debian's) runs the kernels the lessons choose unless OPENBLAS_CORETYPE
# names others: OpenBLAS's own pick can be narrower (common/blas_kernels.h). PyPI's runs MKL.
run() {
    local out_dir=$1 how=(--ranks 2) strategy=()
    shift
    local flags=()
    while [ $# -gt 0 ]; do
        if [ "$1" = --ranks ]; then
            [ $# -ge 2 ] || die "--ranks needs a value"
            how=(--ranks "$2")
            shift 2
        elif [ "$1" = --eager ]; then
            how=(--eager)
            shift
        elif [ "$1" = --zero1 ]; then
            strategy=(--zero1)
            shift
        elif [ "$1" = --fsdp ]; then
            [ $# -ge 2 ] || die "--fsdp needs a mode: grad_op or full"
            strategy=(--fsdp "$2")
            shift 2
        else
            flags+=("$1")
            shift
        fi
    done
    local python
    if [ "${strategy[0]:-}" = --fsdp ]; then
        python=$(find_torch_python fsdp) || { fsdp_skip_message; return 0; }
    else
        python=$(find_torch_python) || { skip_message; return 0; }
    fi
    need_built
    local kernels=${OPENBLAS_CORETYPE:-$(chosen_kernels)}
    mkdir -p "$out_dir" || die "cannot create $out_dir"
    save_initial_weights "$out_dir/init.bin" "${flags[@]}"
    env ${kernels:+OPENBLAS_CORETYPE="$kernels"} "$python" scripts/pytorch_ddp.py "${how[@]}" "${strategy[@]}" --init-from "$out_dir/init.bin" \
        --csv "$out_dir/pytorch_ddp.csv" --summary "$out_dir/pytorch_ddp_summary.csv" "${flags[@]}"
}

main() {
    local mode=${1:-}
    case "$mode" in
    -h | --help) usage; exit 0 ;;
    check) [ $# -eq 1 ] || die "check takes no arguments" ;;
    which)
        if [ $# -gt 2 ] || [ "${2:-fsdp}" != fsdp ]; then die "which takes one word at most: fsdp"; fi
        cd "$(dirname "$0")/.."
        find_torch_python "${2:-}" || exit 1
        exit 0 ;;
    run) [ $# -ge 2 ] || die "run needs an output folder: run OUT_DIR [flags]" ;;
    *) usage >&2; exit 2 ;;
    esac
    local out_dir=
    [ "$mode" = run ] && out_dir=$(absolute "$2")
    cd "$(dirname "$0")/.."
    if [ "$mode" = run ]; then
        shift 2
        run "$out_dir" "$@"
        return
    fi
    local python
    python=$(find_torch_python) || { skip_message; exit 77; }
    need_built
    check "$python"
}

main "$@"
