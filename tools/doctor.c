/* doctor: does NCCL work here, and if not, why not?
 *
 *   build/cuda/tools/doctor [--timeout SEC] [--bytes N]           one process
 *   mpiexec -n 4 build/cuda/tools/doctor                           one process per GPU
 *
 * Prints the CUDA, NCCL and MPI versions, the GPUs and their topology, the environment
 * variables NCCL reads, which GPU each rank uses, and then runs one all-reduce across every
 * rank and checks its values. It runs what the lessons run: the course's communicator
 * (comm.h), its GPU set-up and one-GPU-per-rank check (device.h, comm_nccl.h) and its NCCL
 * all-reduce, so a green doctor vouches for the lessons' own path. A deadline bounds the
 * check: when it passes, each rank says what it was doing and ends. Rank 0 prints the
 * report; other ranks print only their own failures, prefixed by rank.
 *
 * Exit status: 0 the all-reduce worked, 1 it failed, timed out or gave wrong values,
 * 2 bad flags, 3 nothing could be tested (no GPU, or ranks that would share a GPU).
 * See docs/troubleshooting_nccl.md.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"
#include "cli.h"
#include "comm.h"
#include "cuda/comm_nccl.h"
#include "cuda/cuda_device.h"
#include "device.h"
#include "timer.h"
#include "watchdog.h"

enum { EXIT_ALL_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_BAD_FLAGS = 2, EXIT_NOT_TESTED = 3 };

enum {
    DEFAULT_BYTES = 1 << 20,
    TIMED_REPEATS = 20,    /* after the first call, which also connects the ranks */
    STARTUP_LIMIT_S = 120, /* MPI and CUDA start-up and nvidia-smi, before the check */
};

#define MAX_TIMEOUT_S 1e6
#define MAX_BYTES (1ULL << 40)

typedef struct {
    double timeout_s;
    size_t bytes;
} Options;

/* Where this process sits and what it found. */
typedef struct {
    Comm *comm;
    int rank, world_size;
    int gpu_count;           /* 0 when the runtime found no usable GPU */
    char no_gpu_reason[256];
} Context;

static const char HINTS[] =
    "\n"
    "What usually causes this, and what to try:\n"
    "  - GPU-to-GPU (P2P) copies between GPUs under different CPU sockets or PCIe root\n"
    "    complexes stall on some platforms; NCCL's kernels then spin forever waiting for data.\n"
    "    In `nvidia-smi topo -m`, SYS or NODE between two GPUs means the path crosses a socket\n"
    "    or a host bridge. Run again with NCCL_P2P_DISABLE=1 (traffic then goes through host\n"
    "    shared memory); if that works, keep it, or try NCCL_P2P_LEVEL=PXB to allow P2P only\n"
    "    over closer links.\n"
    "  - Run again with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET for more on setup).\n"
    "    Lines 'Channel 00/0 : 0[0] -> 1[1] via P2P/...' name the transport each channel\n"
    "    uses: P2P (direct GPU copies), SHM (host shared memory), NET/Socket or NET/IB\n"
    "    (between hosts). 'NET/Socket : Using ...' and 'NET/IB : Using ...' name the\n"
    "    interface or adapter picked. The last line each rank printed says where it stopped.\n"
    "  - Between hosts NCCL picks a network interface itself and may pick one the other hosts\n"
    "    cannot reach (docker0, lo, a management port). Name the right one:\n"
    "    NCCL_SOCKET_IFNAME=eth0, or exclude with NCCL_SOCKET_IFNAME=^docker0,lo.\n"
    "  - RoCE (RDMA over Ethernet) must use a RoCE v2 GID. NCCL 2.21 and later find it\n"
    "    themselves; with an older NCCL, or a wrong NCCL_IB_GID_INDEX inherited from the\n"
    "    environment, set NCCL_IB_GID_INDEX to its index (often 3; `ibv_devinfo -v` lists\n"
    "    them). NCCL_IB_HCA picks the adapter; NCCL_IB_DISABLE=1 falls back to sockets, which\n"
    "    tells an RDMA problem apart from everything else.\n"
    "  - A firewall between hosts: NCCL opens TCP connections on arbitrary ports between\n"
    "    every pair of hosts; they must be allowed.\n"
    "  - Every rank must load the same NCCL version (see the Ranks table above).\n"
    "See docs/troubleshooting_nccl.md.\n";

