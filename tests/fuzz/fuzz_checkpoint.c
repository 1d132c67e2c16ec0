/* The checkpoint reader (checkpoint.h) on any bytes: the header first, then, for a shape of
 * at most a million parameters, the tensors. An error or a model, never a crash. */
#define _GNU_SOURCE
#include "fuzz_input.h"

#include <stdlib.h>

#include "checkpoint.h"
#include "layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    GPTConfig cfg;
    if (checkpoint_read_config(path, &cfg, err, sizeof err) == 0 && gpt_num_params(&cfg) <= (1u << 20)) {
        float *params = malloc(gpt_num_params(&cfg) * sizeof(float));
        if (params != NULL)
            checkpoint_load(path, &cfg, params, err, sizeof err);
        free(params);
    }
    close(fd);
    return 0;
}
