# Sourced by the bench and course scripts: reading run summaries and reducing repeats.

# A field of a one-row summary CSV (`train --summary`), by column name.
summary_field() {
    awk -F, -v name="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == name) c = i } NR == 2 { print $c }' "$1"
}

# The median of the numbers on standard input, one per line.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# a / b to two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# The flags a lesson runs with in the course's tables (lesson 06 accumulates 2 micro-batches).
lesson_flags() { [ "$1" = 06_grad_accum ] && echo "--accum 2" || echo ""; }
