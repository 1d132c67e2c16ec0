/* A table-driven flag parser: each program lists its flags once and gets parsing, range
 * errors and --help text from the same table. */
#ifndef DTC_CLI_H
#define DTC_CLI_H

#include <stddef.h>

/* FLAG_BYTES: a size_t count of bytes, written as a whole number with an optional K, M or G
 * (2^10, 2^20, 2^30, as nccl-tests reads them). */
typedef enum { FLAG_INT, FLAG_FLOAT, FLAG_DOUBLE, FLAG_U64, FLAG_BYTES, FLAG_STRING, FLAG_SWITCH } FlagType;

typedef struct {
    const char *name;    /* without the leading "--" */
    FlagType type;
    size_t offset;       /* where the value goes in the target struct */
    const char *help;
    double min, max;     /* accepted range for numbers (inclusive) */
    char letter;         /* a one-letter spelling, "-b VALUE", or 0 for none */
} Flag;

typedef struct {
    const char *title;   /* heading in --help */
    const Flag *flags;   /* terminated by an entry with name == NULL */
    void *target;
} FlagSet;

/* Parses argv[first..argc) into the sets: "--name value" or "--name=value", and "-L value" for
 * a flag with a letter. Returns 0, or -1
 * with a one-line reason that names the flag. A flag may appear more than once; the last
 * value wins. A value that starts with "--" after a space is taken for a forgotten value
 * ("--csv --steps 3"); "--name=--value" passes it. */
int cli_parse(int argc, char **argv, int first, const FlagSet *sets, int num_sets,
              char *err, size_t err_len);

/* The same, where arguments that are not flags are operands (a program's files, say): up
 * to max_operands of them go into operands, in order, and their count into *num_operands;
 * one more is an error. */
int cli_parse_operands(int argc, char **argv, int first, const FlagSet *sets, int num_sets, const char **operands,
                       int max_operands, int *num_operands, char *err, size_t err_len);

/* 1 when arg is --help or -h. */
int cli_is_help(const char *arg);
/* 1 when any of argv[first..] asks for help: it wins over every other flag, right or wrong.
 * A "-h" that is the value of a flag the sets know ("--prompt -h") is that value, as
 * cli_parse takes it, not a request; with no sets (NULL) every argument counts. */
int cli_wants_help(int argc, char **argv, int first, const FlagSet *sets, int num_sets);

/* The value of the last `--name value` or `--name=value` in argv, or NULL. Used to apply a
 * preset before parsing. */
const char *cli_find(int argc, char **argv, int first, const char *name);

/* A flag's current value in the target, as text ("none" for an unset string). */
void cli_format_value(const Flag *flag, const void *target, char *out, size_t out_len);

void cli_print_help(const FlagSet *sets, int num_sets);

#endif
