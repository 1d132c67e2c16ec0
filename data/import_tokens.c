/* import_tokens: turns a Yelp Review Full CSV file or a plain text file into a token
 * shard (llm.c format, byte-level tokens, vocab 256).
 *
 *   import_tokens --format yelp data/generated/train.csv data/generated/train.bin
 *   import_tokens --format text book.txt book.bin
 *
 * The yelp format renders each review as one line "<label>: <text>\n" (see yelp_csv.h),
 * so the model learns to predict a review from its rating and the rating from the words. */
#include "cli.h"
#include "paths.h"
#include "shard.h"
#include "yelp_csv.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const PROGRAM = "import_tokens";

enum { EXIT_BAD_INPUT = 1, EXIT_BAD_USAGE = 2 };

typedef struct {
    const char *format; /* "yelp" or "text" */
    const char *input;
    const char *output;
} Options;

/* Tokens grow as the input is read; a plain realloc-ed array, since the shard writer only
 * needs a pointer and a count. */
typedef struct {
    uint16_t *data;
    size_t len, cap;
} TokenArray;

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: %s --format yelp|text INPUT OUTPUT\n"
            "  Writes a token shard (llm.c format: 256 x int32 header, uint16 tokens).\n"
            "  --format yelp  INPUT is a Yelp Review Full CSV (\"label\",\"text\" per line);\n"
            "                 each review becomes the line \"<label>: <text>\\n\".\n"
            "  --format text  INPUT is any file; each byte is one token.\n"
            "  Tokens are bytes (vocab 256). OUTPUT is replaced atomically and may not be\n"
            "  the INPUT file.\n"
            "  --help         show this message\n",
            PROGRAM);
}

static int usage_error(const char *message, const char *detail)
{
    fprintf(stderr, "%s: %s%s (see --help)\n", PROGRAM, message, detail);
    return EXIT_BAD_USAGE;
}

