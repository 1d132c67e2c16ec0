/* doctor: does NCCL work here, and if not, why not?
 *
 *   build/cuda/tools/doctor [--timeout SEC] [--bytes N]           one process
 *   mpiexec -n 4 build/cuda/tools/doctor                           one process per GPU
 *
 * Prints the CUDA, NCCL and MPI versions, the GPUs and their topology, the environment
 * variables NCCL reads, which GPU each rank would use, and then runs one small all-reduce
 * across every rank and checks its values. NCCL's communicator is created non-blocking so a
 * hang turns into a timeout with an explanation instead of a process that never returns.
 * Rank 0 prints the report; other ranks print only their own failures, prefixed by rank.
 *
 * Exit status: 0 the all-reduce worked, 1 it failed, timed out or gave wrong values,
 * 2 bad flags, 3 nothing could be tested (no GPU, or ranks that would share a GPU).
 * See docs/troubleshooting_nccl.md.
 */
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cuda/comm_nccl.h"
#include "timer.h"

enum { EXIT_ALL_OK = 0, EXIT_CHECK_FAILED = 1, EXIT_BAD_FLAGS = 2, EXIT_NOT_TESTED = 3 };

enum {
    DEFAULT_BYTES = 1 << 20,
    TIMED_REPEATS = 20,        /* after the first call, which also connects the ranks */
    STARTUP_LIMIT_S = 120,     /* MPI and CUDA start-up and nvidia-smi, before the check */
    ABORT_GRACE_S = 30,        /* after the check's deadline: ncclCommAbort and the verdict */
};

#define MAX_TIMEOUT_S 1e6
#define MAX_BYTES (1ULL << 40)

typedef struct {
    double timeout_s;
    size_t bytes;
} Options;

/* Where this process sits and which GPU it tests. */
typedef struct {
    int rank, world_size;
    int local_rank, local_size;  /* among the ranks that share this node's memory */
    int node_leader;             /* world rank of local rank 0: equal means same node */
    int gpu_count;               /* 0 when the runtime found no usable GPU */
    char no_gpu_reason[256];
    int device;                  /* local_rank % gpu_count, or -1 without a GPU */
    int nccl_version;
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
           "Checks that NCCL works: prints the CUDA, NCCL and MPI versions, the GPUs and their\n"
           "topology, the NCCL environment variables and the GPU of each rank, then runs one\n"
           "all-reduce across all ranks (one GPU per rank on each node) and checks its values.\n"
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
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return PARSED_HELP;
    FlagSet set = {"doctor", flags, options};
    if (cli_parse(argc, argv, 1, &set, 1, error, error_len) != 0)
        return PARSED_ERROR;
    if (options->bytes % 4 != 0) {
        snprintf(error, error_len, "--bytes %zu: not a multiple of 4 (one float)", options->bytes);
        return PARSED_ERROR;
    }
    return PARSED_RUN;
}

/* ---------------------------------------------------------------- backstop
 * The check itself never blocks: it polls until its deadline and then aborts NCCL. What can
 * still block is a CUDA call on a wedged GPU, ncclCommAbort itself, or an MPI call waiting
 * for a rank stuck in one of those. The backstop ends the process when that happens, and
 * mpiexec then ends the other ranks. Only write and _exit are safe in the signal handler,
 * so the message is written out in full before the timer is armed. */

static char backstop_message[sizeof HINTS + 512];

static void on_backstop(int signal_number)
{
    (void)signal_number;
    ssize_t written = write(STDOUT_FILENO, backstop_message, strlen(backstop_message));
    (void)written;
    _exit(EXIT_CHECK_FAILED);
}

