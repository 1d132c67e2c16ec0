/* Compares a run's CSV with an expected-values CSV, column by column, and prints one
 * PASS/FAIL line per column. Rows are matched by position and must agree in number; a
 * field empty in one file must be empty in the other (e.g. steps without validation).
 *
 *   compare_runs EXPECTED ACTUAL --columns a,b,c [--rtol X] [--atol Y] [--label NAME]
 *
 * A value passes when |actual - expected| <= atol + rtol * |expected|; --rtol 0 --atol 0
 * demands exact equality (the memory estimator's byte counts). Exit 0 when every column
 * passes, 1 when any fails, 2 on bad input. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_ROWS = 100000, MAX_COLS = 32, LINE_LEN = 4096 };

typedef struct {
    char header[MAX_COLS][64];
    int num_cols;
    char (*cells)[MAX_COLS][40];
    int num_rows;
} Table;

static int split(char *line, char fields[][40], int max_fields, size_t field_len)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *start = line; n < max_fields; n++) {
        char *comma = strchr(start, ',');
        size_t len = comma ? (size_t)(comma - start) : strlen(start);
        if (len >= field_len)
            len = field_len - 1;
        memcpy(fields[n], start, len);
        fields[n][len] = '\0';
        if (comma == NULL)
            return n + 1;
        start = comma + 1;
    }
    return n;
}

static int read_table(const char *path, Table *table)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "compare_runs: cannot open %s\n", path);
        return -1;
    }
    char line[LINE_LEN], fields[MAX_COLS][40];
    if (fgets(line, sizeof line, f) == NULL) {
        fprintf(stderr, "compare_runs: %s is empty\n", path);
        fclose(f);
        return -1;
    }
    table->num_cols = split(line, fields, MAX_COLS, 40);
    for (int c = 0; c < table->num_cols; c++)
        snprintf(table->header[c], sizeof table->header[c], "%s", fields[c]);
    table->cells = calloc(MAX_ROWS, sizeof *table->cells);
    table->num_rows = 0;
    while (table->cells != NULL && table->num_rows < MAX_ROWS && fgets(line, sizeof line, f) != NULL)
        split(line, table->cells[table->num_rows++], MAX_COLS, 40);
    fclose(f);
    return table->cells == NULL ? -1 : 0;
}

static int column_index(const Table *table, const char *name)
{
    for (int c = 0; c < table->num_cols; c++)
        if (strcmp(table->header[c], name) == 0)
            return c;
    return -1;
}

/* Compares one column; prints its verdict; returns 1 on pass. */
static int compare_column(const Table *expected, const Table *actual, const char *name,
                          double rtol, double atol, const char *label)
{
    int ce = column_index(expected, name), ca = column_index(actual, name);
    if (ce < 0 || ca < 0) {
        printf("FAIL %s %s: column missing from the %s file\n", label, name, ce < 0 ? "expected" : "actual");
        return 0;
    }
    double worst = 0.0;
    for (int r = 0; r < expected->num_rows; r++) {
        const char *e = expected->cells[r][ce], *a = actual->cells[r][ca];
        if ((e[0] == '\0') != (a[0] == '\0')) {
            printf("FAIL %s %s: at %s=%s it is '%s' but expected '%s'\n", label, name,
                   expected->header[0], expected->cells[r][0], a, e);
            return 0;
        }
        if (e[0] == '\0')
            continue;
        double ev = strtod(e, NULL), av = strtod(a, NULL), diff = fabs(av - ev);
        if (!(diff <= atol + rtol * fabs(ev))) {
            printf("FAIL %s %s: at %s=%s it is %s but expected %s (difference %.3g, allowed %.3g)\n",
                   label, name, expected->header[0], expected->cells[r][0], a, e, diff,
                   atol + rtol * fabs(ev));
            return 0;
        }
        double relative = ev != 0.0 ? diff / fabs(ev) : diff;
        worst = relative > worst ? relative : worst;
    }
    printf("PASS %s %s: %d rows, largest relative difference %.2g\n", label, name, expected->num_rows, worst);
    return 1;
}

int main(int argc, char **argv)
{
    const char *columns = NULL, *label = "";
    double rtol = 0.0, atol = 0.0;
    if (argc < 3) {
        fprintf(stderr, "usage: compare_runs EXPECTED ACTUAL --columns a,b [--rtol X] [--atol Y] [--label NAME]\n");
        return 2;
    }
    for (int i = 3; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--columns") == 0) columns = argv[i + 1];
        else if (strcmp(argv[i], "--rtol") == 0) rtol = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--atol") == 0) atol = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--label") == 0) label = argv[i + 1];
        else {
            fprintf(stderr, "compare_runs: unknown flag %s\n", argv[i]);
            return 2;
        }
    }
    Table expected, actual;
    if (columns == NULL || read_table(argv[1], &expected) != 0 || read_table(argv[2], &actual) != 0) {
        if (columns == NULL)
            fprintf(stderr, "compare_runs: --columns is required\n");
        return 2;
    }
    if (expected.num_rows != actual.num_rows) {
        printf("FAIL %s: %d rows but expected %d\n", label, actual.num_rows, expected.num_rows);
        return 1;
    }
    for (int r = 0; r < expected.num_rows; r++)
        if (strcmp(expected.cells[r][0], actual.cells[r][0]) != 0) {
            printf("FAIL %s: row %d is %s=%s but expected %s=%s\n", label, r + 1, actual.header[0],
                   actual.cells[r][0], expected.header[0], expected.cells[r][0]);
            return 1;
        }
    char names[MAX_COLS][40], copy[LINE_LEN];
    snprintf(copy, sizeof copy, "%s", columns);
    int n = split(copy, names, MAX_COLS, 40), all_pass = 1;
    for (int i = 0; i < n; i++)
        all_pass &= compare_column(&expected, &actual, names[i], rtol, atol, label);
    return all_pass ? 0 : 1;
}
