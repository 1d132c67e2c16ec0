/* The emulated NCCL: a communicator is a duplicate of MPI_COMM_WORLD, and each collective
 * is queued on its stream and runs there as the MPI collective that computes the same
 * thing: float32 sums and averages, and the bf16 and fp16 all-gathers and reduce-scatters of
 * mixed precision (a 16-bit sum rounded to its format after each addition, as the course's
 * MPI backend adds): what the CUDA build uses.
 *
 * A GPU runs queued work whatever its host does. Here it runs when something waits for it
 * and, so that a rank blocked in host MPI cannot leave a peer waiting in a queued
 * collective, whenever the host enters MPI: the MPI calls below (the profiling interface)
 * run every stream's queue first.
 *
 * Three faults a test can ask for, to see what meets them: on the rank that
 * DTC_EMU_NCCL_HANG_RANK names, ncclCommInitRank never returns (a peer NCCL cannot reach);
 * on the one DTC_EMU_NCCL_WRONG_RANK names, every all-reduce's first element comes back one
 * too large (tools/doctor's tests); on the one DTC_EMU_NCCL_DESTROY_FAILS_RANK names,
 * ncclCommDestroy reports an error (as NCCL does one that its work met asynchronously). */
#include "emu.h"

#include "float16.h"
#include "sum16.h"

#include <mpi.h>
#include <nccl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_GROUP = 256 };

struct ncclComm {
    MPI_Comm mpi;
    int rank, ranks;
};

static const char ID_MARK[] = "dtc-emu";

static MPI_Op sums_16[2] = {MPI_OP_NULL, MPI_OP_NULL}; /* by Format16, made at its first reduce-scatter */

ncclResult_t ncclGetVersion(int *version)
{
    *version = NCCL_VERSION_CODE;
    return ncclSuccess;
}

const char *ncclGetErrorString(ncclResult_t result)
{
    return result == ncclSuccess ? "no error" : "error in the emulated NCCL";
}

const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return "";
}

ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    memset(id, 0, sizeof *id);
    memcpy(id->internal, ID_MARK, sizeof ID_MARK);
    return ncclSuccess;
}

/* 1 on the rank a fault setting names. */
static int faulty(const char *setting, int rank)
{
    return emu_setting(setting, -1) == rank;
}

static ncclResult_t join(ncclComm_t *comm, int ranks, ncclUniqueId id, int rank)
{
    while (faulty("DTC_EMU_NCCL_HANG_RANK", rank))
        pause(); /* until a signal ends the process */
    int world_rank, world_size;
    PMPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
    if (memcmp(id.internal, ID_MARK, sizeof ID_MARK) != 0)
        emu_fail("ncclCommInitRank: the id is not one ncclGetUniqueId made (was it broadcast?)");
    if (ranks != world_size || rank != world_rank)
        emu_fail("ncclCommInitRank(%d ranks, rank %d): the emulation needs the MPI world (%d ranks, rank %d)",
                 ranks, rank, world_size, world_rank);
    struct ncclComm *made = calloc(1, sizeof *made);
    PMPI_Comm_dup(MPI_COMM_WORLD, &made->mpi);
    made->rank = rank;
    made->ranks = ranks;
    *comm = made;
    return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int ranks, ncclUniqueId id, int rank)
{
    return join(comm, ranks, id, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int ranks, ncclUniqueId id, int rank, ncclConfig_t *config)
{
    (void)config;
    return join(comm, ranks, id, rank);
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *result)
{
    (void)comm;
    *result = ncclSuccess;
    return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    emu_flush_all();
    int rank;
    PMPI_Comm_rank(comm->mpi, &rank);
    int fails = faulty("DTC_EMU_NCCL_DESTROY_FAILS_RANK", rank);
    PMPI_Comm_free(&comm->mpi);
    free(comm);
    for (int format = 0; format < 2; format++)
        if (sums_16[format] != MPI_OP_NULL)
            PMPI_Op_free(&sums_16[format]);
    return fails ? ncclInternalError : ncclSuccess;
}

/* One rank alone may abort (after a timeout), so nothing collective here; the duplicate
 * communicator is left to MPI_Finalize. */
ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    free(comm);
    return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
    (void)comm;
    return ncclSuccess;
}

