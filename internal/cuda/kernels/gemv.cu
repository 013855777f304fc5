// Quantized matrix-vector products (and the batched products of prefill),
// the Q8 activation encoder, and the embedding lookup.
//
// Every weight type of the CPU path has a kernel: the integer types through
// a Q8 activation and dp4a, the float types (f32, f16, bf16) in f32.
// A weight row is cut into chunks of 32 weights; unpack32<T> turns chunk c
// into 32 signed 8-bit quants (8 packed words) and, per half of 16, the
// affine map w = scale*q + offset. With the activation chunk encoded as
// a = da*qa (qa int8, sa = sum of qa per half):
//     sum_i w_i*a_i = sum_h scale_h*da*dot(q,qa)_h + offset_h*da*sa_h.
//
// Layouts (little-endian, ggml's; see q4k/doc.go): Q4_0 18 bytes, Q4_1 20,
// Q5_0 22, Q5_1 24, Q8_0 34 per 32 weights; Q4_K 144, Q5_K 176, Q6_K 210
// per 256 weights. Rows start on any byte: loads are bytewise.
//
// The helpers above the kernels (unpack32, the float loads) also compile
// as host C++ without NVRTC (__CUDACC_RTC__ undefined): cuda/unpack_test.go
// checks them against package q4k with gcc. The kernels compile on the host
// only under the kernel emulator (KERNEL_EMU, cuda/testdata/emu).
//
// Launch shape for gemv_*: blockDim (32, 4): one warp per weight row,
// grid (ceil(rows/4), ceil(n/GEMV_ROWS)): a warp reads (and unpacks) its
// weight row once for up to GEMV_ROWS activation rows of the batch, so a
// pass of B decode rows reads the weights ceil(B/GEMV_ROWS) times, not B.
// Each output's sum runs in the same order whatever the batch: a row's
// product is bit-identical alone and in a batch. All integer parameters
// are passed as 64-bit slots by the host; only their low 32 bits are read.

// GEMV_ROWS is how many activation rows one warp multiplies per read of
// its weight row (cuda/forward_gpu.go's gemvRows).
#define GEMV_ROWS 8

#define T_F32 0
#define T_F16 1
#define T_Q4_0 2
#define T_Q4_1 3
#define T_Q5_0 6
#define T_Q5_1 7
#define T_Q8_0 8
#define T_Q4_K 12
#define T_Q5_K 13
#define T_Q6_K 14
#define T_BF16 30

typedef unsigned char u8;
typedef unsigned int u32;

#ifdef __CUDACC_RTC__
#define DEVFN __device__ __forceinline__
#define UNROLL _Pragma("unroll")

DEVFN float h2f(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

DEVFN float as_float(u32 u) { return __uint_as_float(u); }

// dp4a: c + the dot product of the four signed bytes of a and b.
DEVFN int dp4a(int a, int b, int c) {
    int r;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c));
    return r;
}
#else
#define DEVFN static inline
#define UNROLL

DEVFN float as_float(u32 u) {
    float f;
    __builtin_memcpy(&f, &u, 4);
    return f;
}

DEVFN float h2f(unsigned short h) {
    u32 sign = (u32)(h & 0x8000) << 16, exp = (h >> 10) & 31, man = h & 1023;
    if (exp == 31) return as_float(sign | 0x7f800000u | (man << 13));
    if (exp == 0) {
        float f = (float)man * (1.0f / 16777216.0f); // man * 2^-24
        return sign ? -f : f;
    }
    return as_float(sign | ((exp + 112) << 23) | (man << 13));
}

DEVFN int dp4a(int a, int b, int c) {
    for (int i = 0; i < 4; i++) c += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
    return c;
}
#endif

DEVFN float ldh(const u8 *p) { return h2f((unsigned short)(p[0] | (p[1] << 8))); }

DEVFN u32 ld32(const u8 *p) {
    return (u32)p[0] | ((u32)p[1] << 8) | ((u32)p[2] << 16) | ((u32)p[3] << 24);
}

