/* Checks a run's communication log (--comm-log, comm_log.h) against the rule its lesson
 * teaches: which collectives, when, relative to the model's units, and what memory the
 * lesson may hold. Prints one PASS/FAIL line per rule; a FAIL names the rank, the step and
 * the event where the rule broke.
 *
 *   check_schedule LESSON LOG.csv [the run's training and lesson flags] [--label NAME]
 *
 * LESSON is the lesson's number (01..10). The flags are those the run was started with
 * (--config reference --batch 6, --bucket-mb 0.1, --accum 2, --no-prefetch), so the
 * checker knows the model's units and the plan the run had to follow. The rules are
 * stated in each lesson's doc and in docs/grading.md. Exit 0 when every rule holds, 1 when
 * one breaks, 2 on bad input. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm_log.h"
#include "layout.h"
#include "train_config.h"

/* ---------------------------------------------------------------- the log */

typedef struct {
    int rank, step, micro, unit, done;
    int to, from; /* a point-to-point call's peers (-1: none) */
    long seq, request;
    long count, recv_count, bytes;
    char event[24], op[24], buffer[64], kind[24], where[40];
    char source[64]; /* the buffer a collective sends from */
} Event;

typedef struct {
    Event *events;
    size_t count;
    int ranks;
} Log;

enum { CELL = 64, MAX_RANKS = 4096, MAX_UNITS = 1024 };

static int split_row(char *line, char cells[LOG_NUM_COLUMNS][CELL])
{
    line[strcspn(line, "\r\n")] = '\0';
    int n = 0;
    for (char *start = line;; n++) {
        char *comma = strchr(start, ',');
        size_t len = comma ? (size_t)(comma - start) : strlen(start);
        if (n < LOG_NUM_COLUMNS)
            snprintf(cells[n], CELL, "%.*s", (int)(len < CELL ? len : CELL - 1), start);
        if (comma == NULL)
            return n + 1;
        start = comma + 1;
    }
}

static long number_or(const char *cell, long empty)
{
    return cell[0] == '\0' ? empty : strtol(cell, NULL, 10);
}

static Event parse_event(char cells[LOG_NUM_COLUMNS][CELL])
{
    Event e = {.rank = (int)number_or(cells[LOG_COLUMN_RANK], 0), .seq = number_or(cells[LOG_COLUMN_SEQ], 0),
               .step = (int)number_or(cells[LOG_COLUMN_STEP], 0),
               .micro = (int)number_or(cells[LOG_COLUMN_MICRO], 0),
               .unit = (int)number_or(cells[LOG_COLUMN_UNIT], -1), .count = number_or(cells[LOG_COLUMN_COUNT], -1),
               .recv_count = number_or(cells[LOG_COLUMN_RECV_COUNT], -1),
               .request = number_or(cells[LOG_COLUMN_REQUEST], -1),
               .done = (int)number_or(cells[LOG_COLUMN_DONE], -1), .bytes = number_or(cells[LOG_COLUMN_BYTES], 0),
               .to = (int)number_or(cells[LOG_COLUMN_TO], -1), .from = (int)number_or(cells[LOG_COLUMN_FROM], -1)};
    snprintf(e.event, sizeof e.event, "%s", cells[LOG_COLUMN_EVENT]);
    snprintf(e.op, sizeof e.op, "%s", cells[LOG_COLUMN_OP]);
    snprintf(e.buffer, sizeof e.buffer, "%s", cells[LOG_COLUMN_BUFFER]);
    snprintf(e.where, sizeof e.where, "%s", cells[LOG_COLUMN_WHERE]);
    snprintf(e.kind, sizeof e.kind, "%s", cells[LOG_COLUMN_KIND]);
    snprintf(e.source, sizeof e.source, "%s", cells[LOG_COLUMN_SOURCE]);
    return e;
}

static int check_header(char *line, const char *path)
{
    char cells[LOG_NUM_COLUMNS][CELL];
    int n = split_row(line, cells);
    for (int c = 0; c < LOG_NUM_COLUMNS; c++)
        if (n != LOG_NUM_COLUMNS || strcmp(cells[c], LOG_COLUMNS[c]) != 0) {
            fprintf(stderr, "check_schedule: %s is not a communication log (its header is not that of --comm-log)\n",
                    path);
            return -1;
        }
    return 0;
}

/* The communication log at path into *log; -1 with one line printed when it cannot be read or
 * is not a log --comm-log wrote, and then *log holds nothing. */
static int read_log(const char *path, Log *log)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "check_schedule: cannot open %s\n", path);
        return -1;
    }
    char line[1024], cells[LOG_NUM_COLUMNS][CELL];
    size_t capacity = 0;
    int status = fgets(line, sizeof line, f) != NULL ? check_header(line, path) : -1;
    if (status != 0 && !ferror(f) && feof(f))
        fprintf(stderr, "check_schedule: %s is empty\n", path);
    *log = (Log){0};
    while (status == 0 && fgets(line, sizeof line, f) != NULL) {
        if (log->count == capacity) {
            capacity = capacity ? 2 * capacity : 4096;
            Event *grown = realloc(log->events, capacity * sizeof *grown);
            if (grown == NULL) {
                fprintf(stderr, "check_schedule: out of memory reading %s\n", path);
                status = -1;
                break;
            }
            log->events = grown;
        }
        size_t length = strlen(line);
        int complete = length > 0 && line[length - 1] == '\n';
        if (!complete || split_row(line, cells) != LOG_NUM_COLUMNS) {
            fprintf(stderr, "check_schedule: %s: line %zu is not a row of %d cells\n", path, log->count + 2,
                    LOG_NUM_COLUMNS);
            status = -1;
            break;
        }
        Event e = parse_event(cells);
        if (e.rank < 0 || e.rank >= MAX_RANKS) {
            fprintf(stderr, "check_schedule: %s: line %zu names rank %d\n", path, log->count + 2, e.rank);
            status = -1;
            break;
        }
        log->events[log->count++] = e;
        if (e.rank + 1 > log->ranks)
            log->ranks = e.rank + 1;
    }
    fclose(f);
    if (status != 0) { /* a log refused part-way holds nothing */
        free(log->events);
        *log = (Log){0};
    }
    return status;
}

/* ---------------------------------------------------------------- what is being checked */

typedef struct {
    TrainConfig cfg;
    float bucket_mb;
    int accum, no_prefetch, copy_tensors;
    int stage; /* lesson 10's ZeRO stage */
    int fp16, scale_window, fp32_matmuls; /* lesson 10's other flags: they change no rule */
} RunFlags;

typedef struct {
    const Log *log;
    const RunFlags *flags;
    const GPTConfig *model;
    int ranks, units;
    long num_params;
    const char *label;
    int lesson;
    int failed; /* the current rule broke (its first break is printed) */
    /* a run that stopped early (every rank logged the same whole steps, fewer than the run's):
     * why, for each rule those steps keep; empty otherwise */
    char cut_short[160];
} Check;

static int is(const Event *e, const char *event) { return strcmp(e->event, event) == 0; }
static int is_call(const Event *e) { return e->op[0] != '\0'; }
/* A call the strategy made: the trainer's bookkeeping (mean loss, slowest rank) is not one. */
static int strategy_call(const Event *e)
{
    return is_call(e) && strcmp(e->op, "sum_double") != 0 && strcmp(e->op, "max_double") != 0;
}
/* Barriers move no training data either. */
static int moves_data(const Event *e) { return strategy_call(e) && strcmp(e->op, "barrier") != 0; }
static int is_compute_start(const Event *e) { return is(e, "forward_start") || is(e, "backward_start"); }
/* "a" or "an", for a word as the log spells it (all_reduce, other, comm). */
static const char *article(const char *word) { return word[0] != '\0' && strchr("aeiou", word[0]) ? "an" : "a"; }
/* The call is `base` on floats or on 16-bit floats ("reduce_scatter", "reduce_scatter_bf16"
 * or "reduce_scatter_fp16"). */
static int same_op(const Event *e, const char *base)
{
    size_t length = strlen(base);
    return strncmp(e->op, base, length) == 0 &&
           (e->op[length] == '\0' || strcmp(e->op + length, "_bf16") == 0 || strcmp(e->op + length, "_fp16") == 0);
}
static int is_collective_start(const Event *e) { return is_call(e) && (is(e, "blocking") || is(e, "start")); }

/* A point-to-point call's elements and peers: "3 element(s) to rank 1, 2 from rank 2". */
static void describe_peers(const Event *e, char *out, size_t len)
{
    int n = 0;
    if (e->to >= 0)
        n = snprintf(out, len, "%ld element(s) to rank %d", e->count, e->to);
    if (e->from >= 0 && n >= 0 && (size_t)n < len)
        snprintf(out + n, len - (size_t)n, "%s%ld element(s) from rank %d", n > 0 ? ", " : "", e->recv_count,
                 e->from);
}

static void describe(const Event *e, char *out, size_t len)
{
    char peers[96];
    if (is_call(e) && (e->to >= 0 || e->from >= 0)) {
        describe_peers(e, peers, sizeof peers);
        snprintf(out, len, "event %ld: %s %s, %s%s%s, at %s", e->seq, e->event, e->op, peers,
                 e->buffer[0] ? (e->from >= 0 ? ", into " : ", out of ") : "", e->buffer, e->where);
    } else if (is_call(e) && e->count < 0) /* a wait or a test: its counts are the start's */
        snprintf(out, len, "event %ld: %s on request %ld (%s into %s), at %s", e->seq, e->event, e->request, e->op,
                 e->buffer, e->where);
    else if (is_call(e) && strcmp(e->op, "barrier") == 0)
        snprintf(out, len, "event %ld: %s barrier, at %s", e->seq, e->event, e->where);
    else if (is_call(e))
        snprintf(out, len, "event %ld: %s %s of %ld element(s)%s%s, at %s", e->seq, e->event, e->op,
                 e->count, e->buffer[0] ? " into " : "", e->buffer, e->where);
    else if (e->unit >= 0)
        snprintf(out, len, "event %ld: %s %d", e->seq, e->event, e->unit);
    else
        snprintf(out, len, "event %ld: %s", e->seq, e->event);
}

