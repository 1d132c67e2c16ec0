/* The grader sees each lesson's idea, not only its numbers: every wrong solution in
 * tests/mutants/ whose numbers agree with the reference fails on the rule it breaks
 * (communication schedule, memory, memory safety), and every correct solution designed
 * another way (tests/designs/) or written another way (tests/variants/) passes. Also the grader as a student meets it: one check,
 * all lessons in one table, Gradescope's JSON, the command that reproduces a failure. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "files.h"
#include "shell.h"

TestSuite(grading, .timeout = 600);

/* A mistake from tests/mutants/ and what the grader says of it. */
typedef struct {
    const char *mutant;     /* under build/mutants/; its first two characters are the lesson */
    const char *fails_with; /* text of the grader's output that names the failure */
    const char *numbers_pass_in; /* NULL, or the check whose loss, grad_norm, val_loss and
                                  * comm_bytes all pass: only the rule can tell it from a right answer */
    const char *also_says[3];    /* more text the output must hold, where one line is not the whole story */
    const char *checks;          /* the check to grade, where no PASS or FAIL line above names one */
} Mistake;

static const Mistake mistakes[] = {
    {.mutant = "00_single_device/wte_with_V", .fails_with = "FAIL estimate_reference_vocab_300_max-seq_96 bytes:"},
    {.mutant = "00_single_device/wpe_with_T", .fails_with = "FAIL estimate_reference_vocab_300_max-seq_96 bytes:"},
    {.mutant = "00_single_device/int_bytes",
     .fails_with = "FAIL estimate_gpt2 bytes: 1 of 5 rows differ; first at component=activations: 1134100480 but "
         "expected 9724035072", .also_says = {"PASS estimate_reference bytes", "PASS estimate_course bytes"}},
    {.mutant = "01_collectives/library_all_reduce", .fails_with = "FAIL ring_3 schedule ring:"},
    {.mutant = "01_collectives/send_then_recv",
     .fails_with = "FAIL ring_2 sums: 6 of 8 counts exact, then the run ended with an error in count 7",
     .also_says = {"waited 30 s (--wait-timeout) in send", "every rank here is waiting in a send, and none receives"}},
    {.mutant = "02_naive_ddp/sum_not_average", .fails_with = "FAIL dp_reference_n2 grad_norm"},
    /* right at 2 ranks, where a sum halved is the average: only a run at another size tells */
    {.mutant = "02_naive_ddp/halved_for_two_ranks",
     .fails_with = "FAIL dp_reference_n1 grad_norm: 30 of 30 rows differ; first at step=1: 1.29674411 but "
         "expected 2.59348822", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "02_naive_ddp/broadcast_overlapping",
     .fails_with = "FAIL dp_reference_n2 schedule broadcast: rank 0 broadcast 120576 elements before the first step, "
         "as many as the model's parameters, but 128 of them twice into the same place", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "02_naive_ddp/no_broadcast", .fails_with = "ranks ended with different parameters",
     .checks = "dp_reference_n2"},
    {.mutant = "02_naive_ddp/broadcast_in_setup",
     .fails_with = "FAIL dp_reference_n2 schedule broadcast: rank 0, step 0, event 18: blocking broadcast of 120576 "
         "element(s) into parameters#0+0, at strategy_setup: a broadcast from the strategy's setup",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "02_naive_ddp/per_unit",
     .fails_with = "FAIL dp_reference_n2 schedule per_tensor: rank 0, step 1, event 21: step_start: 4 all-reduce(s) "
         "in this step; the model has 28 parameter tensors", .numbers_pass_in = "dp_reference_n2"},
    /* as many all-reduces as tensors, one of another tensor's size: the call is named */
    {.mutant = "02_naive_ddp/qkv_as_c_by_c",
     .fails_with = "FAIL dp_reference_n2 schedule per_tensor: rank 0, step 1, event 62: blocking all_reduce of 4096 "
         "element(s) into gradients#0+70592, at grads_ready 0: the model has 3 parameter tensor(s) of 4096 elements, "
         "and this is one all-reduce more of that size"},
    /* calls that do not match: MPI's "Message truncated", said in the course's words */
    {.mutant = "02_naive_ddp/order_by_rank", .fails_with = "FAIL dp_reference_n2 run: the lesson exited with an error",
     .also_says = {"all_reduce failed on rank 1 of 2: MPI: message truncated: its collective 4 does not match another "
                   "rank's (another call there, or this one with another count"},
     .checks = "dp_reference_n2"},
    /* the parameters are equal already: only the bytes and the rule see the broadcast */
    {.mutant = "02_naive_ddp/broadcast_every_step",
     .fails_with = "FAIL dp_reference_n2 schedule broadcast: rank 0, step 1, event 46: blocking broadcast of 120576 "
         "element(s) into parameters#0+0, at grads_ready 0: a broadcast during training",
     .also_says = {"PASS dp_reference_n2 loss: 30 rows", "PASS dp_reference_n2 grad_norm: 30 rows",
                   "FAIL dp_reference_n2 comm_bytes: 30 of 30 rows differ; first at step=1: 1446912 but expected 964608"}},
    {.mutant = "03_flat_ddp/per_unit",
     .fails_with = "FAIL dp_reference_n2 schedule one_flat: rank 0, step 1, event 46: blocking all_reduce of 20480 "
         "element(s) into gradients#0+0, at grads_ready 0: lesson 03 makes one blocking all_reduce of all 120576",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "03_flat_ddp/broadcast_every_step",
     .fails_with = "FAIL dp_reference_n2_copy-tensors schedule broadcast: rank 0, step 1, event 47: blocking "
         "broadcast of 120576 element(s) into parameters#0+0, at grads_ready 0: a broadcast during training",
     .also_says = {"PASS dp_reference_n2_copy-tensors loss: 30 rows",
                   "FAIL dp_reference_n2_copy-tensors comm_bytes: 30 of 30 rows differ"}},
    /* the mean at 2 ranks only: the 3-rank run's norm is 3/2 of the mean's */
    {.mutant = "03_flat_ddp/sum_then_halve",
     .fails_with = "FAIL dp_reference_n3_batch_6 grad_norm: 30 of 30 rows differ; first at step=1: 3.85",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "03_flat_ddp/no_packing",
     .fails_with = "FAIL dp_reference_n2_copy-tensors schedule one_flat: rank 0, step 1, event 47: blocking all_reduce "
         "of 120576 element(s) into gradients#0+0, at grads_ready 0: the model's gradients themselves: with "
         "--copy-tensors they travel packed",
     .numbers_pass_in = "dp_reference_n2_copy-tensors", .also_says = {"PASS dp_reference_n2 schedule one_flat"}},
    {.mutant = "04_overlap_ddp/wait_on_half", .fails_with = "FAIL dp_reference_n2"},
    {.mutant = "04_overlap_ddp/blocking_per_unit", .fails_with = "FAIL dp_reference_n2 schedule overlap:",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "04_overlap_ddp/started_in_before_step",
     .fails_with = "FAIL dp_reference_n2 schedule overlap: rank 0, step 1, event 46: start all_reduce of 128 element(s) "
         "into gradients#0+120448, at grads_ready 0: the all-reduce of units 3..3 starts after unit 2's backward "
         "began (event 37)", .numbers_pass_in = "dp_reference_n2"},
    /* its numbers are a race: right when the all-reduce happens to read unit 0's gradients after
     * backward wrote them (a loaded machine), wrong when before; the rule fails it either way */
    {.mutant = "04_overlap_ddp/started_before_final",
     .fails_with = "FAIL dp_reference_n2 schedule overlap: rank 0, step 1, event 47: start all_reduce of 20480 "
         "element(s) into gradients#0+0, at grads_ready 1: the all-reduce of units 0..0 starts before grads_ready 0: "
         "unit 0's gradients are not final yet",
     .checks = "dp_reference_n2"},
    {.mutant = "04_overlap_ddp/waits_in_hook",
     .fails_with = "FAIL dp_reference_n2 schedule overlap: rank 0, step 1, event 42: wait on request 0 (all_reduce "
         "into gradients#0+120448), at grads_ready 2: a wait during backward", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "04_overlap_ddp/whole_gradient_at_the_end",
     .fails_with = "FAIL dp_reference_n2 schedule overlap: rank 0, step 1, event 46: start all_reduce of 120576 "
         "element(s) into gradients#0+0, at grads_ready 0: one all-reduce covers units 3..0: each unit goes by itself",
     .numbers_pass_in = "dp_reference_n2"},
    /* how many tests a request takes before it is done is the machine's: the event that breaks
     * the rule moves, the rule does not */
    {.mutant = "04_overlap_ddp/test_loop", .fails_with = "FAIL dp_reference_n2 schedule overlap:",
     .numbers_pass_in = "dp_reference_n2",
     .also_says = {"tested again before the next unit's backward: a loop on comm_test holds the backward up"}},
    {.mutant = "04_overlap_ddp/tested_at_release_too", .fails_with = "FAIL dp_reference_n2 schedule overlap:",
     .numbers_pass_in = "dp_reference_n2", .also_says = {"tested again before the next unit's backward"}},
    {.mutant = "05_bucketed_ddp/order_differs_by_rank", .fails_with = "every rank here is waiting",
     .checks = "dp_reference_n2_bucket-mb_0.1"},
    {.mutant = "05_bucketed_ddp/bucket_per_unit",
     .fails_with = "FAIL dp_reference_n2_bucket-mb_0.25 schedule buckets:"},
    {.mutant = "05_bucketed_ddp/one_bucket", .fails_with = "FAIL dp_reference_n2_bucket-mb_0.1 schedule buckets:"},
    {.mutant = "05_bucketed_ddp/buckets_by_unit_count",
     .fails_with = "FAIL dp_reference_n2_bucket-mb_0.1 schedule buckets: rank 0, step 1, event 40: start all_reduce "
         "of 50112 element(s) into gradients#0+70464, at grads_ready 2: a bucket of units 3..2, 200448 bytes, over "
         "the cap of 100000", .numbers_pass_in = "dp_reference_n2_bucket-mb_0.1"},
    /* a unit's bytes kept in an int: every graded run is right, the plan past 2^31 bytes wraps */
    {.mutant = "05_bucketed_ddp/bytes_in_int",
     .fails_with = "FAIL plan_tiny_channels_16384_bucket-mb_12900 bucket: 1 of 3 rows differ; first at unit=0",
     .numbers_pass_in = "dp_reference_n2_bucket-mb_0.1"},
    /* the plan check asks bucketed_ddp_bucket_of in bytes: only a run's buckets show the MiB */
    {.mutant = "05_bucketed_ddp/cap_in_mib",
     .fails_with = "FAIL dp_reference_n3_batch_6_bucket-mb_0.4 schedule buckets: rank 0, step 1, event 43: start "
         "all_reduce of 100096 element(s) into gradients#0+20480, at grads_ready 1: a bucket of units 3..1, 400384 "
         "bytes, over the cap of 400000", .numbers_pass_in = "dp_reference_n3_batch_6_bucket-mb_0.4"},
    {.mutant = "05_bucketed_ddp/two_units_at_most",
     .fails_with = "FAIL dp_reference_n2 schedule buckets: rank 0, step 1, event 47: start all_reduce of 70464 "
         "element(s) into gradients#0+0, at grads_ready 0: units 3..2 and 1..0 went as two all-reduces, though "
         "together they fit in the cap of 1000000 bytes", .numbers_pass_in = "dp_reference_n2",
     .also_says = {"PASS plan_tiny_channels_16384_bucket-mb_12900 bucket"}},
    {.mutant = "05_bucketed_ddp/waits_before_the_last",
     .fails_with = "FAIL dp_reference_n2_bucket-mb_0.25 schedule buckets: rank 0, step 1, event 51: start all_reduce "
         "of 20480 element(s) into gradients#0+0, at grads_ready 0: started after the wait on request 0 (event 49)",
     .numbers_pass_in = "dp_reference_n2_bucket-mb_0.25"},
    {.mutant = "05_bucketed_ddp/waits_in_hook",
     .fails_with = "FAIL dp_reference_n2_bucket-mb_0.25 schedule buckets: rank 0, step 1, event 45: wait on request "
         "0 (all_reduce into gradients#0+70464), at grads_ready 1: a wait during backward",
     .numbers_pass_in = "dp_reference_n2_bucket-mb_0.25"},
    /* the run ends in an error after its summary: the lesson's own error line comes first */
    {.mutant = "06_grad_accum/first_micro_batch_taken_for_the_last",
     .fails_with = "FAIL dp_reference_n2_accum_2_bucket-mb_0.1 run: the lesson exited with an error:\n"
         "  06_grad_accum: ranks ended with different parameters (rank 0 hash "},
    /* the losses agree when every micro-batch is all-reduced: the bytes and the schedule show it */
    {.mutant = "06_grad_accum/sync_every_micro_batch",
     .fails_with = "FAIL dp_reference_n2_accum_2_bucket-mb_0.1 schedule last_micro_batch:",
     .also_says = {"FAIL dp_reference_n2_accum_2_bucket-mb_0.1 comm_bytes",
                   "PASS dp_reference_n2_accum_2_bucket-mb_0.1 loss",
                   "PASS dp_reference_n2_accum_2_bucket-mb_0.1 grad_norm"}},
    /* without the 1/K scale the gradients add up to K times the mean: the norm shows it at once */
    {.mutant = "06_grad_accum/no_loss_scale",
     .fails_with = "FAIL dp_reference_n2_accum_4_bucket-mb_0.25 grad_norm: 30 of 30 rows differ; first at step=1: "
         "10.37"},
    {.mutant = "06_grad_accum/no_overlap_after_accumulation",
     .fails_with = "FAIL dp_reference_n2_accum_2_bucket-mb_0.1 schedule buckets: rank 0, step 1, event 70: blocking "
         "all_reduce of 120576 element(s) into gradients#0+0, at grads_ready 0: the gradients go by non-blocking",
     .numbers_pass_in = "dp_reference_n2_accum_2_bucket-mb_0.1"},
    /* the numbers of one big batch: only the count of forward passes shows it */
    {.mutant = "06_grad_accum/one_big_batch",
     .fails_with = "FAIL dp_reference_n2_accum_2_bucket-mb_0.1 schedule last_micro_batch: rank 0, step 1, event 21: "
         "step_start: 1 forward pass(es) in this step: --accum 2 runs the share as 2 micro-batches",
     .numbers_pass_in = "dp_reference_n2_accum_2_bucket-mb_0.1",
     .also_says = {"PASS dp_reference_n2_accum_2_bucket-mb_0.1 schedule buckets"}},
    {.mutant = "06_grad_accum/barrier_each_micro_batch",
     .fails_with = "FAIL dp_reference_n2_accum_4_bucket-mb_0.25 schedule last_micro_batch: rank 0, step 1, event 46: "
         "blocking barrier, at grads_ready 0: a call during micro-batch 0 of 0..3",
     .numbers_pass_in = "dp_reference_n2_accum_4_bucket-mb_0.25"},
    {.mutant = "06_grad_accum/buckets_started_after_backward",
     .fails_with = "FAIL dp_reference_n2_accum_4_bucket-mb_0.25 schedule buckets: rank 0, step 1, event 118: start "
         "all_reduce of 50112 element(s) into gradients#0+70464, at grads_ready 0: the all-reduce of units 3..2 "
         "starts after unit 1's backward began (event 112), too late for that compute to hide it: start it between "
         "grads_ready 2 and unit 1's backward", .numbers_pass_in = "dp_reference_n2_accum_4_bucket-mb_0.25"},
    /* where a shard starts kept in an int: every graded run is right, the plan past 2^31 wraps */
    {.mutant = "07_zero1/owned_first_in_int",
     .fails_with = "FAIL plan_tiny_ranks_3_channels_16384 first: 1 of 9 rows differ; first at unit=1",
     .numbers_pass_in = "dp_reference_n2", .also_says = {"FAIL plan_tiny_ranks_3_channels_16384 real"}},
    /* a rank that owns only padding said to own real elements: only a plan at many ranks has one */
    {.mutant = "07_zero1/owned_past_the_unit",
     .fails_with = "FAIL plan_reference_ranks_100 real: 35 of 400 rows differ; first at unit=3: 2 but expected 0",
     .numbers_pass_in = "dp_reference_n3_batch_6", .also_says = {"PASS plan_tiny_ranks_3_channels_16384 real"}},
    {.mutant = "07_zero1/wrong_shard_offset", .fails_with = "FAIL dp_reference_n2"},
    {.mutant = "07_zero1/missing_padding", .fails_with = "FAIL dp_reference_n3_batch_6"},
    {.mutant = "07_zero1/local_grad_norm", .fails_with = "FAIL dp_reference_n2 grad_norm"},
    {.mutant = "07_zero1/adamw_over_padding",
     .fails_with = "FAIL sanitize_dp_reference_n3_batch_6: AddressSanitizer: heap-buffer-overflow, in update_owned",
     .numbers_pass_in = "dp_reference_n3_batch_6"},
    {.mutant = "07_zero1/adamw_over_padding_quietly",
     .fails_with = "FAIL sanitize_dp_reference_n3_batch_6: AddressSanitizer: heap-buffer-overflow, in update_owned",
     .numbers_pass_in = "dp_reference_n3_batch_6"},
    /* communication buffers start as NaN: unzeroed padding poisons the very first step, and the run stops there */
    {.mutant = "07_zero1/padding_not_zeroed",
     .fails_with = "FAIL dp_reference_n3_batch_6 run: the lesson exited with an error",
     .also_says = {"07_zero1: step 1: the gradient norm is -nan"}},
    /* DDP's all-reduce with a shard kept from it: the right numbers, twice ZeRO-1's bytes */
    {.mutant = "07_zero1/all_reduce_then_keep_shard",
     .fails_with = "FAIL dp_reference_n2 schedule shards: rank 0, step 1, event 50: blocking all_reduce of 20480 "
         "element(s) into communication#1+0, at optimizer_start: ZeRO moves gradients by reduce-scatter",
     .also_says = {"PASS dp_reference_n2 loss: 30 rows",
                   "FAIL dp_reference_n2 comm_bytes: 30 of 30 rows differ; first at step=1: 1446912 but expected 964608"}},
    {.mutant = "07_zero1/moments_whole",
     .fails_with = "FAIL dp_reference_n2 schedule model_state: rank 0, step 1, event 59: step_end: adamw_m hold 723456 "
         "bytes; ZeRO-1 keeps one padded shard per unit: 241152 bytes", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "08_zero2/no_zeroing", .fails_with = "FAIL dp_reference_n2 grad_norm"},
    /* storage the strategy should have declared away: the numbers are right, the memory is not */
    {.mutant = "08_zero2/keeps_full_gradient", .fails_with = "FAIL dp_reference_n2 schedule model_state:",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "08_zero2/per_unit_buffers",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 1, event",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "08_zero2/one_big_buffer",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 0, event 20: alloc: a communication "
         "buffer of 482304 bytes is live during step 1", .numbers_pass_in = "dp_reference_n2"},
    /* the model's own backward scratch is allowed; a strategy's scratch is held to the rule */
    {.mutant = "08_zero2/scratch_copy",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 0, event",
     .also_says = {"a backward_scratch buffer of 482304 bytes is live during step 1"},
     .numbers_pass_in = "dp_reference_n2"},
    /* memory no rule can count: the tracking allocator never saw it */
    {.mutant = "08_zero2/buffers_from_calloc",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 1, event",
     .also_says = {"grads_ready 3: backward wrote unit 3's gradients into memory the tracking allocator did not hand out"},
     .numbers_pass_in = "dp_reference_n2"},
    /* 4 KB more every step: each step's end holds more than the last */
    {.mutant = "08_zero2/leaks_every_step",
     .fails_with = "FAIL dp_reference_n2 schedule model_state: rank 0, step 4, event 184: step_end: working buffers "
         "grew again by this step's end, to 1204560 bytes (from 1200464), the third step to add some",
     .numbers_pass_in = "dp_reference_n2"},
    /* each unit sent from a copy of its own, kept: the gradients whole again, in the send buffers */
    {.mutant = "08_zero2/sends_from_a_copy_per_unit",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 1, event 57: blocking reduce_scatter of "
         "20480 element(s) into gradients#0+0, at grads_ready 0: by this reduce-scatter, the gradients have been sent "
         "from 4 buffers live at once, 482304 bytes together", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "08_zero2/one_unit_late",
     .fails_with = "FAIL dp_reference_n2 schedule scatter_from_hook: rank 0, step 1, event 41: grads_ready 3: unit 3's "
         "reduce-scatter did not start between its grads_ready and the next unit's backward",
     .numbers_pass_in = "dp_reference_n2"},
    /* the run stops at step 1 (NaN), but writes its log that far: the rule names the mistake */
    {.mutant = "09_zero3/used_before_gathered", .fails_with = "FAIL dp_reference_n2 loss",
     .also_says = {"FAIL dp_reference_n2 schedule gathers: rank 0, step 1, event 36: forward_start 1: unit 1 computes "
                   "before its all-gather (event 32) has finished"}},
    {.mutant = "09_zero3/no_prefetch", .fails_with = "FAIL dp_reference_n2 schedule prefetch:",
     .numbers_pass_in = "dp_reference_n2"},
    /* the buffer still arriving is read: new memory starts as NaN, so the numbers see it first */
    {.mutant = "09_zero3/wait_after_compute", .fails_with = "FAIL dp_reference_n2 loss: 1 rows but expected 30",
     .also_says = {"09_zero3: step 1: the loss is"}},
    {.mutant = "09_zero3/keeps_full_parameters", .fails_with = "FAIL dp_reference_n2 schedule model_state:",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "09_zero3/three_slots",
     .fails_with = "FAIL dp_reference_n2 schedule gathers: rank 0, step 1, event 42: forward_start 2: a third buffer",
     .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "09_zero3/two_slots_without_prefetch",
     .fails_with = "FAIL dp_reference_n2_no-prefetch schedule gathers: rank 0, step 1, event 35: forward_start 1: a "
         "second buffer",
     .numbers_pass_in = "dp_reference_n2_no-prefetch"},
    {.mutant = "09_zero3/blocking_prefetch",
     .fails_with = "FAIL dp_reference_n2 schedule prefetch: rank 0, step 1, event 36: forward_start 1: unit 1 "
         "computes from communication#5+0, filled by the all-gather of event 32, which was over before unit 0's "
         "compute began", .numbers_pass_in = "dp_reference_n2"},
    /* the LM head's unit 0 let go at the end of forward: the same numbers, one more gather */
    {.mutant = "09_zero3/drops_unit_used_next",
     .fails_with = "FAIL dp_reference_n2 comm_bytes: 30 of 30 rows differ; first at step=1: 1528832 but expected "
         "1446912", .also_says = {"PASS dp_reference_n2 loss: 30 rows",
                                  "FAIL dp_reference_n2 schedule prefetch: rank 0, step 1, event 52: backward_start 0"}},
    /* without a master the small updates round away: the loss and the drift from fp32 show it */
    {.mutant = "10_mixed_precision/no_master", .fails_with = "FAIL dp_reference_n2 loss",
     .also_says = {"FAIL drift_reference_n2 vs fp32 (lesson 00) loss"}},
    /* clipping and AdamW hide a doubled gradient from the loss for a while; the norm shows it */
    /* A run's own figures are pinned to three digits: on bf16 or fp16 operands the machine's
     * BLAS moves them by up to 1e-5 (5.18686 on one CPU, 5.18683 on another, both with
     * OpenBLAS's Cooperlake kernels); the expected value comes from tests/expected. */
    {.mutant = "10_mixed_precision/sum_not_average",
     .fails_with = "FAIL dp_reference_n2 grad_norm: 30 of 30 rows differ; first at step=1: 5.18"},
    /* the same bf16 weights by twice the bytes: only the bytes and the rule can tell */
    {.mutant = "10_mixed_precision/gathered_in_fp32", .fails_with = "FAIL dp_reference_n2 schedule sixteen_bits:",
     .also_says = {"PASS dp_reference_n2 loss: 30 rows", "PASS dp_reference_n2 grad_norm: 30 rows",
                   "FAIL dp_reference_n2 comm_bytes: 30 of 30 rows differ; first at step=1: 723456 but expected 482304"}},
    {.mutant = "10_mixed_precision/keeps_fp32_parameters",
     .fails_with = "FAIL dp_reference_n2 schedule model_state: rank 0, step 1, event 67: step_end: parameters hold "
         "723456 bytes", .numbers_pass_in = "dp_reference_n2"},
    {.mutant = "10_mixed_precision/padding_not_zeroed", .fails_with = "FAIL dp_reference_n3_batch_6 run:"},
    {.mutant = "10_mixed_precision/no_zeroing", .fails_with = "FAIL dp_reference_n2 grad_norm"},
    {.mutant = "10_mixed_precision/whole_bf16_gradient",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 1, event 49: alloc: a communication "
         "buffer of 241152 bytes is live during step 1", .numbers_pass_in = "dp_reference_n2"},
    /* ZeRO-1 run as ZeRO-2: the same numbers, but the gradients left the rank before backward was over */
    {.mutant = "10_mixed_precision/stage1_scatters_in_hook",
     .fails_with = "FAIL dp_reference_n2_stage_1 schedule shards: rank 0, step 1, event 50: blocking "
         "reduce_scatter_bf16 of 128 element(s)", .numbers_pass_in = "dp_reference_n2_stage_1",
     .also_says = {"communication before the backward pass has finished"}},
    {.mutant = "10_mixed_precision/stage1_whole_fp32_gradient",
     .fails_with = "FAIL dp_reference_n2_stage_1 schedule no_full_buffer: rank 0, step 1, event 50: alloc: a "
         "communication buffer of 482304 bytes is live during step 1", .numbers_pass_in = "dp_reference_n2_stage_1"},
    {.mutant = "10_mixed_precision/stage3_shard_not_updated", .fails_with = "FAIL dp_reference_n2_stage_3 loss",
     .also_says = {"PASS dp_reference_n2 loss: 30 rows"}},
    /* fp16's loss scale: AdamW hardly notices a gradient 65536 times too large, the norm does */
    {.mutant = "10_mixed_precision/no_unscale",
     .fails_with = "FAIL dp_reference_n2_fp16 grad_norm: 30 of 30 rows differ; first at step=1: 1699",
     .numbers_pass_in = "dp_reference_n2", .also_says = {"but expected 2.59", "(difference 1.7e+05"}},
    /* a scale that never comes down: every step after the first overflow overflows too */
    {.mutant = "10_mixed_precision/no_backoff",
     .fails_with = "FAIL dp_reference_n2_fp16_scale-window_4 grad_norm: 22 of 30 rows differ; first at step=6: inf "
         "but expected 1.98", .numbers_pass_in = "dp_reference_n2_fp16"},
    /* a scale that never grows: the graded run's overflows never happen */
    {.mutant = "10_mixed_precision/no_growth",
     .fails_with = "FAIL dp_reference_n2_fp16_scale-window_4 grad_norm: 14 of 30 rows differ; first at step=5: 1.98",
     .numbers_pass_in = "dp_reference_n2_fp16", .also_says = {"but expected inf"}},
    /* the good steps counted on across an overflow: the scale grows back sooner, and only a
     * run whose overflows fall between two growths (a window of 2 at 3 ranks) sees it */
    {.mutant = "10_mixed_precision/keeps_good_steps_after_overflow",
     .fails_with = "FAIL dp_reference_n3_batch_6_fp16_scale-window_2 grad_norm: 12 of 30 rows differ; first at "
         "step=7: inf but expected 1.96", .also_says = {"PASS dp_reference_n2_fp16_scale-window_4 grad_norm: 30 rows"}},
    /* the master handed out rounded to 16 bits: every run's numbers are right, but the resume
     * state has lost the master's low bits, and the resumed run goes its own way */
    {.mutant = "10_mixed_precision/gathers_rounded_master",
     .fails_with = "FAIL resume_dp_reference_n2_fp16_scale-window_4 final parameters: hash ",
     .numbers_pass_in = "dp_reference_n2_fp16_scale-window_4",
     .also_says = {"FAIL resume_dp_reference_n2_fp16_scale-window_4 resumed vs whole loss: "}},
    /* an overflowed step that changes nothing but still sends the unchanged parameters */
    {.mutant = "10_mixed_precision/overflow_still_gathers",
     .fails_with = "FAIL dp_reference_n2_fp16_scale-window_4 schedule shards: rank 0, step 5, event 224: blocking "
         "all_gather_fp16", .also_says = {"PASS dp_reference_n2_fp16_scale-window_4 loss: 30 rows",
                                          "an all-gather in a step skipped for an fp16 overflow"}},
    /* the LM head's unit made again for backward though it is still there: on ZeRO-3 one
     * more gather a step, the same numbers */
    {.mutant = "10_mixed_precision/widens_head_again",
     .fails_with = "FAIL dp_reference_n2_stage_3 comm_bytes: 30 of 30 rows differ; first at step=1: 764416 but "
         "expected 723456", .also_says = {"PASS dp_reference_n2_stage_3 loss: 30 rows",
                                          "PASS dp_reference_n2_stage_3 grad_norm: 30 rows"}},
    /* every unit kept widened in a buffer of its own: the same numbers, an fp32 copy of the
     * model in pieces */
    {.mutant = "10_mixed_precision/fp32_unit_per_buffer",
     .fails_with = "FAIL dp_reference_n2 schedule no_full_buffer: rank 0, step 1, event 44: forward_start 3: by "
         "unit 3's compute, the model has computed with fp32 parameters in 4 buffers live at once, 482304 bytes "
         "together", .numbers_pass_in = "dp_reference_n2"},
    /* each unit's 16-bit gradients sent from a buffer of its own, kept: the 16-bit gradient whole */
    {.mutant = "10_mixed_precision/sends_from_a_buffer_per_unit",
     .fails_with = "FAIL dp_reference_n2_stage_3 schedule no_full_buffer: rank 0, step 1, event 73: blocking "
         "reduce_scatter_bf16 of 20480 element(s) into gradients#1+0, at grads_ready 0: by this reduce-scatter, the "
         "gradients have been sent from 4 buffers live at once, 241152 bytes together: the whole gradient is 241152 "
         "in 16 bits", .numbers_pass_in = "dp_reference_n2_stage_3"},
    /* ZeRO-3's gather_params alone hands out the rounded master: only a resume on ZeRO-3 sees it */
    {.mutant = "10_mixed_precision/stage3_gathers_rounded_master",
     .fails_with = "FAIL resume_dp_reference_n2_stage_3 final parameters: hash ",
     .numbers_pass_in = "dp_reference_n2_stage_3",
     .also_says = {"FAIL resume_dp_reference_n2_stage_3 resumed vs whole loss: "}},
    /* ZeRO-1 sends each unit from the whole 16-bit gradient, padding and all: at 3 ranks the
     * numbers stay within the tolerance, the last unit's padding lies past the buffer */
    {.mutant = "10_mixed_precision/stage1_sends_unpadded",
     .fails_with = "FAIL sanitize_dp_reference_n3_batch_6_stage_1: AddressSanitizer: heap-buffer-overflow, in "
         "mixed_optimizer_step"},
    /* the gradients averaged in fp32 and rounded after: numbers within the tolerance, the
     * wire's elements and bytes wrong */
    {.mutant = "10_mixed_precision/scattered_in_fp32",
     .fails_with = "FAIL dp_reference_n2 schedule sixteen_bits: rank 0, step 1, event 49: blocking reduce_scatter of "
         "128 element(s)", .also_says = {"a reduce_scatter of fp32 elements", "FAIL dp_reference_n2 comm_bytes",
                                         "PASS dp_reference_n2 loss: 30 rows"}},
};

