#ifndef DTC_PATHS_H
#define DTC_PATHS_H

#include <stddef.h>
#include <stdio.h>

/* 1 when both paths name the same existing file (same device and inode) or are the same
 * string: the check every program makes before writing, so it never overwrites an input. */
int same_file(const char *a, const char *b);


/* Opens an input for reading, never blocking on it: a FIFO, a device or a folder is refused
 * ("PATH: not a regular file"), as is one that cannot be opened ("PATH: cannot open WHAT:
 * reason"). NULL then, with that one line in err. */
FILE *open_input(const char *path, const char *what, char *err, size_t err_len);

/* A course file named relative to the course folder (data/generated/train.bin), found from
 * any working folder: path itself when it is absolute or exists from here; else the same
 * path under the course folder (the one above build/ that holds the running program) when
 * it exists there, written into out; else path as given, for the reader to refuse. */
const char *course_file(const char *path, char *out, size_t out_len);

/* The folder path lies in ("." for a bare name, "/" for one at the root) into out; returns
 * the file's own name within path. */
const char *path_folder(const char *path, char *out, size_t out_len);

/* A file written by rename into its folder (write_file_atomically): find out before the run
 * that the folder exists and can be written, without touching a file already at path.
 * Returns 0 (also for no path), or -1 with "FLAG PATH: ..." naming the problem. */
int check_folder_writable(const char *path, const char *flag, char *err, size_t err_len);

/* Writes what a FileWriter writes to fp; 0, or -1 with one line in err naming path. */
typedef int (*FileWriter)(FILE *fp, const char *path, const void *what, char *err, size_t err_len);

/* Writes path through write: into a temporary file beside it, flushed to disk, then renamed
 * over it, so a crash leaves either the previous file or the complete new one, never half.
 * Returns 0, or -1 with one line in err (the previous file untouched). */
int write_file_atomically(const char *path, FileWriter write, const void *what, char *err, size_t err_len);

/* An output written as the program goes (a run's per-step CSV) the same way: its rows go to
 * a temporary file beside path, PATH.tmp.XXXXXX (which `tail -f` can follow), and
 * output_finish renames it over path once complete. A program killed before that leaves the
 * previous file at path as it was, and its rows so far in the temporary file. */
typedef struct {
    FILE *fp;       /* where to write; NULL when not open */
    char *path, *tmp_path;
} OutputFile;

/* Opens out's temporary file for path: its FILE *, or NULL with one line in err. */
FILE *output_open(OutputFile *out, const char *path, char *err, size_t err_len);

/* Flushes out to disk, closes it and renames it over its path: 0, or -1 with one line in
 * err (the temporary file removed, the previous file untouched). Nothing to do if not open. */
int output_finish(OutputFile *out, char *err, size_t err_len);

/* Closes out and removes its temporary file: what was written is not wanted. */
void output_discard(OutputFile *out);

#endif
