// A CUDA execution emulator for the host, for testing the kernels in
// cuda/kernels/*.cu without a GPU (cuda/emu_test.go). Included first (g++
// -include) when a kernel source is compiled as host C++ with -DKERNEL_EMU.
//
// A launch runs the grid's blocks one after another; the threads of a
// block are fibers (ucontext) on the calling OS thread, switched at
// __syncthreads and at every warp shuffle, which rendezvous exactly as on
// the device: a shuffle waits for the live lanes of its warp, a barrier for
// the live threads of its block. __shared__ variables are static (blocks do
// not overlap).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};
struct int2 {
    int x, y;
};

extern uint3 threadIdx, blockIdx;
extern dim3 blockDim, gridDim;

#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static

void __syncthreads();
float emu_shfl_xor(float v, int lane_mask);
int emu_shfl_xor(int v, int lane_mask);
inline float __shfl_xor_sync(unsigned, float v, int m) { return emu_shfl_xor(v, m); }
inline int __shfl_xor_sync(unsigned, int v, int m) { return emu_shfl_xor(v, m); }

inline float __int_as_float(int i) {
    float f;
    std::memcpy(&f, &i, 4);
    return f;
}
inline float __uint_as_float(unsigned u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
inline float __expf(float x) { return expf(x); }
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline int __float2int_rn(float x) { return (int)nearbyintf(x); }
inline float emu_h2f(unsigned short h) {
    _Float16 f;
    std::memcpy(&f, &h, 2);
    return (float)f;
}
inline unsigned short emu_f2h(float x) {
    _Float16 f = (_Float16)x;
    unsigned short h;
    std::memcpy(&h, &f, 2);
    return h;
}

// emu_launch runs body for every thread of grid × block.
void emu_launch(dim3 grid, dim3 block, const std::function<void()> &body);
