#include "paths.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int same_file(const char *a, const char *b)
{
    if (a == NULL || b == NULL)
        return 0;
    if (strcmp(a, b) == 0)
        return 1;
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}


FILE *open_input(const char *path, const char *what, char *err, size_t err_len)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO would block a plain open until a writer came */
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot open %s: %s", path, what, strerror(errno));
        return NULL;
    }
    struct stat st;
    FILE *fp = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        snprintf(err, err_len, "%s: not a regular file (a %s must be one)", path, what);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || (fp = fdopen(fd, "rb")) == NULL)
        snprintf(err, err_len, "%s: cannot open %s: %s", path, what, strerror(errno));
    if (fp == NULL)
        close(fd);
    return fp;
}

const char *path_folder(const char *path, char *out, size_t out_len)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(out, out_len, ".");
    else
        snprintf(out, out_len, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    return slash != NULL ? slash + 1 : path;
}

int check_folder_writable(const char *path, const char *flag, char *err, size_t err_len)
{
    if (path == NULL)
        return 0;
    char folder[4096];
    path_folder(path, folder, sizeof folder);
    struct stat st;
    if (stat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s %s: there is no folder %s", flag, path, folder);
        return -1;
    }
    if (access(folder, W_OK | X_OK) != 0) {
        snprintf(err, err_len, "%s %s: cannot write into %s", flag, path, folder);
        return -1;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, err_len, "%s %s: exists and is not a regular file", flag, path);
        return -1;
    }
    return 0;
}

/* Opens a fresh temporary file next to path (same directory, hence same filesystem, so
 * the final rename is atomic). Returns NULL with err set on failure. */
static FILE *open_temp_beside(const char *path, char *tmp_path, char *err, size_t err_len)
{
    int fd = mkstemp(tmp_path);
    if (fd < 0) {
        snprintf(err, err_len, "%s: cannot create temporary file %s: %s", path, tmp_path, strerror(errno));
        return NULL;
    }
    /* mkstemp creates mode 0600: give the file the permissions fopen would have */
    mode_t mask = umask(0);
    umask(mask);
    FILE *fp = fchmod(fd, 0666 & ~mask) == 0 ? fdopen(fd, "wb") : NULL;
    if (fp == NULL) {
        snprintf(err, err_len, "%s: cannot open temporary file %s: %s", path, tmp_path, strerror(errno));
        close(fd);
        unlink(tmp_path);
    }
    return fp;
}

static void forget(OutputFile *out)
{
    free(out->path);
    free(out->tmp_path);
    *out = (OutputFile){0};
}

FILE *output_open(OutputFile *out, const char *path, char *err, size_t err_len)
{
    static const char suffix[] = ".tmp.XXXXXX";
    *out = (OutputFile){0};
    out->path = strdup(path);
    out->tmp_path = malloc(strlen(path) + sizeof suffix);
    if (out->path == NULL || out->tmp_path == NULL) {
        snprintf(err, err_len, "%s: out of memory for the temporary file name", path);
        forget(out);
        return NULL;
    }
    strcpy(out->tmp_path, path);
    strcat(out->tmp_path, suffix);
    out->fp = open_temp_beside(path, out->tmp_path, err, err_len);
    if (out->fp == NULL)
        forget(out);
    return out->fp;
}

/* Everything written forced to disk before the rename that publishes it; closes out->fp. */
static int flush_and_close(OutputFile *out, char *err, size_t err_len)
{
    int status = 0;
    if (fflush(out->fp) != 0 || fsync(fileno(out->fp)) != 0) {
        snprintf(err, err_len, "%s: cannot flush to disk: %s", out->path, strerror(errno));
        status = -1;
    }
    if (fclose(out->fp) != 0 && status == 0) {
        snprintf(err, err_len, "%s: cannot close: %s", out->path, strerror(errno));
        status = -1;
    }
    out->fp = NULL;
    return status;
}

int output_finish(OutputFile *out, char *err, size_t err_len)
{
    if (out->fp == NULL)
        return 0;
    int status = flush_and_close(out, err, err_len);
    if (status == 0 && rename(out->tmp_path, out->path) != 0) {
        snprintf(err, err_len, "%s: cannot rename %s into place: %s", out->path, out->tmp_path, strerror(errno));
        status = -1;
    }
    if (status != 0)
        unlink(out->tmp_path); /* the previous file at path is untouched */
    forget(out);
    return status;
}

void output_discard(OutputFile *out)
{
    if (out->fp == NULL)
        return;
    fclose(out->fp);
    unlink(out->tmp_path);
    forget(out);
}

int write_file_atomically(const char *path, FileWriter write, const void *what, char *err, size_t err_len)
{
    OutputFile out;
    FILE *fp = output_open(&out, path, err, err_len);
    if (fp == NULL)
        return -1;
    if (write(fp, path, what, err, err_len) != 0) {
        output_discard(&out);
        return -1;
    }
    return output_finish(&out, err, err_len);
}

/* The course folder: the nearest folder above the running program that holds the Makefile
 * and lessons/ (a program lives in build/..., build/sanitize/..., build/mutants/NN/...). */
static int course_folder(char *out, size_t out_len)
{
    char exe[4096];
    ssize_t length = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (length <= 0)
        return -1;
    exe[length] = '\0';
    for (char *slash = strrchr(exe, '/'); slash != NULL && slash != exe; slash = strrchr(exe, '/')) {
        *slash = '\0';
        char makefile[4200], lessons[4200];
        snprintf(makefile, sizeof makefile, "%s/Makefile", exe);
        snprintf(lessons, sizeof lessons, "%s/lessons", exe);
        if (access(makefile, R_OK) == 0 && access(lessons, X_OK) == 0) {
            if ((size_t)snprintf(out, out_len, "%s", exe) >= out_len)
                return -1;
            return 0;
        }
    }
    return -1;
}

const char *course_file(const char *path, char *out, size_t out_len)
{
    char folder[4096];
    if (path == NULL || path[0] == '/' || access(path, F_OK) == 0 || course_folder(folder, sizeof folder) != 0)
        return path;
    if ((size_t)snprintf(out, out_len, "%s/%s", folder, path) >= out_len || access(out, F_OK) != 0)
        return path;
    return out;
}