/* ---------------------------------------------------------------- printing */

static void report(const Context *ctx, const char *format, ...)
{
    if (ctx->rank != 0)
        return;
    va_list args;
    va_start(args, format);
    vprintf(format, args);
    va_end(args);
}

/* Any rank's own failure; prefixed by the rank when several run, so lines can be told apart. */
static void report_failure(const Context *ctx, const char *format, ...)
{
    char line[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(line, sizeof line, format, args);
    va_end(args);
    if (ctx->world_size > 1)
        printf("rank %d: %s\n", ctx->rank, line);
    else
        printf("  %s\n", line);
}

/* ---------------------------------------------------------------- flags */

static void print_usage(void)
{
    printf("usage: doctor [--timeout SEC] [--bytes N] [--help]\n"
           "       mpiexec -n N doctor [...]\n"
           "\n"
           "Checks that NCCL works the way the lessons use it: prints the CUDA, NCCL and MPI\n"
           "versions, the GPUs and their topology, the NCCL environment variables and the GPU of\n"
           "each rank, then runs the course's NCCL all-reduce across all ranks (one GPU per rank\n"
           "on each node) and checks its values.\n"
           "\n"
           "  --timeout SEC   give up on the all-reduce after SEC seconds [60]\n"
           "  --bytes N       size of the all-reduce in bytes, a multiple of 4 [%d]\n"
           "  --help          this text\n"
           "\n"
           "Exit status: 0 all-reduce ok; 1 it failed, timed out or gave wrong values;\n"
           "2 bad flags; 3 nothing could be tested (no GPU, or ranks that would share one).\n"
           "See docs/troubleshooting_nccl.md.\n",
           DEFAULT_BYTES);
}

typedef enum { PARSED_RUN, PARSED_HELP, PARSED_ERROR } ParseResult;

static const Flag flags[] = {
    {"timeout", FLAG_DOUBLE, offsetof(Options, timeout_s), "give up on the all-reduce after SEC seconds", 1e-3,
     MAX_TIMEOUT_S, 0},
    {"bytes", FLAG_BYTES, offsetof(Options, bytes), "size of the all-reduce, a multiple of 4 (K, M, G = 2^10...)", 4,
     (double)MAX_BYTES, 0},
    {NULL, 0, 0, NULL, 0, 0, 0},
};

/* Reads argv into options (through the course's flag parser); on a mistake writes a
 * one-line reason naming the flag. */
static ParseResult parse_flags(int argc, char **argv, Options *options, char *error, size_t error_len)
{
    FlagSet set = {"doctor", flags, options};
    if (cli_wants_help(argc, argv, 1, &set, 1))
        return PARSED_HELP;
    if (cli_parse(argc, argv, 1, &set, 1, error, error_len) != 0)
        return PARSED_ERROR;
    if (options->bytes % 4 != 0) {
        snprintf(error, error_len, "--bytes %zu: not a multiple of 4 (one float)", options->bytes);
        return PARSED_ERROR;
    }
    return PARSED_RUN;
}

/* ---------------------------------------------------------------- the deadline
 * The course's watchdog (watchdog.h) bounds the doctor: before the check, its start-up
 * (MPI, CUDA, nvidia-smi); during it, each stage of the check. When the deadline passes the
 * rank says what it was doing (and rank 0 the verdict and the hints) and ends with status 1
 * itself: a check that timed out has failed (the watchdog's own status, 3, is the doctor's
 * "nothing tested"). mpiexec then ends the other ranks. */

typedef struct {
    int rank;
    double timeout_s;
    const char *doing;        /* the stage, or NULL before the check */
    const char *own_failure;  /* this rank's reason, once it has one: it then waits for the others */
} Stage;

static int report_deadline(int fd, const void *context)
{
    const Stage *stage = context;
    char line[1024];
    if (stage->doing == NULL)
        snprintf(line, sizeof line, "doctor: gave up: stuck before the NCCL check began (in MPI or CUDA start-up, "
                 "or nvidia-smi); a GPU or its driver may be wedged, see nvidia-smi\n");
    else if (stage->own_failure[0] != '\0')
        snprintf(line, sizeof line, "rank %d: %s (then the other ranks never came)\n", stage->rank,
                 stage->own_failure);
    else
        snprintf(line, sizeof line, "rank %d: timed out while %s\n", stage->rank, stage->doing);
    ssize_t written = write(fd, line, strlen(line));
    if (stage->doing != NULL && stage->rank == 0) {
        snprintf(line, sizeof line, "doctor: NCCL all-reduce failed: timed out (after %g s)\n", stage->timeout_s);
        written = write(fd, line, strlen(line));
        written = write(fd, HINTS, strlen(HINTS));
    }
    (void)written;
    _exit(EXIT_CHECK_FAILED);
}

/* From now until `deadline` (monotonic seconds) the rank is `doing` this. */
static void enter_stage(Stage *stage, double deadline, const char *doing)
{
    stage->doing = doing;
    double left = deadline - now_seconds();
    watchdog_arm(DEADLINE_STEP, left > 1e-3 ? left : 1e-3, report_deadline, stage);
}

/* ---------------------------------------------------------------- versions */

static void format_cuda_version(int version, char *out, size_t len)
{
    snprintf(out, len, "%d.%d", version / 1000, (version % 1000) / 10);
}

/* The first line of MPI's self-description, with runs of blanks (tabs) made one space. */
static void mpi_library_first_line(char *out, size_t len)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int text_len = 0;
    MPI_Get_library_version(text, &text_len);
    size_t used = 0;
    for (const char *c = text; *c != '\0' && *c != '\n' && used + 1 < len; c++) {
        int blank = *c == ' ' || *c == '\t';
        if (blank && (used == 0 || out[used - 1] == ' '))
            continue;
        out[used++] = blank ? ' ' : *c;
    }
    out[used] = '\0';
}

