/* One source for each exercise. The given code of a lesson (main.c, headers) lives only in
 * lessons/NN; solutions/NN holds nothing but the reference versions of the exercise files
 * (and, for a lesson that later ones build on, the header of what they reuse of its
 * reference), and `make` builds both programs from the one copy of the given code. What
 * an exercise file gives (its includes and the first line of every function, type and
 * declaration at the top level) must read the same in both versions, so that
 * `diff lessons/NN solutions/NN` shows exactly the assignment. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LINES 512
#define LINE_LEN 256

/* The lines of a file that start at column 0 with a letter or '#': includes, and the first
 * line of each definition or declaration at the top level (not comments, not bodies). */
static int top_level_lines(const char *path, char lines[][LINE_LEN])
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[LINE_LEN];
    int n = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if ((line[0] >= 'a' && line[0] <= 'z') || (line[0] >= 'A' && line[0] <= 'Z') || line[0] == '#') {
            cr_assert_lt(n, MAX_LINES, "%s: too many top-level lines", path);
            line[strcspn(line, "\n")] = '\0';
            snprintf(lines[n++], LINE_LEN, "%s", line);
        }
    }
    fclose(f);
    return n;
}

static void check_exercise(const char *solution_path)
{
    static char given[MAX_LINES][LINE_LEN], reference[MAX_LINES][LINE_LEN];
    char lesson_path[512];
    snprintf(lesson_path, sizeof lesson_path, "lessons/%s", solution_path + strlen("solutions/"));
    cr_assert_eq(access(lesson_path, R_OK), 0, "%s has no exercise %s: solutions/ holds only exercise files",
                 solution_path, lesson_path);
    int num_given = top_level_lines(lesson_path, given);
    int num_reference = top_level_lines(solution_path, reference);
    cr_assert_gt(num_given, 0, "%s gives nothing: not even its header's include", lesson_path);
    for (int i = 0; i < num_given; i++) {
        int found = 0;
        for (int j = 0; j < num_reference && !found; j++)
            found = strcmp(given[i], reference[j]) == 0;
        cr_expect(found, "%s gives `%s`, which %s does not have", lesson_path, given[i], solution_path);
    }
}

Test(exercises, the_given_parts_of_each_exercise_file_agree_with_its_reference)
{
    glob_t found;
    cr_assert_eq(glob("solutions/[0-9][0-9]_*/*.c", 0, NULL, &found), 0);
    cr_assert_geq(found.gl_pathc, 10, "expected an exercise file per lesson");
    for (size_t i = 0; i < found.gl_pathc; i++)
        check_exercise(found.gl_pathv[i]);
    globfree(&found);
}

Test(exercises, every_lesson_has_a_reference)
{
    glob_t lessons;
    cr_assert_eq(glob("lessons/[0-9][0-9]_*/", 0, NULL, &lessons), 0); /* the trailing / matches folders */
    for (size_t i = 0; i < lessons.gl_pathc; i++) {
        char pattern[256];
        snprintf(pattern, sizeof pattern, "solutions/%s*.c", lessons.gl_pathv[i] + strlen("lessons/"));
        glob_t references;
        cr_expect_eq(glob(pattern, 0, NULL, &references), 0, "%s has no reference exercise file in solutions/",
                     lessons.gl_pathv[i]);
        globfree(&references);
    }
    globfree(&lessons);
}

/* A header in solutions/NN is there only for the lessons that build on NN's reference: one
 * of them names NN in its builds_on file. */
Test(exercises, a_header_among_the_references_serves_a_later_lesson)
{
    glob_t headers, lists;
    int found_headers = glob("solutions/[0-9][0-9]_*/*.h", 0, NULL, &headers);
    cr_assert(found_headers == 0 || found_headers == GLOB_NOMATCH);
    cr_assert_eq(glob("lessons/[0-9][0-9]_*/builds_on", 0, NULL, &lists), 0);
    for (size_t i = 0; found_headers == 0 && i < headers.gl_pathc; i++) {
        const char *lesson = headers.gl_pathv[i] + strlen("solutions/");
        char wanted[128];
        snprintf(wanted, sizeof wanted, "%.*s/", (int)strcspn(lesson, "/"), lesson);
        int used = 0;
        for (size_t j = 0; j < lists.gl_pathc && !used; j++) {
            FILE *f = fopen(lists.gl_pathv[j], "r");
            char line[256];
            while (f != NULL && !used && fgets(line, sizeof line, f) != NULL)
                used = strncmp(line, wanted, strlen(wanted)) == 0;
            if (f != NULL)
                fclose(f);
        }
        cr_expect(used, "%s: no lesson builds on %s", headers.gl_pathv[i], wanted);
    }
    if (found_headers == 0)
        globfree(&headers);
    globfree(&lists);
}
