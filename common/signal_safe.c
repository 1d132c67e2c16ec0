#include "signal_safe.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* The text being made: at most end - at more characters fit, '\0' kept aside. */
typedef struct {
    char *at, *end;
} Text;

static void put_char(Text *text, char c)
{
    if (text->at < text->end)
        *text->at++ = c;
}

static void put_string(Text *text, const char *s)
{
    while (s != NULL && *s != '\0')
        put_char(text, *s++);
}

/* A magnitude in decimal, most significant digit first. */
static void put_digits(Text *text, unsigned long long value)
{
    char digits[24];
    int count = 0;
    do {
        digits[count++] = (char)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    while (count > 0)
        put_char(text, digits[--count]);
}

static void put_long(Text *text, long value)
{
    if (value < 0)
        put_char(text, '-');
    /* the magnitude in unsigned arithmetic, where LONG_MIN's has room */
    put_digits(text, value < 0 ? 0ull - (unsigned long long)value : (unsigned long long)value);
}

/* |value| in tenths, rounded to nearest and ties to even on its exact binary value, as
 * printf rounds: value * 10 is p + residual exactly (fma gives the residual), so the
 * fraction is compared with one half without rounding. */
static unsigned long long tenths_of(double value)
{
    double p = value * 10.0, residual = fma(value, 10.0, -p), whole = floor(p);
    double above_half = (p - whole) - 0.5; /* exact: both sides are within 1 of each other */
    int up = above_half > -residual || (above_half == -residual && fmod(whole, 2.0) != 0.0);
    return (unsigned long long)whole + (unsigned long long)up;
}

/* %.1f, for magnitudes below 10^15 (printf's digits beyond are not needed here: '?'). */
static void put_tenths(Text *text, double value)
{
    if (isnan(value)) {
        put_string(text, signbit(value) ? "-nan" : "nan");
        return;
    }
    if (signbit(value))
        put_char(text, '-');
    value = fabs(value);
    if (isinf(value)) {
        put_string(text, "inf");
        return;
    }
    if (!(value < 1e15)) {
        put_char(text, '?');
        return;
    }
    unsigned long long tenths = tenths_of(value);
    put_digits(text, tenths / 10);
    put_char(text, '.');
    put_char(text, (char)('0' + tenths % 10));
}

/* One conversion at *format (just past its '%'); returns where the format goes on. */
static const char *put_conversion(Text *text, const char *format, va_list *args)
{
    switch (*format) {
    case 'd':
        put_long(text, va_arg(*args, int));
        return format + 1;
    case 'c':
        put_char(text, (char)va_arg(*args, int));
        return format + 1;
    case 's':
        put_string(text, va_arg(*args, const char *));
        return format + 1;
    case 'l':
        if (format[1] == 'd') {
            put_long(text, va_arg(*args, long));
            return format + 2;
        }
        break;
    case '.':
        if (strncmp(format, ".1f", 3) == 0) {
            put_tenths(text, va_arg(*args, double));
            return format + 3;
        }
        break;
    case '%':
        put_char(text, '%');
        return format + 1;
    case '\0':
        return format;
    }
    put_char(text, '?');
    return format + 1;
}

size_t safe_format(char *out, size_t out_len, const char *format, ...)
{
    Text text = {out, out + out_len - 1};
    va_list args;
    va_start(args, format);
    while (*format != '\0') {
        if (*format == '%')
            format = put_conversion(&text, format + 1, &args);
        else
            put_char(&text, *format++);
    }
    va_end(args);
    *text.at = '\0';
    return (size_t)(text.at - out);
}

void safe_write(int fd, const char *text)
{
    size_t left = strlen(text);
    while (left > 0) {
        ssize_t written = write(fd, text, left);
        if (written <= 0)
            return;
        text += written;
        left -= (size_t)written;
    }
}
