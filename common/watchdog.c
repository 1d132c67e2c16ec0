#include "watchdog.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

#include "signal_safe.h"
#include "timer.h"

/* The handler reads these while the code it interrupted may be changing them: `at` is the
 * switch, atomic, cleared before the rest changes and set after. */
static struct {
    _Atomic double at; /* monotonic seconds; 0 = disarmed */
    double span; /* the seconds it was armed for */
    DeadlineReport report;
    const void *context;
} deadlines[NUM_DEADLINES];

static int handler_installed;

static void set_timer(double seconds)
{
    struct itimerval timer = {0};
    timer.it_value.tv_sec = (time_t)seconds;
    timer.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    if (seconds > 0 && timer.it_value.tv_sec == 0 && timer.it_value.tv_usec == 0)
        timer.it_value.tv_usec = 1; /* due now: a zero would disarm the timer instead */
    setitimer(ITIMER_REAL, &timer, NULL);
}

/* The timer goes off at the soonest armed deadline. */
static void reset_timer(void)
{
    double soonest = 0, now = now_seconds();
    for (int d = 0; d < NUM_DEADLINES; d++)
        if (deadlines[d].at > 0 && (soonest == 0 || deadlines[d].at < soonest))
            soonest = deadlines[d].at;
    set_timer(soonest == 0 ? 0 : (soonest > now ? soonest - now : 1e-6));
}

/* The report formats and writes its text here, in the handler, with signal_safe.h alone: the
 * code it interrupted may be anywhere, printf included, and runs on when the report finds
 * that it is not time to end yet. */
static void on_deadline(int signal_number)
{
    (void)signal_number;
    int interrupted_errno = errno; /* a report that returns 0 may have failed an open() */
    double now = now_seconds();
    for (int d = 0; d < NUM_DEADLINES; d++)
        if (deadlines[d].at > 0 && deadlines[d].at <= now + 1e-3) {
            if (deadlines[d].report(STDERR_FILENO, deadlines[d].context))
                _exit(3);
            deadlines[d].at = now + deadlines[d].span; /* not yet: the same span again */
        }
    reset_timer(); /* early, or waiting again */
    errno = interrupted_errno;
}

void watchdog_arm(Deadline which, double seconds, DeadlineReport report, const void *context)
{
    if (seconds <= 0) {
        watchdog_disarm(which);
        return;
    }
    if (!handler_installed) {
        struct sigaction action = {0};
        action.sa_handler = on_deadline;
        sigaction(SIGALRM, &action, NULL);
        handler_installed = 1;
    }
    deadlines[which].at = 0; /* the handler skips it while it changes */
    deadlines[which].report = report;
    deadlines[which].context = context;
    deadlines[which].span = seconds;
    deadlines[which].at = now_seconds() + seconds;
    reset_timer();
}

void watchdog_disarm(Deadline which)
{
    if (deadlines[which].at == 0)
        return;
    deadlines[which].at = 0;
    reset_timer();
}

int watchdog_check_seconds(const char *flag, double seconds, char *err, size_t err_len)
{
    if (!(seconds > 0 && seconds < 1e-3))
        return 0;
    snprintf(err, err_len, "%s %g: a timer that short cannot be set (the least is 0.001 s; 0 turns it off)", flag,
             seconds);
    return -1;
}

int watchdog_report_text(int fd, const void *text)
{
    safe_write(fd, text);
    safe_write(fd, "\n");
    return 1;
}
