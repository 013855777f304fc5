// The kernel emulator's scheduler (see emu.h).
#include "emu.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

// A fiber switch is a hot path (every barrier and warp shuffle of every
// emulated thread). On x86-64 it is a few instructions of our own that
// save the callee-saved registers and swap stacks; glibc's swapcontext
// also saves and restores the signal mask, two system calls per switch,
// which made the emulator many times slower. Elsewhere, ucontext.
#if defined(__x86_64__)
#define EMU_OWN_SWITCH 1
extern "C" void emu_ctx_switch(void **save_sp, void *load_sp);
asm(R"(
    .text
    .globl emu_ctx_switch
    .type emu_ctx_switch, @function
emu_ctx_switch:
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
    .size emu_ctx_switch, .-emu_ctx_switch
    .section .note.GNU-stack,"",@progbits
    .text
)");
#else
#include <ucontext.h>
#endif

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace {

struct Barrier {
    int arrive = 0;
    unsigned gen = 0;
};

struct Fiber {
#ifdef EMU_OWN_SWITCH
    void *sp = nullptr; // the saved stack pointer while switched out
#else
    ucontext_t ctx;
#endif
    std::vector<char> stack;
    bool done = false;
    uint3 tid;
};

#ifdef EMU_OWN_SWITCH
void *sched_sp;
#else
ucontext_t sched;
#endif
std::vector<Fiber> fibers;
int cur = -1;
int live_block = 0;
std::vector<int> live_warp;
Barrier block_bar;
std::vector<Barrier> warp_bar;
std::vector<uint32_t> slots; // one per thread: the value offered to a shuffle
const std::function<void()> *body_fn;

#ifdef EMU_OWN_SWITCH
void yield() { emu_ctx_switch(&fibers[cur].sp, sched_sp); }
void resume(Fiber &f) { emu_ctx_switch(&sched_sp, f.sp); }
#else
void yield() { swapcontext(&fibers[cur].ctx, &sched); }
void resume(Fiber &f) { swapcontext(&sched, &f.ctx); }
#endif

void wait(Barrier &b, const int &live) {
    unsigned g = b.gen;
    if (++b.arrive >= live) {
        b.arrive = 0;
        b.gen++;
        return;
    }
    while (b.gen == g) {
        if (b.arrive >= live) { // a thread exited: the rest may go on
            b.arrive = 0;
            b.gen++;
            break;
        }
        yield();
    }
}

void entry() {
    (*body_fn)();
    Fiber &f = fibers[cur];
    f.done = true;
    live_block--;
    live_warp[cur / 32]--;
    yield(); // never resumed: the scheduler skips a done fiber
    abort();
}

// start prepares fiber f to run entry on its own stack at its first resume.
void start(Fiber &f) {
#ifdef EMU_OWN_SWITCH
    // emu_ctx_switch pops six registers and returns: below a 16-byte
    // aligned top, a return address to entry (so that entry starts with
    // the stack as a call leaves it) and six zero registers.
    uintptr_t top = ((uintptr_t)(f.stack.data() + f.stack.size())) & ~(uintptr_t)15;
    void **sp = (void **)(top - 16);
    sp[0] = (void *)&entry;
    sp[1] = nullptr;
    sp -= 6;
    for (int i = 0; i < 6; i++) sp[i] = nullptr;
    f.sp = sp;
#else
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = f.stack.data();
    f.ctx.uc_stack.ss_size = f.stack.size();
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, entry, 0);
#endif
}

template <class T> T shfl(T v, int m) {
    int t = cur, w = t / 32, lane = t % 32;
    std::memcpy(&slots[t], &v, 4);
    wait(warp_bar[w], live_warp[w]);
    T r;
    std::memcpy(&r, &slots[w * 32 + (lane ^ m)], 4);
    wait(warp_bar[w], live_warp[w]);
    return r;
}

} // namespace

void __syncthreads() { wait(block_bar, live_block); }
float emu_shfl_xor(float v, int m) { return shfl(v, m); }
int emu_shfl_xor(int v, int m) { return shfl(v, m); }

void emu_launch(dim3 grid, dim3 block, const std::function<void()> &body) {
    int n = block.x * block.y * block.z;
    if (n % 32 != 0 || n > 1024) {
        fprintf(stderr, "emu: block of %d threads\n", n);
        abort();
    }
    gridDim = grid;
    blockDim = block;
    body_fn = &body;
    fibers.resize(n);
    live_warp.assign(n / 32, 32);
    warp_bar.assign(n / 32, Barrier{});
    slots.assign(n, 0);
    for (unsigned bz = 0; bz < grid.z; bz++)
        for (unsigned by = 0; by < grid.y; by++)
            for (unsigned bx = 0; bx < grid.x; bx++) {
                blockIdx = {bx, by, bz};
                live_block = n;
                live_warp.assign(n / 32, 32);
                block_bar = Barrier{};
                warp_bar.assign(n / 32, Barrier{});
                for (int t = 0; t < n; t++) {
                    Fiber &f = fibers[t];
                    f.stack.resize(64 * 1024);
                    f.done = false;
                    f.tid = {(unsigned)(t % block.x), (unsigned)(t / block.x % block.y), (unsigned)(t / (block.x * block.y))};
                    start(f);
                }
                for (int left = n; left > 0;) {
                    left = 0;
                    for (int t = 0; t < n; t++) {
                        if (fibers[t].done) continue;
                        cur = t;
                        threadIdx = fibers[t].tid;
                        resume(fibers[t]);
                        if (!fibers[t].done) left++;
                    }
                }
            }
    cur = -1;
}
