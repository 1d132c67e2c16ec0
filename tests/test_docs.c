/* The lesson docs against what they describe: each lesson's doc names, in backquotes, exactly
 * the checks its grading spec (tests/expected/NN_name.checks) lists, so that a student reads
 * what `make grade` will run. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CHECKS 32

/* A whole file, its line breaks turned into spaces (a check named in a doc may wrap). */
static char *read_flat(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    cr_assert_eq(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    text[size] = '\0';
    for (char *c = text; *c; c++)
        if (*c == '\n')
            *c = ' ';
    return text;
}

static int read_checks(const char *path, char checks[][128])
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[128];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        if (line[0] != '\0' && line[0] != '#') {
            cr_assert_lt(n, MAX_CHECKS);
            snprintf(checks[n++], 128, "%s", line);
        }
    }
    fclose(f);
    return n;
}

/* A backquoted span that reads as a check: one of the spec's modes, then its words. */
static int looks_like_check(const char *span)
{
    static const char *const modes[] = {"train ", "estimate ", "plan ", "dp ", "drift ", "ring ", "sanitize ",
                                         "resume "};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strncmp(span, modes[i], strlen(modes[i])) == 0)
            return 1;
    return 0;
}

static void check_lesson(const char *checks_path)
{
    char lesson[64], doc_path[128], checks[MAX_CHECKS][128];
    const char *base = strrchr(checks_path, '/') + 1;
    snprintf(lesson, sizeof lesson, "%.*s", (int)(strlen(base) - strlen(".checks")), base);
    snprintf(doc_path, sizeof doc_path, "docs/%s.md", lesson);
    int num_checks = read_checks(checks_path, checks);
    char *doc = read_flat(doc_path);
    int named[MAX_CHECKS] = {0};
    for (char *open = strchr(doc, '`'); open != NULL;) {
        char *close = strchr(open + 1, '`');
        if (close == NULL)
            break;
        *close = '\0';
        const char *span = open + 1;
        if (close > open + 1 && looks_like_check(span)) {
            int found = 0;
            for (int i = 0; i < num_checks; i++)
                if (strcmp(span, checks[i]) == 0)
                    named[i] = found = 1;
            cr_expect(found, "%s names `%s`, which %s does not run", doc_path, span, checks_path);
        }
        open = strchr(close + 1, '`');
    }
    for (int i = 0; i < num_checks; i++)
        cr_expect(named[i], "%s runs `%s`, which %s never names", checks_path, checks[i], doc_path);
    free(doc);
}

Test(docs, each_lesson_doc_names_exactly_the_checks_grading_runs)
{
    glob_t found;
    cr_assert_eq(glob("tests/expected/*.checks", 0, NULL, &found), 0);
    cr_assert_geq(found.gl_pathc, 10, "expected a grading spec per lesson");
    for (size_t i = 0; i < found.gl_pathc; i++)
        check_lesson(found.gl_pathv[i]);
    globfree(&found);
}

/* A lesson doc states the problem and leaves the design to the student: it is short enough
 * to read before starting (250 lines), and lists at least two decisions that are the
 * student's. Lessons 02-10. */
Test(docs, a_lesson_doc_is_short_and_names_the_decisions_that_are_yours)
{
    glob_t found;
    cr_assert_eq(glob("docs/0[2-9]_*.md", 0, NULL, &found), 0);
    cr_assert_eq(glob("docs/10_*.md", GLOB_APPEND, NULL, &found), 0);
    cr_assert_eq(found.gl_pathc, 9);
    for (size_t i = 0; i < found.gl_pathc; i++) {
        FILE *f = fopen(found.gl_pathv[i], "r");
        cr_assert_not_null(f, "cannot open %s", found.gl_pathv[i]);
        char line[1024];
        int lines = 0, in_decisions = 0, decisions = 0;
        while (fgets(line, sizeof line, f) != NULL) {
            lines++;
            if (strncmp(line, "**Decisions that are yours:**", 29) == 0)
                in_decisions = 1;
            else if (in_decisions && strncmp(line, "- ", 2) == 0)
                decisions++;
            else if (in_decisions && line[0] != ' ' && line[0] != '\n')
                in_decisions = 0;
        }
        fclose(f);
        cr_expect_leq(lines, 250, "%s has %d lines", found.gl_pathv[i], lines);
        cr_expect_geq(decisions, 2, "%s lists %d decision(s) under **Decisions that are yours:**",
                      found.gl_pathv[i], decisions);
    }
    globfree(&found);
}