static int loaded_nccl_version(void)
{
    int version = 0;
    ncclGetVersion(&version);
    return version;
}

static void print_versions(const Context *ctx)
{
    int runtime = 0, driver = 0;
    char text[256];
    report(ctx, "Versions\n");
    if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) {
        format_cuda_version(runtime, text, sizeof text);
        report(ctx, "  CUDA runtime  %s\n", text);
    }
    cudaDriverGetVersion(&driver);
    format_cuda_version(driver, text, sizeof text);
    report(ctx, "  CUDA driver   %s\n", driver == 0 ? "none (0: no NVIDIA driver is loaded)" : text);
    nccl_version_text(loaded_nccl_version(), text, sizeof text);
    char built[32];
    nccl_version_text(NCCL_VERSION_CODE, built, sizeof built);
    report(ctx, "  NCCL          %s (built against %s)\n", text, built);
    mpi_library_first_line(text, sizeof text);
    report(ctx, "  MPI           %s\n", text);
}

/* ---------------------------------------------------------------- GPUs */

/* The course's own answer (cuda_gpu_available), then how many there are to list. */
static void find_gpus(Context *ctx)
{
    int count = 0;
    if (cuda_gpu_available(ctx->no_gpu_reason, sizeof ctx->no_gpu_reason) && cudaGetDeviceCount(&count) != cudaSuccess)
        count = 0;
    ctx->gpu_count = count;
    if (count == 0 && ctx->rank != 0) /* rank 0 says it in its GPU section */
        report_failure(ctx, "no GPU: %s", ctx->no_gpu_reason);
}