/* The first break of a rule: one line with the rule, the rank, step and event, and why. */
static void broke(Check *check, const char *rule, const Event *at, const char *format, ...)
{
    if (check->failed++)
        return;
    char why[512], where[400] = "";
    va_list args;
    va_start(args, format);
    vsnprintf(why, sizeof why, format, args);
    va_end(args);
    if (at != NULL) {
        char what[300];
        describe(at, what, sizeof what);
        snprintf(where, sizeof where, " rank %d, step %d, %s:", at->rank, at->step, what);
    }
    printf("FAIL %s schedule %s:%s %s\n", check->label, rule, where, why);
}

static int finish_rule(Check *check, const char *rule, const char *statement)
{
    if (check->failed == 0 && check->cut_short[0] != '\0') {
        printf("FAIL %s schedule %s: %s, which keep the rule; the rest never ran\n", check->label, rule, check->cut_short);
        check->failed = 1;
    } else if (check->failed == 0) {
        printf("PASS %s schedule %s: %s\n", check->label, rule, statement);
    }
    int passed = check->failed == 0;
    check->failed = 0;
    return passed;
}

static long unit_count(const Check *check, int unit) { return (long)unit_range(check->model, unit).count; }
static long shard_count(const Check *check, int unit)
{
    return (unit_count(check, unit) + check->ranks - 1) / check->ranks;
}

/* The block a buffer name lies in: "communication#3+128" is in "communication#3". */
static int same_block(const char *a, const char *b)
{
    size_t length = strcspn(a, "+");
    return length == strcspn(b, "+") && strncmp(a, b, length) == 0;
}

/* Where in its block a call's buffer begins ("communication#3+128": 128), or -1 when the
 * log does not name the place (untracked memory). */
static long place_in_block(const Event *e)
{
    const char *plus = strchr(e->buffer, '+');
    return plus != NULL ? atol(plus + 1) : -1;
}

/* A block the model allocated for itself: before the strategy's set-up began on its rank. */
static int the_models_own(const Check *check, size_t at)
{
    for (size_t i = 0; i < at; i++)
        if (check->log->events[i].rank == check->log->events[at].rank && is(&check->log->events[i], "strategy_setup"))
            return 0;
    return 1;
}

/* The allocation of the model's own gradients on event at's rank: the rank's first gradient
 * block, when the model allocated it for itself; else NULL. */
static const Event *models_gradients(const Check *check, size_t at)
{
    for (size_t i = 0; i < check->log->count; i++) {
        const Event *e = &check->log->events[i];
        if (e->rank == check->log->events[at].rank && is(e, "alloc") && strcmp(e->kind, "gradients") == 0)
            return the_models_own(check, i) ? e : NULL;
    }
    return NULL;
}

/* A rank's events of one training step: [first, end) in the log. */
typedef struct {
    size_t first, end;
    int rank, step;
} Span;

/* Walks the training steps, rank by rank: returns 0 when there are no more. */
static int next_step(const Check *check, Span *span)
{
    const Log *log = check->log;
    size_t i = span->end;
    while (i < log->count && !(is(&log->events[i], "step_start")))
        i++;
    if (i == log->count)
        return 0;
    span->first = i;
    span->rank = log->events[i].rank;
    span->step = log->events[i].step;
    for (i++; i < log->count && !is(&log->events[i], "step_end") && !is(&log->events[i], "step_start"); i++)
        ;
    span->end = i < log->count && is(&log->events[i], "step_end") ? i + 1 : i;
    return 1;
}

/* The index of the last event of the span that is `event` (for the given unit, -1 = any)
 * and belongs to the last micro-batch; the span's end if none. */
static size_t last_mark(const Check *check, const Span *span, const char *event, int unit)
{
    int last_micro = check->flags->cfg.accum_steps - 1;
    for (size_t i = span->end; i-- > span->first;) {
        const Event *e = &check->log->events[i];
        if (is(e, event) && (unit < 0 || e->unit == unit) && e->micro == last_micro)
            return i;
    }
    return span->end;
}

/* ---------------------------------------------------------------- rules */

/* A point-to-point call of a ring's rank: it sends to one neighbour and receives from the
 * other, the same two throughout (*ahead: +1 or -1 once its first peer said which way the
 * ring turns, 0 before). */
static void require_neighbours(Check *check, const Event *e, int *ahead)
{
    int N = check->ranks, r = e->rank, right = (r + 1) % N, left = (r + N - 1) % N;
    int peers[2] = {e->to, e->from};
    for (int p = 0; p < 2; p++) {
        if (peers[p] < 0)
            continue;
        if (peers[p] != right && peers[p] != left) {
            char neighbours[48];
            snprintf(neighbours, sizeof neighbours, left == right ? "rank %d" : "ranks %d and %d", left, right);
            broke(check, "ring", e, "%s rank %d, which is not a neighbour of rank %d: on a ring each rank talks to "
                  "%s only", p == 0 ? "sent to" : "received from", peers[p], r, neighbours);
            return;
        }
        int way = (peers[p] == right) == (p == 0) ? 1 : -1; /* +1: sends go right, receives come from the left */
        if (N > 2 && *ahead != 0 && way != *ahead) {
            broke(check, "ring", e, "%s rank %d: a rank sends to one neighbour and receives from the other, the "
                  "same two every step (rank %d sends to %d, receives from %d)", p == 0 ? "sent to" : "received from",
                  peers[p], r, *ahead > 0 ? right : left, *ahead > 0 ? left : right);
            return;
        }
        *ahead = way;
    }
}

/* 01: inside every ring_start..ring_end, sends and receives only, each to and from the
 * rank's two neighbours, 2(N-1) chunks each way, each of count/N elements rounded down or up,
 * one call each. An empty chunk (count < N) may be left out, by its sender and its receiver
 * both: a phase moves N-1 of the N chunks, so of a rank's 2(N-1) at most two per empty chunk
 * are empty, and the non-empty ones must all be there. */
static int rule_ring(Check *check)
{
    const Log *log = check->log;
    long N = check->ranks, rings = 0;
    for (size_t i = 0; i < log->count; i++) {
        if (!is(&log->events[i], "ring_start"))
            continue;
        const Event *ring = &log->events[i];
        long count = ring->count, low = count / N, high = (count + N - 1) / N, sent = 0, received = 0;
        long empty = count < N ? N - count : 0, full_sent = 0, full_received = 0;
        int ahead = 0;
        rings++;
        for (i++; i < log->count && !is(&log->events[i], "ring_end"); i++) {
            const Event *e = &log->events[i];
            if (!moves_data(e))
                continue;
            int p2p = strcmp(e->op, "sendrecv") == 0 || strcmp(e->op, "send") == 0 || strcmp(e->op, "recv") == 0;
            if (!p2p) {
                broke(check, "ring", e, "the ring of %ld elements called %s, a library collective: a ring moves "
                      "its chunks with sends and receives only", count, e->op);
                continue;
            }
            require_neighbours(check, e, &ahead);
            long chunks[2] = {strcmp(e->op, "recv") == 0 ? -1 : e->count, strcmp(e->op, "send") == 0 ? -1 : e->recv_count};
            for (int c = 0; c < 2; c++)
                if (chunks[c] >= 0 && (chunks[c] < low || chunks[c] > high))
                    broke(check, "ring", e, "%s a chunk of %ld elements; a ring of %ld elements over %ld ranks "
                          "moves chunks of %ld%s%ld", c == 0 ? "sent" : "received", chunks[c], count, N, low,
                          low == high ? "" : " or ", low == high ? 0 : high);
            sent += chunks[0] >= 0;
            received += chunks[1] >= 0;
            full_sent += chunks[0] > 0;
            full_received += chunks[1] > 0;
        }
        long steps = 2 * (N - 1), fewest = steps - 2 * empty;
        if (sent > steps || received > steps || full_sent < fewest || full_received < fewest) {
            char leave_out[128] = "";
            if (empty > 0)
                snprintf(leave_out, sizeof leave_out, ", less the empty ones it leaves out (%ld of the %ld chunks "
                         "are empty here)", empty, N);
            broke(check, "ring", ring, "the ring of %ld elements sent %ld and received %ld chunks; over %ld ranks it "
                  "takes 2(N-1) = %ld of each (N-1 to reduce-scatter, N-1 to all-gather)%s", count, sent, received,
                  N, steps, leave_out);
        }
    }
    if (rings == 0)
        broke(check, "ring", NULL, "the log holds no ring_start mark: was it written by --verify-ring?");
    return finish_rule(check, "ring", "sends and receives only, to and from the two neighbours, 2(N-1) chunks of "
                       "count/N each way");
}

/* Whether event i comes during its rank's strategy setup: after the strategy_setup mark and
 * before the sum by which the ranks agree that every one of them has set up (comm_all_ok). */
static int in_strategy_setup(const Check *check, size_t i)
{
    const Event *events = check->log->events;
    for (size_t j = i; j-- > 0 && events[j].rank == events[i].rank;) {
        if (is(&events[j], "strategy_setup"))
            return 1;
        if (is_call(&events[j]) && strcmp(events[j].op, "sum_double") == 0)
            return 0;
    }
    return 0;
}

