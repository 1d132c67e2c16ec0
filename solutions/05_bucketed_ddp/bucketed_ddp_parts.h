/* Lesson 05's reference, as lesson 06 builds on it (solutions/05_bucketed_ddp/bucketed_ddp.c):
 * its hooks by name, so that a later strategy can name them in its own table. Not part of
 * lesson 05's exercise, whose design is yours. */
#ifndef LESSON05_BUCKETED_DDP_PARTS_H
#define LESSON05_BUCKETED_DDP_PARTS_H

#include <stddef.h>

#include "bucketed_ddp.h"

int bucketed_ddp_setup(RunContext *run, char *err, size_t err_len); /* the plan, from run->options */
void bucketed_ddp_start(RunContext *run);
void bucketed_ddp_grads_ready(RunContext *run, int unit);
void bucketed_ddp_before_step(RunContext *run);
void bucketed_ddp_stop(RunContext *run);

#endif
