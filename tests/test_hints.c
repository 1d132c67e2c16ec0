/* Hints on request: make hint shows a lesson's hints one at a time and remembers which were
 * seen; the lesson docs hold none of their text; make grade says how many were seen. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "shell.h"


/* Each piece in order, each after the one before. */
static void expect_in_order(const char *output, const char *const *pieces, size_t count)
{
    const char *from = output;
    for (size_t i = 0; i < count; i++) {
        const char *found = strstr(from, pieces[i]);
        cr_expect_not_null(found, "no \"%s\" after what came before it in:\n%s", pieces[i], output);
        if (found != NULL)
            from = found + strlen(pieces[i]);
    }
}

Test(hints, make_hint_shows_one_at_a_time_and_remembers_which, .timeout = 60)
{
    static char output[1 << 16];
    cr_assert_eq(shell_output("tests/scenarios/hints.sh", output, sizeof output), 0, "%s", output);
    static const char *const said[] = {
        "== first\nlesson 04, hint 1 of 3:\n\n## 1. A nudge\n",
        "(2 more: make hint LESSON=04, after you have tried this one)\nstatus 0\n",
        "== second\nlesson 04, hint 2 of 3:\n\n## 2. The approach\n",
        "== the first again\nlesson 04, hint 1 of 3:\n\n## 1. A nudge\n",
        "(1 more: make hint LESSON=04, after you have tried this one)\nstatus 0\n",
        "== seen after that\n2 of 3\nstatus 0\n",
        "== the fourth, which is not there\nhint: --tier '4' is not a hint of lesson 04 (1 to 3)\nstatus 2\n",
        "== third\nlesson 04, hint 3 of 3:\n\n## 3. The calls\n",
        "(that was the last one)\nstatus 0\n",
        "== past the last\nhint: lesson 04: you have seen all 3 hints",
        "== seen after reset\n0 of 3\nstatus 0\n",
        "== hint 3 before 1 and 2\nhint: lesson 04: hint 3 opens after hint 2; you have seen 0\nstatus 2\n",
        "== no lesson\nhint: which lesson? (make hint LESSON=NN)\nstatus 2\n",
        "== lesson 99\nno lesson numbered '99'",
        "status 2\n== the damaged record read\n0 of 3\nstatus 0\n",
    };
    expect_in_order(output, said, sizeof said / sizeof *said);
}

static size_t letters_in(const char *text, size_t length)
{
    size_t letters = 0;
    for (size_t i = 0; i < length; i++)
        letters += text[i] != ' ';
    return letters;
}

/* The first line of text from `text` on, up to the next hint, that the doc holds whole, or
 * NULL: a line of 40 characters or more (not counting spaces) says enough to give the hint
 * away; a shorter one (a table's header) may be the doc's too. */
static const char *line_shown(const char *text, const char *doc, char *line, size_t line_len)
{
    for (const char *start = text; *start != '\0' && strncmp(start, "## ", 3) != 0;) {
        size_t length = strcspn(start, "\n");
        if (letters_in(start, length) >= 40 && length < line_len) {
            snprintf(line, line_len, "%.*s", (int)length, start);
            if (strstr(doc, line) != NULL)
                return line;
        }
        start += length + (start[length] == '\n');
    }
    return NULL;
}

/* Every lesson has three hints, in docs/hints/ and only there: its doc shows none of them,
 * folded or not. */
Test(hints, every_lesson_has_three_and_its_doc_shows_none)
{
    glob_t docs;
    cr_assert_eq(glob("docs/[0-9][0-9]_*.md", 0, NULL, &docs), 0);
    cr_assert_geq(docs.gl_pathc, 11);
    for (size_t d = 0; d < docs.gl_pathc; d++) {
        char hints_path[256], line[256], heading[32];
        static char hints[1 << 16], doc[1 << 17];
        snprintf(hints_path, sizeof hints_path, "docs/hints/%s", docs.gl_pathv[d] + strlen("docs/"));
        cr_assert_geq(files_read_into(hints_path, hints, sizeof hints), 0, "%s is missing or too long", hints_path);
        cr_assert_geq(files_read_into(docs.gl_pathv[d], doc, sizeof doc), 0, "%s is too long", docs.gl_pathv[d]);
        cr_expect_null(strstr(doc, "<details>"), "%s folds text away: hints go in %s", docs.gl_pathv[d], hints_path);
        for (int tier = 1; tier <= 4; tier++) {
            snprintf(heading, sizeof heading, "\n## %d. ", tier);
            const char *at = strstr(hints, heading);
            if (tier == 4) {
                cr_expect_null(at, "%s has more than three hints", hints_path);
                break;
            }
            cr_assert_not_null(at, "%s has no hint %d (a heading \"## %d. ...\")", hints_path, tier, tier);
            const char *shown = line_shown(at + strlen(heading), doc, line, sizeof line);
            cr_expect_null(shown, "%s shows hint %d's text: %s", docs.gl_pathv[d], tier, shown);
        }
    }
    globfree(&docs);
}

/* Your own build's grade says how many hints you have seen; another build's says nothing of it. */
Test(hints, grading_your_own_build_says_how_many_you_have_seen, .timeout = 300)
{
    static char output[1 << 16];
    char dir[64], command[512];
    cr_assert_not_null(shell_temp_dir(dir, sizeof dir, "hints"));
    snprintf(command, sizeof command, "DTC_HINT_STATE=%s scripts/hint.sh 06 >/dev/null && DTC_HINT_STATE=%s "
             "scripts/grade.sh 06 --check dp_reference_n2_accum_2_bucket-mb_0.1", dir, dir);
    shell_output(command, output, sizeof output);
    cr_expect_not_null(strstr(output, "lesson 06: FAIL ("), "%s", output);
    cr_expect_not_null(strstr(output, " checks failed)   hints seen: 1 of 3\n"), "%s", output);
    snprintf(command, sizeof command, "DTC_HINT_STATE=%s scripts/grade.sh 06 build/solutions/06_grad_accum "
             "--check dp_reference_n2_accum_2_bucket-mb_0.1", dir);
    cr_expect_eq(shell_output(command, output, sizeof output), 0, "%s", output);
    cr_expect_null(strstr(output, "hints seen"), "%s", output);
    shell_remove_dir(dir);
}