static void arm_backstop(double seconds, const char *message, int with_hints)
{
    snprintf(backstop_message, sizeof backstop_message, "%s\n%s", message, with_hints ? HINTS : "");
    struct sigaction action = {0};
    action.sa_handler = on_backstop;
    sigaction(SIGALRM, &action, NULL);
    struct itimerval timer = {0};
    timer.it_value.tv_sec = (time_t)seconds;
    timer.it_value.tv_usec = (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
    setitimer(ITIMER_REAL, &timer, NULL);
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
    nccl_version_text(ctx->nccl_version, text, sizeof text);
    char built[32];
    nccl_version_text(NCCL_VERSION_CODE, built, sizeof built);
    report(ctx, "  NCCL          %s (built against %s)\n", text, built);
    mpi_library_first_line(text, sizeof text);
    report(ctx, "  MPI           %s\n", text);
}

/* ---------------------------------------------------------------- GPUs */

static void find_gpus(Context *ctx)
{
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
        snprintf(ctx->no_gpu_reason, sizeof ctx->no_gpu_reason, "cudaGetDeviceCount: %s (%s)",
                 cudaGetErrorString(status), cudaGetErrorName(status));
        count = 0;
    } else if (count == 0) {
        snprintf(ctx->no_gpu_reason, sizeof ctx->no_gpu_reason, "cudaGetDeviceCount found 0 GPUs");
    }
    ctx->gpu_count = count;
    ctx->device = count > 0 ? ctx->local_rank % count : -1;
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
    report(ctx, "  %-22s %d\n", "ranks on this node", ctx->local_size);
}

/* ---------------------------------------------------------------- ranks */

/* What rank 0 needs to know about every rank to print the table and decide whether the check
 * can run. Sent as bytes: every rank runs the same binary, so the layout is the same. */
typedef struct {
    char host[MPI_MAX_PROCESSOR_NAME];
    int node_leader, local_rank, local_size, gpu_count, device, nccl_version;
    char bus_id[32];
} RankInfo;

static RankInfo describe_rank(const Context *ctx)
{
    RankInfo info = {0};
    int host_len = 0;
    MPI_Get_processor_name(info.host, &host_len);
    info.node_leader = ctx->node_leader;
    info.local_rank = ctx->local_rank;
    info.local_size = ctx->local_size;
    info.gpu_count = ctx->gpu_count;
    info.device = ctx->device;
    info.nccl_version = ctx->nccl_version;
    snprintf(info.bus_id, sizeof info.bus_id, "-");
    if (ctx->device >= 0)
        cudaDeviceGetPCIBusId(info.bus_id, (int)sizeof info.bus_id, ctx->device);
    return info;
}

static void print_rank_table(const RankInfo *infos, int world_size)
{
    printf("\nRanks (each rank uses GPU local rank %% GPUs on its node)\n");
    printf("  %-5s %-20s %-10s %-4s %-14s %s\n", "rank", "host", "local", "GPU", "PCI bus id", "NCCL");
    for (int r = 0; r < world_size; r++) {
        const RankInfo *info = &infos[r];
        char local[24], gpu[16], nccl[32];
        snprintf(local, sizeof local, "%d of %d", info->local_rank, info->local_size);
        snprintf(gpu, sizeof gpu, info->device >= 0 ? "%d" : "none", info->device);
        nccl_version_text(info->nccl_version, nccl, sizeof nccl);
        printf("  %-5d %-20.20s %-10s %-4s %-14s %s\n", r, info->host, local, gpu, info->bus_id, nccl);
    }
}

static void warn_about_nccl_versions(const RankInfo *infos, int world_size)
{
    for (int r = 1; r < world_size; r++)
        if (infos[r].nccl_version != infos[0].nccl_version) {
            char mine[32], theirs[32];
            nccl_version_text(infos[0].nccl_version, mine, sizeof mine);
            nccl_version_text(infos[r].nccl_version, theirs, sizeof theirs);
            printf("  warning: rank %d loads NCCL %s, rank 0 loads %s; all ranks need the same "
                   "version (mismatches fail or hang at init)\n", r, theirs, mine);
        }
}