/* The elements of rank's broadcasts (the events `calls` names) that an earlier one had
 * already sent into the same place of the same block: counted once, they leave as many
 * parameters unsent. A place the log does not name (untracked memory) counts as new. */
static long sent_twice(const Log *log, int rank, const size_t *calls, size_t num_calls)
{
    long twice = 0;
    for (size_t a = 0; a < num_calls; a++) {
        const Event *e = &log->events[calls[a]];
        long begin = place_in_block(e), end = begin + e->count;
        if (e->rank != rank || begin < 0)
            continue;
        for (size_t b = 0; b < a; b++) { /* overlap with each earlier call, counted once per element */
            const Event *earlier = &log->events[calls[b]];
            long from = place_in_block(earlier), to = from + earlier->count;
            if (earlier->rank != rank || from < 0 || !same_block(e->buffer, earlier->buffer))
                continue;
            if (from < end && to > begin) {
                twice += (to < end ? to : end) - (from > begin ? from : begin);
                begin = end; /* a place sent three times is counted once: enough to fail */
            }
        }
    }
    return twice;
}

/* 02-10: every rank starts from rank 0's parameters: broadcasts covering all of them, none
 * twice, before the first step, once every rank has set up, and none during training. */
static int rule_broadcast(Check *check)
{
    const Log *log = check->log;
    long *broadcast = calloc((size_t)check->ranks, sizeof *broadcast);
    size_t *calls = calloc(log->count + 1, sizeof *calls), num_calls = 0;
    for (size_t i = 0; broadcast != NULL && calls != NULL && i < log->count; i++) {
        const Event *e = &log->events[i];
        if (!is_call(e) || strcmp(e->op, "broadcast") != 0)
            continue;
        if (e->step != 0)
            broke(check, "broadcast", e, "a broadcast during training: the ranks are made equal once, at start");
        else if (in_strategy_setup(check, i))
            broke(check, "broadcast", e, "a broadcast from the strategy's setup: a rank whose setup fails never "
                  "reaches it, and the others would wait in it; broadcast from start, once every rank has set up");
        else {
            broadcast[e->rank] += e->count;
            calls[num_calls++] = i;
        }
    }
    for (int r = 0; broadcast != NULL && calls != NULL && r < check->ranks; r++) {
        long twice = sent_twice(log, r, calls, num_calls);
        if (broadcast[r] != check->num_params)
            broke(check, "broadcast", NULL, "rank %d broadcast %ld elements before the first step; the model has "
                  "%ld parameters, all of which start from rank 0's", r, broadcast[r], check->num_params);
        else if (twice > 0)
            broke(check, "broadcast", NULL, "rank %d broadcast %ld elements before the first step, as many as the "
                  "model's parameters, but %ld of them twice into the same place: as many parameters were never "
                  "sent, and do not start from rank 0's", r, broadcast[r], twice);
    }
    free(calls);
    free(broadcast);
    return finish_rule(check, "broadcast", "all parameters broadcast from rank 0 from start, before the first step");
}

/* The events of a step that move data, checked to come after the whole backward. */
static void require_after_backward(Check *check, const char *rule, const Span *span)
{
    size_t backward_done = last_mark(check, span, "grads_ready", 0);
    for (size_t i = span->first; i < span->end; i++) {
        const Event *e = &check->log->events[i];
        if (moves_data(e) && i < backward_done)
            broke(check, rule, e, "communication before the backward pass has finished (every gradient is "
                  "final only after grads_ready 0)");
    }
}

/* How many of the model's tensor sizes (sizes[0..count)) are `size`. */
static int tensors_of_size(const long *sizes, int count, long size)
{
    int n = 0;
    for (int t = 0; t < count; t++)
        n += sizes[t] == size;
    return n;
}

/* The first of a step's all-reduces, in the log's order, that no tensor of its size is left
 * for (each call takes one of the model's tensor sizes, sizes[0..count)); NULL when every call
 * has one. */
static const Event *unmatched_size(const Check *check, const Span *span, const long *sizes, int count)
{
    char taken[4096] = {0}; /* as many as the sizes */
    for (size_t i = span->first; i < span->end; i++) {
        const Event *e = &check->log->events[i];
        if (!moves_data(e) || strcmp(e->op, "all_reduce") != 0)
            continue;
        int t = 0;
        while (t < count && (taken[t] || sizes[t] != e->count))
            t++;
        if (t == count)
            return e;
        taken[t] = 1;
    }
    return NULL;
}

/* 02: after backward, one blocking all-reduce per parameter tensor (of that tensor's size). */
static int rule_per_tensor(Check *check)
{
    long expected[4096];
    int num_expected = 0;
    for (int unit = 0; unit < check->units; unit++) {
        Range tensors[12];
        int n = unit_tensors(check->model, unit, tensors);
        for (int t = 0; t < n && num_expected < 4096; t++)
            expected[num_expected++] = (long)tensors[t].count;
    }
    Span span = {0};
    while (next_step(check, &span)) {
        int num_actual = 0;
        require_after_backward(check, "per_tensor", &span);
        for (size_t i = span.first; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            if (!moves_data(e))
                continue;
            if (strcmp(e->op, "all_reduce") != 0 || !is(e, "blocking"))
                broke(check, "per_tensor", e, "lesson 02 all-reduces each tensor with a blocking all_reduce");
            else
                num_actual++;
        }
        const Event *odd = num_actual == num_expected ? unmatched_size(check, &span, expected, num_expected) : NULL;
        int same_size = odd != NULL ? tensors_of_size(expected, num_expected, odd->count) : 0;
        if (num_actual != num_expected)
            broke(check, "per_tensor", &check->log->events[span.first],
                  "%d all-reduce(s) in this step; the model has %d parameter tensors, and each is all-reduced "
                  "once, with its own size", num_actual, num_expected);
        else if (odd != NULL && same_size == 0)
            broke(check, "per_tensor", odd, "no parameter tensor has %ld elements: each tensor is all-reduced once, "
                  "with its own size", odd->count);
        else if (odd != NULL)
            broke(check, "per_tensor", odd, "the model has %d parameter tensor(s) of %ld elements, and this is one "
                  "all-reduce more of that size: each tensor is all-reduced once, with its own size", same_size,
                  odd->count);
    }
    return finish_rule(check, "per_tensor", "one blocking all-reduce per parameter tensor, after backward");
}

/* 03: after backward, exactly one all-reduce, of the whole gradient; with --copy-tensors, of
 * a buffer the gradients were packed into, never the gradients themselves (the log names
 * the buffer where the tracking allocator handed it out). */
static int rule_one_flat(Check *check)
{
    Span span = {0};
    while (next_step(check, &span)) {
        int calls = 0;
        require_after_backward(check, "one_flat", &span);
        for (size_t i = span.first; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            if (!moves_data(e))
                continue;
            calls++;
            const Event *grads = check->flags->copy_tensors ? models_gradients(check, i) : NULL;
            if (strcmp(e->op, "all_reduce") == 0 && is(e, "start"))
                broke(check, "one_flat", e, "a non-blocking all_reduce: lesson 03's one all-reduce of all %ld "
                      "gradients is a blocking call", check->num_params);
            else if (strcmp(e->op, "all_reduce") != 0 || !is(e, "blocking") || e->count != check->num_params)
                broke(check, "one_flat", e, "lesson 03 makes one blocking all_reduce of all %ld gradients",
                      check->num_params);
            else if (grads != NULL && same_block(e->buffer, grads->buffer))
                broke(check, "one_flat", e, "the model's gradients themselves: with --copy-tensors they travel "
                      "packed, tensor by tensor, into a buffer of your own, and that buffer is all-reduced");
        }
        if (calls != 1)
            broke(check, "one_flat", &check->log->events[span.first],
                  "%d communication call(s) in this step; lesson 03 makes exactly one", calls);
    }
    return finish_rule(check, "one_flat", check->flags->copy_tensors
                                              ? "exactly one all-reduce of the packed gradient per step"
                                              : "exactly one all-reduce of the whole gradient per step");
}

/* The compute mark or optimizer start that follows event i in the same step: a collective
 * started from a hook must come before it. */
static size_t next_compute(const Check *check, const Span *span, size_t i)
{
    for (i++; i < span->end; i++) {
        const Event *e = &check->log->events[i];
        if (is_compute_start(e) || is(e, "optimizer_start"))
            return i;
    }
    return span->end;
}

/* Whether the request tested at event `at` was already tested since the last compute mark. */
static int tested_since_compute(const Check *check, const Span *span, size_t at)
{
    const Event *events = check->log->events;
    for (size_t i = at; i-- > span->first;) {
        if (is_compute_start(&events[i]))
            return 0;
        if (is_call(&events[i]) && is(&events[i], "test") && events[i].request == events[at].request)
            return 1;
    }
    return 0;
}

/* Every request started in the step ends (wait, or a test that says done) before the
 * optimizer; no wait comes before the whole backward is done, nor before the step's last
 * start. */
