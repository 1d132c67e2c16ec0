/* The Yelp Review Full CSV reader, renderer and writer. Expected values are written out
 * by hand from the format, never taken from what the code returned. */
#include <criterion/criterion.h>

#include "../data/yelp_csv.h"
#include "shell.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_RECORDS = 8 };

typedef struct {
    int count;
    int labels[MAX_RECORDS];
    long lines[MAX_RECORDS];
    char *texts[MAX_RECORDS];
    size_t lengths[MAX_RECORDS];
    int rc;          /* last yelp_reader_next result: 0 clean end, -1 error */
    char err[256];
} Parsed;

/* tmpfile rather than fmemopen: it also handles empty input and embedded NULs. */
static FILE *file_with(const char *bytes, size_t len)
{
    FILE *file = tmpfile();
    cr_assert_not_null(file);
    cr_assert_eq(fwrite(bytes, 1, len, file), len);
    rewind(file);
    return file;
}

static Parsed parse(const char *csv)
{
    Parsed parsed;
    memset(&parsed, 0, sizeof parsed);
    FILE *file = file_with(csv, strlen(csv));
    YelpReader reader;
    yelp_reader_init(&reader, file, "t.csv");
    YelpRecord record;
    while ((parsed.rc = yelp_reader_next(&reader, &record, parsed.err, sizeof parsed.err)) == 1) {
        cr_assert_lt(parsed.count, MAX_RECORDS);
        int i = parsed.count++;
        parsed.labels[i] = record.label;
        parsed.lines[i] = record.line;
        parsed.lengths[i] = record.text_len;
        parsed.texts[i] = malloc(record.text_len + 1);
        memcpy(parsed.texts[i], record.text, record.text_len + 1);
    }
    yelp_reader_free(&reader);
    fclose(file);
    return parsed;
}

static void release(Parsed *parsed)
{
    for (int i = 0; i < parsed->count; i++)
        free(parsed->texts[i]);
}

static void expect_error(const char *csv, const char *line_prefix, const char *phrase)
{
    Parsed parsed = parse(csv);
    cr_assert_eq(parsed.rc, -1, "malformed input was accepted: %s", csv);
    cr_assert(strncmp(parsed.err, line_prefix, strlen(line_prefix)) == 0,
              "error should start with '%s': %s", line_prefix, parsed.err);
    cr_assert_not_null(strstr(parsed.err, phrase), "error should say '%s': %s", phrase,
                       parsed.err);
    cr_assert_null(strchr(parsed.err, '\n'), "error must be one line: %s", parsed.err);
    release(&parsed);
}

