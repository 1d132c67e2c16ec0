/* The communicator every data-parallel lesson talks through. Backends: MPI (MPICH) on host
 * buffers, GPU buffers staged through host memory; and, in the CUDA build, NCCL on GPU
 * buffers (docs/gpu.md). Lessons see only Comm and CommRequest, never MPI or NCCL handles.
 *
 * A buffer handed to a non-blocking call belongs to the communicator until comm_wait (or a
 * comm_test that says done): do not read, write or free it before. Under NCCL nothing
 * blocks the host: a blocking call, or comm_wait, orders the GPU's later work after the
 * collective, and the host sees the result once it reads the buffer back (to_host).
 *
 * Every call is recorded in the communication log (comm_log.h) with where training was when
 * it was made; a wait or test on a request with nothing in flight does nothing and is not.
 *
 * Every call returns 0, or -1 with a one-line message (naming the operation and the
 * rank) available from comm_error(). comm_check() turns a -1 into that message on stderr
 * and an abort of the whole job, so no rank is left waiting on a dead peer. */
#ifndef DTC_COMM_H
#define DTC_COMM_H

#include <stddef.h>

#include "float16.h"

typedef enum { REDUCE_SUM, REDUCE_AVG } ReduceOp;

typedef struct Comm Comm;

typedef struct {
    Comm *comm;
    void *backend;    /* the backend's request handle, owned by the communicator */
    const void *started_by; /* the backend's table: a NCCL run still sends host buffers to MPI */
    void *buffer;     /* where the result lands (an all-reduce's floats are averaged there) */
    size_t count;
    int average;      /* scale buffer by 1/size when it completes */
    int active;
    long log_id;      /* names the request in the communication log (comm_log.h) */
    const char *op;   /* what it is, for the log: "all_reduce", "all_gather" */
} CommRequest;

/* Starts the communicator (MPI_Init if nobody has). Without mpiexec: world size 1. NULL
 * when it cannot, with the one-line reason in err, which may be "" (tasks a launcher started
 * one by one: only the first says why); the program then ends with status 2. */
Comm *comm_init(int *argc, char ***argv, char *err, size_t err_len);
/* After comm_init returned NULL: says err (if any) as "program: err" on stderr; returns 2,
 * the status to end with. */
int comm_init_failed(const char *program, const char *err);

/* A rank that waits longer than `seconds` in one call for the other ranks ends the job,
 * saying what each rank of its host was doing (which one never came, or came to another
 * collective) instead of hanging. 0 (the default) waits forever. */
void comm_set_wait_timeout(Comm *comm, double seconds);

/* Around work this rank does alone while the others wait for it at their next call (rank 0
 * writing an output or saving, say), `what` naming it: "saving the resume state".
 * While it lasts, a peer whose wait timeout passes waits the same span again, for as long as
 * this rank runs; if it stops, the peer ends the job. So the work needs a deadline of its own.
 * The mark is seen on this host only: a rank on another host still ends its wait on time. */
void comm_begin_alone(Comm *comm, const char *what);
void comm_end_alone(Comm *comm);

/* "rank 0 = pid 1234, rank 1 = pid 1235" for the ranks of this machine, into out (then
 * "; 2 rank(s) on 1 other host(s)" when there are others): mpiexec names a rank that dies by
 * its process id. */
void comm_describe_processes(const Comm *comm, char *out, size_t out_len);
/* 1 when this machine's ranks, `threads` threads each, outnumber its cores, with a note that
 * says so into out (without a newline); else 0 and out empty. Past the cores the ranks take
 * turns on them, and a rank waiting in MPI polls a core its peer needs: the times then
 * measure the scheduler more than the code. The cores are the machine's online ones, not a
 * rank's affinity, since a launcher that binds each rank to its own core is not short of any. */
int comm_oversubscribed(const Comm *comm, int threads, char *out, size_t out_len);
/* Ends the communicator (collective; NULL does nothing): 0, or -1 where the backend's end
 * met a failure, which it prints (the run's exit status should say so too). */
int comm_finalize(Comm *comm);

int comm_rank(const Comm *comm);
int comm_size(const Comm *comm);
int comm_local_rank(const Comm *comm); /* rank among the processes on this machine */
int comm_local_size(const Comm *comm); /* how many processes this machine runs */
const char *comm_backend_name(const Comm *comm);
const char *comm_error(const Comm *comm);
void comm_check(Comm *comm, int status);

/* In place, over all ranks. */
int comm_all_reduce(Comm *comm, float *buffer, size_t count, ReduceOp op);
/* request must be zeroed or finished (waited on, or tested done): starting over one still in
 * flight is an error, since its result would be lost. */
int comm_all_reduce_start(Comm *comm, float *buffer, size_t count, ReduceOp op, CommRequest *request);
int comm_wait(CommRequest *request);
/* *done = 1 once complete (and then it is also finished, as by comm_wait). */
int comm_test(CommRequest *request, int *done);