// Scale and min of sub-block j of a Q4_K/Q5_K super-block's 12 packed bytes.
DEVFN void scale_min_k4(int j, const u8 *b, int *s, int *m) {
    if (j < 4) {
        *s = b[j] & 63;
        *m = b[j + 4] & 63;
    } else {
        *s = (b[j + 4] & 15) | ((b[j - 4] >> 6) << 4);
        *m = (b[j + 4] >> 4) | ((b[j] >> 6) << 4);
    }
}

// Packs byte i of each word from 4 consecutive values v[0..3] (0..255).
DEVFN u32 pack4(int a, int b, int c, int d) {
    return (u32)(a & 255) | ((u32)(b & 255) << 8) | ((u32)(c & 255) << 16) | ((u32)(d & 255) << 24);
}

// unpack32: chunk c (weights 32c..32c+31) of a row.
template <int T>
DEVFN void unpack32(const u8 *row, int c, u32 q[8], float sc[2], float off[2]) {
    if (T == T_Q4_0 || T == T_Q4_1) {
        const int bs = T == T_Q4_0 ? 18 : 20;
        const u8 *b = row + c * bs;
        float d = ldh(b);
        float m = T == T_Q4_0 ? -8.0f * d : ldh(b + 2);
        const u8 *qs = b + (T == T_Q4_0 ? 2 : 4);
        for (int k = 0; k < 4; k++) {
            u32 w = ld32(qs + 4 * k);
            q[k] = w & 0x0F0F0F0Fu;
            q[k + 4] = (w >> 4) & 0x0F0F0F0Fu;
        }
        sc[0] = sc[1] = d;
        off[0] = off[1] = m;
    } else if (T == T_Q5_0 || T == T_Q5_1) {
        const int bs = T == T_Q5_0 ? 22 : 24;
        const u8 *b = row + c * bs;
        float d = ldh(b);
        float m = T == T_Q5_0 ? -16.0f * d : ldh(b + 2);
        const u8 *p = b + (T == T_Q5_0 ? 2 : 4);
        u32 qh = ld32(p);
        const u8 *qs = p + 4;
        for (int k = 0; k < 4; k++) {
            int lo[4], hi[4];
            for (int i = 0; i < 4; i++) {
                int j = 4 * k + i;
                lo[i] = (qs[j] & 15) | (((qh >> j) & 1) << 4);
                hi[i] = (qs[j] >> 4) | (((qh >> (j + 16)) & 1) << 4);
            }
            q[k] = pack4(lo[0], lo[1], lo[2], lo[3]);
            q[k + 4] = pack4(hi[0], hi[1], hi[2], hi[3]);
        }
        sc[0] = sc[1] = d;
        off[0] = off[1] = m;
    } else if (T == T_Q8_0) {
        const u8 *b = row + c * 34;
        float d = ldh(b);
        for (int k = 0; k < 8; k++) q[k] = ld32(b + 2 + 4 * k);
        sc[0] = sc[1] = d;
        off[0] = off[1] = 0.0f;
    } else if (T == T_Q4_K || T == T_Q5_K) {
        const int bs = T == T_Q4_K ? 144 : 176;
        const u8 *b = row + (c >> 3) * bs;
        int j = c & 7;
        int s, m;
        scale_min_k4(j, b + 4, &s, &m);
        float d = ldh(b) * (float)s;
        float dm = ldh(b + 2) * (float)m;
        const u8 *qs = b + (T == T_Q4_K ? 16 : 48) + 32 * (j >> 1);
        int shift = 4 * (j & 1);
        for (int k = 0; k < 8; k++) {
            u32 w = (ld32(qs + 4 * k) >> shift) & 0x0F0F0F0Fu;
            if (T == T_Q5_K) {
                const u8 *qh = b + 16 + 4 * k;
                w |= pack4(((qh[0] >> j) & 1) << 4, ((qh[1] >> j) & 1) << 4,
                           ((qh[2] >> j) & 1) << 4, ((qh[3] >> j) & 1) << 4);
            }
            q[k] = w;
        }
        sc[0] = sc[1] = d;
        off[0] = off[1] = -dm;
    } else if (T == T_Q6_K) {
        const u8 *b = row + (c >> 3) * 210;
        int j = c & 7;
        int n = j >> 2, k4 = j & 3;
        const u8 *ql = b + 64 * n + (k4 & 1) * 32;
        const u8 *qh = b + 128 + 32 * n;
        const signed char *scales = (const signed char *)(b + 192) + 8 * n + 2 * k4;
        float d = ldh(b + 208);
        int lshift = 4 * (k4 >> 1), hshift = 2 * k4;
        for (int k = 0; k < 8; k++) {
            int v[4];
            for (int i = 0; i < 4; i++) {
                int l = 4 * k + i;
                v[i] = (((ql[l] >> lshift) & 15) | (((qh[l] >> hshift) & 3) << 4)) - 32;
            }
            q[k] = pack4(v[0], v[1], v[2], v[3]);
        }
        sc[0] = d * (float)scales[0];
        sc[1] = d * (float)scales[1];
        off[0] = off[1] = 0.0f;
    }
}

