// Runs every kernel of cuda/kernels on the emulator (emu.h) and checks it
// against a plain host reference. Prints one line per check; exits 1 if
// any fails. Built and run by cuda/emu_test.go.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/gemv.cu" // the unpacking helpers serve as the dequantization reference

extern "C" {
void rmsnorm(const float *x, const float *w, float *y, long long cols, float eps);
void rope_norm(float *x, long long heads, long long head_dim, long long start, float theta_scale, float freq_scale,
               const float *factors);
void rope_neox(float *x, long long heads, long long head_dim, long long start, float theta_scale, float freq_scale,
               const float *factors);
void kv_write(const float *k, const float *v, unsigned short *kc, unsigned short *vc, long long kv_dim, long long start);
void attention(const float *q, const unsigned short *kc, const unsigned short *vc, float *out, float *scores,
               long long heads, long long kv_heads, long long head_dim, long long start, long long capacity, float scale);
void swiglu(float *g, const float *u, long long len);
void add(float *x, const float *y, long long len);
void argmax(const float *x, long long len, int *out);
}

static int failures = 0;
static std::mt19937 rng(7);

static float rnd() { return std::normal_distribution<float>(0.0f, 1.0f)(rng); }

static std::vector<float> rvec(size_t n, float scale = 1) {
    std::vector<float> v(n);
    for (auto &x : v) x = rnd() * scale;
    return v;
}

// check compares got with want: |got-want| <= tol*(1+|want|) everywhere.
static void check(const std::string &name, const std::vector<float> &got, const std::vector<float> &want, float tol) {
    float worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < want.size(); i++) {
        float e = fabsf(got[i] - want[i]) / (1 + fabsf(want[i]));
        if (!(e <= worst)) worst = e, at = i;
    }
    bool ok = got.size() == want.size() && worst <= tol;
    printf("%s %s: worst relative error %.3g at %zu (got %g, want %g)\n", ok ? "PASS" : "FAIL", name.c_str(), worst,
           at, got.empty() ? 0.0 : got[at], want.empty() ? 0.0 : want[at]);
    if (!ok) failures++;
}

static dim3 d3(unsigned x, unsigned y = 1) {
    dim3 d;
    d.x = x, d.y = y;
    return d;
}

struct TypeInfo {
    int t;
    const char *name;
    int bpb, wpb; // bytes and weights per block
    std::vector<int> f16s; // offsets of f16 scale fields in a block
};

// weights makes rows of random blocks with sane f16 scales.
static std::vector<u8> weights(const TypeInfo &ti, int rows, int cols) {
    std::vector<u8> w((size_t)rows * cols / ti.wpb * ti.bpb);
    if (ti.t == T_F32 || ti.t == T_F16 || ti.t == T_BF16) {
        for (size_t i = 0; i < (size_t)rows * cols; i++) {
            float v = rnd() * 0.1f;
            if (ti.t == T_F32) memcpy(&w[4 * i], &v, 4);
            if (ti.t == T_F16) {
                unsigned short h = emu_f2h(v);
                memcpy(&w[2 * i], &h, 2);
            }
            if (ti.t == T_BF16) {
                u32 u;
                memcpy(&u, &v, 4);
                unsigned short h = (unsigned short)(u >> 16);
                memcpy(&w[2 * i], &h, 2);
            }
        }
        return w;
    }
    for (auto &b : w) b = (u8)rng();
    for (size_t blk = 0; blk < w.size() / ti.bpb; blk++)
        for (int off : ti.f16s) {
            unsigned short h = emu_f2h(0.001f + 0.01f * (float)(rng() % 100) / 100);
            memcpy(&w[blk * ti.bpb + off], &h, 2);
        }
    return w;
}

template <int T> static float deq(const u8 *row, int i) {
    if (T == T_F32 || T == T_F16 || T == T_BF16) return wf<T>(row, i);
    u32 q[8];
    float sc[2], off[2];
    unpack32<T>(row, i / 32, q, sc, off);
    int l = i % 32;
    int qv = (int)(signed char)((q[l >> 2] >> (8 * (l & 3))) & 255);
    return sc[l >> 4] * (float)qv + off[l >> 4];
}