/* Adds name (when not NULL and not there yet) to the comma list `checks`. */
static void add_check(char *checks, size_t checks_len, const char *name)
{
    char padded[600], wanted[160];
    snprintf(padded, sizeof padded, ",%s,", checks);
    snprintf(wanted, sizeof wanted, ",%s,", name != NULL ? name : "");
    if (name == NULL || strstr(padded, wanted) != NULL)
        return;
    size_t used = strlen(checks);
    snprintf(checks + used, checks_len - used, "%s%s", used > 0 ? "," : "", name);
}

/* Adds to the comma list `checks` the check a PASS or FAIL line names ("FAIL dp_reference_n2
 * grad_norm: ..." names dp_reference_n2); nothing for other text. */
static void add_named_check(char *checks, size_t checks_len, const char *text)
{
    if (text == NULL || (strncmp(text, "PASS ", 5) != 0 && strncmp(text, "FAIL ", 5) != 0))
        return;
    char name[128];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(text + 5, " :"), text + 5);
    add_check(checks, checks_len, name);
}

/* Grades build/mutants/MUTANT as its lesson, only the checks its expectations read: the
 * grader's exit status, its output in output. */
static int grade_mistake(const Mistake *mistake, char *output, size_t output_len)
{
    char binary[256], checks[512] = "", number[3] = {mistake->mutant[0], mistake->mutant[1], '\0'};
    snprintf(binary, sizeof binary, "build/mutants/%s", mistake->mutant);
    add_named_check(checks, sizeof checks, mistake->fails_with);
    for (int i = 0; i < 3; i++)
        add_named_check(checks, sizeof checks, mistake->also_says[i]);
    add_check(checks, sizeof checks, mistake->numbers_pass_in);
    add_check(checks, sizeof checks, mistake->checks);
    cr_assert_neq(checks[0], '\0', "%s: its expectations name no check to grade (give it .checks)", mistake->mutant);
    return shell_grade_checks(number, binary, checks, output, output_len);
}