// Float weights: element e of a row.
template <int T>
DEVFN float wf(const u8 *row, long long e) {
    if (T == T_F32) return as_float(ld32(row + 4 * e));
    unsigned short h = (unsigned short)(row[2 * e] | (row[2 * e + 1] << 8));
    if (T == T_F16) return h2f(h);
    return as_float((u32)h << 16);
}

#if defined(__CUDACC_RTC__) || defined(KERNEL_EMU)

__device__ __forceinline__ float warp_sum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// round_f16 is f rounded to the nearest f16 (ties to even), as a float.
#ifdef __CUDACC_RTC__
__device__ __forceinline__ float round_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h2f(h);
}
#else
static inline float round_f16(float f) { return emu_h2f(emu_f2h(f)); }
#endif

// round_bf16 is f rounded to the nearest bf16 (ties to even; a NaN stays
// a quiet NaN), as a float: q4k.F32ToBF16.
__device__ __forceinline__ float round_bf16(float f) {
    union {
        float f;
        u32 u;
    } bits;
    bits.f = f;
    u32 u = bits.u;
    if ((u & 0x7fffffffu) > 0x7f800000u) return as_float(((u >> 16) | 64u) << 16);
    return as_float(((u + (0x7fffu + ((u >> 16) & 1u))) >> 16) << 16);
}

// Q8 activation chunk: 32 int8 quants qa, scale da, half sums sa.
// x8 holds n*cols int8, xd n*cols/32 floats, xs n*cols/32 int2 (lo, hi).
// Both encoders reproduce, value for value, the activation encoding the
// CPU forward multiplies the same weights with (package q4k's
// QuantizeActivation), so that GPU and CPU differ only in the order of
// float sums.

// quantize_q8: x [n][cols] f32 -> Q8 chunks as q4k's Q8_0 activation (the
// legacy types): d = amax/127 rounded to f16, q = round-half-even(x *
// (127/amax)). blockDim 32 (one warp per chunk, lane = element), grid
// (cols/32, n).
extern "C" __global__ void quantize_q8(const float *x, signed char *x8, float *xd, int2 *xs, long long cols) {
    int c = blockIdx.x, b = blockIdx.y, lane = threadIdx.x;
    long long i = (long long)b * cols + 32LL * c + lane;
    float v = x[i];
    float amax = fabsf(v);
    for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
    float id = amax == 0.0f ? 0.0f : 127.0f / amax;
    float prod = v * id;
    int qv = __float2int_rn(prod);
    x8[i] = (signed char)qv;
    int s = qv;
    for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    long long chunk = (long long)b * (cols / 32) + c;
    if (lane == 0) xd[chunk] = round_f16(amax / 127.0f);
    if (lane == 0) xs[chunk].x = s;
    if (lane == 16) xs[chunk].y = s;
}