static void print_gpu(int device)
{
    struct cudaDeviceProp props;
    char bus_id[32] = "?";
    if (cudaGetDeviceProperties(&props, device) != cudaSuccess) {
        printf("  GPU %d: cudaGetDeviceProperties failed\n", device);
        return;
    }
    cudaDeviceGetPCIBusId(bus_id, (int)sizeof bus_id, device);
    printf("  GPU %d  %-28s sm_%d%d  %6.1f GiB  PCI %s\n", device, props.name, props.major, props.minor,
           (double)props.totalGlobalMem / (1 << 30), bus_id);
}
/* Whether each GPU can map the others' memory directly; NCCL's P2P transport needs it. */
static void print_peer_access(int gpu_count)
{
    printf("  peer access (row GPU can read column GPU's memory directly):\n       ");
    for (int to = 0; to < gpu_count; to++)
        printf(" %4d", to);
    printf("\n");
    for (int from = 0; from < gpu_count; from++) {
        printf("  %4d ", from);
        for (int to = 0; to < gpu_count; to++) {
            int can_access = 0;
            if (from != to)
                cudaDeviceCanAccessPeer(&can_access, from, to);
            printf(" %4s", from == to ? "-" : can_access ? "yes" : "no");
        }
        printf("\n");
    }
}

/* nvidia-smi knows the links (NVLink, PCIe switch, host bridge, socket) that CUDA does not
 * report; its absence or failure is worth one line, never a failure of the doctor. */
static void print_topology(void)
{
    FILE *pipe = popen("nvidia-smi topo -m 2>&1", "r");
    if (pipe == NULL) {
        printf("  topology: could not start nvidia-smi (%s)\n", strerror(errno));
        return;
    }
    static char output[32768];
    size_t used = 0, got;
    char chunk[4096];
    while ((got = fread(chunk, 1, sizeof chunk, pipe)) > 0) { /* read to the end, keep the start */
        size_t take = got < sizeof output - 1 - used ? got : sizeof output - 1 - used;
        memcpy(output + used, chunk, take);
        used += take;
    }
    output[used] = '\0';
    int status = pclose(pipe);
    int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (exit_code == 0) {
        printf("  nvidia-smi topo -m:\n");
        for (char *line = strtok(output, "\n"); line != NULL; line = strtok(NULL, "\n"))
            printf("    %s\n", line);
        return;
    }
    output[strcspn(output, "\n")] = '\0';
    if (exit_code == 127)
        printf("  topology: nvidia-smi not found, so no topology (install the NVIDIA driver utilities)\n");
    else
        printf("  topology: nvidia-smi topo -m failed (exit %d): %s\n", exit_code, output);
}

static void print_gpus(const Context *ctx)
{
    if (ctx->rank != 0)
        return;
    printf("\nGPUs on this node\n");
    if (ctx->gpu_count == 0)
        printf("  no GPU: %s\n", ctx->no_gpu_reason);
    for (int device = 0; device < ctx->gpu_count; device++)
        print_gpu(device);
    if (ctx->gpu_count > 1)
        print_peer_access(ctx->gpu_count);
    print_topology();
}

/* ---------------------------------------------------------------- environment */

static void print_environment(const Context *ctx)
{
    static const char *const names[] = {
        "NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_P2P_DISABLE", "NCCL_P2P_LEVEL", "NCCL_SHM_DISABLE",
        "NCCL_IB_DISABLE", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME", "NCCL_NET",
        "NCCL_ALGO", "NCCL_PROTO", "CUDA_VISIBLE_DEVICES",
    };
    report(ctx, "\nEnvironment (rank 0)\n");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *value = getenv(names[i]);
        report(ctx, "  %-22s %s\n", names[i], value == NULL ? "(unset)" : value[0] == '\0' ? "(empty)" : value);
    }
    report(ctx, "  %-22s %d\n", "MPI world size", ctx->world_size);
    report(ctx, "  %-22s %d\n", "ranks on this node", comm_local_size(ctx->comm));
}