/* The grading failed, and its output says `text`. */
static void expect_failed_with(const char *mutant, int status, const char *output, const char *text)
{
    cr_expect_eq(status, 1, "%s was not failed:\n%s", mutant, output);
    const char *found = strstr(output, text);
    cr_expect_not_null(found, "%s failed, but without '%s':\n%s", mutant, text, output);
    /* a rule read no log when the run ended first: that failure is the run's, not the rule's */
    char line[512] = "";
    if (found != NULL)
        sscanf(found, "%511[^\n]", line);
    cr_expect_null(strstr(line, "no communication log"), "%s: '%s' holds no finding of the rule: %s", mutant, text,
                   line);
}

enum { NUM_MISTAKES = sizeof mistakes / sizeof mistakes[0] };

/* Each test gets the index of its row: Criterion runs it in a new process, where a pointer
 * into this one would not hold. */
ParameterizedTestParameters(grading, every_mistake_fails_saying_what_is_wrong)
{
    static size_t rows[NUM_MISTAKES];
    for (size_t i = 0; i < NUM_MISTAKES; i++)
        rows[i] = i;
    return cr_make_param_array(size_t, rows, NUM_MISTAKES);
}

ParameterizedTest(size_t *row, grading, every_mistake_fails_saying_what_is_wrong)
{
    const Mistake *mistake = &mistakes[*row];
    static char output[65536];
    char line[256];
    int status = grade_mistake(mistake, output, sizeof output);
    expect_failed_with(mistake->mutant, status, output, mistake->fails_with);
    const char *columns[] = {"loss", "grad_norm", "val_loss", "comm_bytes"};
    for (int c = 0; mistake->numbers_pass_in != NULL && c < 4; c++) {
        snprintf(line, sizeof line, "PASS %s %s: 30 rows", mistake->numbers_pass_in, columns[c]);
        cr_expect_not_null(strstr(output, line), "%s: no '%s':\n%s", mistake->mutant, line, output);
    }
    for (int i = 0; i < 3 && mistake->also_says[i] != NULL; i++)
        cr_expect_not_null(strstr(output, mistake->also_says[i]), "%s: no '%s':\n%s", mistake->mutant,
                           mistake->also_says[i], output);
}