/* ---------------------------------------------------------------- collectives */

typedef enum { ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, BROADCAST, SEND_RECV } Kind;

typedef struct {
    int send; /* else receive */
    void *buffer;
    size_t count;
    int peer;
} Transfer;

/* What a collective's elements are: float32, or the 16-bit floats of the gathers and the
 * reduce-scatter. */
typedef enum { IN_FLOAT32, IN_BF16, IN_FP16 } Elements;

typedef struct {
    Kind kind;
    const void *send;
    void *recv;
    size_t count; /* per rank */
    int average, root;
    Elements elements;
    ncclComm_t comm;
    Transfer *transfers; /* SEND_RECV */
    int transfer_count;
} Collective;

static void check_float(ncclDataType_t type)
{
    if (type != ncclFloat32)
        emu_fail("NCCL: data type %d (the emulation has float32 here, and bf16 and fp16 in the gathers and "
                 "the reduce-scatter only)", (int)type);
}

/* The types the gathers and the reduce-scatter take. */
static Elements elements_of(ncclDataType_t type)
{
    if (type == ncclBfloat16)
        return IN_BF16;
    if (type == ncclFloat16)
        return IN_FP16;
    check_float(type);
    return IN_FLOAT32;
}

static Format16 format_of(Elements elements)
{
    return elements == IN_FP16 ? FORMAT_FP16 : FORMAT_BF16;
}

static size_t bytes_of(Elements elements)
{
    return elements == IN_FLOAT32 ? sizeof(float) : sizeof(bits16);
}

static void check_buffer(const char *what, const void *buffer, size_t count, Elements elements)
{
    size_t bytes = count * bytes_of(elements);
    if (count > 0 && !emu_is_device(buffer, bytes))
        emu_fail("NCCL: the %s buffer (%p, %zu elements) is not device memory", what, buffer, count);
}

/* An average over one rank is refused: NCCL before 2.29.7 leaves the last elements of it
 * unwritten (NCCL issue 1950), so the course sums over one rank (comm_nccl.c). */
static int is_average(ncclRedOp_t op, const struct ncclComm *comm)
{
    if (op != ncclSum && op != ncclAvg)
        emu_fail("NCCL: reduction %d (the emulation has sum and average only)", (int)op);
    if (op == ncclAvg && comm->ranks == 1)
        emu_fail("NCCL: ncclAvg over one rank, which NCCL before 2.29.7 gets wrong: sum instead");
    return op == ncclAvg;
}

static void divide(float *values, size_t count, int ranks)
{
    for (size_t i = 0; i < count; i++)
        values[i] /= (float)ranks;
}

static MPI_Datatype element_type(const Collective *c)
{
    return c->elements == IN_FLOAT32 ? MPI_FLOAT : MPI_UINT16_T;
}

static size_t element_bytes(const Collective *c)
{
    return bytes_of(c->elements);
}

/* The duplicate communicator returns MPI's errors instead of aborting: none may pass. */
static void check_mpi(int status, const char *call)
{
    if (status != MPI_SUCCESS)
        emu_fail("NCCL over MPI: %s failed (MPI error %d)", call, status);
}

static int mpi_count(size_t count)
{
    if (count > (size_t)INT32_MAX)
        emu_fail("NCCL: %zu floats in one call (the emulation's MPI takes up to 2^31 - 1)", count);
    return (int)count;
}

static void run_transfers(const Collective *c)
{
    MPI_Request requests[MAX_GROUP];
    MPI_Status statuses[MAX_GROUP]; /* not MPI_STATUSES_IGNORE: gcc 12 misreads it as a 0-byte array */
    for (int i = 0; i < c->transfer_count; i++) {
        const Transfer *t = &c->transfers[i];
        if (t->send)
            check_mpi(PMPI_Isend(t->buffer, mpi_count(t->count), MPI_FLOAT, t->peer, 0, c->comm->mpi, &requests[i]),
                      "MPI_Isend");
        else
            check_mpi(PMPI_Irecv(t->buffer, mpi_count(t->count), MPI_FLOAT, t->peer, 0, c->comm->mpi, &requests[i]),
                      "MPI_Irecv");
    }
    check_mpi(PMPI_Waitall(c->transfer_count, requests, statuses), "MPI_Waitall");
}

