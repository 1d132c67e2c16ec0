/* Lesson 08: ZeRO-2, optimizer state and gradients sharded. `mpiexec -n N 08_zero2 train [flags]` */
#include "lesson.h"
#include "zero2.h"

static const Lesson lesson = {
    .name = "08_zero2",
    .title = "ZeRO-2: gradients reduce-scattered unit by unit during backward; no full gradient buffer",
    .strategy = &(const Strategy){.name = "zero2", .model_storage = zero2_model_storage, .setup = zero2_setup, .start = zero1_start, .unit_grads = zero2_unit_grads,
                 .grads_ready = zero2_grads_ready, .optimizer_step = zero2_optimizer_step, .gather_optimizer = zero1_gather_optimizer,
                 .load_optimizer = zero1_load_optimizer, .stop = zero2_stop},
};

int main(int argc, char **argv)
{
    return lesson_main(argc, argv, &lesson);
}