static int is_graded(const char *mutant)
{
    for (size_t i = 0; i < NUM_MISTAKES; i++)
        if (strcmp(mistakes[i].mutant, mutant) == 0)
            return 1;
    return 0;
}

/* A mistake added to a catalogue in tests/mutants/ is built; it must also be graded here. */
Test(grading, every_mistake_in_the_catalogues_is_graded)
{
    char names[4096], path[512], mutant[256], *line = NULL;
    size_t line_capacity = 0;
    cr_assert_eq(files_list("tests/mutants", names, sizeof names), 0);
    int catalogued = 0;
    for (char *name = strtok(names, "\n"); name != NULL; name = strtok(NULL, "\n")) {
        snprintf(path, sizeof path, "tests/mutants/%s", name);
        FILE *catalogue = fopen(path, "r");
        cr_assert_not_null(catalogue, "%s", path);
        while (getline(&line, &line_capacity, catalogue) > 0) {
            if (line[0] == '#' || line[0] == '\n')
                continue;
            snprintf(mutant, sizeof mutant, "%.*s/%.*s", (int)strcspn(name, "."), name, (int)strcspn(line, " |"), line);
            cr_expect(is_graded(mutant), "%s (in %s) is graded by no test", mutant, path);
            catalogued++;
        }
        fclose(catalogue);
    }
    free(line);
    cr_expect_eq(catalogued, NUM_MISTAKES, "a mistake graded here is in no catalogue");
}

