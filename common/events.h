/* The run's record of events: one stream per process that the model, the trainer, the
 * communicator and the allocator record into, and that two writers read: the communication
 * log the grader checks (comm_log.h) and the Perfetto timeline a person reads (trace.h).
 * Each event is recorded once; each writer shows the kinds it is about, so the log and the
 * timeline cannot disagree on what happened.
 *
 *   mark    a point in the run by name (the model's "forward_start 3", the trainer's
 *           "step_start"): a row of the log; a mark that ends a span (forward_end) is also
 *           the timeline's slice from the mark that began it ("forward unit 3")
 *   call    a communicator call: a row of the log, and its slice on the timeline's
 *           communication or waits track (on a GPU, when its stream ran it)
 *   block   a tracking-allocator block added or removed: a row of the log ("alloc", "free")
 *   in use  the bytes in use of one kind after a change: the timeline's memory track
 *   span    a slice of the timeline only (the step, its data loading, the optimizer)
 *   count   a counter of the timeline only (the parameters a ZeRO-3 unit has gathered)
 *
 * Recording is a few stores per event and needs no one to be handed the record. A run that
 * writes neither file keeps only the current step's events, so memory stays flat however
 * long it runs. The slices and counters of the timeline are recorded only while a trace
 * runs (events_time_spans), which costs a branch otherwise. */
#ifndef DTC_EVENTS_H
#define DTC_EVENTS_H

#include <stddef.h>

#include "alloc.h"

typedef enum { TRACK_COMPUTE, TRACK_COMM, TRACK_WAIT, NUM_TRACKS } TraceTrack;

/* A moment: the host's time, and on a device clock the marker that will say when the device
 * got there. */
typedef struct {
    double seconds;
    int marker; /* -1: seconds is the time */
} TraceMark;

/* Where the timeline's times come from. On the CPU (and by default) the host's clock: an
 * event is when the rank's one thread did the work. A GPU queues work and runs it later, on
 * streams side by side, so its timeline is timed there: a moment is a marker queued on a
 * stream, whose time is read once the device has passed it (events_settle). */
typedef struct TraceDeviceClock {
    int (*mark)(void *stream);     /* queues a marker on stream (NULL: the compute stream): its number, or -1 */
    double (*seconds)(int marker); /* when the device passed it, on the host's monotonic clock */
    void (*forget)(void);          /* every marker was read: numbers start again, and the clock re-anchors */
} TraceDeviceClock;

/* The modes of a communicator call, in the log's `event` column. */
#define CALL_BLOCKING "blocking" /* a call that returns when its collective is done */
#define CALL_START "start"       /* a non-blocking collective started: request names it */
#define CALL_TEST "test"         /* done says whether it had finished */
#define CALL_WAIT "wait"

/* A call's slice on the timeline, as its backend timed it: name NULL when it has none (a
 * GPU's wait, which shows as compute standing idle). */
typedef struct {
    const char *name; /* "all_reduce_start", "wait", ... */
    TraceTrack track;
    TraceMark begin, end;
} CallSpan;

/* A communicator call: op ("all_reduce", "reduce_scatter_bf16", ...), mode (CALL_BLOCKING
 * ...), the elements in this rank's send and receive buffers, the buffer the result lands
 * in, for non-blocking calls the request id (events_new_request) and, for a test, whether it
 * had finished (-1: not a test); for point-to-point calls the ranks it sent to and received
 * from (-1: none); for a collective's start or blocking call, the buffer its send side reads
 * (NULL where none is told). */
typedef struct {
    const char *op, *mode;
    size_t send_count, recv_count;
    const void *buffer;
    long request;
    int done;
    CallSpan span;
    int to, from;
    const void *source;
} CallEvent;

typedef enum { EVENT_MARK, EVENT_CALL, EVENT_BLOCK, EVENT_IN_USE, EVENT_SPAN, EVENT_COUNT } EventType;