typedef enum { PLAN_RUN, PLAN_NO_GPU, PLAN_SHARED_GPU } Plan;

/* Two ranks on one node with the same PCI bus id would drive one GPU, which NCCL refuses
 * ("Duplicate GPU detected"). Comparing bus ids rather than counting ranks per node also
 * accepts launchers that give each rank its own CUDA_VISIBLE_DEVICES. */
static int find_shared_gpu(const RankInfo *infos, int world_size, int *first, int *second)
{
    for (int a = 0; a < world_size; a++)
        for (int b = a + 1; b < world_size; b++)
            if (infos[a].node_leader == infos[b].node_leader && strcmp(infos[a].bus_id, infos[b].bus_id) == 0) {
                *first = a;
                *second = b;
                return 1;
            }
    return 0;
}

/* Rank 0 decides from everyone's RankInfo; the caller broadcasts the plan. */
static Plan plan_check(const RankInfo *infos, int world_size)
{
    for (int r = 0; r < world_size; r++)
        if (infos[r].gpu_count == 0)
            return PLAN_NO_GPU;
    int first, second;
    if (!find_shared_gpu(infos, world_size, &first, &second))
        return PLAN_RUN;
    printf("\n  rank %d and rank %d on %s would both use GPU %d (%s): %d ranks on that node, %d GPU%s "
           "visible to each.\n", first, second, infos[first].host, infos[first].device, infos[first].bus_id,
           infos[first].local_size, infos[first].gpu_count, infos[first].gpu_count == 1 ? "" : "s");
    printf("  NCCL refuses two ranks on one GPU (\"Duplicate GPU detected\"), so the all-reduce is not tried.\n"
           "  Start at most one rank per GPU on each node (at most %d there), or test multi-rank code\n"
           "  on one GPU with the MPI backend (--comm mpi), which stages through host memory.\n",
           infos[first].gpu_count);
    return PLAN_SHARED_GPU;
}

