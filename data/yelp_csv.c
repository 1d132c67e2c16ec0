#include "yelp_csv.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void yelp_reader_init(YelpReader *reader, FILE *in, const char *name)
{
    memset(reader, 0, sizeof *reader);
    reader->in = in;
    reader->name = name;
    reader->line = 1;
}

void yelp_reader_free(YelpReader *reader)
{
    free(reader->field);
    reader->field = NULL;
    reader->field_len = reader->field_cap = 0;
}

/* The line number advances when the character after a '\n' is read, so an error about a
 * line feed itself still names the line that the line feed ends. */
static int read_char(YelpReader *reader)
{
    if (reader->after_newline) {
        reader->line++;
        reader->after_newline = 0;
    }
    int c = getc_unlocked(reader->in);
    if (c == '\n')
        reader->after_newline = 1;
    return c;
}

/* Makes room for one more byte plus the NUL that keeps the text usable as a C string. */
static int reserve_byte(YelpReader *reader)
{
    if (reader->field_len + 1 < reader->field_cap)
        return 0;
    size_t cap = reader->field_cap ? 2 * reader->field_cap : 1024;
    char *grown = realloc(reader->field, cap);
    if (grown == NULL)
        return -1;
    reader->field = grown;
    reader->field_cap = cap;
    return 0;
}

/* Names a character for an error message without breaking the one-line rule. */
static const char *describe_char(int c, char *buf, size_t buf_len)
{
    if (c == EOF)
        return "end of file";
    if (c == '\n')
        return "end of line";
    if (c == '\r')
        return "a carriage return";
    if (isprint(c))
        snprintf(buf, buf_len, "'%c'", c);
    else
        snprintf(buf, buf_len, "byte 0x%02x", (unsigned)c);
    return buf;
}

static int fail_at(const YelpReader *reader, long line, char *err, size_t err_len,
                   const char *problem, int found)
{
    char buf[16];
    snprintf(err, err_len, "%s:%ld: %s, found %s", reader->name, line, problem,
             describe_char(found, buf, sizeof buf));
    return -1;
}

static int out_of_memory(const YelpReader *reader, long line, char *err, size_t err_len)
{
    snprintf(err, err_len, "%s:%ld: out of memory", reader->name, line);
    return -1;
}

/* Reads a quoted field whose opening quote was just consumed on line open_line, into
 * reader->field. *after gets the character that follows the closing quote. */
static int read_quoted(YelpReader *reader, const char *field_name, long open_line,
                       int *after, char *err, size_t err_len)
{
    reader->field_len = 0;
    for (;;) {
        int c = read_char(reader);
        if (c == EOF) {
            snprintf(err, err_len, "%s:%ld: unterminated quote in the %s field (the file "
                     "ends before the closing '\"')", reader->name, open_line, field_name);
            return -1;
        }
        if (c == '"') {
            c = read_char(reader);
            if (c != '"') {
                *after = c;
                break;
            }
        }
        if (reserve_byte(reader) != 0)
            return out_of_memory(reader, open_line, err, err_len);
        reader->field[reader->field_len++] = (char)c;
    }
    if (reserve_byte(reader) != 0)
        return out_of_memory(reader, open_line, err, err_len);
    reader->field[reader->field_len] = '\0';
    return 0;
}

/* The label must be exactly one digit 1..5. */
static int parse_label(const YelpReader *reader, long line, int *label,
                       char *err, size_t err_len)
{
    const char *field = reader->field;
    if (reader->field_len == 1 && field[0] >= '1' && field[0] <= '5') {
        *label = field[0] - '0';
        return 0;
    }
    char shown[24];
    size_t n = 0;
    for (size_t i = 0; i < reader->field_len && n < 20; i++)
        shown[n++] = isprint((unsigned char)field[i]) ? field[i] : '?';
    shown[n] = '\0';
    snprintf(err, err_len, "%s:%ld: label \"%s%s\" is not in 1..5", reader->name, line,
             shown, reader->field_len > n ? "..." : "");
    return -1;
}

/* After the text field only a line end (LF or CRLF) or the end of the file may follow. */
static int finish_record(YelpReader *reader, int after, char *err, size_t err_len)
{
    if (after == '\n' || after == EOF)
        return 0;
    if (after == '\r') {
        int c = read_char(reader);
        if (c == '\n')
            return 0;
        return fail_at(reader, reader->line, err, err_len,
                       "expected a line feed after the carriage return ending the record", c);
    }
    return fail_at(reader, reader->line, err, err_len,
                   "expected end of line after the closing quote of the text field", after);
}

static int read_label(YelpReader *reader, int first, int *label, char *err, size_t err_len)
{
    long line = reader->line;
    if (first != '"')
        return fail_at(reader, line, err, err_len,
                       "expected '\"' to open the label field", first);
    int after;
    if (read_quoted(reader, "label", line, &after, err, err_len) != 0 ||
        parse_label(reader, line, label, err, err_len) != 0)
        return -1;
    if (after != ',')
        return fail_at(reader, reader->line, err, err_len,
                       "expected ',' after the label field", after);
    return 0;
}

static int read_text(YelpReader *reader, char *err, size_t err_len)
{
    int c = read_char(reader);
    long line = reader->line;
    if (c != '"')
        return fail_at(reader, line, err, err_len, "expected '\"' to open the text field", c);
    int after;
    if (read_quoted(reader, "text", line, &after, err, err_len) != 0)
        return -1;
    return finish_record(reader, after, err, err_len);
}

int yelp_reader_next(YelpReader *reader, YelpRecord *record, char *err, size_t err_len)
{
    int first = read_char(reader);
    if (first == EOF)
        return 0;
    long start_line = reader->line;
    int label = 0;
    if (read_label(reader, first, &label, err, err_len) != 0 ||
        read_text(reader, err, err_len) != 0)
        return -1;
    record->label = label;
    record->text = reader->field;
    record->text_len = reader->field_len;
    record->line = start_line;
    return 1;
}

size_t yelp_render_max(const YelpRecord *record)
{
    return 3 + 2 * record->text_len + 1; /* "N: ", text with raw breaks doubled, "\n" */
}

size_t yelp_render(const YelpRecord *record, char *out)
{
    const char *text = record->text;
    size_t len = record->text_len;
    size_t n = 0;
    out[n++] = (char)('0' + record->label);
    out[n++] = ':';
    out[n++] = ' ';
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (c == '\r' && i + 1 < len && text[i + 1] == '\n')
            continue; /* CRLF: the LF writes the break */
        if (c == '\n' || c == '\r') {
            out[n++] = '\\';
            out[n++] = 'n';
        } else {
            out[n++] = c;
        }
    }
    out[n++] = '\n';
    return n;
}

int yelp_write_record(FILE *out, int label, const char *text, size_t text_len)
{
    if (label < 1 || label > 5)
        return -1;
    fprintf(out, "\"%d\",\"", label);
    const char *pos = text;
    const char *end = text + text_len;
    while (pos < end) {
        const char *quote = memchr(pos, '"', (size_t)(end - pos));
        const char *stop = quote ? quote + 1 : end;
        fwrite(pos, 1, (size_t)(stop - pos), out);
        if (quote)
            fputc('"', out); /* the CSV escape: a quote inside a field is doubled */
        pos = stop;
    }
    fputs("\"\n", out);
    return ferror(out) ? -1 : 0;
}