/* ---------------------------------------------------------------- ranks */

/* This rank's row of the table: its host, its place there, the GPU the course chose for it
 * (cuda_device_setup: local rank % GPUs) and the NCCL it loaded. */
static void describe_rank(const Context *ctx, char *row, size_t row_len)
{
    char host[MPI_MAX_PROCESSOR_NAME] = "?", local[24], gpu[16] = "none", bus_id[32] = "-", nccl[32];
    int host_len = 0;
    MPI_Get_processor_name(host, &host_len);
    snprintf(local, sizeof local, "%d of %d", comm_local_rank(ctx->comm), comm_local_size(ctx->comm));
    if (cuda_device_index() >= 0) {
        snprintf(gpu, sizeof gpu, "%d", cuda_device_index());
        cuda_device_bus_id(bus_id, sizeof bus_id);
    }
    nccl_version_text(loaded_nccl_version(), nccl, sizeof nccl);
    snprintf(row, row_len, "  %-5d %-20.20s %-10s %-4s %-14s %s\n", ctx->rank, host, local, gpu, bus_id, nccl);
}

/* The table on rank 0, one row from each rank; a warning when the ranks load different NCCLs
 * (mismatches fail or hang while the communicator is made). */
static void print_rank_table(const Context *ctx)
{
    char row[256], *rows = NULL;
    size_t total = 0;
    describe_rank(ctx, row, sizeof row);
    if (comm_gather_text(ctx->comm, row, strlen(row), 1, &rows, &total) == 0 && ctx->rank == 0) {
        printf("\nRanks (each rank uses GPU local rank %% GPUs on its node)\n");
        printf("  %-5s %-20s %-10s %-4s %-14s %s\n", "rank", "host", "local", "GPU", "PCI bus id", "NCCL");
        fwrite(rows, 1, total, stdout);
    }
    free(rows);
    double newest = loaded_nccl_version(), oldest = -newest;
    comm_max_double(ctx->comm, &newest);
    comm_max_double(ctx->comm, &oldest);
    if (newest != -oldest && ctx->rank == 0) {
        char low[32], high[32];
        nccl_version_text((int)-oldest, low, sizeof low);
        nccl_version_text((int)newest, high, sizeof high);
        printf("  warning: the ranks load different NCCL versions (%s to %s, see the NCCL column); all ranks "
               "need the same version (mismatches fail or hang at init)\n", low, high);
    }
}

/* ---------------------------------------------------------------- before the check */

/* Nothing to test: a rank without a GPU, or two ranks that would drive one (which NCCL
 * refuses, "Duplicate GPU detected"). */
static int report_not_tested(const Context *ctx, const char *why)
{
    report(ctx, "\nNCCL all-reduce check\n");
    if (ctx->gpu_count == 0)
        report(ctx, "doctor: no GPU (%s); nothing was tested\n", ctx->no_gpu_reason);
    else
        report(ctx, "doctor: NCCL all-reduce not tried: %s; nothing was tested\n", why);
    return EXIT_NOT_TESTED;
}

/* The course's own check that no two ranks of a node share a GPU (every_rank_has_own_gpu):
 * a rank that shares one says with which, rank 0 says what to do. */
static int gpus_are_shared(const Context *ctx)
{
    char why[192];
    if (every_rank_has_own_gpu(ctx->comm, why, sizeof why))
        return 0;
    if (!comm_failed_elsewhere(why))
        report_failure(ctx, "%s", why);
    report(ctx, "  NCCL refuses two ranks on one GPU (\"Duplicate GPU detected\"), so the all-reduce is not tried.\n"
                "  Start at most one rank per GPU on each node (at most %d there), or test multi-rank code\n"
                "  on one GPU with the MPI backend (--comm mpi), which stages through host memory.\n",
           ctx->gpu_count);
    return 1;
}

