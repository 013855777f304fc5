// The KV cache and decode attention with grouped-query heads.
//
// A layer's cache is two f16 arrays, keys and values, each
// [capacity][kv_dim] (position-major). Attention for token b at position
// start+b reads positions 0..start+b (causal), so one launch serves a
// decode step (n = 1) and a batched prefill span alike.

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

// kv_write: stores k, v ([n][kv_dim] f32) at positions start.. as f16.
// blockDim 256, grid (ceil(kv_dim/256), n).
extern "C" __global__ void kv_write(const float *k, const float *v, half_bits *kc, half_bits *vc,
                                    long long kv_dim, long long start) {
    long long d = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= kv_dim) return;
    long long b = blockIdx.y;
    long long dst = (start + b) * kv_dim + d;
    kc[dst] = f2h(k[b * kv_dim + d]);
    vc[dst] = f2h(v[b * kv_dim + d]);
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
// t = 0..start+b, with KV head h / (heads/kv_heads). q and out are
// [n][heads*head_dim]; scores is scratch of [n*heads][capacity] floats.
// As the CPU forward (and llama.cpp without flash attention) computes it:
// the query is rounded to f16 for the products with the f16 keys, and the
// normalized probabilities are rounded to f16 for the products with the
// f16 values. blockDim 128, grid (heads, n).
extern "C" __global__ void attention(const float *q, const half_bits *kc, const half_bits *vc, float *out,
                                     float *scores, long long heads, long long kv_heads, long long head_dim,
                                     long long start, long long capacity, float scale) {
    __shared__ float part[32];
    int h = blockIdx.x, b = blockIdx.y;
    int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, nw = blockDim.x >> 5;
    long long kv_dim = kv_heads * head_dim;
    long long kvh = h / (heads / kv_heads);
    long long n = start + b + 1;
    const float *qh = q + ((long long)b * heads + h) * head_dim;
    float *sc = scores + ((long long)b * heads + h) * capacity;

    for (long long t = warp; t < n; t += nw) {
        const half_bits *kt = kc + t * kv_dim + kvh * head_dim;
        float s = 0.0f;
        for (long long d = lane; d < head_dim; d += 32) s += h2f(f2h(qh[d])) * h2f(kt[d]);
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) sc[t] = s * scale;
    }
    __syncthreads();
    float m = NEG_INF;
    for (long long t = threadIdx.x; t < n; t += blockDim.x) m = fmaxf(m, sc[t]);
    m = block_reduce(m, true, part);
    float sum = 0.0f;
    for (long long t = threadIdx.x; t < n; t += blockDim.x) {
        float e = expf(sc[t] - m);
        sc[t] = e;
        sum += e;
    }
    sum = block_reduce(sum, false, part);
    float inv = 1.0f / sum;
    for (long long t = threadIdx.x; t < n; t += blockDim.x) sc[t] = h2f(f2h(sc[t] * inv));
    __syncthreads();
    float *o = out + ((long long)b * heads + h) * head_dim;
    for (long long d = threadIdx.x; d < head_dim; d += blockDim.x) {
        const half_bits *vd = vc + kvh * head_dim + d;
        float acc = 0.0f;
        for (long long t = 0; t < n; t++) acc += sc[t] * h2f(vd[t * kv_dim]);
        o[d] = acc;
    }
}
