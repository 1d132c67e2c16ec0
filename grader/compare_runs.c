/* Compares a run's CSV with an expected-values CSV, column by column, and prints one
 * PASS/FAIL line per column. Rows are matched by position and must agree in number and in
 * their first cell (the step); a field empty in one file must be empty in the other (e.g.
 * steps without validation).
 *
 *   compare_runs EXPECTED ACTUAL --columns a,b,c [--rtol X] [--atol Y] [--label NAME]
 *                [--after-validation-between] [--at-most]
 *
 * --after-validation-between: in the step right after one the expected file validated
 * (its val_loss is not empty), a value anywhere between the expected values of that step
 * and of the one before passes too. What a validation pass gathered (ZeRO-3's parameters)
 * may be kept for the next step or gathered again: both are right, and move different bytes.
 * --at-most: a value below the expected one passes too (ZeRO-3's bytes: a unit still in a
 * free gather slot, unchanged since the update, need not be gathered again).
 *
 * A value passes when |actual - expected| <= atol + rtol * |expected|; --rtol 0 --atol 0
 * demands exact equality (the memory estimator's byte counts). A failing column names its
 * first differing row and lists the first few under it, so that a student sees whether a
 * mistake is constant, growing or intermittent. Exit 0 when every column passes, 1 when
 * any fails, 2 on bad input. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum { MAX_COLS = 32, CELL_LEN = 64, LINE_LEN = 4096, MAX_SHOWN = 5, TEXT_LEN = 96 };

static const char usage[] =
    "usage: compare_runs EXPECTED ACTUAL --columns a,b [--rtol X] [--atol Y] [--label NAME]\n"
    "                    [--after-validation-between] [--at-most]\n";

typedef char Row[MAX_COLS][CELL_LEN];

typedef struct {
    Row header;
    int num_cols;
    Row *rows;
    int num_rows, capacity;
} Table;

typedef struct {
    double rtol, atol;
} Tolerance;

typedef struct {
    const char *expected_path, *actual_path, *columns, *label;
    Tolerance tolerance;
    int after_validation_between; /* --after-validation-between */
    int at_most;                  /* --at-most */
} Options;

/* One row where a column differs, written out as it will be printed. */
typedef struct {
    const char *key;            /* the row's first cell, e.g. its step */
    char expected[TEXT_LEN], actual[TEXT_LEN];
    char difference[TEXT_LEN];  /* the table's last column: the difference, or what is wrong */
    char detail[3 * TEXT_LEN];  /* the same for the FAIL line, in words */
} Difference;

typedef struct {
    int count;                  /* rows that differ */
    Difference shown[MAX_SHOWN]; /* the first of them */
} Differences;

/* Splits a CSV line at its commas; these files hold numbers and plain names, never quotes.
 * Returns the number of fields, or -1 when there are more than MAX_COLS or one does not
 * fit a cell: cutting a number short would compare a different number. */
static int split(char *line, Row fields)
{
    line[strcspn(line, "\r\n")] = '\0';
    char *start = line;
    for (int n = 0; n < MAX_COLS; n++) {
        char *comma = strchr(start, ',');
        size_t len = comma ? (size_t)(comma - start) : strlen(start);
        if (len >= CELL_LEN)
            return -1;
        memcpy(fields[n], start, len);
        fields[n][len] = '\0';
        if (comma == NULL)
            return n + 1;
        start = comma + 1;
    }
    return -1;
}

/* Reads one line into line; returns 0 at the end of the file, -1 when the line does not fit. */
static int read_line(FILE *f, char line[LINE_LEN])
{
    if (fgets(line, LINE_LEN, f) == NULL)
        return 0;
    return strchr(line, '\n') != NULL || feof(f) ? 1 : -1;
}

static Row *next_row(Table *table)
{
    if (table->num_rows == table->capacity) {
        int capacity = table->capacity ? 2 * table->capacity : 64;
        Row *rows = realloc(table->rows, (size_t)capacity * sizeof *rows);
        if (rows == NULL)
            return NULL;
        table->rows = rows;
        table->capacity = capacity;
    }
    Row *row = &table->rows[table->num_rows++];
    memset(row, 0, sizeof *row); /* fields a short line leaves out read as empty */
    return row;
}

/* Reads the rows after the header; returns 0, or -1 after saying why on stderr. */
static int read_rows(FILE *f, const char *path, Table *table)
{
    char line[LINE_LEN];
    int got, line_number = 1;
    while ((got = read_line(f, line)) != 0) {
        line_number++;
        if (got < 0) {
            fprintf(stderr, "compare_runs: %s line %d is longer than %d characters\n", path,
                    line_number, LINE_LEN - 2);
            return -1;
        }
        Row *row = next_row(table);
        if (row == NULL) {
            fprintf(stderr, "compare_runs: out of memory reading %s\n", path);
            return -1;
        }
        if (split(line, *row) < 0) {
            fprintf(stderr, "compare_runs: %s line %d has more than %d fields or one longer than %d characters\n",
                    path, line_number, MAX_COLS, CELL_LEN - 1);
            return -1;
        }
    }
    return 0;
}

