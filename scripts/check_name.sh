# shellcheck shell=bash
# Sourced by grade.sh and make_expected.sh: a check's name, the name of its expected-values
# file: its words joined by '_', flags without their dashes ("dp reference 2 --accum 4" is
# dp_reference_n2_accum_4, "estimate reference --vocab 300" is estimate_reference_vocab_300);
# a sanitize line is named after the check it runs ("sanitize_dp_reference_n2"); a drift line
# names its ranks as dp does ("drift reference 2" is drift_reference_n2).
check_name() {
    local mode=$1 preset=$2 name word
    if [ "$mode" = sanitize ]; then
        echo "sanitize_$(check_name "${@:2}")"
        return
    fi
    name=${mode}_$preset
    shift 2
    if [ "$mode" = dp ] || [ "$mode" = drift ]; then
        name=${name}_n$1
        shift
    fi
    for word in "$@"; do name=${name}_${word#--}; done
    echo "$name"
}
