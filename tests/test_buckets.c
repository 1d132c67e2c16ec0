/* Lesson 05's bucket plan (the reference solution's plan_buckets): sizes, order, the
 * oversized-unit case, one bucket, one bucket per unit. */
#include <criterion/criterion.h>

#include "bucketed_ddp.h"

/* The reference preset's shape: units 0 (embeddings), 1-2 (blocks), 3 (final LayerNorm). */
static GPTConfig config(void)
{
    GPTConfig cfg = {.max_seq_len = 64, .vocab_size = 256, .padded_vocab_size = 256, .num_layers = 2,
                     .num_heads = 4, .channels = 64};
    return cfg;
}

static size_t unit_bytes(const GPTConfig *cfg, int unit)
{
    return unit_range(cfg, unit).count * sizeof(float);
}

/* Whatever the cap: buckets come in backward order, each a run of neighbouring units whose
 * range is exactly theirs, and together they cover every parameter once. */
static void check_tiling(const GPTConfig *cfg, const Bucket *buckets, int count)
{
    int next_high = gpt_num_units(cfg) - 1;
    size_t end = gpt_num_params(cfg);
    for (int b = 0; b < count; b++) {
        cr_assert_eq(buckets[b].high_unit, next_high, "bucket %d starts at unit %d", b, buckets[b].high_unit);
        cr_assert_leq(buckets[b].low_unit, buckets[b].high_unit);
        Range low = unit_range(cfg, buckets[b].low_unit);
        cr_assert_eq(buckets[b].range.offset, low.offset);
        cr_assert_eq(buckets[b].range.offset + buckets[b].range.count, end);
        end = buckets[b].range.offset;
        next_high = buckets[b].low_unit - 1;
    }
    cr_assert_eq(next_high, -1, "units 0..%d are in no bucket", next_high);
    cr_assert_eq(end, 0);
}

Test(buckets, a_cap_above_the_model_gives_one_bucket)
{
    GPTConfig cfg = config();
    Bucket buckets[4];
    int count = plan_buckets(&cfg, gpt_num_params(&cfg) * sizeof(float), buckets);
    cr_assert_eq(count, 1);
    cr_assert_eq(buckets[0].high_unit, 3);
    cr_assert_eq(buckets[0].low_unit, 0);
    cr_assert_eq(buckets[0].range.count, gpt_num_params(&cfg));
    check_tiling(&cfg, buckets, count);
}

Test(buckets, a_zero_cap_gives_one_bucket_per_unit_in_backward_order)
{
    GPTConfig cfg = config();
    Bucket buckets[4];
    int count = plan_buckets(&cfg, 0, buckets);
    cr_assert_eq(count, 4);
    for (int b = 0; b < 4; b++) {
        cr_assert_eq(buckets[b].high_unit, 3 - b);
        cr_assert_eq(buckets[b].low_unit, 3 - b);
    }
    check_tiling(&cfg, buckets, count);
}

Test(buckets, units_join_while_the_bucket_stays_within_the_cap)
{
    GPTConfig cfg = config();
    Bucket buckets[4];
    /* final LayerNorm + last block fit exactly; adding block 1 would not */
    size_t cap = unit_bytes(&cfg, 3) + unit_bytes(&cfg, 2);
    int count = plan_buckets(&cfg, cap, buckets);
    cr_assert_gt(unit_bytes(&cfg, 1) + unit_bytes(&cfg, 0), cap);
    cr_assert_eq(count, 3);
    cr_assert_eq(buckets[0].high_unit, 3);
    cr_assert_eq(buckets[0].low_unit, 2);
    cr_assert_eq(buckets[0].range.count * sizeof(float), cap);
    cr_assert_eq(buckets[1].low_unit, 1);
    cr_assert_eq(buckets[2].low_unit, 0);
    check_tiling(&cfg, buckets, count);
    /* one byte less and the final LayerNorm travels alone */
    count = plan_buckets(&cfg, cap - 1, buckets);
    cr_assert_eq(buckets[0].low_unit, 3);
    check_tiling(&cfg, buckets, count);
}

Test(buckets, a_unit_larger_than_the_cap_gets_a_bucket_of_its_own)
{
    GPTConfig cfg = config();
    Bucket buckets[4];
    /* a cap above the final LayerNorm and the embeddings, below a block */
    size_t cap = unit_bytes(&cfg, 0) + unit_bytes(&cfg, 3);
    cr_assert_lt(cap, unit_bytes(&cfg, 1));
    int count = plan_buckets(&cfg, cap, buckets);
    cr_assert_eq(count, 4);
    cr_assert_eq(buckets[1].high_unit, 2);
    cr_assert_eq(buckets[1].low_unit, 2);
    cr_assert_gt(buckets[1].range.count * sizeof(float), cap);
    check_tiling(&cfg, buckets, count);
}
