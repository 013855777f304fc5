// Element-wise kernels: the SwiGLU and GELU activations, the residual add
// (and an expert's weighted add),
// scaling, the logit softcap, the greedy argmax of the logits and the row
// gather before the output head. blockDim 256, grid ceil(len/256) unless
// stated.

#define NEG_INF __int_as_float(0xff800000)

// swiglu: g[i] = silu(g[i]) * u[i], silu(x) = x / (1 + e^-x).
extern "C" __global__ void swiglu(float *g, const float *u, long long len) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    float x = g[i];
    g[i] = x / (1.0f + expf(-x)) * u[i];
}

// f16_round is x rounded to the nearest f16 (ties to even), as a float.
#ifdef __CUDACC_RTC__
__device__ __forceinline__ float f16_round(float x) {
    unsigned short h;
    float f;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
#else
// Host build under the kernel emulator (cuda/testdata/emu).
static inline float f16_round(float x) { return emu_h2f(emu_f2h(x)); }
#endif

// geglu: g[i] = gelu(g[i]) * u[i] as the CPU forward (ggml_vec_geglu_f32
// with its f16 table) computes it: 0 for g <= -10, g*u for g >= 10, else
// the f16 of GELU's tanh approximation at the f16 of g, times u (gemma3).
extern "C" __global__ void geglu(float *g, const float *u, long long len) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    float x = g[i];
    if (x <= -10.0f) {
        g[i] = 0.0f;
    } else if (x >= 10.0f) {
        g[i] = x * u[i];
    } else {
        x = f16_round(x);
        float inner = (0.79788456080286535587989211986876f * x) * fmaf(0.044715f * x, x, 1.0f);
        g[i] = f16_round((0.5f * x) * (1.0f + tanhf(inner))) * u[i];
    }
}

// scale: x[i] *= s (gemma3's embedding scale).
extern "C" __global__ void scale(float *x, float s, long long len) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    x[i] *= s;
}

// softcap: x[i] = tanh(x[i] * (1/cap)) * cap (the final logit softcap).
extern "C" __global__ void softcap(float *x, float cap, long long len) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    x[i] = tanhf(x[i] * (1.0f / cap)) * cap;
}

// moe_add: x[rows[j]][i] += w[j] * y[j][i] for the m rows an expert
// served (qwen3moe): its weighted output added to the residual of each
// row it was routed from. x and y have cols columns. grid (ceil(cols/256),
// m).
extern "C" __global__ void moe_add(float *x, const float *y, const int *rows, const float *w, long long cols) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cols) return;
    int j = blockIdx.y;
    float v = y[(long long)j * cols + i] * w[j];
    x[(long long)rows[j] * cols + i] += v;
}

// add: x[i] += y[i] (the residual connection).
extern "C" __global__ void add(float *x, const float *y, long long len) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    x[i] += y[i];
}

// argmax: out[0] = the lowest index of the largest of x[0..len).
// One block of 1024 threads.
extern "C" __global__ void argmax(const float *x, long long len, int *out) {
    __shared__ float bv[32];
    __shared__ int bi[32];
    float v = NEG_INF;
    int idx = 0x7fffffff;
    for (long long i = threadIdx.x; i < len; i += blockDim.x) {
        float y = x[i];
        if (y > v) {
            v = y;
            idx = (int)i;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffffu, v, o);
        int j = __shfl_xor_sync(0xffffffffu, idx, o);
        if (u > v || (u == v && j < idx)) {
            v = u;
            idx = j;
        }
    }
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        bv[warp] = v;
        bi[warp] = idx;
    }
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x >> 5) ? bv[lane] : NEG_INF;
        idx = lane < (int)(blockDim.x >> 5) ? bi[lane] : 0x7fffffff;
        for (int o = 16; o > 0; o >>= 1) {
            float u = __shfl_xor_sync(0xffffffffu, v, o);
            int j = __shfl_xor_sync(0xffffffffu, idx, o);
            if (u > v || (u == v && j < idx)) {
                v = u;
                idx = j;
            }
        }
        if (lane == 0) out[0] = idx;
    }
}

// gather_rows: y[j] = x[sel[j]] for the m rows j of sel; x and y are
// [..][cols] f32 (the hidden states of a pass, and the rows whose logits
// are wanted). blockDim 256, grid (ceil(cols/256), m).
extern "C" __global__ void gather_rows(const float *x, const int *sel, float *y, long long cols) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cols) return;
    long long j = blockIdx.y;
    y[j * cols + i] = x[(long long)sel[j] * cols + i];
}
