// Host harness for cuda/unpack_test.go: runs the unpacking helpers of
// kernels/gemv.cu on the CPU, as the gemv and embed kernels use them.
//
// stdin:  u32 type, u32 rows, u32 cols, rows*RowSize(cols) weight bytes,
//         cols f32 activations.
// stdout: rows*cols f32 weights as the embed kernel decodes them, then
//         rows f32 products as the gemv kernels compute them (integer
//         types: the activations encoded to Q8 chunks, dp4a per half).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "../kernels/gemv.cu"

template <int T>
static void run(const u8 *w, long rb, int rows, int cols, const float *x, float *deq, float *dot) {
    const bool isf = T == T_F32 || T == T_F16 || T == T_BF16;
    int chunks = cols / 32;
    std::vector<signed char> a8(cols);
    std::vector<float> ad(chunks);
    std::vector<int> s0(chunks), s1(chunks);
    for (int c = 0; c < chunks; c++) { // quantize_q8
        float amax = 0;
        for (int i = 0; i < 32; i++) amax = fmaxf(amax, fabsf(x[32 * c + i]));
        float d = amax / 127.0f;
        s0[c] = s1[c] = 0;
        for (int i = 0; i < 32; i++) {
            int q = d == 0.0f ? 0 : (int)nearbyintf(x[32 * c + i] / d);
            a8[32 * c + i] = (signed char)q;
            (i < 16 ? s0[c] : s1[c]) += q;
        }
        ad[c] = d;
    }
    for (int r = 0; r < rows; r++) {
        const u8 *row = w + r * rb;
        float acc = 0;
        for (int c = 0; c < chunks; c++) {
            if (isf) {
                for (int i = 0; i < 32; i++) {
                    float v = wf<T>(row, 32 * c + i);
                    deq[r * cols + 32 * c + i] = v;
                    acc += v * x[32 * c + i];
                }
                continue;
            }
            u32 q[8];
            float sc[2], off[2];
            unpack32<T>(row, c, q, sc, off);
            for (int i = 0; i < 32; i++) {
                int qv = (int)(signed char)((q[i >> 2] >> (8 * (i & 3))) & 255);
                deq[r * cols + 32 * c + i] = sc[i >> 4] * (float)qv + off[i >> 4];
            }
            int qa[8];
            memcpy(qa, &a8[32 * c], 32);
            int lo = 0, hi = 0;
            for (int k = 0; k < 4; k++) lo = dp4a((int)q[k], qa[k], lo);
            for (int k = 4; k < 8; k++) hi = dp4a((int)q[k], qa[k], hi);
            acc += ad[c] * (sc[0] * (float)lo + sc[1] * (float)hi + off[0] * (float)s0[c] + off[1] * (float)s1[c]);
        }
        dot[r] = acc;
    }
}

int main() {
    u32 hdr[3];
    if (fread(hdr, 4, 3, stdin) != 3) return 2;
    int typ = (int)hdr[0], rows = (int)hdr[1], cols = (int)hdr[2];
    long bpb, wpb; // bytes and weights per block
    switch (typ) {
    case T_F32: bpb = 4, wpb = 1; break;
    case T_F16: case T_BF16: bpb = 2, wpb = 1; break;
    case T_Q4_0: bpb = 18, wpb = 32; break;
    case T_Q4_1: bpb = 20, wpb = 32; break;
    case T_Q5_0: bpb = 22, wpb = 32; break;
    case T_Q5_1: bpb = 24, wpb = 32; break;
    case T_Q8_0: bpb = 34, wpb = 32; break;
    case T_Q4_K: bpb = 144, wpb = 256; break;
    case T_Q5_K: bpb = 176, wpb = 256; break;
    case T_Q6_K: bpb = 210, wpb = 256; break;
    default: return 3;
    }
    long rb = cols / wpb * bpb;
    std::vector<u8> w(rb * rows);
    std::vector<float> x(cols), deq((size_t)rows * cols), dot(rows);
    if (fread(w.data(), 1, w.size(), stdin) != w.size() || fread(x.data(), 4, cols, stdin) != (size_t)cols) return 2;
    switch (typ) {
#define CASE(T) case T: run<T>(w.data(), rb, rows, cols, x.data(), deq.data(), dot.data()); break;
        CASE(T_F32) CASE(T_F16) CASE(T_BF16) CASE(T_Q4_0) CASE(T_Q4_1) CASE(T_Q5_0)
        CASE(T_Q5_1) CASE(T_Q8_0) CASE(T_Q4_K) CASE(T_Q5_K) CASE(T_Q6_K)
    }
    fwrite(deq.data(), 4, deq.size(), stdout);
    fwrite(dot.data(), 4, dot.size(), stdout);
    return 0;
}
