#include "layout.h"

static const char *const tensor_names[NUM_TENSOR_KINDS] = {
    "wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
    "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb",
};

const char *tensor_name(TensorKind kind)
{
    return tensor_names[kind];
}

int tensor_is_per_layer(TensorKind kind)
{
    return kind >= TENSOR_LN1W && kind <= TENSOR_FCPROJB;
}

size_t tensor_numel(const GPTConfig *cfg, TensorKind kind)
{
    size_t C = (size_t)cfg->channels;
    switch (kind) {
    case TENSOR_WTE: return (size_t)cfg->padded_vocab_size * C;
    case TENSOR_WPE: return (size_t)cfg->max_seq_len * C;
    case TENSOR_QKVW: return 3 * C * C;
    case TENSOR_QKVB: return 3 * C;
    case TENSOR_ATTPROJW: return C * C;
    case TENSOR_FCW: case TENSOR_FCPROJW: return 4 * C * C;
    case TENSOR_FCB: return 4 * C;
    default: return C; /* the LayerNorm weights and the C-wide biases */
    }
}

static size_t block_numel(const GPTConfig *cfg)
{
    size_t total = 0;
    for (int kind = TENSOR_LN1W; kind <= TENSOR_FCPROJB; kind++)
        total += tensor_numel(cfg, (TensorKind)kind);
    return total;
}

int gpt_num_units(const GPTConfig *cfg)
{
    return cfg->num_layers + 2;
}

Range unit_range(const GPTConfig *cfg, int unit)
{
    size_t embed = tensor_numel(cfg, TENSOR_WTE) + tensor_numel(cfg, TENSOR_WPE);
    size_t block = block_numel(cfg);
    if (unit == 0)
        return (Range){0, embed};
    if (unit <= cfg->num_layers)
        return (Range){embed + (size_t)(unit - 1) * block, block};
    return (Range){embed + (size_t)cfg->num_layers * block, 2 * (size_t)cfg->channels};
}

size_t gpt_num_params(const GPTConfig *cfg)
{
    Range last = unit_range(cfg, gpt_num_units(cfg) - 1);
    return last.offset + last.count;
}

int tensor_unit(const GPTConfig *cfg, TensorKind kind, int layer)
{
    if (kind <= TENSOR_WPE)
        return 0;
    if (kind >= TENSOR_LNFW)
        return cfg->num_layers + 1;
    return layer + 1;
}

void unit_kinds(const GPTConfig *cfg, int unit, int *first, int *end)
{
    if (unit == 0) {
        *first = TENSOR_WTE; *end = TENSOR_LN1W;
    } else if (unit <= cfg->num_layers) {
        *first = TENSOR_LN1W; *end = TENSOR_LNFW;
    } else {
        *first = TENSOR_LNFW; *end = NUM_TENSOR_KINDS;
    }
}

Range tensor_range(const GPTConfig *cfg, TensorKind kind, int layer)
{
    int unit = tensor_unit(cfg, kind, layer);
    int first, end;
    unit_kinds(cfg, unit, &first, &end);
    size_t offset = unit_range(cfg, unit).offset;
    for (int k = first; k < (int)kind; k++)
        offset += tensor_numel(cfg, (TensorKind)k);
    return (Range){offset, tensor_numel(cfg, kind)};
}

int unit_tensors(const GPTConfig *cfg, int unit, Range out[12])
{
    int first, end;
    unit_kinds(cfg, unit, &first, &end);
    int layer = unit - 1;
    for (int k = first; k < end; k++)
        out[k - first] = tensor_range(cfg, (TensorKind)k, layer);
    return end - first;
}
