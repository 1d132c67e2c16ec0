/* Running the built programs from tests: exit status, and captured output. */
#ifndef DTC_TESTS_SHELL_H
#define DTC_TESTS_SHELL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Runs a shell command; returns its exit status, or -1 when it did not exit. */
static inline int shell_status(const char *command)
{
    int status = system(command);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs a command with stderr joined to stdout; keeps the first len-1 bytes of the output in
 * out. Returns the exit status, or -1. */
static inline int shell_output(const char *command, char *out, size_t len)
{
    char wrapped[4200];
    snprintf(wrapped, sizeof wrapped, "( %.4096s ) 2>&1", command);
    FILE *pipe = popen(wrapped, "r");
    if (pipe == NULL)
        return -1;
    size_t used = 0;
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, pipe)) > 0) {
        size_t room = len - 1 - used;
        size_t take = got < room ? got : room;
        memcpy(out + used, chunk, take);
        used += take;
    }
    out[used] = '\0';
    int status = pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A fresh folder under /tmp named after what uses it (dir holds at least 64 bytes); NULL
 * if it could not be made. */
static inline char *shell_temp_dir(char *dir, size_t len, const char *user)
{
    snprintf(dir, len, "/tmp/dtc_%s_XXXXXX", user);
    return mkdtemp(dir);
}

/* scripts/grade.sh on one lesson and binary, only the checks named in the comma list checks
 * (every check when it is empty), with a short wait timeout so that a hung mistake fails
 * fast; its output in out, its exit status returned. */
static inline int shell_grade_checks(const char *number, const char *binary, const char *checks, char *out,
                                     size_t len)
{
    char command[1024];
    snprintf(command, sizeof command, "GRADE_STEP_TIMEOUT=60 GRADE_WAIT_TIMEOUT=10 scripts/grade.sh %s %s%s%s",
             number, binary, checks[0] != '\0' ? " --check " : "", checks);
    return shell_output(command, out, len);
}

/* Every check of the lesson. */
static inline int shell_grade(const char *number, const char *binary, char *out, size_t len)
{
    return shell_grade_checks(number, binary, "", out, len);
}

static inline void shell_remove_dir(const char *dir)
{
    char command[256];
    snprintf(command, sizeof command, "rm -rf '%s'", dir);
    shell_status(command);
}

#endif