static Plan survey_ranks(const Context *ctx)
{
    RankInfo mine = describe_rank(ctx);
    RankInfo *infos = ctx->rank == 0 ? calloc((size_t)ctx->world_size, sizeof *infos) : NULL;
    if (ctx->rank == 0 && infos == NULL) {
        fprintf(stderr, "doctor: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, EXIT_CHECK_FAILED);
    }
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, infos, (int)sizeof mine, MPI_BYTE, 0, MPI_COMM_WORLD);
    int plan = PLAN_RUN;
    if (ctx->rank == 0) {
        print_rank_table(infos, ctx->world_size);
        warn_about_nccl_versions(infos, ctx->world_size);
        plan = plan_check(infos, ctx->world_size);
    }
    free(infos);
    MPI_Bcast(&plan, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return (Plan)plan;
}

/* ---------------------------------------------------------------- the check */

typedef enum { OUTCOME_OK, OUTCOME_WRONG_VALUES, OUTCOME_ERROR, OUTCOME_TIMEOUT, OUTCOME_SKIPPED,
               OUTCOME_COUNT } Outcome;

typedef struct {
    Outcome outcome;
    double first_call_s;  /* the first all-reduce, which also sets up the connections */
    double per_call_s;    /* mean of TIMED_REPEATS more, timed on the GPU */
} CheckResult;

typedef struct {
    size_t count;         /* floats in each buffer */
    float *host;          /* the rank's values going in, the sums coming back */
    float *send, *recv;   /* device buffers: out of place, so every repeat sums the same input */
    cudaStream_t stream;
    cudaEvent_t start, stop;
    ncclComm_t comm;
    double deadline;      /* CLOCK_MONOTONIC seconds */
    char failure[512];    /* this rank's reason, when it has one */
} Check;

/* Long enough not to steal a core from NCCL's threads, short next to any real transfer. */
static void pause_briefly(void)
{
    struct timespec pause = {0, 50 * 1000};
    nanosleep(&pause, NULL);
}

static int cuda_failed(Check *check, cudaError_t status, const char *what)
{
    if (status == cudaSuccess)
        return 0;
    snprintf(check->failure, sizeof check->failure, "%s: %s", what, cudaGetErrorString(status));
    return 1;
}

static int prepare_buffers(const Context *ctx, Check *check)
{
    size_t bytes = check->count * sizeof(float);
    check->host = malloc(bytes);
    if (check->host == NULL) {
        snprintf(check->failure, sizeof check->failure, "out of host memory for %zu bytes", bytes);
        return -1;
    }
    for (size_t i = 0; i < check->count; i++)
        check->host[i] = (float)(ctx->rank + 1);
    if (cuda_failed(check, cudaSetDevice(ctx->device), "cudaSetDevice") ||
        cuda_failed(check, cudaStreamCreateWithFlags(&check->stream, cudaStreamNonBlocking), "cudaStreamCreate") ||
        cuda_failed(check, cudaEventCreate(&check->start), "cudaEventCreate") ||
        cuda_failed(check, cudaEventCreate(&check->stop), "cudaEventCreate") ||
        cuda_failed(check, cudaMalloc((void **)&check->send, bytes), "cudaMalloc") ||
        cuda_failed(check, cudaMalloc((void **)&check->recv, bytes), "cudaMalloc") ||
        /* On the check's own stream: it does not wait for the legacy default stream. */
        cuda_failed(check, cudaMemcpyAsync(check->send, check->host, bytes, cudaMemcpyHostToDevice, check->stream),
                    "cudaMemcpyAsync") ||
        cuda_failed(check, cudaMemsetAsync(check->recv, 0, bytes, check->stream), "cudaMemsetAsync") ||
        cuda_failed(check, cudaStreamSynchronize(check->stream), "cudaStreamSynchronize"))
        return -1;
    return 0;
}

static void describe_nccl_error(Check *check, const char *what, ncclResult_t result)
{
    const char *detail = check->comm != NULL ? ncclGetLastError(check->comm) : ncclGetLastError(NULL);
    snprintf(check->failure, sizeof check->failure, "%s: %s%s%s", what, ncclGetErrorString(result),
             detail != NULL && detail[0] != '\0' ? ": " : "", detail != NULL ? detail : "");
}

static Outcome timed_out(Check *check, const char *while_doing)
{
    snprintf(check->failure, sizeof check->failure, "timed out while %s", while_doing);
    return OUTCOME_TIMEOUT;
}

/* A non-blocking communicator answers ncclInProgress while it works in the background; no
 * other NCCL call may be made on it until its state leaves that. */
static Outcome wait_for_comm(Check *check, const char *what, const char *while_doing)
{
    for (;;) {
        ncclResult_t state = ncclInProgress;
        ncclResult_t query = ncclCommGetAsyncError(check->comm, &state);
        if (query != ncclSuccess) {
            describe_nccl_error(check, "ncclCommGetAsyncError", query);
            return OUTCOME_ERROR;
        }
        if (state == ncclSuccess)
            return OUTCOME_OK;
        if (state != ncclInProgress) {
            describe_nccl_error(check, what, state);
            return OUTCOME_ERROR;
        }
        if (now_seconds() > check->deadline)
            return timed_out(check, while_doing);
        pause_briefly();
    }
}

/* Queued work is done when the stream is; meanwhile NCCL's helper threads may report a
 * network error through the communicator, which would otherwise show up as a hang. */
static Outcome wait_for_stream(Check *check)
{
    for (;;) {
        cudaError_t status = cudaStreamQuery(check->stream);
        if (status == cudaSuccess)
            return OUTCOME_OK;
        if (status != cudaErrorNotReady) {
            cuda_failed(check, status, "the all-reduce on the GPU");
            return OUTCOME_ERROR;
        }
        ncclResult_t state = ncclSuccess;
        ncclCommGetAsyncError(check->comm, &state);
        if (state != ncclSuccess && state != ncclInProgress) {
            describe_nccl_error(check, "the all-reduce", state);
            return OUTCOME_ERROR;
        }
        if (now_seconds() > check->deadline)
            return timed_out(check, "waiting for the all-reduce to finish on the GPU "
                                    "(the kernel started but data stopped arriving)");
        pause_briefly();
    }
}

static Outcome create_comm(const Context *ctx, Check *check, ncclUniqueId id)
{
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclResult_t result = ncclCommInitRankConfig(&check->comm, ctx->world_size, id, ctx->rank, &config);
    if (result != ncclSuccess && result != ncclInProgress) {
        describe_nccl_error(check, "ncclCommInitRankConfig", result);
        return OUTCOME_ERROR;
    }
    return wait_for_comm(check, "creating the communicator",
                         "creating the communicator (ranks finding each other and setting up transports)");
}

static Outcome all_reduce(Check *check, int calls)
{
    for (int call = 0; call < calls; call++) {
        ncclResult_t result = ncclAllReduce(check->send, check->recv, check->count, ncclFloat, ncclSum,
                                            check->comm, check->stream);
        if (result != ncclSuccess && result != ncclInProgress) {
            describe_nccl_error(check, "ncclAllReduce", result);
            return OUTCOME_ERROR;
        }
        Outcome queued = wait_for_comm(check, "ncclAllReduce", "queuing the all-reduce (connecting to peers)");
        if (queued != OUTCOME_OK)
            return queued;
    }
    return wait_for_stream(check);
}

/* Every rank contributed rank+1, so every element must be 1+2+...+N: small integers, exact
 * in float whatever order NCCL adds them in. */
static Outcome verify_sums(const Context *ctx, Check *check)
{
    size_t bytes = check->count * sizeof(float);
    if (cuda_failed(check, cudaMemcpy(check->host, check->recv, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"))
        return OUTCOME_ERROR;
    float expected = (float)ctx->world_size * (float)(ctx->world_size + 1) / 2.0f;
    size_t wrong = 0, first_wrong = 0;
    for (size_t i = 0; i < check->count; i++)
        if (check->host[i] != expected && wrong++ == 0)
            first_wrong = i;
    if (wrong == 0)
        return OUTCOME_OK;
    snprintf(check->failure, sizeof check->failure, "%zu of %zu values wrong; element %zu is %g, expected %g",
             wrong, check->count, first_wrong, (double)check->host[first_wrong], (double)expected);
    return OUTCOME_WRONG_VALUES;
}

static Outcome time_repeats(const Context *ctx, Check *check, double *per_call_s)
{
    if (cuda_failed(check, cudaEventRecord(check->start, check->stream), "cudaEventRecord"))
        return OUTCOME_ERROR;
    Outcome outcome = all_reduce(check, TIMED_REPEATS);
    if (outcome != OUTCOME_OK)
        return outcome;
    float elapsed_ms = 0;
    if (cuda_failed(check, cudaEventRecord(check->stop, check->stream), "cudaEventRecord") ||
        cuda_failed(check, cudaEventSynchronize(check->stop), "cudaEventSynchronize") ||
        cuda_failed(check, cudaEventElapsedTime(&elapsed_ms, check->start, check->stop), "cudaEventElapsedTime"))
        return OUTCOME_ERROR;
    *per_call_s = 1e-3 * elapsed_ms / TIMED_REPEATS;
    return verify_sums(ctx, check);
}

/* Everything that talks to other ranks through NCCL, each step bounded by the deadline. */
static CheckResult talk_through_nccl(const Context *ctx, Check *check, ncclUniqueId id)
{
    CheckResult result = {OUTCOME_ERROR, 0, 0};
    result.outcome = create_comm(ctx, check, id);
    if (result.outcome != OUTCOME_OK)
        return result;
    double started = now_seconds();
    result.outcome = all_reduce(check, 1);
    result.first_call_s = now_seconds() - started;
    if (result.outcome != OUTCOME_OK)
        return result;
    /* Wrong values still go on to the repeats: every rank must issue the same number of
     * all-reduces, or the ranks that do would wait for this one until the deadline. */
    Outcome first_values = verify_sums(ctx, check);
    result.outcome = time_repeats(ctx, check, &result.per_call_s);
    if (result.outcome == OUTCOME_OK)
        result.outcome = first_values;
    return result;
}

/* A healthy communicator is finalized and destroyed; a failed one is aborted, which also
 * stops its kernels. Device memory is left to process exit then: a kernel stuck on it would
 * make cudaFree wait. */
static void release(Check *check, Outcome outcome)
{
    if (check->comm != NULL && outcome == OUTCOME_OK) {
        check->deadline = now_seconds() + 10; /* tidying up: the verdict is already decided */
        ncclCommFinalize(check->comm);
        if (wait_for_comm(check, "ncclCommFinalize", "finalizing the communicator") == OUTCOME_OK)
            ncclCommDestroy(check->comm);
        else
            ncclCommAbort(check->comm);
    } else if (check->comm != NULL) {
        ncclCommAbort(check->comm);
    }
    if (outcome == OUTCOME_OK) {
        cudaFree(check->send);
        cudaFree(check->recv);
        cudaStreamDestroy(check->stream);
    }
    free(check->host);
}

static int any_rank(int flag)
{
    int any = 0;
    MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return any;
}

static CheckResult run_check(const Context *ctx, const Options *options, Check *check)
{
    CheckResult result = {OUTCOME_SKIPPED, 0, 0};
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    int failed_here = prepare_buffers(ctx, check) != 0;
    if (ctx->rank == 0 && !failed_here) {
        ncclResult_t made = ncclGetUniqueId(&id);
        if (made != ncclSuccess) {
            describe_nccl_error(check, "ncclGetUniqueId", made);
            failed_here = 1;
        }
    }
    /* Agree before NCCL starts: a rank that cannot take part would leave the others
     * waiting for it until the deadline. */
    if (any_rank(failed_here)) {
        result.outcome = failed_here ? OUTCOME_ERROR : OUTCOME_SKIPPED;
        return result;
    }
    MPI_Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);

    char message[512];
    snprintf(message, sizeof message, "rank %d: still stuck %d s after the %g s deadline (in a CUDA call, "
             "ncclCommAbort, or waiting for a rank stuck in one); giving up%s",
             ctx->rank, ABORT_GRACE_S, options->timeout_s,
             ctx->rank == 0 ? "\ndoctor: NCCL all-reduce failed: timed out, and a rank could not recover" : "");
    arm_backstop(options->timeout_s + ABORT_GRACE_S, message, ctx->rank == 0);
    check->deadline = now_seconds() + options->timeout_s;
    return talk_through_nccl(ctx, check, id);
}

/* ---------------------------------------------------------------- the verdict */

typedef struct {
    int outcome_counts[OUTCOME_COUNT];
    double first_call_s, per_call_s;  /* the slowest rank's: a collective ends with it */
} Verdict;

/* Every rank reaches this after its own deadline at the latest; the backstop covers a rank
 * that cannot. */
static Verdict combine(const CheckResult *mine)
{
    Verdict verdict;
    int counts[OUTCOME_COUNT] = {0};
    counts[mine->outcome] = 1;
    MPI_Allreduce(counts, verdict.outcome_counts, OUTCOME_COUNT, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double times[2] = {mine->first_call_s, mine->per_call_s}, slowest[2];
    MPI_Allreduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    verdict.first_call_s = slowest[0];
    verdict.per_call_s = slowest[1];
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
    static const char *const names[OUTCOME_COUNT] = {"ok", "wrong values", "error", "timed out",
                                                        "skipped (another rank failed)"};
    printf("doctor: NCCL all-reduce failed:");
    const char *separator = " ";
    for (int outcome = OUTCOME_WRONG_VALUES; outcome < OUTCOME_COUNT; outcome++)
        if (verdict->outcome_counts[outcome] > 0) {
            printf("%s%s on %d of %d rank%s", separator, names[outcome], verdict->outcome_counts[outcome],
                   ctx->world_size, ctx->world_size == 1 ? "" : "s");
            separator = ", ";
        }
    if (verdict->outcome_counts[OUTCOME_TIMEOUT] > 0)
        printf(" (after %g s)", options->timeout_s);
    printf("\n");
    fputs(HINTS, stdout);
}

/* ---------------------------------------------------------------- main */

static void find_place(Context *ctx)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ctx->world_size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &ctx->local_rank);
    MPI_Comm_size(node, &ctx->local_size);
    ctx->node_leader = ctx->rank;
    MPI_Bcast(&ctx->node_leader, 1, MPI_INT, 0, node);
    MPI_Comm_free(&node);
    ncclGetVersion(&ctx->nccl_version);
}

static int report_not_tested(const Context *ctx, Plan plan)
{
    report(ctx, "\nNCCL all-reduce check\n");
    if (plan == PLAN_NO_GPU) {
        if (ctx->gpu_count == 0)
            report(ctx, "doctor: no GPU (%s); nothing was tested\n", ctx->no_gpu_reason);
        else
            report(ctx, "doctor: no GPU on some ranks (they say why above); nothing was tested\n");
    } else {
        report(ctx, "doctor: NCCL all-reduce not tried: two ranks would share one GPU; nothing was tested\n");
    }
    return EXIT_NOT_TESTED;
}

static int check_and_judge(const Context *ctx, const Options *options)
{
    report(ctx, "\nNCCL all-reduce check: %zu bytes (%zu floats) per rank, %d rank%s, timeout %g s\n",
           options->bytes, options->bytes / 4, ctx->world_size, ctx->world_size == 1 ? "" : "s", options->timeout_s);
    Check check;
    memset(&check, 0, sizeof check);
    check.count = (size_t)(options->bytes / sizeof(float));
    CheckResult mine = run_check(ctx, options, &check);
    if (check.failure[0] != '\0')
        report_failure(ctx, "%s", check.failure);
    release(&check, mine.outcome);
    Verdict verdict = combine(&mine);
    print_verdict(ctx, options, &verdict);
    return check_passed(&verdict, ctx->world_size) ? EXIT_ALL_OK : EXIT_CHECK_FAILED;
}

static int diagnose(Context *ctx, const Options *options)
{
    find_place(ctx);
    report(ctx, "doctor: NCCL diagnosis, %d rank%s\n\n", ctx->world_size, ctx->world_size == 1 ? "" : "s");
    print_versions(ctx);
    find_gpus(ctx);
    print_gpus(ctx);
    print_environment(ctx);
    Plan plan = survey_ranks(ctx);
    if (plan != PLAN_RUN)
        return report_not_tested(ctx, plan);
    return check_and_judge(ctx, options);
}

int main(int argc, char **argv)
{
    /* Line-buffered even into mpiexec's pipes: the backstop's _exit must not lose the report. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    Options options = {60.0, DEFAULT_BYTES};
    char error[512];
    ParseResult parsed = parse_flags(argc, argv, &options, error, sizeof error);
    double startup_limit = options.timeout_s > STARTUP_LIMIT_S ? options.timeout_s : STARTUP_LIMIT_S;
    arm_backstop(startup_limit, "doctor: gave up: stuck before the NCCL check began (in MPI or CUDA "
                 "start-up, or nvidia-smi); a GPU or its driver may be wedged, see nvidia-smi", 0);

    MPI_Init(&argc, &argv);
    Context ctx;
    memset(&ctx, 0, sizeof ctx);
    MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
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
    MPI_Finalize();
    return status;
}