template <int T>
static void gemv_case(const TypeInfo &ti, void (*gq)(const u8 *, long long, long long, long long, const signed char *,
                                                     const float *, const int2 *, const float *, float *),
                      void (*gf)(const u8 *, long long, long long, long long, const float *, const float *, float *),
                      void (*emb)(const u8 *, long long, long long, const int *, float *)) {
    const int rows = 11, cols = 512, n = 3;
    long long rb = cols / ti.wpb * ti.bpb;
    std::vector<u8> w = weights(ti, rows, cols);
    std::vector<float> x = rvec((size_t)n * cols), bias = rvec(rows), y((size_t)n * rows), want((size_t)n * rows);
    std::vector<float> xin = x; // the activations the products see
    if (gq) {
        // The reference multiplies by the kernel's own Q8 encoding (checked
        // in quantize_q8), so only the product itself is compared.
        std::vector<signed char> x8((size_t)n * cols);
        std::vector<float> xd((size_t)n * cols / 32);
        std::vector<int2> xs((size_t)n * cols / 32);
        emu_launch(d3(cols / 32, n), d3(32), [&] { quantize_q8(x.data(), x8.data(), xd.data(), xs.data(), cols); });
        for (size_t i = 0; i < xin.size(); i++) xin[i] = xd[i / 32] * x8[i];
        emu_launch(d3((rows + 3) / 4, n), d3(32, 4),
                   [&] { gq(w.data(), rb, rows, cols, x8.data(), xd.data(), xs.data(), bias.data(), y.data()); });
    } else {
        // f16 and bf16 weights multiply activations rounded to their type.
        for (auto &v : xin) v = T == T_F16 ? round_f16(v) : T == T_BF16 ? round_bf16(v) : v;
        emu_launch(d3((rows + 3) / 4, n), d3(32, 4), [&] { gf(w.data(), rb, rows, cols, x.data(), bias.data(), y.data()); });
    }
    // Errors relative to the sum of |terms| of each product.
    std::vector<float> got_n((size_t)n * rows), want_n((size_t)n * rows);
    for (int b = 0; b < n; b++)
        for (int r = 0; r < rows; r++) {
            double s = bias[r], mag = fabs(bias[r]);
            for (int i = 0; i < cols; i++) {
                double t = (double)deq<T>(&w[r * rb], i) * xin[b * cols + i];
                s += t, mag += fabs(t);
            }
            want_n[b * rows + r] = (float)(s / mag);
            got_n[b * rows + r] = (float)(y[b * rows + r] / mag);
        }
    check(std::string("gemv_") + ti.name + " (error / sum of |terms|)", got_n, want_n, 1e-5f);
    std::vector<int> toks = {7, 0, 10};
    std::vector<float> e((size_t)n * cols), ewant((size_t)n * cols);
    for (int b = 0; b < n; b++)
        for (int i = 0; i < cols; i++) ewant[b * cols + i] = deq<T>(&w[toks[b] * rb], i);
    emu_launch(d3(cols / 32, n), d3(32), [&] { emb(w.data(), rb, cols, toks.data(), e.data()); });
    check(std::string("embed_") + ti.name, e, ewant, 1e-6f);
}

static void test_quantize() {
    const int cols = 96, n = 2;
    std::vector<float> x = rvec((size_t)n * cols);
    x[5] = 0; // a zero chunk below
    for (int i = 64; i < 96; i++) x[i] = 0;
    std::vector<signed char> x8((size_t)n * cols);
    std::vector<float> xd((size_t)n * cols / 32);
    std::vector<int2> xs((size_t)n * cols / 32);
    emu_launch(d3(cols / 32, n), d3(32), [&] { quantize_q8(x.data(), x8.data(), xd.data(), xs.data(), cols); });
    std::vector<float> got, want;
    for (int c = 0; c < n * cols / 32; c++) {
        int s0 = 0, s1 = 0;
        for (int i = 0; i < 32; i++) {
            got.push_back(xd[c] * x8[32 * c + i]);
            want.push_back(x[32 * c + i]);
            (i < 16 ? s0 : s1) += x8[32 * c + i];
        }
        got.push_back((float)xs[c].x), want.push_back((float)s0);
        got.push_back((float)xs[c].y), want.push_back((float)s1);
    }
    check("quantize_q8", got, want, 0.02f);
}