/* ---------------------------------------------------------------- the check */

typedef enum { OUTCOME_OK, OUTCOME_WRONG_VALUES, OUTCOME_ERROR, OUTCOME_SKIPPED, OUTCOME_COUNT } Outcome;

typedef struct {
    const Kernels *kernels; /* the GPU's table, with the communicator on NCCL */
    float *values;          /* on the GPU: all-reduced in place, as the lessons' gradients are */
    float *host;            /* what goes in, what comes back */
    size_t count;
    double first_call_s;    /* the first all-reduce, which also sets up the connections */
    double per_call_s;      /* mean of TIMED_REPEATS more */
    char failure[512];      /* this rank's reason, when it has one */
} Check;

/* A failure of this rank's own, or the word of comm_all_ok that it failed on another. */
static Outcome failed(const Check *check)
{
    return comm_failed_elsewhere(check->failure) ? OUTCOME_SKIPPED : OUTCOME_ERROR;
}

/* Every element `expected`; else how many are not, and the first (unless an earlier call
 * of the check has already said why it failed). */
static Outcome verify(Check *check, float expected, const char *which)
{
    check->kernels->to_host(check->host, check->values, check->count * sizeof(float));
    size_t wrong = 0, first_wrong = 0;
    for (size_t i = 0; i < check->count; i++)
        if (check->host[i] != expected && wrong++ == 0)
            first_wrong = i;
    if (wrong == 0)
        return OUTCOME_OK;
    if (check->failure[0] == '\0')
        snprintf(check->failure, sizeof check->failure, "%s: %zu of %zu values wrong; element %zu is %g, expected %g",
                 which, wrong, check->count, first_wrong, (double)check->host[first_wrong], (double)expected);
    return OUTCOME_WRONG_VALUES;
}

/* `calls` all-reduces queued on the GPU, then the wait for them: seconds, or -1. */
static double all_reduce(const Context *ctx, Check *check, Stage *stage, double deadline, int calls)
{
    double started = now_seconds();
    enter_stage(stage, deadline, "queuing the all-reduce (connecting to peers)");
    for (int call = 0; call < calls; call++)
        if (comm_all_reduce(ctx->comm, check->values, check->count, REDUCE_SUM) != 0) {
            snprintf(check->failure, sizeof check->failure, "%s", comm_error(ctx->comm));
            return -1;
        }
    enter_stage(stage, deadline, "waiting for the all-reduce to finish on the GPU (the kernel started but data "
                                 "stopped arriving)");
    check->kernels->synchronize();
    return now_seconds() - started;
}

/* The course's NCCL set-up, on every rank's GPU buffer of rank + 1: ranks that could not take
 * part are known to all before any all-reduce starts. */
static Outcome prepare(const Context *ctx, Check *check, Stage *stage, double deadline)
{
    enter_stage(stage, deadline, "creating the communicator (ranks finding each other and setting up transports)");
    check->kernels = device_open("cuda", "nccl", 0, 0, ctx->comm, check->failure, sizeof check->failure);
    if (check->kernels == NULL)
        return failed(check);
    size_t bytes = check->count * sizeof(float);
    check->host = malloc(bytes);
    check->values = check->kernels->alloc(bytes, MEM_COMM);
    if (check->host == NULL || check->values == NULL)
        snprintf(check->failure, sizeof check->failure, "out of %s memory for %zu bytes",
                 check->host == NULL ? "host" : "GPU", bytes);
    else
        for (size_t i = 0; i < check->count; i++)
            check->host[i] = (float)(ctx->rank + 1);
    int ready = check->failure[0] == '\0';
    if (ready)
        check->kernels->to_device(check->values, check->host, bytes);
    return comm_all_ok(ctx->comm, !ready, "preparing the buffers", check->failure, sizeof check->failure)
               ? OUTCOME_OK : failed(check);
}

