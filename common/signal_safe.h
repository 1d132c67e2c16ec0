/* Text made inside a signal handler. A handler may only call functions that are
 * async-signal-safe (POSIX lists them: write, open, read, _exit, ...): printf's family is not
 * one, since the code a signal interrupts may be inside it, holding its locks or its
 * buffers. These format into the caller's buffer with plain stores and reentrant calls
 * (strlen, fma, floor), and write with write(2) alone. Depends on nothing of the course. */
#ifndef DTC_SIGNAL_SAFE_H
#define DTC_SIGNAL_SAFE_H

#include <stddef.h>

/* snprintf for %d (int), %ld (long), %s, %c (int), %.1f (double, rounded as printf rounds)
 * and %%; any other conversion is written as '?'. Always ends out with '\0' (out_len > 0);
 * returns the length written, cut to out_len - 1. */
size_t safe_format(char *out, size_t out_len, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* All of text to fd, with write(2) alone; errors are ignored (there is no one to tell). */
void safe_write(int fd, const char *text);

#endif