static void require_waits_before_step(Check *check, const char *rule, const Span *span)
{
    const Event *events = check->log->events;
    size_t backward_done = last_mark(check, span, "grads_ready", 0);
    size_t optimizer = last_mark(check, span, "optimizer_start", -1);
    const Event *first_wait = NULL;
    for (size_t i = span->first; i < span->end; i++) {
        const Event *e = &events[i];
        if (is_call(e) && is(e, "wait") && i < backward_done)
            broke(check, rule, e, "a wait during backward: the compute stops until the collective is done; wait "
                  "only once backward is over, before the optimizer step");
        if (is_call(e) && is(e, "start") && first_wait != NULL)
            broke(check, rule, e, "started after the wait on request %ld (event %ld): this all-reduce could have "
                  "been on its way while that one finished; start every one as soon as its gradients are final, "
                  "then wait", first_wait->request, first_wait->seq);
        if (is_call(e) && is(e, "wait") && first_wait == NULL)
            first_wait = e;
        if (is_call(e) && is(e, "test") && i < backward_done && tested_since_compute(check, span, i))
            broke(check, rule, e, "request %ld tested again before the next unit's backward: a loop on comm_test "
                  "holds the backward up as a wait does (a request is tested at most once between two units' "
                  "backward)", e->request);
        if (!is_call(e) || !is(e, "start"))
            continue;
        int finished = 0;
        for (size_t j = i + 1; j < span->end && j < optimizer && !finished; j++)
            finished = events[j].request == e->request && is_call(&events[j]) &&
                       (is(&events[j], "wait") || (is(&events[j], "test") && events[j].done == 1));
        if (!finished)
            broke(check, rule, e, "this request is not finished (waited on, or tested done) before the "
                  "optimizer step, which reads the gradients it averages");
    }
}

/* A bucket as the log shows it: the units high_unit down to low_unit (backward order), their
 * gradients' elements. */
typedef struct {
    int high_unit, low_unit;
    long count;
} Bucket;

/* The units an all-reduce of `count` elements covers when its highest unit is high: low is
 * where the neighbours' counts add up to exactly count; -1 when they never do. */
static int bucket_low_unit(const Check *check, int high, long count)
{
    long covered = 0;
    for (int unit = high; unit >= 0; unit--) {
        covered += unit_count(check, unit);
        if (covered == count)
            return unit;
        if (covered > count)
            return -1;
    }
    return -1;
}

/* One bucket against the cap: over it only when it holds one unit, and not small enough to
 * have gone together with the bucket sent before it. */
static void require_bucket_size(Check *check, const char *rule, const Event *e, const Bucket *b, const Bucket *before,
                                double cap_bytes)
{
    double bytes = (double)b->count * sizeof(float);
    if (b->high_unit != b->low_unit && cap_bytes == 0.0)
        broke(check, rule, e, "one all-reduce covers units %d..%d: each unit goes by itself, as soon as it is final",
              b->high_unit, b->low_unit);
    else if (b->high_unit != b->low_unit && bytes > cap_bytes)
        broke(check, rule, e, "a bucket of units %d..%d, %.0f bytes, over the cap of %.0f: only a single unit "
              "larger than the cap travels alone over it", b->high_unit, b->low_unit, bytes, cap_bytes);
    else if (before != NULL && (double)(before->count + b->count) * sizeof(float) <= cap_bytes)
        broke(check, rule, e, "units %d..%d and %d..%d went as two all-reduces, though together they fit in the "
              "cap of %.0f bytes: one message pays the fixed cost once", before->high_unit, before->low_unit,
              b->high_unit, b->low_unit, cap_bytes);
}

/* Bucket b's all-reduce, event e, started after `next`, the compute (or the optimizer) that
 * followed its lowest unit's grads_ready: too late for anything to hide it. */
static void report_started_late(Check *check, const char *rule, const Event *e, const Bucket *b,
                                const Event *next)
{
    char what[48];
    if (is(next, "optimizer_start"))
        snprintf(what, sizeof what, "the optimizer");
    else
        snprintf(what, sizeof what, "unit %d's %.*s", next->unit, (int)strcspn(next->event, "_"), next->event);
    broke(check, rule, e, "the all-reduce of units %d..%d starts after %s began (event %ld), too late for that "
          "compute to hide it: start it between grads_ready %d and %s", b->high_unit, b->low_unit, what, next->seq,
          b->low_unit, what);
}

/* The started all-reduces of the step's last micro-batch, in order: each covers the next
 * neighbouring units in backward order, is within the cap (rule above), and starts after
 * its lowest unit's grads_ready and before the next compute begins; together they cover
 * every unit. cap_bytes 0: one per unit (lesson 04). */
static void require_buckets(Check *check, const char *rule, const Span *span, double cap_bytes)
{
    const Event *events = check->log->events;
    int last_micro = check->flags->cfg.accum_steps - 1, next_high = check->units - 1, k = 0;
    Bucket before = {0};
    for (size_t i = span->first; i < span->end; i++) {
        const Event *e = &events[i];
        if (!moves_data(e) || e->micro != last_micro || is(e, "wait") || is(e, "test"))
            continue;
        if (strcmp(e->op, "all_reduce") != 0 || !is(e, "start")) {
            broke(check, rule, e, "the gradients go by non-blocking all_reduce (started, waited on before the step)");
            continue;
        }
        int low = next_high >= 0 ? bucket_low_unit(check, next_high, e->count) : -1;
        if (low < 0) {
            broke(check, rule, e, "all-reduce %d has %ld elements: not the gradients of whole neighbouring units "
                  "from unit %d down, the next in backward order", k + 1, e->count, next_high);
            break; /* the rest of the step cannot be matched to units */
        }
        Bucket b = {next_high, low, e->count};
        require_bucket_size(check, rule, e, &b, k > 0 ? &before : NULL, cap_bytes);
        size_t ready = last_mark(check, span, "grads_ready", low), next = next_compute(check, span, ready);
        if (ready >= span->end)
            broke(check, rule, e, "the all-reduce of units %d..%d has no grads_ready %d in this step's last "
                  "micro-batch to start after", b.high_unit, low, low);
        else if (i < ready)
            broke(check, rule, e, "the all-reduce of units %d..%d starts before grads_ready %d: unit %d's gradients "
                  "are not final yet", b.high_unit, low, low, low);
        else if (i > next)
            report_started_late(check, rule, e, &b, &events[next]);
        before = b;
        next_high = low - 1;
        k++;
    }
    if (next_high >= 0)
        broke(check, rule, &events[span->first], "%d all-reduce(s) started in this step%s; units %d..0 were in none",
              k, last_micro > 0 ? "'s last micro-batch" : "", next_high);
}

/* 04: one non-blocking all-reduce per unit, started from its hook; waits before the step. */
static int rule_overlap(Check *check)
{
    Span span = {0};
    while (next_step(check, &span)) {
        require_buckets(check, "overlap", &span, 0.0);
        require_waits_before_step(check, "overlap", &span);
    }
    return finish_rule(check, "overlap", "one non-blocking all-reduce per unit, each started before the next "
                       "unit's backward begins; waits only once all have started, before the step");
}

/* 05 and 06: buckets of neighbouring units within --bucket-mb, none that could have gone
 * together with its neighbour. */
static int rule_buckets(Check *check)
{
    Span span = {0};
    while (next_step(check, &span)) {
        require_buckets(check, "buckets", &span, check->flags->bucket_mb * 1e6);
        require_waits_before_step(check, "buckets", &span);
    }
    return finish_rule(check, "buckets", "buckets of neighbouring units in backward order, within --bucket-mb "
                       "(a larger unit alone), none that would fit in it with the bucket before; each started as "
                       "soon as its last unit's gradients are final; waits only once all have started, before the "
                       "step");
}

/* 06: K micro-batches a step, a forward pass each (the top unit's forward, once a pass), and
 * no call before the last one: not even a barrier, which makes every rank wait for the slowest. */
static int rule_last_micro_batch(Check *check)
{
    int micro_batches = check->flags->cfg.accum_steps;
    Span span = {0};
    while (next_step(check, &span)) {
        int forwards = 0;
        for (size_t i = span.first; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            forwards += is(e, "forward_start") && e->unit == check->units - 1;
            if (strategy_call(e) && e->micro != micro_batches - 1)
                broke(check, "last_micro_batch", e, "a call during micro-batch %d of 0..%d (model->"
                      "accumulated_passes): the gradients accumulate locally, and the ranks meet only in the last",
                      e->micro, micro_batches - 1);
        }
        if (forwards != micro_batches)
            broke(check, "last_micro_batch", &check->log->events[span.first], "%d forward pass(es) in this step: "
                  "--accum %d runs the share as %d micro-batches of --batch rows, a forward and backward each",
                  forwards, micro_batches, micro_batches);
    }
    return finish_rule(check, "last_micro_batch", "K micro-batches a step; the ranks meet only in the last");
}

/* Lessons 07-09 are ZeRO stages 1-3 in fp32; lesson 10 is the stage of its --stage in mixed
 * precision. */
static int zero_stage(const Check *check) { return check->lesson == 10 ? check->flags->stage : check->lesson - 6; }

/* Per step, per unit: how many reduce-scatters of that unit's padded shard, and where. */
static int unit_of_shard(const Check *check, long shard, const int *taken)
{
    for (int unit = check->units - 1; unit >= 0; unit--)
        if (shard_count(check, unit) == shard && !taken[unit])
            return unit;
    return -1;
}

/* 07 (and 10 on ZeRO-1 and 2): each unit reduce-scattered and all-gathered once per step,
 * with its padded shard; no all-reduce of the gradient. ZeRO-1 keeps the whole gradient
 * until the step: nothing moves before backward is over. A step skipped because its fp16
 * gradients overflowed (the trainer's "overflow" mark) changes no parameter, so it gathers
 * none. */