/* Correct solutions written differently from the reference pass every check. */
Test(grading, correct_variants_pass)
{
    const char *variants[][2] = {{"08", "08_zero2/buffer_made_per_unit"},
                                 {"09", "09_zero3/test_until_done"},
                                 {"09", "09_zero3/gathers_again_after_validation"},
                                 {"09", "09_zero3/keeps_released_units"},
                                 {"10", "10_mixed_precision/real_elements_only"}};
    char binary[256], output[65536];
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) {
        snprintf(binary, sizeof binary, "build/variants/%s", variants[i][1]);
        cr_expect_eq(shell_grade(variants[i][0], binary, output, sizeof output), 0, "%s:\n%s", binary, output);
    }
}

/* Every design in tests/designs/ (a whole exercise file, designed otherwise than the
 * reference) passes every check of its lesson; and lessons 02-10 have at least two each. */
Test(grading, every_design_passes_every_check)
{
    glob_t designs;
    cr_assert_eq(glob("tests/designs/[0-9][0-9]_*/*.c", 0, NULL, &designs), 0);
    int per_lesson[11] = {0};
    char binary[512], number[3], output[65536];
    for (size_t i = 0; i < designs.gl_pathc; i++) {
        const char *lesson = designs.gl_pathv[i] + strlen("tests/designs/");
        snprintf(number, sizeof number, "%.2s", lesson);
        snprintf(binary, sizeof binary, "build/designs/%.*s", (int)(strlen(lesson) - strlen(".c")), lesson);
        cr_expect_eq(shell_grade(number, binary, output, sizeof output), 0, "%s:\n%s", binary, output);
        per_lesson[atoi(number) % 11]++;
    }
    globfree(&designs);
    for (int lesson = 2; lesson <= 10; lesson++)
        cr_expect_geq(per_lesson[lesson], 2, "lesson %02d has %d design(s) in tests/designs/", lesson,
                      per_lesson[lesson]);
}

