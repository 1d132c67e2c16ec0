#include "paths.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

int check_writable(const char *path, const char *flag, char *err, size_t err_len)
{
    if (path == NULL)
        return 0;
    FILE *probe = fopen(path, "w");
    if (probe == NULL) {
        snprintf(err, err_len, "%s %s: cannot open for writing", flag, path);
        return -1;
    }
    fclose(probe);
    return 0;
}
