#ifndef DTC_PATHS_H
#define DTC_PATHS_H

#include <stddef.h>

/* 1 when both paths name the same existing file (same device and inode) or are the same
 * string: the check every program makes before writing, so it never overwrites an input. */
int same_file(const char *a, const char *b);

/* An output written at the end of a run: find out before the run, not after it, whether it
 * can be. Returns 0 (also for no path), or -1 with "FLAG PATH: cannot open for writing". */
int check_writable(const char *path, const char *flag, char *err, size_t err_len);

#endif