static void run_reduce_scatter(const Collective *c)
{
    MPI_Op sum = MPI_SUM;
    if (c->elements != IN_FLOAT32) {
        Format16 format = format_of(c->elements);
        if (sums_16[format] == MPI_OP_NULL)
            check_mpi(PMPI_Op_create(format == FORMAT_FP16 ? sum16_mpi_fp16 : sum16_mpi_bf16, 1, &sums_16[format]),
                      "MPI_Op_create");
        sum = sums_16[format];
    }
    void *sums = malloc(c->count * element_bytes(c) + 1);
    check_mpi(PMPI_Reduce_scatter_block(c->send, sums, mpi_count(c->count), element_type(c), sum, c->comm->mpi),
              "MPI_Reduce_scatter_block");
    memcpy(c->recv, sums, c->count * element_bytes(c));
    free(sums);
}

static void run_collective(void *ctx)
{
    Collective *c = ctx;
    MPI_Comm mpi = c->comm->mpi;
    int count = mpi_count(c->count);
    emu_device_window(1);
    switch (c->kind) {
    case ALL_REDUCE:
        check_mpi(PMPI_Allreduce(c->send == c->recv ? MPI_IN_PLACE : c->send, c->recv, count, MPI_FLOAT, MPI_SUM, mpi),
                  "MPI_Allreduce");
        break;
    case ALL_GATHER: {
        int in_place = c->send == (const char *)c->recv + c->count * (size_t)c->comm->rank * element_bytes(c);
        check_mpi(PMPI_Allgather(in_place ? MPI_IN_PLACE : c->send, count, element_type(c), c->recv, count,
                                 element_type(c), mpi),
                  "MPI_Allgather");
        break;
    }
    case REDUCE_SCATTER:
        run_reduce_scatter(c);
        break;
    case BROADCAST:
        if (c->comm->rank == c->root && c->send != c->recv)
            memmove(c->recv, c->send, c->count * sizeof(float));
        check_mpi(PMPI_Bcast(c->recv, count, MPI_FLOAT, c->root, mpi), "MPI_Bcast");
        break;
    case SEND_RECV:
        run_transfers(c);
        break;
    }
    if (c->average && c->elements != IN_FLOAT32)
        /* the MPI backend's 16-bit average (real NCCL scales before it sums: the same at 1
         * and 2 ranks, where the GPU tests run, unless an fp16 sum overflows) */
        sum16_scale(format_of(c->elements), c->recv, c->count, 1.0f / (float)c->comm->ranks);
    else if (c->average)
        divide(c->recv, c->count, c->comm->ranks);
    if (c->kind == ALL_REDUCE && c->count > 0 && faulty("DTC_EMU_NCCL_WRONG_RANK", c->comm->rank))
        ((float *)c->recv)[0] += 1.0f;
    emu_device_window(0);
    free(c->transfers);
    free(c);
}

static ncclResult_t queue(cudaStream_t stream, Collective collective)
{
    Collective *queued = malloc(sizeof *queued);
    *queued = collective;
    emu_enqueue(stream, run_collective, queued);
    return ncclSuccess;
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream)
{
    check_float(type);
    check_buffer("send", send, count, 0);
    check_buffer("receive", recv, count, 0);
    return queue(stream, (Collective){ALL_REDUCE, send, recv, count, is_average(op, comm), 0, 0, comm, NULL, 0});
}

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t type, ncclComm_t comm,
                           cudaStream_t stream)
{
    Elements elements = elements_of(type);
    check_buffer("send", send, count, elements);
    check_buffer("receive", recv, count * (size_t)comm->ranks, elements);
    return queue(stream, (Collective){ALL_GATHER, send, recv, count, 0, 0, elements, comm, NULL, 0});
}

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t type, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream)
{
    Elements elements = elements_of(type);
    check_buffer("send", send, count * (size_t)comm->ranks, elements);
    check_buffer("receive", recv, count, elements);
    return queue(stream, (Collective){REDUCE_SCATTER, send, recv, count, is_average(op, comm), 0, elements, comm, NULL,
                                      0});
}

ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t type, int root,
                           ncclComm_t comm, cudaStream_t stream)
{
    check_float(type);
    if (comm->rank == root)
        check_buffer("send", send, count, 0);
    check_buffer("receive", recv, count, 0);
    return queue(stream, (Collective){BROADCAST, send, recv, count, 0, root, 0, comm, NULL, 0});
}

