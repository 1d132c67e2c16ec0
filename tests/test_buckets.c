/* Lesson 05's bucket plan, as the reference's bucketed_ddp_bucket_of answers for it: sizes,
 * order, the oversized-unit case, one bucket, one bucket per unit. */
#include <criterion/criterion.h>

#include "bucketed_ddp.h"
#include "layout.h"

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

/* The plan for cap as buckets[unit], with the tiling every plan must have: units sent
 * in backward order, bucket 0 first, each bucket a run of neighbouring units. Returns how
 * many buckets. */
static int plan(const GPTConfig *cfg, size_t cap, int *buckets)
{
    int units = gpt_num_units(cfg);
    for (int unit = units - 1; unit >= 0; unit--) {
        buckets[unit] = bucketed_ddp_bucket_of(cfg, cap, unit);
        int above = unit == units - 1 ? -1 : buckets[unit + 1];
        cr_assert(buckets[unit] == above || buckets[unit] == above + 1,
                  "unit %d is in bucket %d, after unit %d in bucket %d", unit, buckets[unit], unit + 1, above);
    }
    cr_assert_eq(buckets[units - 1], 0, "the last unit, first final, is not in the first bucket");
    return buckets[0] + 1;
}

/* The bytes of bucket b in the plan. */
static size_t bucket_bytes(const GPTConfig *cfg, const int *buckets, int b)
{
    size_t bytes = 0;
    for (int unit = 0; unit < gpt_num_units(cfg); unit++)
        bytes += buckets[unit] == b ? unit_bytes(cfg, unit) : 0;
    return bytes;
}

Test(buckets, a_cap_above_the_model_gives_one_bucket)
{
    GPTConfig cfg = config();
    int buckets[4];
    cr_assert_eq(plan(&cfg, gpt_num_params(&cfg) * sizeof(float), buckets), 1);
}

Test(buckets, a_zero_cap_gives_one_bucket_per_unit_in_backward_order)
{
    GPTConfig cfg = config();
    int buckets[4];
    cr_assert_eq(plan(&cfg, 0, buckets), 4);
    for (int unit = 0; unit < 4; unit++)
        cr_assert_eq(buckets[unit], 3 - unit);
}

Test(buckets, units_join_while_the_bucket_stays_within_the_cap)
{
    GPTConfig cfg = config();
    int buckets[4];
    /* final LayerNorm + last block fit exactly; adding block 1 would not */
    size_t cap = unit_bytes(&cfg, 3) + unit_bytes(&cfg, 2);
    cr_assert_gt(unit_bytes(&cfg, 1) + unit_bytes(&cfg, 0), cap);
    cr_assert_eq(plan(&cfg, cap, buckets), 3);
    cr_assert_eq(buckets[2], 0);
    cr_assert_eq(bucket_bytes(&cfg, buckets, 0), cap);
    cr_assert_eq(buckets[1], 1);
    cr_assert_eq(buckets[0], 2);
    /* one byte less and the final LayerNorm travels alone */
    plan(&cfg, cap - 1, buckets);
    cr_assert_eq(buckets[2], 1);
}

Test(buckets, a_unit_larger_than_the_cap_gets_a_bucket_of_its_own)
{
    GPTConfig cfg = config();
    int buckets[4];
    /* a cap above the final LayerNorm and the embeddings, below a block */
    size_t cap = unit_bytes(&cfg, 0) + unit_bytes(&cfg, 3);
    cr_assert_lt(cap, unit_bytes(&cfg, 1));
    cr_assert_eq(plan(&cfg, cap, buckets), 4);
    cr_assert_eq(buckets[2], 1);
    cr_assert_gt(bucket_bytes(&cfg, buckets, 1), cap);
}
