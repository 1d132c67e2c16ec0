/* The fuzzers' shared piece: the readers take a path, so each input becomes an in-memory
 * file (memfd) named by /proc/self/fd/N. */
#ifndef DTC_FUZZ_INPUT_H
#define DTC_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

/* The input as a file: its descriptor (close it after), and its path in path. -1 on failure. */
static inline int fuzz_input_file(const uint8_t *data, size_t size, char *path, size_t path_len)
{
    int fd = memfd_create("fuzz_input", 0);
    if (fd < 0)
        return -1;
    for (size_t done = 0; done < size;) {
        ssize_t wrote = write(fd, data + done, size - done);
        if (wrote <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)wrote;
    }
    snprintf(path, path_len, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