static const Flag flags[] = {
    {"format", FLAG_STRING, offsetof(Options, format), "yelp or text", 0, 0, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* Returns -1 to continue, or an exit code (0 for --help). */
static int parse_args(int argc, char **argv, Options *opt)
{
    FlagSet set = {"import", flags, opt};
    if (cli_wants_help(argc, argv, 1, &set, 1)) {
        print_usage(stdout);
        return 0;
    }
    const char *files[2];
    int num_files = 0;
    char err[256];
    if (cli_parse_operands(argc, argv, 1, &set, 1, files, 2, &num_files, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", PROGRAM, err);
        return EXIT_BAD_USAGE;
    }
    if (opt->format == NULL)
        return usage_error("--format is required: yelp or text", "");
    if (strcmp(opt->format, "yelp") != 0 && strcmp(opt->format, "text") != 0)
        return usage_error("--format must be yelp or text, not ", opt->format);
    if (num_files != 2)
        return usage_error("expected INPUT and OUTPUT paths", "");
    opt->input = files[0];
    opt->output = files[1];
    return -1;
}

/* Refuses an OUTPUT that is the INPUT under another name (same path, a hard link, a
 * symlink) or a directory: the import must never destroy the data it reads. */
static int check_paths(const Options *opt)
{
    struct stat in_info, out_info;
    if (stat(opt->input, &in_info) != 0) {
        fprintf(stderr, "%s: %s: %s\n", PROGRAM, opt->input, strerror(errno));
        return EXIT_BAD_INPUT;
    }
    if (same_file(opt->input, opt->output)) {
        fprintf(stderr, "%s: OUTPUT %s is the same file as INPUT %s; refusing to overwrite "
                "it\n", PROGRAM, opt->output, opt->input);
        return EXIT_BAD_USAGE;
    }
    if (stat(opt->output, &out_info) == 0 && S_ISDIR(out_info.st_mode)) {
        fprintf(stderr, "%s: OUTPUT %s is a directory\n", PROGRAM, opt->output);
        return EXIT_BAD_USAGE;
    }
    char err[512];
    if (check_folder_writable(opt->output, "OUTPUT", err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", PROGRAM, err); /* found before the input is read */
        return EXIT_BAD_USAGE;
    }
    return 0;
}

static int reserve_tokens(TokenArray *tokens, size_t extra)
{
    if (tokens->len + extra <= tokens->cap)
        return 0;
    size_t cap = tokens->cap ? tokens->cap : 1 << 20;
    while (cap < tokens->len + extra)
        cap *= 2;
    uint16_t *grown = realloc(tokens->data, cap * sizeof *grown);
    if (grown == NULL)
        return -1;
    tokens->data = grown;
    tokens->cap = cap;
    return 0;
}

static void append_bytes(TokenArray *tokens, const char *bytes, size_t n)
{
    uint16_t *dst = tokens->data + tokens->len;
    for (size_t i = 0; i < n; i++)
        dst[i] = (unsigned char)bytes[i];
    tokens->len += n;
}

static int reserve_line(char **line, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    char *grown = realloc(*line, need);
    if (grown == NULL)
        return -1;
    *line = grown;
    *cap = need;
    return 0;
}

/* Reads every review, rendering each as one line of byte tokens. Returns the record count
 * or -1 after printing the error. */
static long import_yelp(FILE *in, const char *name, TokenArray *tokens)
{
    YelpReader reader;
    yelp_reader_init(&reader, in, name);
    char *line = NULL;
    size_t line_cap = 0;
    long records = 0;
    char err[512];
    YelpRecord record;
    int rc;
    while ((rc = yelp_reader_next(&reader, &record, err, sizeof err)) == 1) {
        size_t need = yelp_render_max(&record);
        if (reserve_line(&line, &line_cap, need) != 0 || reserve_tokens(tokens, need) != 0) {
            snprintf(err, sizeof err, "%s:%ld: out of memory", name, record.line);
            rc = -1;
            break;
        }
        append_bytes(tokens, line, yelp_render(&record, line));
        records++;
    }
    free(line);
    yelp_reader_free(&reader);
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", PROGRAM, err);
        return -1;
    }
    return records;
}

/* Every byte of the file is a token. Returns the byte count or -1 after printing. */
static long import_text(FILE *in, const char *name, TokenArray *tokens)
{
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) {
        if (reserve_tokens(tokens, n) != 0) {
            fprintf(stderr, "%s: %s: out of memory after %zu bytes\n", PROGRAM, name,
                    tokens->len);
            return -1;
        }
        append_bytes(tokens, chunk, n);
    }
    if (ferror(in)) {
        fprintf(stderr, "%s: %s: read failed: %s\n", PROGRAM, name, strerror(errno));
        return -1;
    }
    return (long)tokens->len;
}

static int import_file(const Options *opt, TokenArray *tokens, long *records)
{
    char err[512];
    FILE *in = open_input(opt->input, "file to import", err, sizeof err); /* a FIFO is refused, not waited on */
    if (in == NULL) {
        fprintf(stderr, "%s: %s\n", PROGRAM, err);
        return EXIT_BAD_INPUT;
    }
    int yelp = strcmp(opt->format, "yelp") == 0;
    *records = yelp ? import_yelp(in, opt->input, tokens)
                    : import_text(in, opt->input, tokens);
    fclose(in);
    if (*records < 0)
        return EXIT_BAD_INPUT;
    if (tokens->len == 0) {
        fprintf(stderr, "%s: %s: no %s to import\n", PROGRAM, opt->input,
                yelp ? "records" : "bytes");
        return EXIT_BAD_INPUT;
    }
    return 0;
}

int main(int argc, char **argv)
{
    Options opt = {0};
    int rc = parse_args(argc, argv, &opt);
    if (rc >= 0)
        return rc;
    if ((rc = check_paths(&opt)) != 0)
        return rc;
    TokenArray tokens = {0};
    long records = 0;
    rc = import_file(&opt, &tokens, &records);
    if (rc == 0) {
        char err[512];
        if (shard_write(opt.output, tokens.data, tokens.len, err, sizeof err) != 0) {
            fprintf(stderr, "%s: %s\n", PROGRAM, err);
            rc = EXIT_BAD_INPUT;
        } else if (strcmp(opt.format, "yelp") == 0) {
            printf("%s: %ld records, %zu tokens -> %s\n", PROGRAM, records, tokens.len,
                   opt.output);
        } else {
            printf("%s: %zu bytes, %zu tokens -> %s\n", PROGRAM, tokens.len, tokens.len,
                   opt.output);
        }
    }
    free(tokens.data);
    return rc;
}
