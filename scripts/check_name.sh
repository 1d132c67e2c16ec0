# Sourced by grade.sh and make_expected.sh: a check's name, the name of its expected-values
# file: its words joined by '_', flags without their dashes ("dp reference 2 --accum 4" is
# dp_reference_n2_accum_4).
check_name() {
    local mode=$1 preset=$2 ranks=${3:-} name word
    name=${mode}_$preset
    if [ "$mode" = dp ]; then
        name=${name}_n$ranks
        shift 3
        for word in "$@"; do name=${name}_${word#--}; done
    fi
    echo "$name"
}