/* Every rank contributed rank+1, so every element must be 1+2+...+N: small integers, exact
 * in float whatever order NCCL adds them in. Then TIMED_REPEATS more on zeros (their time
 * does not depend on the values, and zeros stay exact however many calls sum them), which
 * must still be zeros. */
static Outcome run_check(const Context *ctx, Check *check, Stage *stage, double deadline)
{
    Outcome outcome = prepare(ctx, check, stage, deadline);
    if (outcome != OUTCOME_OK)
        return outcome;
    check->first_call_s = all_reduce(ctx, check, stage, deadline, 1);
    if (check->first_call_s >= 0)
        outcome = verify(check, (float)ctx->world_size * (float)(ctx->world_size + 1) / 2.0f, "the first call");
    /* every rank must issue the same all-reduces, or the ranks that do would wait for this one */
    if (!comm_all_ok(ctx->comm, check->first_call_s < 0, "the first all-reduce", check->failure, sizeof check->failure))
        return check->first_call_s < 0 ? OUTCOME_ERROR : OUTCOME_SKIPPED;
    check->kernels->zero(check->values, check->count * sizeof(float));
    double seconds = all_reduce(ctx, check, stage, deadline, TIMED_REPEATS);
    if (seconds < 0)
        return OUTCOME_ERROR;
    check->per_call_s = seconds / TIMED_REPEATS;
    Outcome repeats = verify(check, 0.0f, "the timed calls");
    return outcome != OUTCOME_OK ? outcome : repeats;
}

/* ---------------------------------------------------------------- the verdict */

typedef struct {
    int outcome_counts[OUTCOME_COUNT];
    double first_call_s, per_call_s; /* the slowest rank's: a collective ends with it */
} Verdict;

static Verdict combine(const Context *ctx, Outcome mine, const Check *check)
{
    Verdict verdict;
    for (int outcome = 0; outcome < OUTCOME_COUNT; outcome++) {
        double count = mine == (Outcome)outcome;
        comm_sum_double(ctx->comm, &count);
        verdict.outcome_counts[outcome] = (int)count;
    }
    verdict.first_call_s = check->first_call_s;
    verdict.per_call_s = check->per_call_s;
    comm_max_double(ctx->comm, &verdict.first_call_s);
    comm_max_double(ctx->comm, &verdict.per_call_s);
    return verdict;
}

static int check_passed(const Verdict *verdict, int world_size)
{
    return verdict->outcome_counts[OUTCOME_OK] == world_size;
}

static void print_verdict(const Context *ctx, const Options *options, const Verdict *verdict)
{
    if (ctx->rank != 0)
        return;
    if (check_passed(verdict, ctx->world_size)) {
        double algbw = verdict->per_call_s > 0 ? (double)options->bytes / verdict->per_call_s / 1e9 : 0;
        printf("  first call %.1f ms (includes connecting the ranks); then %.3f ms per call over %d calls, "
               "algbw %.2f GB/s\n", 1e3 * verdict->first_call_s, 1e3 * verdict->per_call_s, TIMED_REPEATS, algbw);
        printf("doctor: NCCL all-reduce ok (%d rank%s, %zu bytes, every value checked, %.3f ms, %.2f GB/s)\n",
               ctx->world_size, ctx->world_size == 1 ? "" : "s", options->bytes, 1e3 * verdict->per_call_s, algbw);
        return;
    }
    static const char *const names[OUTCOME_COUNT] = {"ok", "wrong values", "error", "skipped (another rank failed)"};
    printf("doctor: NCCL all-reduce failed:");
    const char *separator = " ";
    for (int outcome = OUTCOME_WRONG_VALUES; outcome < OUTCOME_COUNT; outcome++)
        if (verdict->outcome_counts[outcome] > 0) {
            printf("%s%s on %d of %d rank%s", separator, names[outcome], verdict->outcome_counts[outcome],
                   ctx->world_size, ctx->world_size == 1 ? "" : "s");
            separator = ", ";
        }
    printf("\n");
    fputs(HINTS, stdout);
}

