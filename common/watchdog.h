/* A rank stuck in a collective that its peers never join (collectives issued in different
 * orders, a rank that skipped one) waits forever. The watchdog turns that into an error:
 * armed with a deadline, it ends the process with a one-line message if the deadline passes
 * first; mpiexec then ends the other ranks. */
#ifndef DTC_WATCHDOG_H
#define DTC_WATCHDOG_H

/* Arms (or re-arms) the watchdog for `seconds` (0 disarms). The message is printed as is. */
void watchdog_arm(double seconds, const char *message);
void watchdog_disarm(void);

#endif
