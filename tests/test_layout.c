/* The unit-major parameter layout: units tile the buffer with no gap or overlap, and
 * the sizes match numbers worked out by hand. */
#include <criterion/criterion.h>

#include <string.h>

#include "gpt_config.h"
#include "layout.h"

static GPTConfig make_config(int layers, int heads, int channels, int vocab, int max_seq_len)
{
    return (GPTConfig){.max_seq_len = max_seq_len, .vocab_size = vocab,
                       .padded_vocab_size = gpt_padded_vocab(vocab), .num_layers = layers,
                       .num_heads = heads, .channels = channels};
}

/* Small, odd, the course default, and GPT-2 small (whose count llm.c prints). */
static GPTConfig sample_configs(int index)
{
    switch (index) {
    case 0: return make_config(1, 1, 4, 2, 1);
    case 1: return make_config(2, 2, 8, 70, 16);
    case 2: return make_config(4, 4, 128, 256, 128);
    default: return make_config(12, 12, 768, 50257, 1024);
    }
}
enum { NUM_SAMPLE_CONFIGS = 4 };

Test(layout, units_tile_the_buffer_with_no_gap)
{
    for (int c = 0; c < NUM_SAMPLE_CONFIGS; c++) {
        GPTConfig cfg = sample_configs(c);
        cr_assert_eq(gpt_num_units(&cfg), cfg.num_layers + 2);
        size_t next = 0;
        for (int unit = 0; unit < gpt_num_units(&cfg); unit++) {
            Range r = unit_range(&cfg, unit);
            cr_assert_eq(r.offset, next, "config %d unit %d starts at %zu, want %zu",
                         c, unit, r.offset, next);
            cr_assert_gt(r.count, 0u, "config %d unit %d is empty", c, unit);
            next = r.offset + r.count;
        }
        cr_assert_eq(next, gpt_num_params(&cfg), "config %d: units end at %zu of %zu",
                     c, next, gpt_num_params(&cfg));
    }
}

Test(layout, course_config_has_842496_params)
{
    /* wte 256*128 + wpe 128*128 + 4 blocks * (12*128^2 + 13*128) + lnf 2*128 */
    GPTConfig cfg = make_config(4, 4, 128, 256, 128);
    cr_assert_eq(gpt_num_params(&cfg), 842496u, "got %zu", gpt_num_params(&cfg));
}

Test(layout, gpt2_small_matches_llmc_count)
{
    /* llm.c reports 124,475,904 parameters for GPT-2 124M with Vp = 50304. */
    GPTConfig cfg = make_config(12, 12, 768, 50257, 1024);
    cr_assert_eq(cfg.padded_vocab_size, 50304);
    cr_assert_eq(gpt_num_params(&cfg), 124475904u, "got %zu", gpt_num_params(&cfg));
}

Test(layout, block_unit_is_12c2_plus_13c)
{
    const int widths[] = {4, 8, 64, 128, 768};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
        GPTConfig cfg = make_config(3, 4, widths[i], 256, 64);
        size_t C = (size_t)widths[i];
        for (int unit = 1; unit <= cfg.num_layers; unit++)
            cr_assert_eq(unit_range(&cfg, unit).count, 12 * C * C + 13 * C,
                         "C=%zu unit %d", C, unit);
    }
}

Test(layout, embedding_and_final_units_have_the_expected_sizes)
{
    GPTConfig cfg = make_config(2, 2, 8, 70, 16); /* Vp = 128 */
    cr_assert_eq(unit_range(&cfg, 0).count, 128u * 8 + 16u * 8);
    cr_assert_eq(unit_range(&cfg, 3).count, 2u * 8);
}

/* unit_tensors must list consecutive ranges that start and end exactly with the unit. */
static void assert_unit_tensors_cover(const GPTConfig *cfg, int unit)
{
    Range tensors[12];
    int count = unit_tensors(cfg, unit, tensors);
    int want_count = (unit == 0 || unit == cfg->num_layers + 1) ? 2 : 12;
    cr_assert_eq(count, want_count, "unit %d lists %d tensors", unit, count);
    Range whole = unit_range(cfg, unit);
    size_t next = whole.offset;
    for (int i = 0; i < count; i++) {
        cr_assert_eq(tensors[i].offset, next, "unit %d tensor %d starts at %zu, want %zu",
                     unit, i, tensors[i].offset, next);
        next += tensors[i].count;
    }
    cr_assert_eq(next, whole.offset + whole.count, "unit %d tensors end at %zu", unit, next);
}

Test(layout, unit_tensors_cover_each_unit_exactly)
{
    for (int c = 0; c < NUM_SAMPLE_CONFIGS; c++) {
        GPTConfig cfg = sample_configs(c);
        for (int unit = 0; unit < gpt_num_units(&cfg); unit++)
            assert_unit_tensors_cover(&cfg, unit);
    }
}

Test(layout, every_tensor_lies_inside_its_unit)
{
    GPTConfig cfg = make_config(3, 2, 8, 70, 16);
    for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++) {
        int layers = tensor_is_per_layer((TensorKind)kind) ? cfg.num_layers : 1;
        for (int layer = 0; layer < layers; layer++) {
            Range t = tensor_range(&cfg, (TensorKind)kind, layer);
            Range u = unit_range(&cfg, tensor_unit(&cfg, (TensorKind)kind, layer));
            cr_assert_eq(t.count, tensor_numel(&cfg, (TensorKind)kind));
            cr_assert(t.offset >= u.offset && t.offset + t.count <= u.offset + u.count,
                      "%s layer %d escapes its unit", tensor_name((TensorKind)kind), layer);
        }
    }
}

Test(layout, block_tensor_sizes_follow_gpt2)
{
    GPTConfig cfg = make_config(1, 2, 8, 70, 16);
    const size_t C = 8;
    const size_t want[NUM_TENSOR_KINDS] = {
        128 * C, 16 * C, C, C, 3 * C * C, 3 * C, C * C, C,
        C, C, 4 * C * C, 4 * C, 4 * C * C, C, C, C};
    for (int kind = 0; kind < NUM_TENSOR_KINDS; kind++)
        cr_assert_eq(tensor_numel(&cfg, (TensorKind)kind), want[kind], "%s",
                     tensor_name((TensorKind)kind));
}

Test(layout, names_and_per_layer_flags)
{
    cr_assert_str_eq(tensor_name(TENSOR_WTE), "wte");
    cr_assert_str_eq(tensor_name(TENSOR_QKVW), "qkvw");
    cr_assert_str_eq(tensor_name(TENSOR_LNFB), "lnfb");
    cr_assert(!tensor_is_per_layer(TENSOR_WPE));
    cr_assert(tensor_is_per_layer(TENSOR_LN1W));
    cr_assert(tensor_is_per_layer(TENSOR_FCPROJB));
    cr_assert(!tensor_is_per_layer(TENSOR_LNFW));
}
