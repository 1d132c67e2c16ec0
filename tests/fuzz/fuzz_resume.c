/* The resume state reader (resume.h) on any bytes, against the settings of the tiny preset
 * trained on the course's own tokens (so that the seeds, states of such runs, get past the
 * settings into the binary part): an error or a state, never a crash. */
#define _GNU_SOURCE
#include "fuzz_input.h"

#include "alloc.h"
#include "layout.h"
#include "replicas.h"
#include "resume.h"
#include "shard.h"

static char settings[2048];
static size_t num_params;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    TrainConfig cfg;
    char err[512];
    train_config_preset(&cfg, "tiny", err, sizeof err);
    cfg.model.padded_vocab_size = gpt_padded_vocab(cfg.model.vocab_size);
    uint16_t *tokens = NULL;
    size_t count = 0;
    uint64_t hash = 0;
    if (shard_read(cfg.train_path, &tokens, &count, err, sizeof err) == 0) {
        hash = hash_bytes(tokens, count * sizeof *tokens);
        mem_free(tokens);
    }
    resume_describe(&cfg, hash, settings, sizeof settings);
    num_params = gpt_num_params(&cfg.model);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64], err[512];
    int fd = fuzz_input_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    ResumeState state;
    if (resume_load(path, settings, num_params, &state, err, sizeof err) == 0)
        resume_free(&state);
    close(fd);
    return 0;
}