typedef struct {
    EventType type;
    double time;             /* the host's monotonic clock, when recorded */
    const char *name;        /* a mark's name, a call's mode, "alloc" or "free", a span's or counter's name */
    const char *op;          /* a call's operation */
    const char *where_event; /* a call's position: the last mark before it */
    long seq, request;       /* seq: the event's place among marks, calls and blocks (-1 for the rest) */
    int step, micro, unit, where_unit, done;
    int to, from;             /* a point-to-point call's peers (-1: none) */
    int has_place, untracked; /* the buffer found among the live blocks, or given but not found */
    size_t count, recv_count, bytes; /* bytes: a block's, or the kind's bytes in use */
    MemBlockPlace place;      /* the buffer, resolved when recorded (it may be freed later); a block's kind */
    int has_source, source_untracked; /* a call's send buffer, found among the live blocks or not */
    MemBlockPlace source_place;
    /* on the timeline: a slice named span (NULL: none) from begin to end, or a counter's value */
    const char *span;
    TraceTrack track;
    TraceMark begin, end;
    double value;
} RunEvent;

/* ---------------------------------------------------------------- a run's record */

/* Starts the record of a run (its set-up included): with keep, every event is held until
 * the files are written, not only the current step's; with memory_track, every change to
 * the bytes in use is recorded (the timeline's memory track). */
void events_start(int keep, int memory_track);

/* From here on the timeline's slices and counters are recorded too, timed on clock (NULL:
 * the host's); events_stop_spans ends that. */
void events_time_spans(const TraceDeviceClock *clock);
void events_stop_spans(void);

/* Forgets every event (and gives their memory back): a second run in the same process
 * starts a record of its own. */
void events_forget(void);

/* ---------------------------------------------------------------- recording */

/* Where training is: the step (the trainer's mark "step_start": 1-based, as --csv counts; 0
 * is set-up), which returns the moment the step began; and the micro-batch (the model's, at
 * each forward: the backward passes it has added into the gradients since they were zeroed). */
TraceMark events_step(int step);
void events_micro(int micro);

/* A mark, by name (a literal that lives for the whole run): the model marks
 * "forward_start", "forward_end", "backward_start", "backward_end" and "grads_ready" with
 * the unit (and for a start, the parameters it computes with; for grads_ready, the
 * gradients backward wrote); the trainer "step_start", "optimizer_start", "step_end",
 * "validate_start", "validate_end", "train_end"; a lesson may add its own (lesson 01:
 * "ring_start", "ring_end" with the count). unit -1 and buffer NULL when they do not apply. */
void events_mark(const char *name, int unit, const void *buffer, size_t count);
/* A mark that begins a slice: returns its moment, for the mark that ends it. */
TraceMark events_mark_begin(const char *name, int unit, const void *buffer, size_t count);
/* A mark that ends the compute slice span ("forward": "forward unit 3") begun at began. */
void events_mark_end(const char *name, int unit, TraceMark began, const char *span);

void events_call(const CallEvent *call);
long events_new_request(void);

/* A slice of the timeline only; name a literal; unit >= 0 is appended to it ("optimizer
 * step"; "step#" takes the number itself: "step#7"). */
void events_span(TraceTrack track, const char *name, int unit, TraceMark begin, TraceMark end);

/* Adds delta to the counter named (a literal), now. */
void events_count(const char *name, double delta);

/* The tracking allocator's listener (alloc.h): its blocks, and its bytes in use. */
void events_memory(const MemChange *change);

/* Now, on the compute stream or on a stream of the device's own (NCCL's); {0, -1} while no
 * slices are recorded. */
TraceMark events_now(void);
TraceMark events_now_on(void *stream);

/* Reads the time of every marker queued so far; the device must be past them all (after
 * Kernels.synchronize). The trainer calls it at the end of each step. */
void events_settle(void);

/* Where training is now, for messages: the step and the last mark ("grads_ready 3"). */
int events_where(char *mark, size_t mark_len);

/* ---------------------------------------------------------------- reading, for the writers */

typedef struct {
    const RunEvent *events;
    size_t count;
    int whole;     /* no event was lost to a failed allocation */
    double origin; /* the host time of the first mark, call or block: the log's time 0 */
    int timing_device; /* the slices are timed on the device's streams (events_time_spans) */
} EventRecord;

/* The events held now, their markers read (events_settle). */
EventRecord events_record(void);

#endif