static int read_table(const char *path, Table *table)
{
    memset(table, 0, sizeof *table);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "compare_runs: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    char line[LINE_LEN];
    int status = -1, got = read_line(f, line);
    if (got == 0)
        fprintf(stderr, "compare_runs: %s is empty\n", path);
    else if (got < 0)
        fprintf(stderr, "compare_runs: %s header line is longer than %d characters\n", path, LINE_LEN - 2);
    else if ((table->num_cols = split(line, table->header)) < 0)
        fprintf(stderr, "compare_runs: %s has more than %d columns or a name longer than %d characters\n",
                path, MAX_COLS, CELL_LEN - 1);
    else
        status = read_rows(f, path, table);
    fclose(f);
    return status;
}

static int column_index(const Table *table, const char *name)
{
    for (int c = 0; c < table->num_cols; c++)
        if (strcmp(table->header[c], name) == 0)
            return c;
    return -1;
}

/* Reads a whole cell as a number; returns 0 when it is not one (strtod alone reads "abc"
 * as 0 and "12abc" as 12). */
static int parse_number(const char *text, double *value)
{
    char *end;
    *value = strtod(text, &end);
    if (end == text)
        return 0;
    while (isspace((unsigned char)*end))
        end++;
    return *end == '\0';
}

/* Below 2^53 a double holds a whole number, and the difference of two, exactly; they are
 * printed in full because %g would show 33554432 and 33554433 both as 3.36e+07. */
static int is_whole(double value) { return fabs(value) < 9007199254740992.0 && value == floor(value); }

static void describe_one_empty(const char *e, const char *a, Difference *out)
{
    snprintf(out->expected, sizeof out->expected, "%s", e[0] ? e : "(empty)");
    snprintf(out->actual, sizeof out->actual, "%s", a[0] ? a : "(empty)");
    snprintf(out->difference, sizeof out->difference, "value missing");
    snprintf(out->detail, sizeof out->detail, "a value in one file only");
}

static void describe_not_a_number(const char *e, const char *a, const char *which, Difference *out)
{
    snprintf(out->expected, sizeof out->expected, "%s", e);
    snprintf(out->actual, sizeof out->actual, "%s", a);
    snprintf(out->difference, sizeof out->difference, "not a number");
    snprintf(out->detail, sizeof out->detail, "'%s' in the %s file is not a number",
             which[0] == 'e' ? e : a, which);
}

static void describe_numbers(double ev, double av, double diff, double allowed, Difference *out)
{
    char allowed_text[TEXT_LEN];
    if (is_whole(ev) && is_whole(av)) {
        /* only whole differences occur, and floor(allowed) is the largest that passes */
        snprintf(out->expected, sizeof out->expected, "%.0f", ev);
        snprintf(out->actual, sizeof out->actual, "%.0f", av);
        snprintf(out->difference, sizeof out->difference, "%.0f", diff);
        snprintf(allowed_text, sizeof allowed_text, "%.0f", floor(allowed));
    } else {
        snprintf(out->expected, sizeof out->expected, "%.9g", ev);
        snprintf(out->actual, sizeof out->actual, "%.9g", av);
        snprintf(out->difference, sizeof out->difference, "%.3g", diff);
        snprintf(allowed_text, sizeof allowed_text, "%.3g", allowed);
    }
    snprintf(out->detail, sizeof out->detail, "difference %s, allowed %s", out->difference, allowed_text);
}

/* Compares one pair of cells. Returns 1 when they agree, with their relative difference
 * in *relative, or (an expected 0, which no difference is relative to) their difference in
 * *at_zero; 0 when they differ, described in *out. */
static int compare_cells(const char *e, const char *a, Tolerance tolerance, double *relative, double *at_zero,
                         Difference *out)
{
    *relative = *at_zero = 0.0;
    if (e[0] == '\0' && a[0] == '\0')
        return 1;
    if (e[0] == '\0' || a[0] == '\0') {
        describe_one_empty(e, a, out);
        return 0;
    }
    double ev, av;
    int expected_ok = parse_number(e, &ev), actual_ok = parse_number(a, &av);
    if (!expected_ok || !actual_ok) {
        describe_not_a_number(e, a, expected_ok ? "actual" : "expected", out);
        return 0;
    }
    if (isinf(ev) || isinf(av)) { /* a step both runs skipped (an fp16 overflow) agrees; nothing else does */
        if (ev == av)
            return 1;
        describe_numbers(ev, av, INFINITY, 0.0, out);
        return 0;
    }
    double diff = fabs(av - ev), allowed = tolerance.atol + tolerance.rtol * fabs(ev);
    if (!(diff <= allowed)) { /* written so that a NaN fails */
        describe_numbers(ev, av, diff, allowed, out);
        return 0;
    }
    if (ev != 0.0)
        *relative = diff / fabs(ev);
    else
        *at_zero = diff;
    return 1;
}

