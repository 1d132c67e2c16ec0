#ifndef DTC_PATHS_H
#define DTC_PATHS_H

/* 1 when both paths name the same existing file (same device and inode) or are the same
 * string: the check every program makes before writing, so it never overwrites an input. */
int same_file(const char *a, const char *b);

#endif