static void test_rmsnorm() {
    const int cols = 288, n = 3;
    std::vector<float> x = rvec((size_t)n * cols), w = rvec(cols), y((size_t)n * cols), want((size_t)n * cols);
    for (int b = 0; b < n; b++) {
        double ss = 0;
        for (int i = 0; i < cols; i++) ss += (double)x[b * cols + i] * x[b * cols + i];
        float scale = 1.0f / sqrtf((float)(ss / cols) + 1e-5f);
        for (int i = 0; i < cols; i++) want[b * cols + i] = x[b * cols + i] * scale * w[i];
    }
    emu_launch(d3(n), d3(256), [&] { rmsnorm(x.data(), w.data(), y.data(), cols, 1e-5f); });
    check("rmsnorm", y, want, 1e-5f);
}

static void test_rope(bool neox, bool factors) {
    const int heads = 3, hd = 64, n = 2, start = 5;
    float ts = powf(10000.0f, -2.0f / hd), fs = 0.5f;
    std::vector<float> x = rvec((size_t)n * heads * hd), want = x, f(hd / 2);
    for (auto &v : f) v = 1 + (float)(rng() % 4);
    for (int b = 0; b < n; b++)
        for (int h = 0; h < heads; h++)
            for (int p = 0; p < hd / 2; p++) {
                double t = (double)(start + b) * pow((double)ts, p);
                if (factors) t /= f[p];
                t *= fs;
                float *hx = &want[(b * heads + h) * hd];
                int a = neox ? p : 2 * p, c = neox ? p + hd / 2 : 2 * p + 1;
                float x0 = hx[a], x1 = hx[c];
                hx[a] = (float)(x0 * cos(t) - x1 * sin(t));
                hx[c] = (float)(x0 * sin(t) + x1 * cos(t));
            }
    emu_launch(d3(heads, n), d3(hd / 2), [&] {
        (neox ? rope_neox : rope_norm)(x.data(), heads, hd, start, ts, fs, factors ? f.data() : nullptr);
    });
    check(std::string(neox ? "rope_neox" : "rope_norm") + (factors ? " with factors" : ""), x, want, 1e-4f);
}

static void test_attention() {
    const int heads = 4, kvh = 2, hd = 64, cap = 16, start = 5, n = 3, kvd = kvh * hd;
    float scale = 1.0f / sqrtf((float)hd);
    std::vector<unsigned short> kc((size_t)cap * kvd), vc((size_t)cap * kvd);
    std::vector<float> kall = rvec((size_t)(start + n) * kvd), vall = rvec((size_t)(start + n) * kvd);
    for (int i = 0; i < start * kvd; i++) kc[i] = emu_f2h(kall[i]), vc[i] = emu_f2h(vall[i]); // held positions
    std::vector<float> q = rvec((size_t)n * heads * hd), out((size_t)n * heads * hd), scores((size_t)n * heads * cap);
    emu_launch(d3((kvd + 255) / 256, n), d3(256),
               [&] { kv_write(&kall[start * kvd], &vall[start * kvd], kc.data(), vc.data(), kvd, start); });
    std::vector<float> kgot, kwant;
    for (int i = 0; i < (start + n) * kvd; i++) {
        kgot.push_back(emu_h2f(kc[i])), kwant.push_back(kall[i]);
        kgot.push_back(emu_h2f(vc[i])), kwant.push_back(vall[i]);
    }
    check("kv_write", kgot, kwant, 1e-3f);
    emu_launch(d3(heads, n), d3(128), [&] {
        attention(q.data(), kc.data(), vc.data(), out.data(), scores.data(), heads, kvh, hd, start, cap, scale);
    });
    std::vector<float> want((size_t)n * heads * hd);
    for (int b = 0; b < n; b++)
        for (int h = 0; h < heads; h++) {
            int g = h / (heads / kvh), len = start + b + 1;
            std::vector<double> p(len);
            double m = -1e30, sum = 0;
            for (int t = 0; t < len; t++) {
                double s = 0;
                for (int d = 0; d < hd; d++)
                    s += (double)emu_h2f(emu_f2h(q[(b * heads + h) * hd + d])) * emu_h2f(kc[t * kvd + g * hd + d]);
                p[t] = s * scale;
                m = std::max(m, p[t]);
            }
            for (auto &v : p) sum += (v = exp(v - m));
            for (auto &v : p) v = emu_h2f(emu_f2h((float)(v / sum))); // f16 probabilities, as the CPU forward
            for (int d = 0; d < hd; d++) {
                double o = 0;
                for (int t = 0; t < len; t++) o += p[t] * emu_h2f(vc[t * kvd + g * hd + d]);
                want[(b * heads + h) * hd + d] = (float)o;
            }
        }
    check("attention (GQA, causal, 3 tokens after 5 held)", out, want, 1e-4f);
}

