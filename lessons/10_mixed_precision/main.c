/* Lesson 10: mixed precision on ZeRO-2. `mpiexec -n N 10_mixed_precision train [flags]` */
#include "lesson.h"
#include "mixed.h"

static const Lesson lesson = {
    .name = "10_mixed_precision",
    .title = "Mixed precision: bf16 parameters and gradients, computed with and sent in 16 bits; fp32 master "
             "weights and AdamW, sharded",
    .strategy = {.name = "mixed_zero2", .model_storage = mixed_model_storage, .setup = mixed_setup,
                 .start = mixed_start, .acquire_params = mixed_acquire_params, .unit_grads = zero2_unit_grads,
                 .grads_ready = mixed_grads_ready, .optimizer_step = mixed_optimizer_step,
                 .gather_params = mixed_gather_params, .gather_optimizer = zero1_gather_optimizer,
                 .load_optimizer = zero1_load_optimizer, .stop = mixed_stop},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