static int max_int(int a, int b) { return a > b ? a : b; }

static void print_table(const char *key_name, const Differences *found)
{
    int shown = found->count < MAX_SHOWN ? found->count : MAX_SHOWN;
    int key_width = (int)strlen(key_name), width = 12;
    for (int i = 0; i < shown; i++) {
        const Difference *d = &found->shown[i];
        key_width = max_int(key_width, (int)strlen(d->key));
        width = max_int(width, max_int((int)strlen(d->expected), (int)strlen(d->actual)));
        width = max_int(width, (int)strlen(d->difference));
    }
    printf("  %*s  %*s  %*s  %*s\n", key_width, key_name, width, "expected", width, "actual", width,
           "difference");
    for (int i = 0; i < shown; i++) {
        const Difference *d = &found->shown[i];
        printf("  %*s  %*s  %*s  %*s\n", key_width, d->key, width, d->expected, width, d->actual, width,
               d->difference);
    }
    if (found->count > shown)
        printf("  ... and %d more\n", found->count - shown);
}

static void print_failure(const char *label, const char *name, int num_rows, const char *key_name,
                          const Differences *found)
{
    const Difference *first = &found->shown[0];
    printf("FAIL %s %s: %d of %d rows differ; first at %s=%s: %s but expected %s (%s)\n", label, name,
           found->count, num_rows, key_name, first->key, first->actual, first->expected, first->detail);
    print_table(key_name, found);
}

/* Row r follows a step the expected run validated after, and its value lies between the
 * expected values of that step and of row r, within the tolerance (--after-validation-between). */
static int between_after_validation(const Table *expected, int r, int column, const char *a, Tolerance tolerance)
{
    int val = column_index(expected, "val_loss");
    double before, own, value;
    if (r == 0 || val < 0 || expected->rows[r - 1][val][0] == '\0')
        return 0;
    if (!parse_number(expected->rows[r - 1][column], &before) || !parse_number(expected->rows[r][column], &own) ||
        !parse_number(a, &value))
        return 0;
    double low = fmin(before, own), high = fmax(before, own);
    return value >= low - tolerance.atol - tolerance.rtol * fabs(low) &&
           value <= high + tolerance.atol + tolerance.rtol * fabs(high);
}

/* The actual value lies below the expected one (--at-most). */
static int below_expected(const char *expected, const char *actual)
{
    double e, a;
    return parse_number(expected, &e) && parse_number(actual, &a) && a < e;
}

/* Compares one column; prints its verdict; returns 1 on pass. */
static int compare_column(const Table *expected, const Table *actual, const char *name, const Options *options)
{
    Tolerance tolerance = options->tolerance;
    const char *label = options->label;
    int ce = column_index(expected, name), ca = column_index(actual, name);
    if (ce < 0 || ca < 0) {
        printf("FAIL %s %s: column missing from the %s file\n", label, name, ce < 0 ? "expected" : "actual");
        return 0;
    }
    Differences found = {0};
    double worst = 0.0, worst_at_zero = 0.0;
    int below = 0; /* rows that pass only by --at-most */
    for (int r = 0; r < expected->num_rows; r++) {
        Difference difference;
        double relative, at_zero;
        if (compare_cells(expected->rows[r][ce], actual->rows[r][ca], tolerance, &relative, &at_zero, &difference)) {
            worst = relative > worst ? relative : worst;
            worst_at_zero = at_zero > worst_at_zero ? at_zero : worst_at_zero;
            continue;
        }
        if (options->after_validation_between &&
            between_after_validation(expected, r, ce, actual->rows[r][ca], tolerance))
            continue;
        if (options->at_most && below_expected(expected->rows[r][ce], actual->rows[r][ca])) {
            below++;
            continue;
        }
        difference.key = expected->rows[r][0];
        if (found.count < MAX_SHOWN)
            found.shown[found.count] = difference;
        found.count++;
    }
    if (found.count > 0) {
        print_failure(label, name, expected->num_rows, expected->header[0], &found);
        return 0;
    }
    printf("PASS %s %s: %d rows", label, name, expected->num_rows);
    if (below == expected->num_rows) {
        printf(", all below the expected (as --at-most allows)\n");
        return 1;
    }
    if (below > 0)
        printf(", %d below the expected (as --at-most allows), the other %d's", below, expected->num_rows - below);
    else
        printf(",");
    printf(" largest relative difference %.2g", worst);
    if (worst_at_zero > 0)
        printf(" (and a difference of %.2g where 0 was expected)", worst_at_zero);
    printf("\n");
    return 1;
}