/* The solutions' sanitizer builds are clean: the sanitize check of every lesson passes. */
Test(grading, every_solution_is_clean_under_the_sanitizers)
{
    char output[16384];
    int status = shell_output("tests/scenarios/sanitize_checks_pass.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    int lessons = 0;
    for (const char *at = output; (at = strstr(at, "PASS sanitize")) != NULL; at++)
        lessons++;
    cr_expect_eq(lessons, 11, "%s", output);
}

/* ZeRO-3's gathers rule on a log whose only fault is a wait after the compute it guards (the
 * mistake's own run stops at its NaN loss before any rule is read): the log as run passes,
 * the one with that wait moved fails on the rule, and every other rule still passes. */
Test(grading, a_wait_after_the_compute_it_guards_fails_the_gathers_rule)
{
    static char output[16384];
    int status = shell_output("tests/scenarios/late_wait_log.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    const char *moved = strstr(output, "\n--\n");
    cr_assert_not_null(moved, "%s", output);
    const char *fail = strstr(output, "FAIL");
    cr_expect(fail != NULL && fail > moved, "the log as run failed: %.*s", (int)(moved - output), output);
    cr_expect_not_null(strstr(moved, "FAIL  schedule gathers: rank 0, step 1, event "), "%s", moved);
    cr_expect_not_null(strstr(moved, ": forward_start 1: unit 1 computes before its all-gather (event "), "%s", moved);
    cr_expect(fail != NULL && strstr(fail + 4, "FAIL") == NULL, "more than the gathers rule failed:\n%s", moved);
}

/* The schedule checker reads a log and nothing else: hand it one that is not a log. */
/* A run that stopped early on every rank alike is checked on the steps it logged, and each
 * rule fails either way; ranks that logged different steps are checked no further. */
Test(grading, a_log_cut_short_is_checked_as_far_as_it_goes)
{
    char dir[] = "/tmp/cut_short_XXXXXX", command[1024], output[8192];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(command, sizeof command, "mpiexec -n 2 build/solutions/02_naive_ddp train --config reference --steps 2 "
             "--gen-tokens 0 --comm-log %s/log.csv >/dev/null 2>&1 && build/tools/check_schedule 02 %s/log.csv "
             "--ranks 2 --config reference --label cut", dir, dir);
    int status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 1, "%s", output);
    cr_expect_not_null(strstr(output, "FAIL cut schedule per_tensor: the run stopped after logging 2 of its 30 "
                                      "steps, which keep the rule; the rest never ran\n"), "%s", output);
    cr_expect_null(strstr(output, "PASS"), "%s", output);
    /* rank 1's last step left out: the ranks disagree */
    snprintf(command, sizeof command, "awk -F, 'NR == 1 || $1 != 1 || $4 < 2' %s/log.csv > %s/short.csv && "
             "build/tools/check_schedule 02 %s/short.csv --ranks 2 --config reference --label cut", dir, dir, dir);
    status = shell_output(command, output, sizeof output);
    cr_expect_eq(status, 1, "%s", output);
    cr_expect_not_null(strstr(output, "FAIL cut schedule per_tensor: rank 1 logged 1 of the run's 30 steps, rank 0 "
                                      "2\n"), "%s", output);
    snprintf(command, sizeof command, "rm -rf %s", dir);
    shell_status(command);
}

Test(grading, check_schedule_refuses_bad_input_with_one_line)
{
    char output[4096];
    cr_expect_eq(shell_output("build/tools/check_schedule 04 tests/expected/04_overlap_ddp.checks", output,
                              sizeof output), 2);
    cr_expect_not_null(strstr(output, "is not a communication log"), "%s", output);
    cr_expect_eq(shell_output("build/tools/check_schedule 12 x.csv", output, sizeof output), 2);
    cr_expect_eq(shell_output("build/tools/check_schedule 04 /nonexistent.csv", output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "cannot open /nonexistent.csv"), "%s", output);
    cr_expect_eq(shell_output("build/tools/check_schedule 04 x.csv --ranks 0", output, sizeof output), 2);
    cr_expect_not_null(strstr(output, "check_schedule: --ranks: 0 is outside 1.."), "%s", output);
    /* its own flags, like the run's, also as --flag=value */
    cr_expect_eq(shell_output("build/tools/check_schedule 04 x.csv --label=mine --no-log='no log' --config=reference",
                              output, sizeof output), 1);
    cr_expect_not_null(strstr(output, "FAIL mine schedule "), "%s", output);
    cr_expect_not_null(strstr(output, ": no log"), "%s", output);
}

Test(grading, one_check_by_name_and_its_reproduce_commands)
{
    char output[65536];
    int status = shell_output("CHECK=dp_reference_n2_bucket-mb_0.25 scripts/grade.sh 05 "
                              "build/mutants/05_bucketed_ddp/bucket_per_unit",
                              output, sizeof output);
    cr_expect_eq(status, 1, "%s", output);
    cr_expect_null(strstr(output, "bucket-mb_0.1"), "only the named check runs:\n%s", output);
    cr_expect_not_null(strstr(output, "  reproduce:\n    mpiexec -disable-auto-cleanup -n 2 build/mutants/05_bucketed_ddp/bucket_per_unit "
                                      "train --config reference --bucket-mb 0.25 --csv run.csv --comm-log run_log.csv\n"),
                       "%s", output);
    cr_expect_not_null(strstr(output, "    build/tools/check_schedule 05 run_log.csv --ranks 2 --config reference "
                                      "--bucket-mb 0.25\n"), "%s", output);
    /* the failures again, one line each, just above the verdict */
    const char *recap = strstr(output, "the failed checks of lesson 05 again:\n  FAIL dp_reference_n2_bucket-mb_0.25 "
                                       "schedule buckets: rank 0, step 1,");
    cr_expect_not_null(recap, "%s", output);
    cr_expect(recap != NULL && strstr(recap, "\nlesson 05: FAIL (1 of 7 checks failed)\n") != NULL, "%s", output);
    /* a list: each named check runs; a name the lesson lacks is refused before any run */
    status = shell_output("scripts/grade.sh 05 build/mutants/05_bucketed_ddp/bucket_per_unit "
                          "--check dp_reference_n2_bucket-mb_0.25,sanitize_dp_reference_n2_bucket-mb_0.1",
                          output, sizeof output);
    cr_expect_eq(status, 1, "%s", output);
    cr_expect_not_null(strstr(output, "PASS sanitize_dp_reference_n2_bucket-mb_0.1"), "%s", output);
    cr_expect_not_null(strstr(output, "FAIL dp_reference_n2_bucket-mb_0.25 schedule buckets"), "%s", output);
    cr_expect_null(strstr(output, "dp_reference_n2_bucket-mb_0.1 loss"), "only the named checks run:\n%s", output);
    cr_expect_eq(shell_output("scripts/grade.sh 05 --check nosuchcheck", output, sizeof output), 2);
    cr_expect_eq(shell_output("scripts/grade.sh 05 --check dp_reference_n2_bucket-mb_0.1,nosuchcheck", output,
                              sizeof output), 2);
    cr_expect_str_eq(output, "grade: lesson 05 has no check named 'nosuchcheck'\n");
    /* --list names them, a line for each line of the lesson's checks, and runs none */
    cr_expect_eq(shell_output("scripts/grade.sh 02,05 --list", output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "\n05 dp_reference_n2_bucket-mb_0.25\n"), "%s", output);
    cr_expect_not_null(strstr(output, "\n05 sanitize_dp_reference_n2_bucket-mb_0.1\n"), "%s", output);
    char lines[64];
    shell_output("grep -c . tests/expected/02_naive_ddp.checks tests/expected/05_bucketed_ddp.checks | "
                 "awk -F: '{ n += $2 } END { print n }'",
                 lines, sizeof lines);
    int listed = 0;
    for (const char *c = output; *c; c++)
        listed += *c == '\n';
    cr_expect_eq(listed, atoi(lines), "%s", output);
    cr_expect_eq(shell_output("scripts/grade.sh 99 --list", output, sizeof output), 2, "%s", output);
}

/* A sanitizer finding's reproduce command shows the report on the terminal, even from a
 * program that compiles in a file of its own for the report (and exit status 0). */
Test(grading, a_sanitizer_findings_reproduce_command_shows_the_report)
{
    char output[65536], command[4096];
    int status = shell_output("CHECK=sanitize_dp_reference_n3_batch_6 scripts/grade.sh 07 "
                              "build/mutants/07_zero1/adamw_over_padding_quietly",
                              output, sizeof output);
    cr_assert_eq(status, 1, "%s", output);
    const char *make = strstr(output, "  reproduce:\n    make SANITIZE=1 ");
    cr_assert_not_null(make, "%s", output);
    const char *run = strchr(make + strlen("  reproduce:\n"), '\n') + 1;
    run += strspn(run, " ");
    int length = (int)strcspn(run, "\n");
    cr_assert_lt(snprintf(command, sizeof command, "%.*s 2>&1", length, run), (int)sizeof command);
    status = shell_output(command, output, sizeof output);
    cr_expect_neq(status, 0, "%s\n%s", command, output);
    cr_expect_not_null(strstr(output, "ERROR: AddressSanitizer: heap-buffer-overflow"), "%s\n%s", command, output);
}

/* make grade grades the exercise file as it is now: one that does not compile is a FAIL that
 * quotes the compiler's first error, with no older build graded in its place; one that
 * compiles with a warning is graded, and the warning shown twice: by the build (once, though
 * the file is built twice, plain and for the sanitizers) and after the verdict. */
Test(grading, a_file_that_does_not_compile_fails_with_its_error_and_a_warning_stops_nothing, .timeout = 300)
{
    static char output[1 << 16];
    int status = shell_output("tests/scenarios/grade_what_you_compiled.sh", output, sizeof output);
    cr_assert_eq(status, 0, "%s", output);
    const char *broken = strstr(output, "\nlesson 02: FAIL (does not compile: lessons/02_naive_ddp/naive_ddp.c:");
    cr_expect_not_null(broken, "%s", output);
    cr_expect(broken != NULL && strstr(broken, ": error: ") < strchr(broken + 1, '\n'), "%s", output);
    cr_expect_not_null(strstr(output, "\nFAIL build: does not compile: lessons/02_naive_ddp/naive_ddp.c:"), "%s",
                       output);
    cr_expect_not_null(strstr(output, "\nstatus 2\nolder build gone\n"), "%s", output);
    const char *passed = strstr(output, "\nlesson 02: PASS (7 of 7 checks passed)");
    cr_expect_not_null(passed, "%s", output);
    cr_expect(passed != NULL && strstr(passed, "\nthe compiler's warnings for lessons/02_naive_ddp (they do not change "
                                               "the grade):\n  lessons/02_naive_ddp/naive_ddp.c:9:9: warning: unused "
                                               "variable") != NULL, "%s", output);
    int shown = 0;
    for (const char *at = passed ? strstr(output, "\nstatus 2\n") : NULL; at && (at = strstr(at, "9:9: warning: unused"));
         at++)
        shown++;
    cr_expect_eq(shown, 2, "the warning shown %d times:\n%s", shown, output);
    cr_expect_not_null(strstr(output, "\nstatus 0\n"), "%s", output);
}

/* Gradescope's results.json: a test per check, scores that add up. */
Test(grading, json_results_in_gradescope_format)
{
    char output[65536];
    int status = shell_output("tests/scenarios/graded_json.sh 04 build/mutants/04_overlap_ddp/blocking_per_unit",
                              output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_str_eq(output, "15 13 15 ['lesson 04: dp_reference_n2 schedule overlap', 'lesson 04: "
                             "dp_reference_n3_batch_6 schedule overlap']\n");
}

/* A lesson's checks read only what its own runs wrote: a lesson whose run writes nothing
 * fails every check, though the lesson graded before it left files of the same names; and
 * a link a run leaves where the grader writes the estimate's output is not written through
 * (it pointed at the expected values, the check would compare them with themselves). */
Test(grading, a_check_reads_only_what_its_own_run_wrote)
{
    char output[4096];
    int status = shell_output("tests/scenarios/grade_reads_only_this_runs_outputs.sh", output, sizeof output);
    cr_expect_eq(status, 0, "%s", output);
    cr_expect_not_null(strstr(output, "stale: lesson 02: PASS (7 of 7 checks passed)"), "%s", output);
    cr_expect_not_null(strstr(output, "stale: lesson 03: FAIL (7 of 7 checks failed)"), "%s", output);
    cr_expect_not_null(strstr(output, "planted: lesson 00: PASS (6 of 6 checks passed), victim unchanged"), "%s",
                       output);
}

/* A results.json that could not be written, or a device grade.sh does not know, is found
 * before grading, not after it. */
Test(grading, an_unwritable_json_is_refused_before_grading)
{
    char output[4096];
    cr_expect_eq(shell_output("scripts/grade.sh 02 --json /nonexistent/r.json", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade: --json /nonexistent/r.json: cannot write into /nonexistent\n");
    cr_expect_eq(shell_output("scripts/grade.sh 02 --json /dev/null", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade: --json /dev/null: exists and is not a regular file\n");
    cr_expect_eq(shell_output("scripts/grade.sh 02 --device gpu", output, sizeof output), 2);
    cr_expect_str_eq(output, "grade: --device 'gpu' is not cpu or cuda\n");
}

/* A course handed out without solutions/ builds no reference: build/solutions/NN would be the
 * student's own program under the reference's name, so make says so instead of building it. */
Test(grading, a_course_without_its_references_builds_none)
{
    char output[4096];
    cr_assert_eq(shell_output("tests/scenarios/course_without_references.sh", output, sizeof output), 0, "%s",
                 output);
    cr_expect_not_null(strstr(output, "make -n all: "), "%s", output);
    cr_expect_null(strstr(output, " 0 lines of lesson builds"), "make -n all planned no lesson:\n%s", output);
    cr_expect_not_null(strstr(output, "lesson builds, 0 of reference builds\n"), "%s", output);
    cr_expect_not_null(strstr(output, "\nmake: no reference solution of 02_naive_ddp in this copy of the course "
                                      "(solutions/02_naive_ddp/ is missing): build/lessons/02_naive_ddp is yours\n"),
                       "%s", output);
    cr_expect_not_null(strstr(output, "\nstatus 2\n"), "%s", output);
    /* lesson 06's given code calls lesson 05's reference: said, not a compiler error */
    cr_expect_not_null(strstr(output, "\nmake: build/lessons/06_grad_accum cannot be built: it builds on "
                                      "solutions/05_bucketed_ddp/bucketed_ddp.c (the reference's parts), which this "
                                      "copy of the course lacks: a copy handed out needs at least "
                                      "solutions/05_bucketed_ddp/\n"), "%s", output);
    cr_expect_null(strstr(output, "error:"), "a compiler error, not make's reason:\n%s", output);
}

/* The ring rule reads each point-to-point call's peers: a ring turned the other way keeps
 * it; a call to a rank that is no neighbour, or a rank sending to the neighbour it receives
 * from, breaks it. */
Test(grading, the_ring_talks_to_its_two_neighbours_only)
{
    char output[8192];
    cr_assert_eq(shell_output("tests/scenarios/ring_peers_log.sh", output, sizeof output), 0, "%s", output);
    cr_expect_not_null(strstr(output, "== ring\nPASS  schedule ring:"), "%s", output);
    cr_expect_not_null(strstr(output, "== reversed\nPASS  schedule ring:"), "%s", output);
    cr_expect_not_null(strstr(output, "== far\nFAIL  schedule ring: rank 0, step 0, event 4: blocking sendrecv, 0 "
                                      "element(s) to rank 2, 1 element(s) from rank 3, into communication#1+0, at "
                                      "ring_start: sent to rank 2, which is not a neighbour of rank 0"), "%s", output);
    cr_expect_not_null(strstr(output, "== back\nFAIL  schedule ring: rank 0, step 0, event 4: blocking sendrecv, 0 "
                                      "element(s) to rank 3, 1 element(s) from rank 3, into communication#1+0, at "
                                      "ring_start: received from rank 3: a rank sends to one neighbour and receives "
                                      "from the other"), "%s", output);
}