/* Non-blocking all-gather (send_count elements from each rank into recv, as comm_all_gather);
 * finished by comm_wait or comm_test like an all-reduce. */
int comm_all_gather_start(Comm *comm, const float *send, float *recv, size_t send_count, CommRequest *request);

/* send holds size * recv_count elements; rank r receives the reduction of block r. */
int comm_reduce_scatter(Comm *comm, const float *send, float *recv, size_t recv_count, ReduceOp op);
/* recv holds size * send_count elements: rank r's send block lands at block r. send may be
 * that block itself (in place: recv + rank * send_count), not otherwise overlap recv; a
 * reduce-scatter's send and recv never overlap. */
int comm_all_gather(Comm *comm, const float *send, float *recv, size_t send_count);
int comm_broadcast(Comm *comm, float *buffer, size_t count, int root);

/* Mixed precision: the gathers and the reduce-scatter on 16-bit elements of a format
 * (float16.h: bf16 or fp16), half the bytes of floats; the log names them after it
 * (all_gather_bf16, reduce_scatter_fp16). A 16-bit sum adds as floats and rounds each
 * partial sum to the format, as a GPU's 16-bit reduction does, so it depends on the order
 * the backend adds in (and so on the world size); an fp16 sum past 65504 is infinity. The
 * MPI backend's average is that sum times 1/size, rounded again; NCCL's (ncclAvg) is its
 * own, scaling before it sums, so the two round differently unless the size is a power of
 * two, and an fp16 sum can overflow on MPI where NCCL's average does not. */
int comm_all_gather_16(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t send_count);
int comm_all_gather_16_start(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t send_count,
                             CommRequest *request);
int comm_reduce_scatter_16(Comm *comm, Format16 format, const bits16 *send, bits16 *recv, size_t recv_count,
                           ReduceOp op);
/* Every rank waits for every other, over MPI whatever the backend: it moves no data, and
 * does not wait for work a device has queued (synchronise the device first). */
int comm_barrier(Comm *comm);

/* Point to point, blocking. sendrecv sends to one peer while receiving from another, in one
 * call, through the backend like the collectives. send and
 * recv move host memory over MPI whatever the backend, and refuse a GPU buffer. */
int comm_send(Comm *comm, const float *buffer, size_t count, int peer);
int comm_recv(Comm *comm, float *buffer, size_t count, int peer);
int comm_sendrecv(Comm *comm, const float *send, size_t send_count, int to,
                  float *recv, size_t recv_count, int from);

/* What this process has spent on communication since comm_init. seconds is the time spent
 * inside communicator calls (the compute was not advancing); calls counts collective
 * operations started; bytes is the traffic they stand for, in the convention of the ZeRO
 * paper: an all-reduce of n bytes counts 2n (it is a reduce-scatter followed by an
 * all-gather), a reduce-scatter, all-gather or broadcast counts its full buffer n.
 * Point-to-point calls add to seconds only. The two double reductions below count
 * nowhere: they are the trainer's bookkeeping, not the training's communication. */
typedef struct {
    double seconds;
    long calls;
    double bytes;
} CommStats;

CommStats comm_stats(const Comm *comm);

/* Max over ranks of a double (timings: a collective is as slow as its slowest rank). */
int comm_max_double(Comm *comm, double *value);
/* Sum over ranks of a double (counts that a float could not hold exactly). */
int comm_sum_double(Comm *comm, double *value);

/* Every rank says whether `step` failed on it, and all learn whether it failed anywhere:
 * before a collective step (a broadcast, NCCL's start), a rank that goes on alone would
 * wait forever for one that stopped. 1 when no rank failed. Otherwise 0, and a rank that
 * did not fail itself gets "<step> failed on another rank" in err (one that did keeps its
 * own reason). */
int comm_all_ok(Comm *comm, int failed, const char *step, char *err, size_t err_len);
/* 1 when err is comm_all_ok's word that the step failed on another rank, not this one's
 * own reason. */
int comm_failed_elsewhere(const char *err);

/* Every rank's text, in rank order, to rank 0 (over MPI: no shared file system needed):
 * on rank 0, *all (malloc'd, NUL-terminated; the caller frees it) and its length *total. A
 * collective; `ready` is 0 on a rank that has nothing to send (it failed). Returns 0 on every
 * rank, or -1 on every rank when one was not ready or memory ran out. */
int comm_gather_text(Comm *comm, const char *text, size_t length, int ready, char **all, size_t *total);

/* What to add to this machine's monotonic clock to read rank 0's, measured by exchanges
 * with rank 0 (the one with the shortest round trip; 0 on rank 0): machines' monotonic
 * clocks start at their own boot. A collective. */
double comm_clock_offset(Comm *comm);

#endif
