/* The emulated GPU's threads. Each thread of a block is a fiber with its own stack on the
 * launching thread. A fiber runs until it reaches a barrier, and the scheduler then runs
 * the next ready one; the last to arrive releases the others. A thread that has returned
 * counts as arrived at every later barrier of its block and its warp. Blocks run one
 * after another, in order. */
#include "cuda_runtime.h"

#include <sys/mman.h>

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

/* Saves the callee-saved registers and the stack pointer in *from, and resumes to (a
 * stack that emu_switch saved earlier, or one start_fiber laid out). x86-64 System V. */
asm(R"(
    .pushsection .text
    .globl emu_switch
    .type emu_switch, @function
emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size emu_switch, .-emu_switch
    .popsection
)");
extern "C" void emu_switch(void **from, void *to);

namespace {

enum State { READY, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };
enum { WARP = 32, MAX_THREADS = 1024, STACK_BYTES = 128 * 1024 };

struct Fiber {
    void *stack_pointer;
    State state;
    uint3 index;
};

Fiber fibers[MAX_THREADS];
char *stacks;
void *scheduler_stack_pointer;
int current, thread_count;
int block_arrived, block_done;
int warp_arrived[MAX_THREADS / WARP], warp_done[MAX_THREADS / WARP];
unsigned warp_slots[MAX_THREADS / WARP][WARP];
int or_flags[MAX_THREADS];
void (*body_function)(void *);
void *body_ctx;

void yield_to_scheduler() { emu_switch(&fibers[current].stack_pointer, scheduler_stack_pointer); }

void release(State waiting, int first, int end)
{
    for (int i = first; i < end; i++)
        if (fibers[i].state == waiting)
            fibers[i].state = READY;
}

void release_block_if_complete()
{
    if (block_arrived > 0 && block_arrived + block_done == thread_count) {
        block_arrived = 0;
        release(AT_BLOCK_BARRIER, 0, thread_count);
    }
}

void release_warp_if_complete(int warp)
{
    if (warp_arrived[warp] > 0 && warp_arrived[warp] + warp_done[warp] == WARP) {
        warp_arrived[warp] = 0;
        release(AT_WARP_BARRIER, warp * WARP, warp * WARP + WARP);
    }
}

void warp_barrier()
{
    int warp = current / WARP;
    fibers[current].state = AT_WARP_BARRIER;
    warp_arrived[warp]++;
    release_warp_if_complete(warp);
    if (fibers[current].state != READY)
        yield_to_scheduler();
}

[[noreturn]] void fiber_main()
{
    body_function(body_ctx);
    /* on a GPU a thread that has returned takes no part: it adds 0 to ballots and _or */
    or_flags[current] = 0;
    warp_slots[current / WARP][current % WARP] = 0;
    fibers[current].state = DONE;
    block_done++;
    warp_done[current / WARP]++;
    release_block_if_complete();
    release_warp_if_complete(current / WARP);
    emu_switch(&fibers[current].stack_pointer, scheduler_stack_pointer);
    abort(); /* a finished fiber is never resumed */
}

/* A new fiber's stack: six zero registers for emu_switch to pop, then fiber_main as the
 * address it returns to, and a dummy return address for fiber_main (which never returns),
 * placed so that fiber_main starts with the stack alignment a call gives. */
void start_fiber(int i, dim3 block)
{
    void **top = (void **)(stacks + (size_t)(i + 1) * STACK_BYTES);
    void **stack = top - 8;
    for (int slot = 0; slot < 6; slot++)
        stack[slot] = nullptr;
    stack[6] = (void *)fiber_main;
    stack[7] = nullptr;
    fibers[i] = {stack, READY, {i % block.x, (i / block.x) % block.y, i / (block.x * block.y)}};
}

void run_block(const char *kernel, uint3 index, dim3 block)
{
    blockIdx = index;
    block_arrived = block_done = 0;
    for (int warp = 0; warp < thread_count / WARP; warp++)
        warp_arrived[warp] = warp_done[warp] = 0;
    for (int i = 0; i < thread_count; i++) {
        start_fiber(i, block);
        or_flags[i] = 0;
        warp_slots[i / WARP][i % WARP] = 0;
    }
    for (int unfinished = thread_count; unfinished > 0;) {
        int ran = 0;
        for (int i = 0; i < thread_count; i++) {
            if (fibers[i].state != READY)
                continue;
            current = i;
            threadIdx = fibers[i].index;
            emu_switch(&scheduler_stack_pointer, fibers[i].stack_pointer);
            ran = 1;
            unfinished -= fibers[i].state == DONE;
        }
        if (!ran) {
            fprintf(stderr, "emu: kernel %s: block (%u,%u,%u) never gets past a barrier (some threads skip it)\n",
                    kernel, index.x, index.y, index.z);
            abort();
        }
    }
}

} // namespace

void __syncthreads()
{
    fibers[current].state = AT_BLOCK_BARRIER;
    block_arrived++;
    release_block_if_complete();
    if (fibers[current].state != READY)
        yield_to_scheduler();
}

int __syncthreads_or(int predicate)
{
    or_flags[current] = predicate != 0;
    __syncthreads();
    int any = 0;
    for (int i = 0; i < thread_count; i++)
        any |= or_flags[i];
    __syncthreads();
    return any;
}

unsigned emu_warp_exchange(unsigned bits, int lane_mask, bool ballot)
{
    int warp = current / WARP, lane = current % WARP;
    warp_slots[warp][lane] = bits;
    warp_barrier();
    unsigned result = 0;
    if (ballot) {
        for (int other = 0; other < WARP; other++)
            result |= (warp_slots[warp][other] != 0u) << other;
    } else {
        result = warp_slots[warp][lane ^ lane_mask];
    }
    warp_barrier(); /* nobody overwrites a slot before everyone has read */
    return result;
}

void emu_run_grid(const char *kernel, dim3 grid, dim3 block, void (*body)(void *), void *ctx)
{
    unsigned threads = block.x * block.y * block.z;
    if (threads == 0 || threads % WARP != 0 || threads > MAX_THREADS) {
        fprintf(stderr, "emu: kernel %s: a block of %u threads (the emulation takes whole warps, up to %d)\n", kernel,
                threads, MAX_THREADS);
        abort();
    }
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535) {
        fprintf(stderr, "emu: kernel %s: grid (%u,%u,%u) is not one a GPU launches\n", kernel, grid.x, grid.y, grid.z);
        abort();
    }
    if (stacks == nullptr) {
        void *mapped = mmap(nullptr, (size_t)MAX_THREADS * STACK_BYTES, PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (mapped == MAP_FAILED) {
            perror("emu: fiber stacks");
            abort();
        }
        stacks = (char *)mapped;
    }
    gridDim = grid;
    blockDim = block;
    thread_count = (int)threads;
    body_function = body;
    body_ctx = ctx;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++)
                run_block(kernel, {x, y, z}, block);
}