static int rule_zero1(Check *check)
{
    Span span = {0};
    while (next_step(check, &span)) {
        int scattered[1024] = {0}, gathered[1024] = {0};
        int skipped = last_mark(check, &span, "overflow", -1) < span.end;
        for (size_t i = span.first; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            if (!moves_data(e) || is(e, "wait") || is(e, "test"))
                continue;
            int rs = same_op(e, "reduce_scatter"), ag = same_op(e, "all_gather");
            long shard = rs ? e->recv_count : e->count;
            int unit = rs || ag ? unit_of_shard(check, shard, rs ? scattered : gathered) : -1;
            if (!rs && !ag)
                broke(check, "shards", e, "ZeRO moves gradients by reduce-scatter and parameters by all-gather; "
                      "%s %s gives every rank what only one needs", article(e->op), e->op);
            else if (ag && skipped)
                broke(check, "shards", e, "an all-gather in a step skipped for an fp16 overflow: no parameter "
                      "changed, so there is nothing new to gather");
            else if (unit < 0)
                broke(check, "shards", e, "%s %s with a shard of %ld elements, which is no unit's padded shard "
                      "(unit u's shard is ceil(count_u / %d))", article(e->op), e->op, shard, check->ranks);
            else
                (rs ? scattered : gathered)[unit] = 1;
        }
        for (int unit = 0; unit < check->units; unit++)
            if (!scattered[unit] || (!gathered[unit] && !skipped))
                broke(check, "shards", &check->log->events[span.first], "unit %d (shard %ld) was not %s in this "
                      "step", unit, shard_count(check, unit), !scattered[unit] ? "reduce-scattered" : "all-gathered");
        if (zero_stage(check) == 1)
            require_after_backward(check, "shards", &span);
    }
    return finish_rule(check, "shards", zero_stage(check) == 1 ? "each unit reduce-scattered and all-gathered once "
                       "per step with its padded shard, after backward; no all-reduce"
                                                                : "each unit reduce-scattered and all-gathered once "
                                                                  "per step with its padded shard; no all-reduce");
}

/* 08 and 09: each unit's reduce-scatter from its own backward hook. */
static int rule_scatter_from_hook(Check *check)
{
    Span span = {0};
    while (next_step(check, &span)) {
        for (int unit = check->units - 1; unit >= 0; unit--) {
            size_t ready = last_mark(check, &span, "grads_ready", unit), found = span.end;
            if (ready < span.end)
                for (size_t i = ready + 1; i < next_compute(check, &span, ready) && found == span.end; i++)
                    if (is_call(&check->log->events[i]) && same_op(&check->log->events[i], "reduce_scatter"))
                        found = i;
            if (found == span.end)
                broke(check, "scatter_from_hook", &check->log->events[ready < span.end ? ready : span.first],
                      "unit %d's reduce-scatter did not start between its grads_ready and the next unit's "
                      "backward: ZeRO-2 scatters each unit's gradients as soon as they are final", unit);
            else if (check->log->events[found].recv_count != shard_count(check, unit))
                broke(check, "scatter_from_hook", &check->log->events[found], "unit %d's padded shard is %ld "
                      "elements", unit, shard_count(check, unit));
        }
        for (size_t i = span.first; i < span.end; i++)
            if (moves_data(&check->log->events[i]) && strcmp(check->log->events[i].op, "all_reduce") == 0)
                broke(check, "scatter_from_hook", &check->log->events[i], "no all-reduce of the gradient in ZeRO");
    }
    return finish_rule(check, "scatter_from_hook", "each unit reduce-scattered from its backward hook, with its "
                       "padded shard");
}

/* 10: every collective that moves training data during a step moves 16-bit floats. */
static int rule_sixteen_bits(Check *check)
{
    Span span = {0};
    while (next_step(check, &span))
        for (size_t i = span.first; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            if (is_collective_start(e) && moves_data(e) && !comm_log_op_is_16bit(e->op))
                broke(check, "sixteen_bits", e, "%s %s of fp32 elements: mixed precision sends the gradients and "
                      "the parameters in 16 bits, half the bytes (comm_reduce_scatter_16, comm_all_gather_16)",
                      strchr("aeiou", e->op[0]) != NULL ? "an" : "a", e->op);
        }
    return finish_rule(check, "sixteen_bits", "every collective during the steps moves 16-bit floats");
}

/* ---------------------------------------------------------------- memory */

enum { KIND_PARAMS, KIND_GRADS, KIND_M, KIND_V, KIND_MASTER, NUM_STATE_KINDS };
static const char *const STATE_KINDS[NUM_STATE_KINDS] = {"parameters", "gradients", "adamw_m", "adamw_v",
                                                         "master_weights"};

/* The bytes live per model-state kind after each event, replayed from the allocations. */
static void add_state(long live[NUM_STATE_KINDS], const Event *e)
{
    for (int k = 0; k < NUM_STATE_KINDS; k++)
        if (strcmp(e->kind, STATE_KINDS[k]) == 0)
            live[k] += is(e, "alloc") ? e->bytes : -e->bytes;
}

/* Working memory: what a rank allocated beside its model state, data and activations (the
 * strategy's buffers, the model's scratch). */
static int is_working(const Event *e)
{
    for (int k = 0; k < NUM_STATE_KINDS; k++)
        if (strcmp(e->kind, STATE_KINDS[k]) == 0)
            return 0;
    return (is(e, "alloc") || is(e, "free")) && strcmp(e->kind, "data") != 0 && strcmp(e->kind, "activations") != 0;
}

/* A rank's working memory from step end to step end, from the first on: a buffer made once
 * (in a later step, at the first validation) makes it grow once or twice; one made every
 * step and never freed, every step. */
typedef struct {
    long live, at_last_step_end;
    int step_ends, growths;
} WorkingMemory;

static void check_working_memory(Check *check, WorkingMemory *mine, const Event *e)
{
    if (is_working(e))
        mine->live += is(e, "alloc") ? e->bytes : -e->bytes;
    if (!is(e, "step_end"))
        return;
    if (mine->step_ends++ > 0 && mine->live > mine->at_last_step_end && ++mine->growths >= 3)
        broke(check, "model_state", e, "working buffers grew again by this step's end, to %ld bytes (from %ld), the "
              "third step to add some: memory allocated every step and never freed", mine->live,
              mine->at_last_step_end);
    mine->at_last_step_end = mine->live;
}

/* What a stage keeps of a kind, in words: whole or sharded by the stage, none of a master
 * outside mixed precision. */
static const char *state_held(int kind, int stage, int mixed)
{
    int whole = (kind == KIND_PARAMS && stage < 3) || (kind == KIND_GRADS && stage < 2);
    if (kind == KIND_MASTER && !mixed)
        return "none";
    return whole ? "all of them" : "one padded shard per unit";
}

/* 07-10: at every step end, model state per rank equals the ZeRO formula for this run's
 * padding: full or sharded (sum over units of ceil(count / N)) per kind; in mixed precision
 * (10) the parameters and gradients are 16-bit (2 bytes) and the fp32 master is sharded too. */
static int rule_model_state(Check *check, int stage, int mixed)
{
    long shard_total = 0;
    for (int unit = 0; unit < check->units; unit++)
        shard_total += shard_count(check, unit);
    long compute_bytes = mixed ? 2 : (long)sizeof(float);
    long full = check->num_params * compute_bytes, sharded = shard_total * compute_bytes;
    long fp32_sharded = shard_total * (long)sizeof(float);
    long expected[NUM_STATE_KINDS] = {stage >= 3 ? sharded : full, stage >= 2 ? sharded : full, fp32_sharded,
                                      fp32_sharded, mixed ? fp32_sharded : 0};
    long *live = calloc((size_t)check->ranks * NUM_STATE_KINDS, sizeof *live);
    WorkingMemory *working = calloc((size_t)check->ranks, sizeof *working);
    for (size_t i = 0; live != NULL && working != NULL && i < check->log->count; i++) {
        const Event *e = &check->log->events[i];
        long *mine = live + (size_t)e->rank * NUM_STATE_KINDS;
        add_state(mine, e);
        check_working_memory(check, &working[e->rank], e);
        if (!is(e, "step_end"))
            continue;
        for (int k = 0; k < NUM_STATE_KINDS; k++)
            if (mine[k] != expected[k])
                broke(check, "model_state", e, "%s hold %ld bytes; %sZeRO-%d keeps %s%s: %ld bytes",
                      STATE_KINDS[k], mine[k], mixed ? "mixed-precision " : "", stage, state_held(k, stage, mixed),
                      mixed && (k == KIND_PARAMS || k == KIND_GRADS) ? ", in 16 bits" : "", expected[k]);
    }
    free(live);
    free(working);
    return finish_rule(check, "model_state", mixed ? "16-bit parameters and gradients, fp32 master and AdamW "
                       "moments per rank equal the mixed-precision ZeRO formula for this run's padding, exactly; "
                                                    "working buffers not growing step after step"
                                                  : "parameters, gradients and AdamW moments per rank equal the ZeRO "
                                                    "formula for this run's padding, exactly; working buffers not "
                                                    "growing step after step");
}

/* The bytes of the block a buffer lies in, from the rank's last allocation of it before
 * event `at`; 0 when untracked. */
static long block_bytes(const Check *check, size_t at, const char *buffer)
{
    for (size_t i = at; i-- > 0;) {
        const Event *e = &check->log->events[i];
        if (e->rank != check->log->events[at].rank)
            break;
        if (is(e, "alloc") && same_block(e->buffer, buffer))
            return e->bytes;
    }
    return 0;
}

/* The events whose buffers a tally of live blocks counts, and the buffer each names (NULL for
 * any other event): backward's writes of a unit's gradients, a unit's compute on its
 * parameters, a reduce-scatter's send side. */
typedef const char *(*Marks)(const Event *e);

static const char *grads_written(const Event *e) { return is(e, "grads_ready") ? e->buffer : NULL; }

static const char *computed_with(const Event *e)
{
    return is_compute_start(e) && e->buffer[0] != '\0' ? e->buffer : NULL;
}

static const char *scattered_from(const Event *e)
{
    return is_collective_start(e) && same_op(e, "reduce_scatter") && e->source[0] != '\0' ? e->source : NULL;
}

/* Whether block `buffer` is in use at event `at`: a mark of the span named it, and no free
 * came after that mark. */
