/* Lesson 09's exercise: ZeRO stage 3, the parameters sharded too. Builds on lessons 07, 08. */
#ifndef LESSON09_ZERO3_H
#define LESSON09_ZERO3_H

#include <stddef.h>

#include "zero2_parts.h"

/* A working buffer that holds one gathered unit (padded), or is being filled with one. */
typedef struct {
    float *buffer;       /* world * largest_shard floats */
    int unit;            /* the unit it holds or is receiving; -1 = none */
    int in_use;          /* acquired and not yet released: must not be reused */
    long last_used;      /* for choosing which slot to reuse */
    CommRequest gather;  /* the all-gather filling it, while in flight */
} GatherSlot;

typedef struct {
    int no_prefetch;     /* --no-prefetch */
} Zero3Options;

typedef struct {
    Zero2 zero2;                  /* gradient and optimizer shards (lessons 07 and 08) */
    float *param_shard;           /* this rank's shard of every unit: the only parameters kept */
    GatherSlot *slots;            /* zero3_gather_slots of them */
    int num_slots;
    long uses;                    /* acquisitions so far, for last_used */
    int prefetch;
} Zero3;

ModelStorage zero3_model_storage(void);
/* The exercise's choice: how many gathered units this rank holds at once, with prefetch or
 * without; zero3_setup allocates that many slots, each one padded unit. */
int zero3_gather_slots(int prefetch);
int zero3_setup(RunContext *run, char *err, size_t err_len);
void zero3_start(RunContext *run);
float *zero3_acquire_params(RunContext *run, int unit);
void zero3_release_params(RunContext *run, int unit);
float zero3_optimizer_step(RunContext *run, AdamWHyper hyper, float max_norm);
void zero3_gather_params(RunContext *run, float *host);
void zero3_stop(RunContext *run);

/* Given: the slot holding (or receiving) unit, or -1; the least recently used slot not in
 * use, its all-gather finished; an all-gather of unit's shards into a slot (blocking, or
 * started only); and dropping every gathered unit (they are stale after an update). */
int slot_holding(const Zero3 *zero, int unit);
int reusable_slot(RunContext *run, Zero3 *zero);
void gather_into(RunContext *run, Zero3 *zero, int slot, int unit, int nonblocking);
void forget_gathered(RunContext *run, Zero3 *zero);

#endif
