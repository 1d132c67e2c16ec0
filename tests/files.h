/* What the tests do to files before they hand them to a program: copy one, damage a few of
 * its bytes, cut it short, and compare two. Each returns 0 (or, for files_same, 1 when
 * equal), or -1 when a file cannot be read or written. */
#ifndef DTC_TESTS_FILES_H
#define DTC_TESTS_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline int files_copy(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in != NULL ? fopen(to, "wb") : NULL;
    char chunk[1 << 16];
    size_t got;
    int failed = out == NULL;
    while (!failed && (got = fread(chunk, 1, sizeof chunk, in)) > 0)
        failed = fwrite(chunk, 1, got, out) != got;
    failed |= in == NULL || ferror(in);
    if (in != NULL)
        fclose(in);
    if (out != NULL)
        failed |= fclose(out) != 0;
    return failed ? -1 : 0;
}

/* n bytes written over the file's own at offset (or after its end, offset -1). */
static inline int files_patch(const char *path, long offset, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "r+b");
    if (f == NULL)
        return -1;
    int failed = fseek(f, offset < 0 ? 0 : offset, offset < 0 ? SEEK_END : SEEK_SET) != 0;
    failed = failed || fwrite(bytes, 1, n, f) != n;
    failed |= fclose(f) != 0;
    return failed ? -1 : 0;
}

static inline int files_cut(const char *path, long size)
{
    return truncate(path, size);
}

static inline long files_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    fclose(f);
    return size;
}

/* The figure in the named column of a one-row CSV's text (a header line, then the row), as
 * the lessons' --summary writes it. */
static inline double files_csv_figure(const char *csv, const char *column)
{
    const char *values = strchr(csv, '\n') + 1;
    int index = 0;
    for (const char *at = csv; at < values; at += strcspn(at, ",\n") + 1, index++)
        if (strncmp(at, column, strlen(column)) == 0 && strchr(",\n", at[strlen(column)]) != NULL)
            break;
    for (const char *at = values;; at += strcspn(at, ",\n") + 1)
        if (index-- == 0)
            return strtod(at, NULL);
}

/* The file at path holds text, and nothing else. */
/* The whole text of path into buf (len bytes, its end marked by a 0); the bytes read, or -1
 * when it cannot be read or does not fit. */
static inline long files_read_into(const char *path, char *buf, size_t len)
{
    FILE *in = fopen(path, "r");
    if (in == NULL)
        return -1;
    size_t length = fread(buf, 1, len - 1, in);
    int whole = feof(in) && !ferror(in);
    fclose(in);
    buf[length] = '\0';
    return whole ? (long)length : -1;
}

static inline int files_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    int failed = fputs(text, f) == EOF;
    failed |= fclose(f) != 0;
    return failed ? -1 : 0;
}

static int files_compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in folder dir (without . and ..), sorted, each followed by a newline, into out
 * (as `ls` prints them); 0, or -1. */
static inline int files_list(const char *dir, char *out, size_t out_len)
{
    DIR *folder = opendir(dir);
    if (folder == NULL)
        return -1;
    char *names[256];
    int count = 0;
    for (struct dirent *entry; (entry = readdir(folder)) != NULL && count < 256;)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0)
            names[count++] = strdup(entry->d_name);
    closedir(folder);
    qsort(names, (size_t)count, sizeof *names, files_compare_names);
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < count; i++) {
        used += (size_t)snprintf(out + used, used < out_len ? out_len - used : 0, "%s\n", names[i]);
        free(names[i]);
    }
    return used < out_len ? 0 : -1;
}

/* How many names folder dir holds (without . and ..), or -1. */
static inline int files_count(const char *dir)
{
    DIR *folder = opendir(dir);
    if (folder == NULL)
        return -1;
    int count = 0;
    for (struct dirent *entry; (entry = readdir(folder)) != NULL;)
        count += strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0;
    closedir(folder);
    return count;
}

/* A folder of plain files removed, with them (a test's own temporary folder). */
static inline void files_remove_dir(const char *dir)
{
    DIR *folder = opendir(dir);
    if (folder == NULL)
        return;
    char path[512];
    for (struct dirent *entry; (entry = readdir(folder)) != NULL;)
        if (strcmp(entry->d_name, ".") != 0 && strcmp(entry->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", dir, entry->d_name);
            unlink(path);
        }
    closedir(folder);
    rmdir(dir);
}

/* The first `max` lines of a text file into rows (without their newlines, up to 255 bytes
 * each); how many lines it has (possibly more than max), or -1. */
static inline int files_lines(const char *path, char (*rows)[256], int max)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return -1;
    char line[256];
    int count = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        if (count < max)
            snprintf(rows[count], sizeof rows[count], "%.*s", (int)strcspn(line, "\n"), line);
        count++;
    }
    fclose(f);
    return count;
}

/* 1 when both files hold the same bytes, 0 when not, -1 when one cannot be read. */
static inline int files_same(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa != NULL && fb != NULL ? 1 : -1;
    char ca[1 << 16], cb[1 << 16];
    while (same == 1) {
        size_t got_a = fread(ca, 1, sizeof ca, fa), got_b = fread(cb, 1, sizeof cb, fb);
        if (got_a != got_b || memcmp(ca, cb, got_a) != 0)
            same = 0;
        else if (got_a == 0)
            break;
    }
    if (fa != NULL)
        fclose(fa);
    if (fb != NULL)
        fclose(fb);
    return same;
}

#endif
