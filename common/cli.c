#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The flag called name, or (name NULL) the one spelled with letter. */
static const Flag *find_flag(const FlagSet *sets, int num_sets, const char *name, char letter, void **target)
{
    for (int s = 0; s < num_sets; s++)
        for (const Flag *f = sets[s].flags; f->name != NULL; f++)
            if (name != NULL ? strcmp(f->name, name) == 0 : f->letter != 0 && f->letter == letter) {
                *target = sets[s].target;
                return f;
            }
    return NULL;
}

/* "64M": a whole number of bytes with an optional K, M or G (powers of 2^10). */
static int parse_bytes(const char *text, double *value)
{
    char *end;
    errno = 0;
    double number = strtod(text, &end);
    const char *units = "KMG", *unit = *end != '\0' ? strchr(units, *end) : NULL;
    if (unit != NULL && end[1] == '\0') {
        number *= (double)(1ull << (10 * (unit - units + 1)));
        end++;
    }
    *value = number;
    return (end == text || *end != '\0' || errno == ERANGE) ? -1 : 0;
}

/* Parses a whole string as a number; rejects trailing garbage, empty strings and overflow. */
static int parse_number(const char *text, double *value)
{
    char *end;
    errno = 0;
    *value = strtod(text, &end);
    return (end == text || *end != '\0' || errno == ERANGE) ? -1 : 0;
}

/* A range's end as a reader writes it: whole numbers in full (2^53 as 9007199254740992). */
static void format_limit(double value, char *out, size_t out_len)
{
    if (value == floor(value) && fabs(value) < 1e17)
        snprintf(out, out_len, "%.0f", value);
    else
        snprintf(out, out_len, "%.15g", value);
}

static int store_number(const Flag *flag, void *target, const char *text, char *err, size_t err_len)
{
    double value;
    if ((flag->type == FLAG_BYTES ? parse_bytes(text, &value) : parse_number(text, &value)) != 0) {
        snprintf(err, err_len, "--%s: '%s' is not a %s", flag->name, text,
                 flag->type == FLAG_BYTES ? "size (a whole number of bytes, or with K, M or G)" : "number");
        return -1;
    }
    if (!isfinite(value)) { /* NaN fails every comparison below: it must not pass them */
        snprintf(err, err_len, "--%s: '%s' is not a finite number", flag->name, text);
        return -1;
    }
    if (flag->type != FLAG_FLOAT && flag->type != FLAG_DOUBLE && value != (double)(int64_t)value) {
        snprintf(err, err_len, "--%s: '%s' is not a whole number", flag->name, text);
        return -1;
    }
    if (value < flag->min || value > flag->max) {
        char low[32], high[32];
        format_limit(flag->min, low, sizeof low);
        format_limit(flag->max, high, sizeof high);
        snprintf(err, err_len, "--%s: %s is outside %s..%s", flag->name, text, low, high);
        return -1;
    }
    char *field = (char *)target + flag->offset;
    if (flag->type == FLAG_INT)
        *(int *)field = (int)value;
    else if (flag->type == FLAG_U64)
        *(uint64_t *)field = (uint64_t)value;
    else if (flag->type == FLAG_DOUBLE)
        *(double *)field = value;
    else if (flag->type == FLAG_BYTES)
        *(size_t *)field = (size_t)value;
    else
        *(float *)field = (float)value;
    return 0;
}

/* "--name value" or "--name=value": the name's length in arg (after "--"), and in *inline_value
 * the text after '=' (NULL when there is none). */
static size_t split_flag(const char *arg, const char **inline_value)
{
    const char *equals = strchr(arg + 2, '=');
    *inline_value = equals != NULL ? equals + 1 : NULL;
    return equals != NULL ? (size_t)(equals - arg - 2) : strlen(arg + 2);
}

/* "-L": a flag spelled by its letter. */
static int by_letter(const char *arg)
{
    return arg[0] == '-' && arg[1] != '-' && arg[1] != '\0' && arg[2] == '\0';
}

/* The flag of the sets that arg spells ("--name", "--name=value" or "-L"), or NULL; in
 * *inline_value the text after '=' (NULL when there is none). */
static const Flag *flag_spelled(const char *arg, const FlagSet *sets, int num_sets, void **target,
                                const char **inline_value)
{
    *inline_value = NULL;
    if (by_letter(arg))
        return find_flag(sets, num_sets, NULL, arg[1], target);
    char name[64];
    size_t length = split_flag(arg, inline_value);
    if (length >= sizeof name)
        return NULL;
    snprintf(name, sizeof name, "%.*s", (int)length, arg + 2);
    return find_flag(sets, num_sets, name, 0, target);
}

int cli_parse(int argc, char **argv, int first, const FlagSet *sets, int num_sets,
              char *err, size_t err_len)
{
    int none = 0;
    return cli_parse_operands(argc, argv, first, sets, num_sets, NULL, 0, &none, err, err_len);
}