static int block_live(const Check *check, const Span *span, size_t at, const char *buffer, Marks marks)
{
    int live = 0;
    for (size_t i = span->first; i <= at; i++) {
        const Event *e = &check->log->events[i];
        const char *named = marks(e);
        if (named != NULL && same_block(named, buffer))
            live = 1;
        else if (is(e, "free") && same_block(e->buffer, buffer))
            live = 0;
    }
    return live;
}

/* Whether event j is the span's first mark naming its block. */
static int first_mark(const Check *check, const Span *span, size_t j, Marks marks)
{
    const char *block = marks(&check->log->events[j]);
    for (size_t i = span->first; i < j; i++) {
        const char *named = marks(&check->log->events[i]);
        if (named != NULL && same_block(named, block))
            return 0;
    }
    return 1;
}

/* The bytes of the distinct blocks the span's marks up to event `at` named and that are still
 * in use then; *blocks their number. */
static long live_blocks(const Check *check, const Span *span, size_t at, Marks marks, int *blocks)
{
    long total = 0;
    *blocks = 0;
    for (size_t j = span->first; j <= at; j++) {
        const char *named = marks(&check->log->events[j]);
        if (named != NULL && first_mark(check, span, j, marks) && block_live(check, span, at, named, marks)) {
            total += block_bytes(check, j, named);
            (*blocks)++;
        }
    }
    return total;
}

/* Where a tally of live blocks first breaks its rule: the span's first mark of memory the
 * tracking allocator did not hand out, or the first mark by which the blocks marked and live
 * at once add up to `full` bytes. `at` is the span's end when neither happens. */
typedef struct {
    size_t at;
    int untracked, blocks;
    long total;
} Tally;

static Tally first_whole(const Check *check, const Span *span, Marks marks, long full)
{
    for (size_t i = span->first; i < span->end; i++) {
        const char *named = marks(&check->log->events[i]);
        if (named == NULL)
            continue;
        Tally tally = {.at = i, .untracked = strcmp(named, "untracked") == 0};
        if (!tally.untracked)
            tally.total = live_blocks(check, span, i, marks, &tally.blocks);
        if (tally.untracked || tally.total >= full)
            return tally;
    }
    return (Tally){.at = span->end};
}

#define COUNT_THEM "allocate working buffers with the device's alloc, so that the memory rules can count them"

/* The blocks backward has written gradients into during the step (its grads_ready marks
 * name them), live at once: together as large as the whole gradient is keeping the whole
 * gradient, in pieces. A block freed once its unit is scattered no longer counts. */
static void check_gradient_blocks(Check *check, const Span *span, int stage, long full)
{
    Tally t = first_whole(check, span, grads_written, full);
    if (t.at == span->end)
        return;
    const Event *e = &check->log->events[t.at];
    if (t.untracked)
        broke(check, "no_full_buffer", e, "backward wrote unit %d's gradients into memory the tracking allocator "
              "did not hand out: " COUNT_THEM, e->unit);
    else
        broke(check, "no_full_buffer", e, "by unit %d's, backward has written gradients into %d buffer%s live at "
              "once, %ld bytes together: the whole gradient is %ld; ZeRO-%d keeps no whole gradient, in one buffer "
              "or in many", e->unit, t.blocks, t.blocks == 1 ? "" : "s", t.total, full, stage);
}

/* 10: the fp32 parameters the model computes with, in the blocks its compute starts name, live
 * at once: together as large as every parameter in fp32 is keeping an fp32 copy of the model,
 * in pieces, where mixed precision keeps the parameters in 16 bits. */
static void check_fp32_parameter_blocks(Check *check, const Span *span, long fp32_full)
{
    Tally t = first_whole(check, span, computed_with, fp32_full);
    if (t.at == span->end)
        return;
    const Event *e = &check->log->events[t.at];
    if (t.untracked)
        broke(check, "no_full_buffer", e, "unit %d computes with memory the tracking allocator did not hand out: "
              COUNT_THEM, e->unit);
    else
        broke(check, "no_full_buffer", e, "by unit %d's compute, the model has computed with fp32 parameters in %d "
              "buffer%s live at once, %ld bytes together: every parameter in fp32 is %ld; in mixed precision the "
              "parameters live in 16 bits, and their fp32 copies only as the units need them", e->unit, t.blocks,
              t.blocks == 1 ? "" : "s", t.total, fp32_full);
}

/* 08-10 on ZeRO-2 and 3: the buffers the reduce-scatters send from, live at once: together as
 * large as the whole gradient in the format they send (full) is keeping it whole, in pieces. */
static void check_send_blocks(Check *check, const Span *span, int stage, long full, int mixed)
{
    Tally t = first_whole(check, span, scattered_from, full);
    if (t.at == span->end)
        return;
    const Event *e = &check->log->events[t.at];
    if (t.untracked)
        broke(check, "no_full_buffer", e, "a reduce-scatter sends from memory the tracking allocator did not hand "
              "out: " COUNT_THEM);
    else
        broke(check, "no_full_buffer", e, "by this reduce-scatter, the gradients have been sent from %d buffer%s "
              "live at once, %ld bytes together: the whole gradient is %ld%s; ZeRO-%d keeps no whole gradient, in "
              "one buffer or in many", t.blocks, t.blocks == 1 ? "" : "s", t.total, full,
              mixed ? " in 16 bits" : "", stage);
}

/* 08-10: no buffer as large as the whole gradient exists during a step, but the
 * parameters (ZeRO-2 keeps them whole), the data, the activations and the model's own
 * backward scratch (a strategy's scratch is held to the rule); and the buffers
 * backward writes gradients into are smaller than it together. In mixed precision (10) the
 * whole gradient is 16-bit, half as large, and as large as an fp32 shard of the optimizer
 * state at 2 ranks: those (measured by model_state) are allowed too, and on ZeRO-1 the
 * whole 16-bit gradient itself, but no other copy of it. Backward still writes fp32, so its
 * buffers are held to the fp32 gradient's size. */
static int rule_no_full_buffer(Check *check, int stage, int mixed)
{
    long fp32_full = check->num_params * (long)sizeof(float), full = mixed ? check->num_params * 2 : fp32_full;
    const char *allowed[] = {stage < 3 ? "parameters" : "", stage < 2 ? "gradients" : "", "data", "activations",
                             mixed ? "adamw_m" : "", mixed ? "adamw_v" : "", mixed ? "master_weights" : ""};
    Span span = {0};
    while (next_step(check, &span)) {
        for (size_t i = 0; i < span.end; i++) {
            const Event *e = &check->log->events[i];
            if (e->rank != span.rank || !is(e, "alloc") || e->bytes < full)
                continue;
            int ok = strcmp(e->kind, "backward_scratch") == 0 && the_models_own(check, i);
            for (size_t a = 0; a < sizeof allowed / sizeof allowed[0]; a++)
                ok |= strcmp(e->kind, allowed[a]) == 0;
            int freed_before_step = 0;
            for (size_t j = i + 1; j < span.first && !freed_before_step; j++)
                freed_before_step = is(&check->log->events[j], "free") &&
                                    strcmp(check->log->events[j].buffer, e->buffer) == 0;
            if (!ok && !freed_before_step)
                broke(check, "no_full_buffer", e, "%s %s buffer of %ld bytes is live during step %d: ZeRO-%d holds "
                      "no %sbuffer as large as the whole gradient (%ld bytes%s)", article(e->kind), e->kind, e->bytes,
                      span.step, stage,
                      stage < 2 ? "other " : "", full, mixed ? " in 16 bits" : "");
        }
        check_gradient_blocks(check, &span, stage, fp32_full);
        if (stage >= 2)
            check_send_blocks(check, &span, stage, full, mixed);
        if (mixed)
            check_fp32_parameter_blocks(check, &span, fp32_full);
    }
    return finish_rule(check, "no_full_buffer", "no buffer of the whole gradient's size during training, and the "
                       "gradient buffers smaller than it together");
}

/* ---------------------------------------------------------------- ZeRO-3 */

/* The all-gather that last wrote buffer before event `at` on the same rank, or NULL. */
static const Event *last_gather_into(const Check *check, size_t at, const char *buffer)
{
    for (size_t i = at; i-- > 0;) {
        const Event *e = &check->log->events[i];
        if (e->rank != check->log->events[at].rank)
            break;
        if (is_collective_start(e) && strcmp(e->op, "all_gather") == 0 && strcmp(e->buffer, buffer) == 0)
            return e;
    }
    return NULL;
}

/* Where a non-blocking gather was finished (its wait, or a test that found it done) on the
 * same rank; the log's length when never. */
static size_t finished_at(const Check *check, const Event *gather)
{
    for (size_t i = (size_t)(gather - check->log->events) + 1; i < check->log->count; i++) {
        const Event *e = &check->log->events[i];
        if (e->rank != gather->rank)
            break;
        if (is_call(e) && e->request == gather->request && (is(e, "wait") || (is(e, "test") && e->done == 1)))
            return i;
    }
    return check->log->count;
}

static int finished_before(const Check *check, const Event *gather, size_t at)
{
    return is(gather, "blocking") || finished_at(check, gather) < at;
}

/* Whether the optimizer step that starts at event `start` was skipped: lesson 10's trainer
 * marks an fp16 overflow after it, before the step ends, and nothing changed. */
static int skipped_update(const Check *check, size_t start)
{
    for (size_t i = start + 1; i < check->log->count; i++) {
        const Event *e = &check->log->events[i];
        if (e->rank != check->log->events[start].rank || is(e, "step_end"))
            return 0;
        if (is(e, "overflow"))
            return 1;
    }
    return 0;
}

/* The last optimizer_start before `at` on the same rank that changed the parameters (a
 * gather before it is stale). */