// quantize_q8k: x [n][cols] f32 -> Q8 chunks as q4k's Q8_K (the K-quants'
// activation): per block of 256 values, with max the first value of largest
// magnitude, d = 1/(-127/max) (0 for an all-zero block) and q = min(127,
// round-half-even(x * (-127/max))); the 8 chunks of a block all carry its
// d. blockDim 32 (one warp per block, lane = element of each chunk), grid
// (cols/256, n).
extern "C" __global__ void quantize_q8k(const float *x, signed char *x8, float *xd, int2 *xs, long long cols) {
    int blk = blockIdx.x, b = blockIdx.y, lane = threadIdx.x;
    long long base = (long long)b * cols + 256LL * blk;
    float amax = 0.0f;
    int at = 0;
    for (int k = 0; k < 8; k++) {
        float a = fabsf(x[base + 32 * k + lane]);
        if (a > amax) {
            amax = a;
            at = 32 * k + lane;
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        float a = __shfl_xor_sync(0xffffffffu, amax, o);
        int j = __shfl_xor_sync(0xffffffffu, at, o);
        if (a > amax || (a == amax && j < at)) {
            amax = a;
            at = j;
        }
    }
    float iscale = amax == 0.0f ? 0.0f : -127.0f / x[base + at];
    float d = amax == 0.0f ? 0.0f : 1.0f / iscale;
    long long chunk = (long long)b * (cols / 32) + 8LL * blk;
    for (int k = 0; k < 8; k++) {
        long long i = base + 32 * k + lane;
        float prod = iscale * x[i];
        int qv = __float2int_rn(prod);
        qv = qv > 127 ? 127 : qv;
        x8[i] = (signed char)qv;
        int s = qv;
        for (int o = 8; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
        if (lane == 0) xd[chunk + k] = d;
        if (lane == 0) xs[chunk + k].x = s;
        if (lane == 16) xs[chunk + k].y = s;
    }
}

// store_rows sums each of the nb batch rows' per-lane partials over the
// warp and stores y[b0+j][r] (+ bias[r]) from lane 0: the end of gemv_q
// and gemv_f.
__device__ __forceinline__ void store_rows(const float acc[GEMV_ROWS], int nb, int b0, long long rows, long long r,
                                           int lane, const float *bias, float *y) {
    UNROLL
    for (int j = 0; j < GEMV_ROWS; j++) {
        if (j >= nb) break;
        float v = warp_sum(acc[j]);
        if (lane == 0) {
            if (bias) v += bias[r];
            y[(long long)(b0 + j) * rows + r] = v;
        }
    }
}

// gemv_q<T>: y[b][r] = W[r]·x_b (+ bias[r] when bias is not null) for the
// n rows b of the batch.
template <int T>
__device__ void gemv_q(const u8 *w, long long row_bytes, long long rows, long long cols, long long n,
                       const signed char *x8, const float *xd, const int2 *xs,
                       const float *bias, float *y) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= rows) return;
    int b0 = blockIdx.y * GEMV_ROWS, lane = threadIdx.x;
    int nb = (int)(n - b0 < GEMV_ROWS ? n - b0 : GEMV_ROWS);
    long long chunks = cols / 32;
    const u8 *row = w + r * row_bytes;
    float acc[GEMV_ROWS];
    for (int j = 0; j < GEMV_ROWS; j++) acc[j] = 0.0f;
    for (long long c = lane; c < chunks; c += 32) {
        u32 q[8];
        float sc[2], off[2];
        unpack32<T>(row, (int)c, q, sc, off);
        UNROLL
        for (int j = 0; j < GEMV_ROWS; j++) {
            if (j >= nb) break;
            long long b = b0 + j;
            const int *qa = (const int *)(x8 + b * cols + 32 * c);
            int lo = 0, hi = 0;
            for (int k = 0; k < 4; k++) lo = dp4a((int)q[k], qa[k], lo);
            for (int k = 4; k < 8; k++) hi = dp4a((int)q[k], qa[k], hi);
            float da = xd[b * chunks + c];
            int2 s = xs[b * chunks + c];
            acc[j] += da * (sc[0] * (float)lo + sc[1] * (float)hi + off[0] * (float)s.x + off[1] * (float)s.y);
        }
    }
    store_rows(acc, nb, b0, rows, r, lane, bias, y);
}

#define GEMV_Q(name, T)                                                                              \
    extern "C" __global__ void name(const u8 *w, long long row_bytes, long long rows, long long cols, \
                                    long long n, const signed char *x8, const float *xd,             \
                                    const int2 *xs, const float *bias, float *y) {                   \
        gemv_q<T>(w, row_bytes, rows, cols, n, x8, xd, xs, bias, y);                                 \
    }

