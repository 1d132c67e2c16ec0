#include "events.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "timer.h"

enum { MAX_COUNTERS = 4 };

/* A counter's running value. */
typedef struct {
    const char *name;
    double value;
} Counter;

/* Bookkeeping outside the tracking allocator: the record is not the model's memory. */
static struct {
    RunEvent *events;
    size_t count, capacity, dropped; /* dropped: events lost to a failed allocation */
    size_t settled;                  /* events before this one hold times, not markers */
    long next_seq, next_request;
    int keep, memory_track, spans, step, micro, where_unit;
    const char *where_event;
    double origin;
    const TraceDeviceClock *device_clock; /* NULL: the host's clock */
    Counter counters[MAX_COUNTERS];
} record = {.where_event = "setup", .where_unit = -1};

void events_start(int keep, int memory_track)
{
    record.keep = keep;
    record.memory_track = memory_track;
}

void events_time_spans(const TraceDeviceClock *clock)
{
    record.spans = 1;
    record.device_clock = clock;
    memset(record.counters, 0, sizeof record.counters);
    if (clock != NULL)
        clock->forget(); /* anchors it */
}

void events_stop_spans(void)
{
    events_settle();
    record.spans = record.memory_track = 0;
}

void events_forget(void)
{
    free(record.events);
    record.events = NULL;
    record.count = record.capacity = record.dropped = record.settled = 0;
    record.spans = record.memory_track = 0;
    record.device_clock = NULL;
}

long events_new_request(void)
{
    return record.next_request++;
}

/* A mark, call or block: a row of the log, numbered in order. */
static int is_logged(EventType type)
{
    return type == EVENT_MARK || type == EVENT_CALL || type == EVENT_BLOCK;
}

/* A new event with the position filled in; NULL when out of memory (the record loses an
 * event, the run goes on). */
static RunEvent *append(EventType type, const char *name, const void *buffer)
{
    RunEvent *events = grow_for_one(record.events, &record.capacity, record.count, sizeof *events, 1024);
    if (events == NULL) {
        record.dropped++;
        return NULL;
    }
    record.events = events;
    double now = now_seconds();
    long seq = -1;
    if (is_logged(type)) {
        if (record.next_seq == 0)
            record.origin = now;
        seq = record.next_seq++;
    }
    RunEvent *e = &record.events[record.count++];
    *e = (RunEvent){.type = type, .time = now, .name = name, .seq = seq, .request = -1, .done = -1, .to = -1,
                 .from = -1, .step = record.step, .micro = record.micro, .unit = -1, .where_event = record.where_event,
                 .where_unit = record.where_unit, .begin = {0.0, -1}, .end = {0.0, -1}};
    e->has_place = buffer != NULL && mem_block_find(buffer, &e->place);
    e->untracked = buffer != NULL && !e->has_place;
    return e;
}

TraceMark events_now_on(void *stream)
{
    TraceMark mark = {0.0, -1};
    if (!record.spans)
        return mark;
    mark.seconds = now_seconds(); /* kept if the device has no marker left */
    if (record.device_clock != NULL)
        mark.marker = record.device_clock->mark(stream);
    return mark;
}

TraceMark events_now(void)
{
    return events_now_on(NULL);
}

int events_where(char *mark, size_t mark_len)
{
    if (record.where_unit >= 0)
        snprintf(mark, mark_len, "%s %d", record.where_event, record.where_unit);
    else
        snprintf(mark, mark_len, "%s", record.where_event);
    return record.step;
}

/* A mark, and the position every later event is recorded at. */
static RunEvent *mark(const char *name, int unit, const void *buffer, size_t count)
{
    RunEvent *e = append(EVENT_MARK, name, buffer);
    if (e != NULL) {
        e->unit = unit;
        e->count = count;
    }
    record.where_event = name;
    record.where_unit = unit;
    return e;
}

void events_mark(const char *name, int unit, const void *buffer, size_t count)
{
    mark(name, unit, buffer, count);
}