/* ---------------------------------------------------------------- point to point
 * Sends and receives between ncclGroupStart and ncclGroupEnd are posted together, as one
 * queued operation, so a ring of them cannot deadlock. */
static Transfer group[MAX_GROUP];
static int group_size, group_depth;
static ncclComm_t group_comm;
static cudaStream_t group_stream;

static void close_group(void)
{
    if (group_size == 0)
        return;
    Transfer *transfers = malloc((size_t)group_size * sizeof *transfers);
    memcpy(transfers, group, (size_t)group_size * sizeof *transfers);
    queue(group_stream, (Collective){SEND_RECV, NULL, NULL, 0, 0, 0, 0, group_comm, transfers, group_size});
    group_size = 0;
}

static ncclResult_t add_transfer(int send, const void *buffer, size_t count, ncclDataType_t type, int peer,
                                 ncclComm_t comm, cudaStream_t stream)
{
    check_float(type);
    check_buffer(send ? "send" : "receive", buffer, count, 0);
    if (group_size > 0 && (stream != group_stream || comm != group_comm))
        emu_fail("NCCL: one group on two streams or communicators (the emulation has one of each)");
    if (group_size == MAX_GROUP)
        emu_fail("NCCL: more than %d sends and receives in one group", MAX_GROUP);
    group_stream = stream;
    group_comm = comm;
    group[group_size++] = (Transfer){send, (void *)buffer, count, peer};
    if (group_depth == 0)
        close_group();
    return ncclSuccess;
}

ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t type, int peer, ncclComm_t comm,
                      cudaStream_t stream)
{
    return add_transfer(1, send, count, type, peer, comm, stream);
}

ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t type, int peer, ncclComm_t comm, cudaStream_t stream)
{
    return add_transfer(0, recv, count, type, peer, comm, stream);
}

ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

ncclResult_t ncclGroupEnd(void)
{
    if (--group_depth == 0)
        close_group();
    return ncclSuccess;
}

/* ---------------------------------------------------------------- the host entering MPI */

int MPI_Allreduce(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Allreduce(send, recv, count, type, op, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Bcast(buffer, count, type, root, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Barrier(comm);
}

int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    emu_flush_all();
    return PMPI_Wait(request, status);
}

int MPI_Test(MPI_Request *request, int *done, MPI_Status *status)
{
    emu_flush_all();
    return PMPI_Test(request, done, status);
}

int MPI_Allgather(const void *send, int send_count, MPI_Datatype send_type, void *recv, int recv_count,
                  MPI_Datatype recv_type, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Allgather(send, send_count, send_type, recv, recv_count, recv_type, comm);
}

int MPI_Gather(const void *send, int send_count, MPI_Datatype send_type, void *recv, int recv_count,
               MPI_Datatype recv_type, int root, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Gather(send, send_count, send_type, recv, recv_count, recv_type, root, comm);
}

int MPI_Reduce_scatter_block(const void *send, void *recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Reduce_scatter_block(send, recv, count, type, op, comm);
}

int MPI_Sendrecv(const void *send, int send_count, MPI_Datatype send_type, int dest, int send_tag, void *recv,
                 int recv_count, MPI_Datatype recv_type, int source, int recv_tag, MPI_Comm comm, MPI_Status *status)
{
    emu_flush_all();
    return PMPI_Sendrecv(send, send_count, send_type, dest, send_tag, recv, recv_count, recv_type, source, recv_tag,
                         comm, status);
}

int MPI_Send(const void *buffer, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    emu_flush_all();
    return PMPI_Send(buffer, count, type, dest, tag, comm);
}

int MPI_Recv(void *buffer, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    emu_flush_all();
    return PMPI_Recv(buffer, count, type, source, tag, comm, status);
}

int MPI_Finalize(void)
{
    emu_flush_all();
    return PMPI_Finalize();
}