GEMV_Q(gemv_q4_0, T_Q4_0)
GEMV_Q(gemv_q4_1, T_Q4_1)
GEMV_Q(gemv_q5_0, T_Q5_0)
GEMV_Q(gemv_q5_1, T_Q5_1)
GEMV_Q(gemv_q8_0, T_Q8_0)
GEMV_Q(gemv_q4_k, T_Q4_K)
GEMV_Q(gemv_q5_k, T_Q5_K)
GEMV_Q(gemv_q6_k, T_Q6_K)

// gemv_f<T>: as gemv_q with the activations in f32 (x [n][cols]),
// rounded to the weight's type for f16 and bf16 as the CPU forward does
// (q4k.VecDotType).
template <int T>
__device__ void gemv_f(const u8 *w, long long row_bytes, long long rows, long long cols, long long n,
                       const float *x, const float *bias, float *y) {
    long long r = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    if (r >= rows) return;
    int b0 = blockIdx.y * GEMV_ROWS, lane = threadIdx.x;
    int nb = (int)(n - b0 < GEMV_ROWS ? n - b0 : GEMV_ROWS);
    const u8 *row = w + r * row_bytes;
    float acc[GEMV_ROWS];
    for (int j = 0; j < GEMV_ROWS; j++) acc[j] = 0.0f;
    for (long long e = lane; e < cols; e += 32) {
        float wv = wf<T>(row, e);
        UNROLL
        for (int j = 0; j < GEMV_ROWS; j++) {
            if (j >= nb) break;
            float xv = x[(long long)(b0 + j) * cols + e];
            if (T == T_F16) xv = round_f16(xv);
            if (T == T_BF16) xv = round_bf16(xv);
            acc[j] += wv * xv;
        }
    }
    store_rows(acc, nb, b0, rows, r, lane, bias, y);
}

#define GEMV_F(name, T)                                                                              \
    extern "C" __global__ void name(const u8 *w, long long row_bytes, long long rows, long long cols, \
                                    long long n, const float *x, const float *bias, float *y) {      \
        gemv_f<T>(w, row_bytes, rows, cols, n, x, bias, y);                                          \
    }

GEMV_F(gemv_f32, T_F32)
GEMV_F(gemv_f16, T_F16)
GEMV_F(gemv_bf16, T_BF16)

// embed_<type>: x[b] = row tokens[b] of the embedding, dequantized.
// blockDim 32, grid (ceil(cols/32), n): thread = one weight of chunk blockIdx.x.
template <int T>
__device__ void embed(const u8 *w, long long row_bytes, long long cols, const int *tokens, float *x) {
    int c = blockIdx.x, b = blockIdx.y, lane = threadIdx.x;
    const u8 *row = w + (long long)tokens[b] * row_bytes;
    long long e = 32LL * c + lane;
    if (e >= cols) return;
    float v;
    if (T == T_F32 || T == T_F16 || T == T_BF16) {
        v = wf<T>(row, e);
    } else {
        u32 q[8];
        float sc[2], off[2];
        unpack32<T>(row, c, q, sc, off);
        int h = lane >> 4;
        int qv = (int)(signed char)((q[lane >> 2] >> (8 * (lane & 3))) & 255);
        v = sc[h] * (float)qv + off[h];
    }
    x[(long long)b * cols + e] = v;
}

#define EMBED(name, T)                                                                                  \
    extern "C" __global__ void name(const u8 *w, long long row_bytes, long long cols, const int *tokens, \
                                    float *x) {                                                         \
        embed<T>(w, row_bytes, cols, tokens, x);                                                        \
    }

EMBED(embed_f32, T_F32)
EMBED(embed_f16, T_F16)
EMBED(embed_bf16, T_BF16)
EMBED(embed_q4_0, T_Q4_0)
EMBED(embed_q4_1, T_Q4_1)
EMBED(embed_q5_0, T_Q5_0)
EMBED(embed_q5_1, T_Q5_1)
EMBED(embed_q8_0, T_Q8_0)
EMBED(embed_q4_k, T_Q4_K)
EMBED(embed_q5_k, T_Q5_K)
EMBED(embed_q6_k, T_Q6_K)

#endif // __CUDACC_RTC__ || KERNEL_EMU