int cli_parse_operands(int argc, char **argv, int first, const FlagSet *sets, int num_sets, const char **operands,
                       int max_operands, int *num_operands, char *err, size_t err_len)
{
    *num_operands = 0;
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i], *text = NULL;
        int letter = by_letter(arg);
        if (strncmp(arg, "--", 2) != 0 && !letter && *num_operands < max_operands) {
            operands[(*num_operands)++] = arg;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0 && !letter) {
            snprintf(err, err_len, "unexpected argument '%s' (%s; see --help)", arg,
                     max_operands > 0 ? "one too many" : "flags start with --");
            return -1;
        }
        void *target;
        const Flag *flag = flag_spelled(arg, sets, num_sets, &target, &text);
        if (flag == NULL) {
            const char *unused;
            snprintf(err, err_len, "unknown flag %s%.*s (see --help)", letter ? "" : "--",
                     (int)(letter ? 2 : split_flag(arg, &unused)), letter ? arg : arg + 2);
            return -1;
        }
        const char *name = flag->name;
        if (flag->type == FLAG_SWITCH) {
            if (text != NULL) {
                snprintf(err, err_len, "flag --%s takes no value (given '%s')", name, text);
                return -1;
            }
            *(int *)((char *)target + flag->offset) = 1;
            continue;
        }
        if (text == NULL && (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)) {
            snprintf(err, err_len, "flag %s needs a value", arg);
            return -1;
        }
        if (text == NULL)
            text = argv[++i];
        if (flag->type == FLAG_STRING)
            *(const char **)((char *)target + flag->offset) = text;
        else if (store_number(flag, target, text, err, err_len) != 0)
            return -1;
    }
    return 0;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* 1 when arg is one of the sets' flags that takes its value from the next argument. */
static int takes_next_argument(const char *arg, const FlagSet *sets, int num_sets)
{
    void *target;
    const char *inline_value;
    if (strncmp(arg, "--", 2) != 0 && !by_letter(arg))
        return 0;
    const Flag *flag = flag_spelled(arg, sets, num_sets, &target, &inline_value);
    return flag != NULL && flag->type != FLAG_SWITCH && inline_value == NULL;
}

int cli_wants_help(int argc, char **argv, int first, const FlagSet *sets, int num_sets)
{
    for (int i = first; i < argc; i++) {
        if (cli_is_help(argv[i]))
            return 1;
        /* the value cli_parse would take: the next argument, unless it starts with "--" */
        if (sets != NULL && i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0 &&
            takes_next_argument(argv[i], sets, num_sets))
            i++;
    }
    return 0;
}

const char *cli_find(int argc, char **argv, int first, const char *name)
{
    const char *found = NULL;
    for (int i = first; i < argc; i++) {
        const char *text;
        if (strncmp(argv[i], "--", 2) != 0 || split_flag(argv[i], &text) != strlen(name) ||
            strncmp(argv[i] + 2, name, strlen(name)) != 0)
            continue;
        if (text != NULL)
            found = text;
        else if (i + 1 < argc)
            found = argv[i + 1];
    }
    return found;
}

static const char *type_hint(FlagType type)
{
    switch (type) {
    case FLAG_INT: case FLAG_U64: return "N";
    case FLAG_BYTES: return "SIZE";
    case FLAG_FLOAT: case FLAG_DOUBLE: return "X";
    case FLAG_STRING: return "S";
    default: return "";
    }
}

/* Short when short is exact ("0.003"), else every digit a float needs to read back the same. */
static void format_float(float value, char *out, size_t out_len)
{
    snprintf(out, out_len, "%g", value);
    if (strtof(out, NULL) != value)
        snprintf(out, out_len, "%.9g", value);
}

/* "64M" when a whole number of K, M or G, else the bytes. */
static void format_bytes(size_t bytes, char *out, size_t out_len)
{
    const char *units = "GMK";
    for (int u = 0; u < 3; u++) {
        size_t unit = (size_t)1 << (10 * (3 - u));
        if (bytes >= unit && bytes % unit == 0) {
            snprintf(out, out_len, "%zu%c", bytes / unit, units[u]);
            return;
        }
    }
    snprintf(out, out_len, "%zu", bytes);
}

void cli_format_value(const Flag *flag, const void *target, char *out, size_t out_len)
{
    const char *field = (const char *)target + flag->offset;
    switch (flag->type) {
    case FLAG_INT: case FLAG_SWITCH: snprintf(out, out_len, "%d", *(const int *)field); break;
    case FLAG_U64: snprintf(out, out_len, "%llu", (unsigned long long)*(const uint64_t *)field); break;
    case FLAG_FLOAT: format_float(*(const float *)field, out, out_len); break;
    case FLAG_DOUBLE: snprintf(out, out_len, "%g", *(const double *)field); break;
    case FLAG_BYTES: format_bytes(*(const size_t *)field, out, out_len); break;
    default: {
        const char *text = *(const char *const *)field;
        snprintf(out, out_len, "%s", text ? text : "none");
    }
    }
}

void cli_print_help(const FlagSet *sets, int num_sets)
{
    for (int s = 0; s < num_sets; s++) {
        printf("\n%s:\n", sets[s].title);
        for (const Flag *f = sets[s].flags; f->name != NULL; f++) {
            char left[64], value[64];
            if (f->letter != 0)
                snprintf(left, sizeof left, "-%c, --%s %s", f->letter, f->name, type_hint(f->type));
            else
                snprintf(left, sizeof left, "--%s %s", f->name, type_hint(f->type));
            cli_format_value(f, sets[s].target, value, sizeof value);
            if (f->type == FLAG_SWITCH)
                printf("  %-24s %s\n", left, f->help);
            else
                printf("  %-24s %s [%s]\n", left, f->help, value);
        }
    }
}
