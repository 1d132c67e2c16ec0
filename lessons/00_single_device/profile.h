#ifndef LESSON00_PROFILE_H
#define LESSON00_PROFILE_H

#include "comm.h"
#include "train_config.h"

typedef struct {
    int warmup_iters;    /* steps run before timing starts */
    int iters;           /* steps timed */
    int sweep_max_batch; /* the batch-size sweep stops here if memory never runs out */
    int throughput_only; /* 1: memory and throughput, without the time breakdown, the sweep and
                          * the extrapolation (one model set up instead of three or more) */
} ProfileOptions;

extern const Flag profile_flags[];
ProfileOptions profile_defaults(void);

/* Memory breakdown, throughput and FLOPs against the peak, where a step's time goes,
 * batch-size sweep and extrapolation. */
int run_profile(const TrainConfig *cfg, const ProfileOptions *opts, Comm *comm);

/* Prints the estimator's figures as CSV (component,bytes): what grading compares. */
void print_estimate_csv(const TrainConfig *cfg, FILE *out);

#endif