TraceMark events_mark_begin(const char *name, int unit, const void *buffer, size_t count)
{
    mark(name, unit, buffer, count);
    return events_now();
}

void events_mark_end(const char *name, int unit, TraceMark began, const char *span)
{
    TraceMark now = events_now();
    RunEvent *e = mark(name, unit, NULL, 0);
    if (e != NULL && record.spans) {
        e->span = span;
        e->track = TRACK_COMPUTE;
        e->begin = began;
        e->end = now;
    }
}

TraceMark events_step(int step)
{
    if (!record.keep) {
        record.count = 0;
        record.settled = 0;
    }
    record.step = step;
    record.micro = 0;
    return events_mark_begin("step_start", -1, NULL, 0);
}

void events_micro(int micro)
{
    record.micro = micro;
}

void events_call(const CallEvent *call)
{
    RunEvent *e = append(EVENT_CALL, call->mode, call->buffer);
    if (e == NULL)
        return;
    e->op = call->op;
    e->count = call->send_count;
    e->recv_count = call->recv_count;
    e->request = call->request;
    e->done = call->done;
    e->to = call->to;
    e->from = call->from;
    e->has_source = call->source != NULL && mem_block_find(call->source, &e->source_place);
    e->source_untracked = call->source != NULL && !e->has_source;
    if (record.spans && call->span.name != NULL) {
        e->span = call->span.name;
        e->track = call->span.track;
        e->begin = call->span.begin;
        e->end = call->span.end;
    }
}

void events_span(TraceTrack track, const char *name, int unit, TraceMark begin, TraceMark end)
{
    if (!record.spans)
        return;
    RunEvent *e = append(EVENT_SPAN, name, NULL);
    if (e == NULL)
        return;
    e->unit = unit;
    e->span = name;
    e->track = track;
    e->begin = begin;
    e->end = end;
}

/* The counter's slot, or NULL when MAX_COUNTERS others have taken them all. */
static Counter *counter_named(const char *name)
{
    for (int i = 0; i < MAX_COUNTERS; i++)
        if (record.counters[i].name == NULL || strcmp(record.counters[i].name, name) == 0) {
            record.counters[i].name = name;
            return &record.counters[i];
        }
    return NULL;
}

void events_count(const char *name, double delta)
{
    if (!record.spans)
        return;
    Counter *counter = counter_named(name);
    if (counter == NULL)
        return;
    RunEvent *e = append(EVENT_COUNT, name, NULL);
    if (e == NULL)
        return;
    counter->value += delta;
    e->value = counter->value;
}

void events_memory(const MemChange *change)
{
    if (change->type == MEM_IN_USE_CHANGED) {
        if (!record.memory_track)
            return;
        RunEvent *e = append(EVENT_IN_USE, "in_use", NULL);
        if (e != NULL) {
            e->bytes = change->bytes;
            e->place.kind = change->kind;
        }
        return;
    }
    RunEvent *e = append(EVENT_BLOCK, change->type == MEM_BLOCK_ADDED ? "alloc" : "free", change->ptr);
    if (e != NULL) {
        e->bytes = change->bytes;
        e->place.kind = change->kind;
    }
}

/* A marker's time, read from the device clock. */
static void settle_time(TraceMark *mark)
{
    if (mark->marker >= 0)
        mark->seconds = record.device_clock->seconds(mark->marker);
    mark->marker = -1;
}

void events_settle(void)
{
    if (!record.spans || record.device_clock == NULL)
        return;
    for (size_t i = record.settled; i < record.count; i++) {
        settle_time(&record.events[i].begin);
        settle_time(&record.events[i].end);
    }
    record.settled = record.count;
    record.device_clock->forget();
}

EventRecord events_record(void)
{
    events_settle();
    return (EventRecord){record.events, record.count, record.dropped == 0, record.origin,
                         record.device_clock != NULL};
}