static size_t last_update(const Check *check, size_t at)
{
    for (size_t i = at; i-- > 0;) {
        if (check->log->events[i].rank != check->log->events[at].rank)
            return i + 1;
        if (is(&check->log->events[i], "optimizer_start") && !skipped_update(check, i))
            return i;
    }
    return 0;
}

/* The distinct buffers units computed with in one step (or validation), while allocated: at
 * most two (one without prefetch). */
typedef struct {
    char names[3][64];
    int count;
} BufferSet;

/* A freed block holds no gathered unit any more. */
static void forget_block(BufferSet *set, const Event *freed)
{
    for (int b = 0; b < set->count; b++)
        if (same_block(set->names[b], freed->buffer)) {
            memmove(set->names[b], set->names[set->count - 1], sizeof set->names[0]);
            set->count--;
            b--;
        }
}

/* With prefetch: the unit in use and the next one arriving; without: the unit in use. */
static void note_buffer(Check *check, BufferSet *set, const Event *e)
{
    int most = check->flags->no_prefetch ? 1 : 2;
    for (int b = 0; b < set->count; b++)
        if (strcmp(set->names[b], e->buffer) == 0)
            return;
    if (set->count <= most)
        snprintf(set->names[set->count++], sizeof set->names[0], "%s", e->buffer);
    if (set->count > most && most == 2)
        broke(check, "gathers", e, "a third buffer of gathered parameters (%s, besides %s and %s): ZeRO-3 holds "
              "the unit in use and the next one arriving, no more", set->names[2], set->names[0], set->names[1]);
    else if (set->count > most)
        broke(check, "gathers", e, "a second buffer of gathered parameters (%s, besides %s) without prefetch: "
              "ZeRO-3 then holds only the unit in use", set->names[1], set->names[0]);
}

/* One compute start on gathered parameters: filled for this unit since the last update,
 * and arrived. Returns the gather, or NULL when the rule broke. */
static const Event *check_gathered(Check *check, size_t i)
{
    const Event *e = &check->log->events[i];
    const Event *gather = last_gather_into(check, i, e->buffer);
    if (strcmp(e->buffer, "untracked") == 0)
        broke(check, "gathers", e, "unit %d computes with memory the tracking allocator did not hand out: allocate "
              "working buffers with the device's alloc, so that what they hold can be followed", e->unit);
    else if (gather == NULL || (size_t)(gather - check->log->events) < last_update(check, i))
        broke(check, "gathers", e, "unit %d computes with %s, which no all-gather has filled since the last update: "
              "gather each unit before its forward and its backward", e->unit, e->buffer);
    else if (gather->count != shard_count(check, e->unit))
        broke(check, "gathers", e, "unit %d's padded shard is %ld elements, but %s was filled by an all-gather of "
              "%ld", e->unit, shard_count(check, e->unit), e->buffer, gather->count);
    else if (!finished_before(check, gather, i))
        broke(check, "gathers", e, "unit %d computes before its all-gather (event %ld) has finished: wait for it "
              "before handing the parameters to the model", e->unit, gather->seq);
    else
        return gather;
    return NULL;
}

/* A 16-bit all-gather starting (or run blocking): lesson 10's ZeRO-3 gathers its units so. */
static int is_16bit_gather(const Event *e)
{
    return is_collective_start(e) && same_op(e, "all_gather") && comm_log_op_is_16bit(e->op);
}

/* 10 on ZeRO-3: a compute start on parameters widened from a 16-bit gather: since the last
 * update the rank has all-gathered, in 16 bits, a padded shard of the unit's size, and that
 * gather was over before the compute began. Which gather the fp32 unit was widened from the
 * log cannot say (widening is no call), so the unit's own size is what ties them: two units
 * of one size are told apart by the numbers. */
static void check_gathered_16bit(Check *check, size_t i)
{
    const Event *e = &check->log->events[i];
    size_t since = last_update(check, i);
    long wanted = shard_count(check, e->unit);
    const Event *unfinished = NULL;
    int gathered_any = 0;
    for (size_t j = i; j-- > since;) {
        const Event *g = &check->log->events[j];
        if (!is_16bit_gather(g))
            continue;
        gathered_any = 1;
        if (g->count != wanted)
            continue;
        if (finished_before(check, g, i))
            return;
        unfinished = g;
    }
    if (unfinished != NULL)
        broke(check, "gathers", e, "unit %d computes before its all-gather (event %ld) has finished", e->unit,
              unfinished->seq);
    else if (!gathered_any)
        broke(check, "gathers", e, "unit %d computes with no 16-bit all-gather since the last update: on ZeRO-3 "
              "each unit's 16-bit shards are gathered before its forward and its backward", e->unit);
    else
        broke(check, "gathers", e, "unit %d computes, but no 16-bit all-gather since the last update moved its "
              "padded shard of %ld elements: on ZeRO-3 each unit's 16-bit shards are gathered before it computes",
              e->unit, wanted);
}

/* 10 on ZeRO-3: a 16-bit all-gather started in a step fills a buffer that holds a unit
 * gathered, the one in use or the next one arriving. */
static void note_16bit_gather(Check *check, BufferSet *set, const Event *e)
{
    for (int b = 0; b < set->count; b++)
        if (strcmp(set->names[b], e->buffer) == 0)
            return;
    if (set->count < 3)
        snprintf(set->names[set->count++], sizeof set->names[0], "%s", e->buffer);
    if (set->count > 2)
        broke(check, "gathers", e, "a third buffer of 16-bit gathered parameters (%s, besides %s and %s): ZeRO-3 "
              "holds the unit in use and the next one arriving, no more", set->names[2], set->names[0],
              set->names[1]);
}

/* 09: every unit's compute runs on parameters all-gathered for it since the last update,
 * and arrived, in at most two buffers at a time. Lesson 10 on ZeRO-3 gathers in 16 bits and
 * computes with the unit widened into fp32 buffers, which no gather fills: its check is
 * check_gathered_16bit, and both its 16-bit gathered buffers and its fp32 ones are at most
 * two at a time. */
static int rule_gathers(Check *check)
{
    const Log *log = check->log;
    BufferSet buffers = {0}, gathered16 = {0};
    for (size_t i = 0; i < log->count; i++) {
        const Event *e = &log->events[i];
        if (is(e, "step_start") || is(e, "validate_start"))
            buffers.count = gathered16.count = 0;
        if (is(e, "free")) {
            forget_block(&buffers, e);
            forget_block(&gathered16, e);
        }
        if (check->lesson == 10 && e->step > 0 && is_16bit_gather(e))
            note_16bit_gather(check, &gathered16, e);
        if (e->step == 0 || !is_compute_start(e) || e->buffer[0] == '\0')
            continue;
        if (check->lesson == 10)
            check_gathered_16bit(check, i);
        else
            check_gathered(check, i);
        note_buffer(check, &buffers, e);
    }
    return finish_rule(check, "gathers", "each unit gathered, and arrived, before its forward and its backward; at "
                       "most two gathered units at a time, one without prefetch");
}

/* Whether a compute between the gather and event `at` already used what it gathered. */
static int fed_earlier(const Check *check, const Event *gather, size_t at)
{
    for (size_t i = (size_t)(gather - check->log->events) + 1; i < at; i++)
        if (is_compute_start(&check->log->events[i]) && strcmp(check->log->events[i].buffer, gather->buffer) == 0)
            return 1;
    return 0;
}

/* 09 with prefetch: each unit's gather started before the previous unit's compute began, and
 * was still arriving then (a unit still held from its previous use needs no new gather). */
static int rule_prefetch(Check *check)
{
    const Log *log = check->log;
    size_t previous = log->count; /* the last compute start in this step or validation */
    for (size_t i = 0; i < log->count; i++) {
        const Event *e = &log->events[i];
        if (is(e, "step_start") || is(e, "validate_start"))
            previous = log->count;
        if (e->step == 0 || !is_compute_start(e) || e->buffer[0] == '\0')
            continue;
        const Event *gather = last_gather_into(check, i, e->buffer);
        /* a unit still held from an earlier use needs no new gather */
        int fresh = gather != NULL && previous < log->count && !fed_earlier(check, gather, i);
        /* named by its buffer: a gather carries no unit, and a design that fills a buffer still
         * in use computes from another unit's gather */
        if (fresh && gather->seq > log->events[previous].seq)
            broke(check, "prefetch", e, "unit %d computes from %s, filled by the all-gather of event %ld, which "
                  "started after unit %d's compute began (event %ld): start the next unit's gather before "
                  "computing this one", e->unit, e->buffer, gather->seq, log->events[previous].unit,
                  log->events[previous].seq);
        else if (fresh && (is(gather, "blocking") || finished_at(check, gather) < previous))
            broke(check, "prefetch", e, "unit %d computes from %s, filled by the all-gather of event %ld, which "
                  "was over before unit %d's compute began (event %ld): a prefetch overlaps that compute, so "
                  "start it without blocking and wait for it only when unit %d is needed", e->unit, e->buffer,
                  gather->seq, log->events[previous].unit, log->events[previous].seq, e->unit);
        previous = i;
    }
    return finish_rule(check, "prefetch", "the next unit's all-gather started before this unit's compute");
}

/* ---------------------------------------------------------------- main */

static int rule_model_state_of_lesson(Check *check)
{
    return rule_model_state(check, zero_stage(check), check->lesson == 10);
}
static int rule_no_full_buffer_of_lesson(Check *check)
{
    return rule_no_full_buffer(check, zero_stage(check), check->lesson == 10);
}

typedef struct {
    const char *name;
    int (*check)(Check *check);
} Rule;

/* Which rules a lesson is graded on, in the order they print (applies() leaves out those
 * that do not hold for the run's flags). */
