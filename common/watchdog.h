/* Deadlines that end the process with a message when they pass. Two kinds:
 *   DEADLINE_STEP  a whole training step (--step-timeout): a step that never ends, on one
 *                  rank or many;
 *   DEADLINE_WAIT  one communicator call that waits for the other ranks (--wait-timeout): a
 *                  rank waiting for a peer that has stopped, died in set-up, or joined
 *                  another collective.
 * One timer serves both, set for whichever passes first. When one passes, its report writes
 * what is known (it runs inside the signal handler, once, just before the process ends with
 * status 3); mpiexec then ends the other ranks. A report may instead find that the wait is
 * still a healthy one (a peer busy with work the others wait for): the deadline then waits
 * the same span again. */
#ifndef DTC_WATCHDOG_H
#define DTC_WATCHDOG_H

#include <stddef.h>

typedef enum { DEADLINE_STEP, DEADLINE_WAIT, NUM_DEADLINES } Deadline;

/* Writes the message of a passed deadline to the file descriptor fd and returns 1 (the
 * process ends); or writes nothing and returns 0 when it is not time to end yet. It runs in
 * a signal handler: async-signal-safe calls only (signal_safe.h formats and writes). */
typedef int (*DeadlineReport)(int fd, const void *context);

/* A deadline's length as a flag gives it: 0 (none), or from 1 ms up, the least the timer
 * keeps. 0, or -1 with a one-line reason naming the flag. */
int watchdog_check_seconds(const char *flag, double seconds, char *err, size_t err_len);

/* Arms (or re-arms) `which` for `seconds` from now (0 disarms it). */
void watchdog_arm(Deadline which, double seconds, DeadlineReport report, const void *context);
void watchdog_disarm(Deadline which);

/* A DeadlineReport for a fixed message: context is the text (it must outlive the deadline). */
int watchdog_report_text(int fd, const void *text);

#endif