static void test_elementwise() {
    const int len = 1000;
    std::vector<float> g = rvec(len), u = rvec(len), want(len);
    for (int i = 0; i < len; i++) want[i] = g[i] / (1 + expf(-g[i])) * u[i];
    emu_launch(d3((len + 255) / 256), d3(256), [&] { swiglu(g.data(), u.data(), len); });
    check("swiglu", g, want, 1e-5f);
    std::vector<float> x = rvec(len), y = rvec(len), sum(len);
    for (int i = 0; i < len; i++) sum[i] = x[i] + y[i];
    emu_launch(d3((len + 255) / 256), d3(256), [&] { add(x.data(), y.data(), len); });
    check("add", x, sum, 0);
    for (int n : {1, 31, 1000, 3000}) {
        std::vector<float> v = rvec(n);
        int want_i = (int)(rng() % n);
        v[want_i] = 100;
        if (n > 2) v[n - 1] = 100; // a tie: the lowest index wins
        int got = -1;
        emu_launch(d3(1), d3(1024), [&] { argmax(v.data(), n, &got); });
        int expect = want_i;
        check("argmax n=" + std::to_string(n), {(float)got}, {(float)expect}, 0);
    }
}

int main() {
    test_quantize();
    test_rmsnorm();
    test_rope(false, false);
    test_rope(true, false);
    test_rope(false, true);
    test_rope(true, true);
    test_attention();
    test_elementwise();
    gemv_case<T_F32>({T_F32, "f32", 4, 1, {}}, nullptr, gemv_f32, embed_f32);
    gemv_case<T_F16>({T_F16, "f16", 2, 1, {}}, nullptr, gemv_f16, embed_f16);
    gemv_case<T_BF16>({T_BF16, "bf16", 2, 1, {}}, nullptr, gemv_bf16, embed_bf16);
    gemv_case<T_Q4_0>({T_Q4_0, "q4_0", 18, 32, {0}}, gemv_q4_0, nullptr, embed_q4_0);
    gemv_case<T_Q4_1>({T_Q4_1, "q4_1", 20, 32, {0, 2}}, gemv_q4_1, nullptr, embed_q4_1);
    gemv_case<T_Q5_0>({T_Q5_0, "q5_0", 22, 32, {0}}, gemv_q5_0, nullptr, embed_q5_0);
    gemv_case<T_Q5_1>({T_Q5_1, "q5_1", 24, 32, {0, 2}}, gemv_q5_1, nullptr, embed_q5_1);
    gemv_case<T_Q8_0>({T_Q8_0, "q8_0", 34, 32, {0}}, gemv_q8_0, nullptr, embed_q8_0);
    gemv_case<T_Q4_K>({T_Q4_K, "q4_k", 144, 256, {0, 2}}, gemv_q4_k, nullptr, embed_q4_k);
    gemv_case<T_Q5_K>({T_Q5_K, "q5_k", 176, 256, {0, 2}}, gemv_q5_k, nullptr, embed_q5_k);
    gemv_case<T_Q6_K>({T_Q6_K, "q6_k", 210, 256, {208}}, gemv_q6_k, nullptr, embed_q6_k);
    printf("%d failure(s)\n", failures);
    return failures ? 1 : 0;
}
