// The kernel emulator's scheduler (see emu.h).
#include "emu.h"

#include <cstdio>
#include <cstdlib>
#include <ucontext.h>
#include <vector>

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

namespace {

struct Barrier {
    int arrive = 0;
    unsigned gen = 0;
};

struct Fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    bool done = false;
    uint3 tid;
};

ucontext_t sched;
std::vector<Fiber> fibers;
int cur = -1;
int live_block = 0;
std::vector<int> live_warp;
Barrier block_bar;
std::vector<Barrier> warp_bar;
std::vector<uint32_t> slots; // one per thread: the value offered to a shuffle
const std::function<void()> *body_fn;

void yield() { swapcontext(&fibers[cur].ctx, &sched); }

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
    swapcontext(&f.ctx, &sched);
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
                    getcontext(&f.ctx);
                    f.ctx.uc_stack.ss_sp = f.stack.data();
                    f.ctx.uc_stack.ss_size = f.stack.size();
                    f.ctx.uc_link = nullptr;
                    makecontext(&f.ctx, entry, 0);
                }
                for (int left = n; left > 0;) {
                    left = 0;
                    for (int t = 0; t < n; t++) {
                        if (fibers[t].done) continue;
                        cur = t;
                        threadIdx = fibers[t].tid;
                        swapcontext(&sched, &fibers[t].ctx);
                        if (!fibers[t].done) left++;
                    }
                }
            }
    cur = -1;
}
