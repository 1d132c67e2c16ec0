#include "watchdog.h"

#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

static char pending_message[512];

/* Only async-signal-safe calls here: write and _exit. */
static void on_deadline(int signal_number)
{
    (void)signal_number;
    ssize_t written = write(STDERR_FILENO, pending_message, strlen(pending_message));
    (void)written;
    _exit(3);
}

static void set_timer(double seconds)
{
    struct itimerval timer = {0};
    timer.it_value.tv_sec = (time_t)seconds;
    timer.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &timer, NULL);
}

void watchdog_arm(double seconds, const char *message)
{
    if (seconds <= 0) {
        watchdog_disarm();
        return;
    }
    size_t length = strlen(message);
    if (length > sizeof pending_message - 2)
        length = sizeof pending_message - 2;
    memcpy(pending_message, message, length);
    pending_message[length] = '\n';
    pending_message[length + 1] = '\0';
    struct sigaction action = {0};
    action.sa_handler = on_deadline;
    sigaction(SIGALRM, &action, NULL);
    set_timer(seconds);
}

void watchdog_disarm(void)
{
    set_timer(0);
}
