/* The Yelp Review Full CSV format, read and written.
 *
 * Every record is  "label","text"  followed by a line feed (CRLF is accepted too). The
 * label is 1..5. Inside a quoted field "" stands for one ". A line break inside a review
 * is written as the two characters backslash and n; they stay those two characters here.
 * A quoted field may in general CSV also hold a raw line break: the real Yelp files never
 * do, but the reader accepts it and keeps it in the text.
 *
 * The generator writes with yelp_write_record and the importer reads with YelpReader, so
 * the course's own corpus goes through the same parser as the real dataset. */
#ifndef DTC_YELP_CSV_H
#define DTC_YELP_CSV_H

#include <stddef.h>
#include <stdio.h>

typedef struct {
    int label;       /* 1..5 */
    const char *text; /* the text field with "" un-doubled, NUL-terminated; owned by the
                       * reader and valid until its next call */
    size_t text_len;  /* bytes in text (the text may itself hold NUL bytes) */
    long line;        /* 1-based line where the record starts */
} YelpRecord;

/* Streams records from a FILE* (use fmemopen to parse a buffer). */
typedef struct {
    FILE *in;
    const char *name;     /* file name used in error messages */
    long line;            /* 1-based line of the character read last */
    int after_newline;    /* the last character was '\n': the next one starts a new line */
    char *field;          /* growing buffer for the field being read */
    size_t field_len, field_cap;
} YelpReader;

void yelp_reader_init(YelpReader *reader, FILE *in, const char *name);

/* Reads the next record. Returns 1 with *record filled, 0 at a clean end of input, or -1
 * with one line "name:line: problem" in err for malformed input (the reader is then
 * unusable) or an allocation failure. */
int yelp_reader_next(YelpReader *reader, YelpRecord *record, char *err, size_t err_len);

void yelp_reader_free(YelpReader *reader);

/* The training form of a review is one line: "<label>: <text>\n", e.g.
 * "4: Great tacos, friendly staff.\n". The text keeps its backslash-n pairs as they are;
 * a raw line break (CRLF, LF or lone CR) inside the field becomes the two characters
 * backslash-n as well, so that every review stays exactly one line that starts with its
 * rating. */

/* Upper bound on the bytes yelp_render writes for this record. */
size_t yelp_render_max(const YelpRecord *record);

/* Writes the line into out, which must hold yelp_render_max bytes; returns the bytes
 * written (no NUL terminator). */
size_t yelp_render(const YelpRecord *record, char *out);

/* Appends one record to out, doubling every " in the text. Returns 0, or -1 when the
 * label is not 1..5 or the write failed. */
int yelp_write_record(FILE *out, int label, const char *text, size_t text_len);

#endif