#define MAX_RULES 7
static const Rule RULES[11][MAX_RULES] = {
    [1] = {{"ring", rule_ring}},
    [2] = {{"broadcast", rule_broadcast}, {"per_tensor", rule_per_tensor}},
    [3] = {{"broadcast", rule_broadcast}, {"one_flat", rule_one_flat}},
    [4] = {{"broadcast", rule_broadcast}, {"overlap", rule_overlap}},
    [5] = {{"broadcast", rule_broadcast}, {"buckets", rule_buckets}},
    [6] = {{"broadcast", rule_broadcast}, {"last_micro_batch", rule_last_micro_batch}, {"buckets", rule_buckets}},
    [7] = {{"broadcast", rule_broadcast}, {"shards", rule_zero1}, {"model_state", rule_model_state_of_lesson}},
    [8] = {{"broadcast", rule_broadcast}, {"scatter_from_hook", rule_scatter_from_hook},
           {"model_state", rule_model_state_of_lesson}, {"no_full_buffer", rule_no_full_buffer_of_lesson}},
    [9] = {{"broadcast", rule_broadcast}, {"scatter_from_hook", rule_scatter_from_hook}, {"gathers", rule_gathers},
           {"prefetch", rule_prefetch}, {"model_state", rule_model_state_of_lesson},
           {"no_full_buffer", rule_no_full_buffer_of_lesson}},
    [10] = {{"broadcast", rule_broadcast}, {"scatter_from_hook", rule_scatter_from_hook}, {"shards", rule_zero1},
            {"gathers", rule_gathers}, {"sixteen_bits", rule_sixteen_bits},
            {"model_state", rule_model_state_of_lesson}, {"no_full_buffer", rule_no_full_buffer_of_lesson}},
};

static int named(const Rule *rule, const char *name) { return strcmp(rule->name, name) == 0; }

/* Lesson 10 is graded on its stage's rules: ZeRO-1 scatters in the step, keeping the whole
 * gradient (in 16 bits, and no other copy); ZeRO-3 gathers each unit for each use, not once per
 * step, with or without prefetch (lesson 10 has no prefetch rule: its units may arrive either
 * way). */
static int applies(const Rule *rule, int lesson, const RunFlags *flags)
{
    if (rule->name == NULL || (named(rule, "prefetch") && flags->no_prefetch))
        return 0;
    if (lesson != 10)
        return 1;
    if (flags->stage == 1)
        return !named(rule, "scatter_from_hook") && !named(rule, "gathers");
    if (flags->stage == 2)
        return !named(rule, "gathers");
    return !named(rule, "shards");
}

/* Every rule fails alike when there is nothing to check: a check is a check, run or not. */
static int fail_every_rule(int lesson, const RunFlags *flags, const char *label, const char *why)
{
    for (const Rule *rule = RULES[lesson]; rule < RULES[lesson] + MAX_RULES; rule++)
        if (applies(rule, lesson, flags))
            printf("FAIL %s schedule %s: %s\n", label, rule->name, why);
    return 0;
}

static int check_lesson(Check *check)
{
    int ok = 1;
    for (const Rule *rule = RULES[check->lesson]; rule < RULES[check->lesson] + MAX_RULES; rule++)
        if (applies(rule, check->lesson, check->flags))
            ok &= rule->check(check);
    return ok;
}

/* Every rank of the run must have logged every step (lesson 01: a ring): a log missing a rank,
 * or one whose ranks stopped at different steps, is checked no further. A run that stopped
 * early on every rank alike (a step that was not a number) is checked on the steps it logged,
 * each rule failing either way: by what broke it there, or for the steps missing. */
static int check_complete(Check *check, int ranks_run)
{
    int steps = check->flags->cfg.steps, logged = 0; /* rank 0's steps */
    const char *mark = check->lesson == 1 ? "ring_start" : "step_end";
    char why[256] = "";
    if (check->log->ranks > ranks_run)
        snprintf(why, sizeof why, "the log holds rank %d, but the run had %d rank(s)", check->log->ranks - 1,
                 ranks_run);
    for (int r = 0; r < ranks_run && why[0] == '\0'; r++) {
        int marks = 0;
        for (size_t i = 0; i < check->log->count; i++)
            marks += check->log->events[i].rank == r && is(&check->log->events[i], mark);
        if (check->lesson == 1 && marks == 0)
            snprintf(why, sizeof why, "rank %d logged no ring", r);
        else if (check->lesson != 1 && (marks == 0 || marks > steps))
            snprintf(why, sizeof why, "rank %d logged %d of the run's %d steps", r, marks, steps);
        else if (check->lesson != 1 && r > 0 && marks != logged)
            snprintf(why, sizeof why, "rank %d logged %d of the run's %d steps, rank 0 %d", r, marks, steps, logged);
        if (r == 0)
            logged = marks;
    }
    if (why[0] == '\0' && check->lesson != 1 && logged < steps)
        snprintf(check->cut_short, sizeof check->cut_short, "the run stopped after logging %d of its %d steps",
                 logged, steps);
    return why[0] == '\0' ? 1 : fail_every_rule(check->lesson, check->flags, check->label, why);
}

#define LESSON_FIELD(name) offsetof(RunFlags, name)
static const Flag lesson_flags[] = {
    {"bucket-mb", FLAG_FLOAT, LESSON_FIELD(bucket_mb), "lesson 05/06's bucket cap, MB", 0, 1e9, 0},
    {"accum", FLAG_INT, LESSON_FIELD(accum), "lesson 06's micro-batches per step", 1, 1 << 20, 0},
    {"no-prefetch", FLAG_SWITCH, LESSON_FIELD(no_prefetch), "lesson 09 run without prefetch", 0, 1, 0},
    {"stage", FLAG_INT, LESSON_FIELD(stage), "lesson 10's ZeRO stage", 1, 3, 0},
    {"fp16", FLAG_SWITCH, LESSON_FIELD(fp16), "lesson 10 run in fp16", 0, 1, 0},
    {"scale-window", FLAG_INT, LESSON_FIELD(scale_window), "lesson 10's fp16 loss-scale window", 1, 1 << 30, 0},
    {"fp32-matmuls", FLAG_SWITCH, LESSON_FIELD(fp32_matmuls), "lesson 10 run with fp32 matmuls", 0, 1, 0},
    {"copy-tensors", FLAG_SWITCH, LESSON_FIELD(copy_tensors), "lesson 03 run packing its tensors", 0, 1, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: check_schedule LESSON LOG.csv [--label NAME] [--ranks N] [--no-log REASON] [the run's "
                 "flags: --config PRESET, --batch, --accum, --bucket-mb, --no-prefetch, --stage, ...]\n"
                 "  checks a --comm-log file against the schedule lesson LESSON (01..10) teaches;\n"
                 "  --ranks N: the run had N ranks, and every one of them must be in the log;\n"
                 "  --no-log REASON: the run wrote no log; every rule fails with REASON\n");
}

/* --label, --ranks and --no-log are the checker's own; every other flag is the run's. */
typedef struct {
    const char *label, *no_log;
    int ranks; /* 0: the ranks the log holds */
} CheckerOptions;

#define CHECKER(field) offsetof(CheckerOptions, field)
static const Flag checker_flags[] = {
    {"label", FLAG_STRING, CHECKER(label), "what the PASS and FAIL lines call the check", 0, 0, 0},
    {"ranks", FLAG_INT, CHECKER(ranks), "the run had N ranks, and every one of them must be in the log", 1, MAX_RANKS, 0},
    {"no-log", FLAG_STRING, CHECKER(no_log), "the run wrote no log: every rule fails with this reason", 0, 0, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

int main(int argc, char **argv)
{
    if (argc >= 2 && cli_is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (argc < 3) {
        usage(stderr);
        return 2;
    }
    char *end;
    long lesson = strtol(argv[1], &end, 10);
    if (*end != '\0' || lesson < 1 || lesson > 10) {
        fprintf(stderr, "check_schedule: lesson '%s' has no schedule rules (01..10)\n", argv[1]);
        return 2;
    }
    CheckerOptions checker = {.label = ""};
    RunFlags flags = {.bucket_mb = 1.0f, .stage = 2}; /* the lessons' defaults */
    FlagSet extra[2] = {{"lesson", lesson_flags, &flags}, {"checker", checker_flags, &checker}};
    char err[512];
    if (train_config_from_args(&flags.cfg, argc, argv, 3, extra, 2, err, sizeof err) != 0) {
        fprintf(stderr, "check_schedule: %s\n", err);
        return 2;
    }
    const char *label = checker.label, *no_log = checker.no_log;
    int ranks_run = checker.ranks;
    if (flags.accum == 0)
        flags.accum = lesson == 6 ? 2 : 1;
    flags.cfg.accum_steps = flags.accum;
    if (gpt_num_units(&flags.cfg.model) > MAX_UNITS) {
        fprintf(stderr, "check_schedule: more than %d units (--layers %d)\n", MAX_UNITS, flags.cfg.model.num_layers);
        return 2;
    }
    if (no_log != NULL) {
        fail_every_rule((int)lesson, &flags, label, no_log);
        return 1;
    }
    Log log;
    if (read_log(argv[2], &log) != 0)
        return 2;
    if (ranks_run == 0)
        ranks_run = log.ranks > 0 ? log.ranks : 1; /* by hand: the ranks the log holds */
    Check check = {.log = &log, .flags = &flags, .model = &flags.cfg.model, .ranks = (int)ranks_run,
                   .units = gpt_num_units(&flags.cfg.model), .num_params = (long)gpt_num_params(&flags.cfg.model),
                   .label = label, .lesson = (int)lesson};
    int ok = check_complete(&check, (int)ranks_run) && check_lesson(&check);
    free(log.events);
    return ok ? 0 : 1;
}
