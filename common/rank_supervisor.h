/* A rank's process, started by mpiexec with other ranks, splits in two before MPI starts:
 * the child runs the rank, the parent waits for it. A rank that is killed (kill -9, the
 * kernel's out-of-memory killer, a crash) cannot say so itself; its parent then prints
 *
 *   rank 1 (pid 5447) was killed by signal 9 (Killed) at step 135, in all_reduce, its collective 7428, ...
 *
 * from the state the rank last shared with it, and exits with status 128 + the signal
 * (mpiexec's banner shows that code). A rank that exits on its own has said why: its parent
 * exits with its status, silently. */
#ifndef DTC_RANK_SUPERVISOR_H
#define DTC_RANK_SUPERVISOR_H

#include "peer_state.h"

/* In the child (or when not under mpiexec with 2 or more ranks: PMI_SIZE), returns where
 * the rank keeps a copy of its PeerState for its parent to read (NULL when unsupervised).
 * The parent never returns. */
PeerState *rank_supervise(void);

#endif