Test(yelp_csv, reads_plain_records_with_labels_and_lines)
{
    Parsed p = parse("\"4\",\"Great tacos, friendly staff.\"\n\"1\",\"Cold.\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 2);
    cr_assert_eq(p.labels[0], 4);
    cr_assert_str_eq(p.texts[0], "Great tacos, friendly staff.");
    cr_assert_eq(p.lengths[0], 28);
    cr_assert_eq(p.labels[1], 1);
    cr_assert_str_eq(p.texts[1], "Cold.");
    cr_assert_eq(p.lines[0], 1);
    cr_assert_eq(p.lines[1], 2);
    release(&p);
}

Test(yelp_csv, doubled_quotes_become_one_quote)
{
    Parsed p = parse("\"5\",\"She said \"\"wow\"\" twice\"\n\"3\",\"\"\"\"\"\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 2);
    cr_assert_str_eq(p.texts[0], "She said \"wow\" twice");
    cr_assert_str_eq(p.texts[1], "\"\"");
    release(&p);
}

Test(yelp_csv, backslash_n_stays_two_characters)
{
    Parsed p = parse("\"2\",\"Line one.\\n\\nLine two.\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_str_eq(p.texts[0], "Line one.\\n\\nLine two.");
    cr_assert_eq(p.lengths[0], strlen("Line one.") + 4 + strlen("Line two."));
    cr_assert_null(strchr(p.texts[0], '\n'));
    release(&p);
}

Test(yelp_csv, accepts_crlf_line_ends)
{
    Parsed p = parse("\"1\",\"a\"\r\n\"2\",\"b\"\r\n\"5\",\"c\"\r\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 3);
    cr_assert_str_eq(p.texts[1], "b");
    cr_assert_eq(p.labels[2], 5);
    cr_assert_eq(p.lines[2], 3);
    release(&p);
}

Test(yelp_csv, raw_newline_inside_quotes_is_kept_and_counted)
{
    Parsed p = parse("\"3\",\"para one\npara two\"\n\"4\",\"x\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 2);
    cr_assert_str_eq(p.texts[0], "para one\npara two");
    cr_assert_eq(p.lines[1], 3, "second record starts on line 3, got %ld", p.lines[1]);
    release(&p);
}

Test(yelp_csv, last_record_without_newline_and_empty_input)
{
    Parsed p = parse("\"1\",\"first\"\n\"2\",\"no newline at end\"");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 2);
    cr_assert_str_eq(p.texts[1], "no newline at end");
    release(&p);
    Parsed empty = parse("");
    cr_assert_eq(empty.rc, 0);
    cr_assert_eq(empty.count, 0);
}

Test(yelp_csv, empty_text_is_a_record)
{
    Parsed p = parse("\"3\",\"\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 1);
    cr_assert_eq(p.lengths[0], 0);
    release(&p);
}

Test(yelp_csv, rejects_missing_label_quote_with_line)
{
    expect_error("\"1\",\"ok\"\n\"2\",\"ok\"\n3,\"bad\"\n", "t.csv:3:",
                 "expected '\"' to open the label field");
    expect_error("\"1\",\"ok\"\n\n\"2\",\"ok\"\n", "t.csv:2:", "open the label field");
}

Test(yelp_csv, rejects_unterminated_quote_with_opening_line)
{
    expect_error("\"1\",\"ok\"\n\"2\",\"never closed\nmore text\n", "t.csv:2:",
                 "unterminated quote in the text field");
    expect_error("\"1\",\"ok\"\n\"2\",\"never closed\n", "t.csv:2:", "unterminated");
    expect_error("\"4", "t.csv:1:", "unterminated quote in the label field");
}

Test(yelp_csv, rejects_labels_outside_one_to_five)
{
    expect_error("\"1\",\"ok\"\n\"0\",\"zero\"\n", "t.csv:2:", "label \"0\" is not in 1..5");
    expect_error("\"6\",\"six\"\n", "t.csv:1:", "not in 1..5");
    expect_error("\"12\",\"twelve\"\n", "t.csv:1:", "label \"12\"");
    expect_error("\"\",\"empty\"\n", "t.csv:1:", "not in 1..5");
    expect_error("\"a\",\"letter\"\n", "t.csv:1:", "not in 1..5");
}

Test(yelp_csv, rejects_missing_comma)
{
    expect_error("\"1\",\"ok\"\n\"2\" \"ok\"\n", "t.csv:2:", "expected ',' after the label");
    expect_error("\"2\";\"ok\"\n", "t.csv:1:", "expected ','");
}

Test(yelp_csv, rejects_unquoted_text_field)
{
    expect_error("\"2\",ok\n", "t.csv:1:", "expected '\"' to open the text field");
    expect_error("\"2\",\n", "t.csv:1:", "open the text field");
}

Test(yelp_csv, rejects_garbage_after_closing_quote)
{
    expect_error("\"1\",\"a\"\n\"2\",\"ok\"x\n", "t.csv:2:", "after the closing quote");
    expect_error("\"1\",\"a\",\"third field\"\n", "t.csv:1:", "after the closing quote");
    expect_error("\"1\",\"a\"\rX", "t.csv:1:", "carriage return");
}

Test(yelp_csv, error_line_counts_raw_newlines_in_fields)
{
    expect_error("\"1\",\"a\nb\"\n\"9\",\"c\"\n", "t.csv:3:", "not in 1..5");
}

/* ------------------------------------------------------------------ rendering */

static char *render(int label, const char *text)
{
    YelpRecord record = {.label = label, .text = text, .text_len = strlen(text), .line = 1};
    char *out = malloc(yelp_render_max(&record) + 1);
    size_t n = yelp_render(&record, out);
    cr_assert_leq(n, yelp_render_max(&record));
    out[n] = '\0';
    return out;
}

Test(yelp_render, label_colon_space_text_newline)
{
    char *line = render(4, "Great tacos, friendly staff.");
    cr_assert_str_eq(line, "4: Great tacos, friendly staff.\n");
    free(line);
}

Test(yelp_render, keeps_quotes_and_backslash_n)
{
    char *line = render(1, "He said \"no\".\\n\\nNever again.");
    cr_assert_str_eq(line, "1: He said \"no\".\\n\\nNever again.\n");
    free(line);
}

Test(yelp_render, raw_line_breaks_become_backslash_n)
{
    char *line = render(3, "a\nb\r\nc\rd");
    cr_assert_str_eq(line, "3: a\\nb\\nc\\nd\n");
    free(line);
}

Test(yelp_render, csv_to_line_end_to_end)
{
    Parsed p = parse("\"5\",\"Loved it! \"\"Best\"\" ever.\\nGo.\"\n");
    cr_assert_eq(p.rc, 0, "%s", p.err);
    char *line = render(p.labels[0], p.texts[0]);
    cr_assert_str_eq(line, "5: Loved it! \"Best\" ever.\\nGo.\n");
    free(line);
    release(&p);
}

/* ------------------------------------------------------------------ writing */

static char *written(int label, const char *text, int *rc)
{
    FILE *file = tmpfile();
    cr_assert_not_null(file);
    *rc = yelp_write_record(file, label, text, strlen(text));
    long size = ftell(file);
    rewind(file);
    char *bytes = calloc((size_t)size + 1, 1);
    cr_assert_eq(fread(bytes, 1, (size_t)size, file), (size_t)size);
    fclose(file);
    return bytes;
}

Test(yelp_write, doubles_quotes_in_the_exact_format)
{
    int rc;
    char *bytes = written(3, "say \"hi\"", &rc);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(bytes, "\"3\",\"say \"\"hi\"\"\"\n");
    free(bytes);
}

Test(yelp_write, rejects_bad_label)
{
    int rc;
    char *bytes = written(0, "x", &rc);
    cr_assert_eq(rc, -1);
    cr_assert_str_eq(bytes, "");
    free(bytes);
}

Test(yelp_write, round_trips_through_the_reader)
{
    const char *text = "\"Quoted\" start, commas, \\n escapes and \"\" pairs\"";
    int rc;
    char *bytes = written(2, text, &rc);
    cr_assert_eq(rc, 0);
    Parsed p = parse(bytes);
    cr_assert_eq(p.rc, 0, "%s", p.err);
    cr_assert_eq(p.count, 1);
    cr_assert_eq(p.labels[0], 2);
    cr_assert_str_eq(p.texts[0], text);
    release(&p);
    free(bytes);
}

/* import_tokens never waits on or destroys what it is handed: a FIFO as the input is
 * refused at once (opening it would wait for a writer forever), and an output that cannot
 * be written, or is the input, is refused before the input is read. */
Test(import_tokens, refuses_a_fifo_and_unwritable_outputs_before_reading)
{
    char output[4096];
    int status = shell_output("tests/scenarios/import_tokens_refusals.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "/fifo: not a regular file (a file to import must be one)\nfifo 1\n"), "%s",
                       output);
    cr_expect_not_null(strstr(output, "import_tokens: OUTPUT /nonexistent/out.bin: there is no folder /nonexistent\n"
                                      "missing folder 2\n"), "%s", output);
    cr_expect_not_null(strstr(output, "import_tokens: OUTPUT /dev/null: exists and is not a regular file\ndevice 2\n"),
                       "%s", output);
    cr_expect_not_null(strstr(output, "refusing to overwrite it\nitself 2\nwords\n"), "%s", output);
}
