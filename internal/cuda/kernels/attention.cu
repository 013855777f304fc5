// The KV cache and decode attention with grouped-query heads.
//
// A sequence's cache is one device allocation: per layer l, keys then
// values, each [capacity][kv_dim] f16 (position-major), so layer l's keys
// start 2*l*capacity*kv_dim halves in and its values capacity*kv_dim
// after them.
//
// The n rows of a pass are described by its row table, rows [n][4] int64:
// rows[4b] is the device address of row b's sequence's cache, rows[4b+1]
// that cache's capacity (positions), rows[4b+2] the row's position,
// rows[4b+3] unused (0). Row b attends to positions 0..rows[4b+2] of its
// own cache (causal), so one launch serves a decode step, a prefill span
// (consecutive positions of one sequence) and a batch of several
// sequences' rows alike: a sequence's rows are written to its cache
// (kv_write) before any row attends.

#define NEG_INF __int_as_float(0xff800000)

typedef unsigned short half_bits;

#ifdef __CUDACC_RTC__
__device__ __forceinline__ float h2f(half_bits h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

__device__ __forceinline__ half_bits f2h(float f) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
#else
// Host build under the kernel emulator (cuda/testdata/emu).
static inline float h2f(half_bits h) { return emu_h2f(h); }
static inline half_bits f2h(float f) { return emu_f2h(f); }
#endif

// layer_keys is the start of layer's keys in row b's cache; its values
// follow at + capacity*kv_dim.
__device__ __forceinline__ half_bits *layer_keys(const long long *rows, int b, long long layer, long long kv_dim) {
    half_bits *cache = (half_bits *)(unsigned long long)rows[4 * b];
    return cache + 2 * layer * rows[4 * b + 1] * kv_dim;
}

// kv_write: stores row b's k and v ([n][kv_dim] f32) as f16 at its
// position in its sequence's cache, layer layer. blockDim 256, grid
// (ceil(kv_dim/256), n).
extern "C" __global__ void kv_write(const float *k, const float *v, const long long *rows, long long layer,
                                    long long kv_dim) {
    long long d = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= kv_dim) return;
    int b = blockIdx.y;
    half_bits *kc = layer_keys(rows, b, layer, kv_dim), *vc = kc + rows[4 * b + 1] * kv_dim;
    long long dst = rows[4 * b + 2] * kv_dim + d;
    kc[dst] = f2h(k[(long long)b * kv_dim + d]);
    vc[dst] = f2h(v[(long long)b * kv_dim + d]);
}

__device__ float block_reduce(float v, bool is_max, float *part) {
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, u) : v + u;
    }
    __syncthreads();
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nw ? part[lane] : (is_max ? NEG_INF : 0.0f);
        for (int o = 16; o > 0; o >>= 1) {
            float u = __shfl_xor_sync(0xffffffffu, v, o);
            v = is_max ? fmaxf(v, u) : v + u;
        }
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    return part[0];
}

// attention: out[b][h] = softmax_t(q[b][h]·k_t * scale) · v_t over
// t = 0..pos(b) of row b's cache in layer layer, with KV head h /
// (heads/kv_heads). q and out are [n][heads*head_dim]; scores is scratch
// of [n*heads][score_stride] floats, score_stride at least the largest
// position of the pass plus one.
// As the CPU forward (and llama.cpp without flash attention) computes it:
// the query is rounded to f16 for the products with the f16 keys, and the
// normalized probabilities are rounded to f16 for the products with the
// f16 values. With window > 0 (gemma3's sliding layers) row b attends to
// the last window positions only, t > pos(b) - window, as llama.cpp's
// standard SWA mask. blockDim 128, grid (heads, n).
extern "C" __global__ void attention(const float *q, const long long *rows, long long layer, float *out,
                                     float *scores, long long heads, long long kv_heads, long long head_dim,
                                     long long score_stride, float scale, long long window) {
    __shared__ float part[32];
    int h = blockIdx.x, b = blockIdx.y;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    long long kv_dim = kv_heads * head_dim;
    long long kvh = h / (heads / kv_heads);
    long long n = rows[4 * b + 2] + 1;
    long long first = window > 0 && n > window ? n - window : 0;
    const half_bits *kc = layer_keys(rows, b, layer, kv_dim), *vc = kc + rows[4 * b + 1] * kv_dim;
    const float *qh = q + ((long long)b * heads + h) * head_dim;
    float *sc = scores + ((long long)b * heads + h) * score_stride;

    for (long long t = first + warp; t < n; t += nw) {
        const half_bits *kt = kc + t * kv_dim + kvh * head_dim;
        float s = 0.0f;
        for (long long d = lane; d < head_dim; d += 32) s += h2f(f2h(qh[d])) * h2f(kt[d]);
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) sc[t] = s * scale;
    }
    __syncthreads();
    float m = NEG_INF;
    for (long long t = first + threadIdx.x; t < n; t += blockDim.x) m = fmaxf(m, sc[t]);
    m = block_reduce(m, true, part);
    float sum = 0.0f;
    for (long long t = first + threadIdx.x; t < n; t += blockDim.x) {
        float e = expf(sc[t] - m);
        sc[t] = e;
        sum += e;
    }
    sum = block_reduce(sum, false, part);
    float inv = 1.0f / sum;
    for (long long t = first + threadIdx.x; t < n; t += blockDim.x) sc[t] = h2f(f2h(sc[t] * inv));
    __syncthreads();
    float *o = out + ((long long)b * heads + h) * head_dim;
    for (long long d = threadIdx.x; d < head_dim; d += blockDim.x) {
        const half_bits *vd = vc + kvh * head_dim + d;
        float acc = 0.0f;
        for (long long t = first; t < n; t++) acc += sc[t] * h2f(vd[t * kv_dim]);
        o[d] = acc;
    }
}