static int check_and_judge(const Context *ctx, const Options *options)
{
    report(ctx, "\nNCCL all-reduce check: %zu bytes (%zu floats) per rank, %d rank%s, timeout %g s\n",
           options->bytes, options->bytes / 4, ctx->world_size, ctx->world_size == 1 ? "" : "s", options->timeout_s);
    Check check;
    memset(&check, 0, sizeof check);
    check.count = options->bytes / sizeof(float);
    Stage stage = {ctx->rank, options->timeout_s, NULL, check.failure};
    Outcome mine = run_check(ctx, &check, &stage, now_seconds() + options->timeout_s);
    watchdog_disarm(DEADLINE_STEP);
    if (mine == OUTCOME_ERROR || mine == OUTCOME_WRONG_VALUES)
        report_failure(ctx, "%s", check.failure);
    if (check.values != NULL)
        check.kernels->free(check.values);
    free(check.host);
    Verdict verdict = combine(ctx, mine, &check);
    print_verdict(ctx, options, &verdict);
    return check_passed(&verdict, ctx->world_size) ? EXIT_ALL_OK : EXIT_CHECK_FAILED;
}

/* ---------------------------------------------------------------- main */

static int diagnose(Context *ctx, const Options *options)
{
    report(ctx, "doctor: NCCL diagnosis, %d rank%s\n\n", ctx->world_size, ctx->world_size == 1 ? "" : "s");
    print_versions(ctx);
    find_gpus(ctx);
    print_gpus(ctx);
    print_environment(ctx);
    char err[512] = "";
    /* the GPU the lessons would use, chosen as they choose it, on every rank or on none */
    int every_rank_has_a_gpu = comm_all_ok(ctx->comm, ctx->gpu_count == 0, "finding a GPU", err, sizeof err);
    if (every_rank_has_a_gpu && device_open("cuda", "mpi", 0, 0, ctx->comm, err, sizeof err) == NULL) {
        report_failure(ctx, "setting up the GPU: %s", err);
        report(ctx, "doctor: the GPU could not be set up; nothing was tested\n");
        return EXIT_CHECK_FAILED;
    }
    print_rank_table(ctx);
    if (!every_rank_has_a_gpu)
        return report_not_tested(ctx, "a rank has no GPU");
    if (gpus_are_shared(ctx))
        return report_not_tested(ctx, "two ranks would share one GPU");
    return check_and_judge(ctx, options);
}

int main(int argc, char **argv)
{
    /* Line-buffered even into mpiexec's pipes: a deadline's _exit must not lose the report. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    Options options = {60.0, DEFAULT_BYTES};
    char error[512];
    ParseResult parsed = parse_flags(argc, argv, &options, error, sizeof error);
    Stage startup = {0, options.timeout_s, NULL, ""};
    watchdog_arm(DEADLINE_STEP, options.timeout_s > STARTUP_LIMIT_S ? options.timeout_s : STARTUP_LIMIT_S,
                 report_deadline, &startup);

    Context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.comm = comm_init(&argc, &argv, error, sizeof error);
    if (ctx.comm == NULL)
        return comm_init_failed("doctor", error);
    ctx.rank = comm_rank(ctx.comm);
    ctx.world_size = comm_size(ctx.comm);
    int status;
    if (parsed == PARSED_HELP) {
        if (ctx.rank == 0)
            print_usage();
        status = EXIT_ALL_OK;
    } else if (parsed == PARSED_ERROR) {
        if (ctx.rank == 0)
            fprintf(stderr, "doctor: %s\n", error);
        status = EXIT_BAD_FLAGS;
    } else {
        status = diagnose(&ctx, &options);
    }
    watchdog_disarm(DEADLINE_STEP);
    return comm_finalize(ctx.comm) != 0 && status == 0 ? 1 : status;
}