/* Rows are matched by position, so both files must hold the same steps in the same order. */
/* Rows that do not pair up fail every column asked for, one line each: a column is a
 * check whether or not the run got far enough to compare it. */
static int rows_match(const Table *expected, const Table *actual, const char *label, Row names, int num_names)
{
    char why[4 * CELL_LEN + 64] = "";
    if (expected->num_rows != actual->num_rows)
        snprintf(why, sizeof why, "%d rows but expected %d", actual->num_rows, expected->num_rows);
    for (int r = 0; r < expected->num_rows && why[0] == '\0'; r++)
        if (strcmp(expected->rows[r][0], actual->rows[r][0]) != 0)
            snprintf(why, sizeof why, "row %d is %s=%s but expected %s=%s", r + 1, actual->header[0],
                     actual->rows[r][0], expected->header[0], expected->rows[r][0]);
    for (int i = 0; i < num_names && why[0] != '\0'; i++)
        printf("FAIL %s %s: %s\n", label, names[i], why);
    return why[0] == '\0';
}

#define OPTION(field) offsetof(Options, field)
static const Flag flags[] = {
    {"columns", FLAG_STRING, OPTION(columns), "the columns to compare, comma-separated", 0, 0, 0},
    {"rtol", FLAG_DOUBLE, OPTION(tolerance.rtol), "relative tolerance", 0, 1e9, 0},
    {"atol", FLAG_DOUBLE, OPTION(tolerance.atol), "absolute tolerance", 0, 1e9, 0},
    {"label", FLAG_STRING, OPTION(label), "what the PASS and FAIL lines call the comparison", 0, 0, 0},
    {"after-validation-between", FLAG_SWITCH, OPTION(after_validation_between),
     "right after a validated step, a value between that step's and this one's passes too", 0, 0, 0},
    {"at-most", FLAG_SWITCH, OPTION(at_most), "a value below the expected one passes too", 0, 0, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* Returns 0 when the options are complete, -1 after saying on stderr what is wrong. */
static int parse_options(int argc, char **argv, Options *options)
{
    *options = (Options){.label = ""};
    if (argc < 3) {
        fputs(usage, stderr);
        return -1;
    }
    for (int i = 1; i <= 2; i++)
        if (strncmp(argv[i], "--", 2) == 0) {
            fprintf(stderr, "compare_runs: the two CSV files come first, before %s\n", argv[i]);
            return -1;
        }
    options->expected_path = argv[1];
    options->actual_path = argv[2];
    char err[256];
    FlagSet set = {"comparison", flags, options};
    if (cli_parse(argc, argv, 3, &set, 1, err, sizeof err) != 0) {
        fprintf(stderr, "compare_runs: %s\n", err);
        return -1;
    }
    if (options->columns == NULL) {
        fprintf(stderr, "compare_runs: --columns is required (the columns to compare, e.g. loss,grad_norm)\n");
        return -1;
    }
    if (options->columns[0] == '\0') {
        fprintf(stderr, "compare_runs: --columns names no column\n");
        return -1;
    }
    return 0;
}

static int compare_files(const Options *options, Table *expected, Table *actual)
{
    char copy[LINE_LEN];
    Row names;
    int num_names = -1;
    if (strlen(options->columns) < sizeof copy) {
        snprintf(copy, sizeof copy, "%s", options->columns);
        num_names = split(copy, names);
    }
    if (num_names < 0) {
        fprintf(stderr, "compare_runs: --columns names more than %d columns or one longer than %d characters\n",
                MAX_COLS, CELL_LEN - 1);
        return 2;
    }
    if (read_table(options->expected_path, expected) != 0 || read_table(options->actual_path, actual) != 0)
        return 2;
    if (!rows_match(expected, actual, options->label, names, num_names))
        return 1;
    int all_pass = 1;
    for (int i = 0; i < num_names; i++)
        all_pass &= compare_column(expected, actual, names[i], options);
    return all_pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    const FlagSet known = {"comparison", flags, NULL}; /* to tell a flag's value from a request */
    if (cli_wants_help(argc, argv, 1, &known, 1)) {
        fputs(usage, stdout);
        return 0;
    }
    Options options;
    if (parse_options(argc, argv, &options) != 0)
        return 2;
    Table expected = {0}, actual = {0};
    int status = compare_files(&options, &expected, &actual);
    free(expected.rows);
    free(actual.rows);
    return status;
}
