#!/usr/bin/env bash
# The course corpus: Jane Austen's six novels as plain text, one paragraph per line.
#
#   data/austen_text.sh OUT_DIR
#
# Writes OUT_DIR/austen_train.txt (Emma, Mansfield Park, Northanger Abbey, Pride and
# Prejudice, Sense and Sensibility: 3.5 MB) and OUT_DIR/austen_val.txt (Persuasion, a novel
# the model never trains on: 0.46 MB). The texts are Project Gutenberg's (public domain), as
# Debian's r-cran-janeaustenr packages them in R's own data format; R reads it (make setup
# installs both), rather than a reader of our own. Each paragraph's lines are joined with
# single spaces, so that a line is a paragraph and the end-of-run sample, which stops at a
# line break, is one paragraph. Each file is written whole (a temporary file, renamed).
set -euo pipefail
source "$(dirname "$0")/../scripts/summary_lib.sh" # write_whole
out=${1:?usage: data/austen_text.sh OUT_DIR}
[ -d "$out" ] || { echo "austen_text: no folder $out" >&2; exit 2; }
command -v Rscript >/dev/null && Rscript --vanilla -e 'quit(status = !requireNamespace("janeaustenr", quietly = TRUE))' ||
    { echo "austen_text: R's janeaustenr is missing (make setup installs r-cran-janeaustenr)" >&2; exit 1; }

# novels NAME...: the novels' lines, one after another, as R holds them.
novels() {
    Rscript --vanilla -e 'for (name in commandArgs(TRUE)) {
        e <- new.env(); data(list = name, package = "janeaustenr", envir = e); writeLines(e[[name]]) }' "$@"
}
# Paragraphs (blocks between blank lines) to lines, runs of spaces to one.
one_paragraph_a_line() { awk 'BEGIN { RS = "" } { gsub(/[ \t\n]+/, " "); sub(/^ /, ""); sub(/ $/, ""); print }'; }

novels_a_paragraph_a_line() { novels "$@" | one_paragraph_a_line; }

# write FILE NAME...: the novels into FILE, whole.
write() {
    local file=$out/$1
    shift
    write_whole "$file" novels_a_paragraph_a_line "$@"
    echo "austen_text: $file ($(wc -l <"$file") paragraphs, $(wc -c <"$file") bytes): $*"
}
write austen_train.txt emma mansfieldpark northangerabbey prideprejudice sensesensibility
write austen_val.txt persuasion
