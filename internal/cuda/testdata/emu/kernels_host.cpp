// Runs every kernel of cuda/kernels on the emulator (emu.h) and checks it
// against a plain host reference. Prints one line per check; exits 1 if
// any fails. Built and run by cuda/emu_test.go.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "../../kernels/gemv.cu" // the unpacking helpers serve as the dequantization reference

extern "C" {
void rmsnorm(const float *x, const float *w, float *y, long long cols, float eps);
void rope_norm(float *x, long long heads, long long head_dim, const long long *rows, long long dims,
               float theta_scale, float freq_scale, const float *factors, float mscale, long long yarn, float corr0,
               float corr1);
void rope_neox(float *x, long long heads, long long head_dim, const long long *rows, long long dims,
               float theta_scale, float freq_scale, const float *factors, float mscale, long long yarn, float corr0,
               float corr1);
void kv_write(const float *k, const float *v, const long long *rows, long long layer, long long kv_dim);
void attention(const float *q, const long long *rows, long long layer, float *out, float *scores, long long heads,
               long long kv_heads, long long head_dim, long long score_stride, float scale, long long window);
void swiglu(float *g, const float *u, long long len);
void geglu(float *g, const float *u, long long len);
void scale(float *x, float s, long long len);
void softcap(float *x, float cap, long long len);
void moe_add(float *x, const float *y, const int *rows, const float *w, long long cols);
void add(float *x, const float *y, long long len);
void argmax(const float *x, long long len, int *out);
void gather_rows(const float *x, const int *sel, float *y, long long cols);
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

// same_bits fails unless got and want hold the same float bits (prints
// only a failure: it runs once per row of every batched product).
static void same_bits(const std::string &name, const std::vector<float> &got, const std::vector<float> &want) {
    bool ok = got.size() == want.size() && memcmp(got.data(), want.data(), 4 * got.size()) == 0;
    if (!ok) {
        printf("FAIL %s: not bit-identical\n", name.c_str());
        failures++;
    }
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

typedef void (*GemvQ)(const u8 *, long long, long long, long long, long long, const signed char *, const float *,
                      const int2 *, const float *, float *);
typedef void (*GemvF)(const u8 *, long long, long long, long long, long long, const float *, const float *, float *);

// gemv_case checks a weight type's product on a batch of n = 11 rows
// (two blocks of GEMV_ROWS, the second partial) against the reference,
// every row's output against that row multiplied alone (bit for bit),
// and the embedding lookup.
template <int T>
static void gemv_case(const TypeInfo &ti, GemvQ gq, GemvF gf, void (*emb)(const u8 *, long long, long long, const int *, float *)) {
    const int rows = 11, cols = 512, n = 11;
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
        emu_launch(d3((rows + 3) / 4, (n + GEMV_ROWS - 1) / GEMV_ROWS), d3(32, 4),
                   [&] { gq(w.data(), rb, rows, cols, n, x8.data(), xd.data(), xs.data(), bias.data(), y.data()); });
        for (int b = 0; b < n; b++) {
            std::vector<float> alone(rows);
            emu_launch(d3((rows + 3) / 4), d3(32, 4), [&] {
                gq(w.data(), rb, rows, cols, 1, &x8[(size_t)b * cols], &xd[(size_t)b * cols / 32],
                   &xs[(size_t)b * cols / 32], bias.data(), alone.data());
            });
            same_bits(std::string("gemv_") + ti.name + " row " + std::to_string(b) + " alone", alone,
                      std::vector<float>(&y[(size_t)b * rows], &y[(size_t)(b + 1) * rows]));
        }
    } else {
        // f16 and bf16 weights multiply activations rounded to their type.
        for (auto &v : xin) v = T == T_F16 ? round_f16(v) : T == T_BF16 ? round_bf16(v) : v;
        emu_launch(d3((rows + 3) / 4, (n + GEMV_ROWS - 1) / GEMV_ROWS), d3(32, 4),
                   [&] { gf(w.data(), rb, rows, cols, n, x.data(), bias.data(), y.data()); });
        for (int b = 0; b < n; b++) {
            std::vector<float> alone(rows);
            emu_launch(d3((rows + 3) / 4), d3(32, 4),
                       [&] { gf(w.data(), rb, rows, cols, 1, &x[(size_t)b * cols], bias.data(), alone.data()); });
            same_bits(std::string("gemv_") + ti.name + " row " + std::to_string(b) + " alone", alone,
                      std::vector<float>(&y[(size_t)b * rows], &y[(size_t)(b + 1) * rows]));
        }
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
    std::vector<int> toks = {7, 0, 10, 3, 3, 1, 2, 9, 8, 4, 5};
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

// test_rope: the first dims of each head of 64 rotated (all, or 48 of
// them: partial rotary), with rope_freqs-style factors or not, under YaRN
// (correction dims 6 and 20, mscale 1.2) or a plain attn_factor of 1.19 or
// none.
static void test_rope(bool neox, bool factors, int dims, bool yarn, float mscale) {
    const int heads = 3, hd = 64, n = 2, start = 5;
    const float corr0 = 6, corr1 = 20;
    float ts = powf(10000.0f, -2.0f / dims), fs = 0.5f;
    std::vector<float> x = rvec((size_t)n * heads * hd), want = x, f(dims / 2);
    for (auto &v : f) v = 1 + (float)(rng() % 4);
    for (int b = 0; b < n; b++)
        for (int h = 0; h < heads; h++)
            for (int p = 0; p < dims / 2; p++) {
                double theta = (double)(start + b) * pow((double)ts, p);
                if (factors) theta /= f[p];
                double t = theta * fs;
                if (yarn) {
                    double r = 1 - std::min(1.0, std::max(0.0, (double)(p - corr0) / (corr1 - corr0)));
                    t = t * (1 - r) + theta * r;
                }
                float *hx = &want[(b * heads + h) * hd];
                int a = neox ? p : 2 * p, c = neox ? p + dims / 2 : 2 * p + 1;
                float x0 = hx[a], x1 = hx[c];
                hx[a] = (float)(mscale * (x0 * cos(t) - x1 * sin(t)));
                hx[c] = (float)(mscale * (x0 * sin(t) + x1 * cos(t)));
            }
    std::vector<long long> rows;
    for (int b = 0; b < n; b++) rows.insert(rows.end(), {0, 0, start + b, 0});
    emu_launch(d3(heads, n), d3((dims / 2 + 31) / 32 * 32), [&] {
        (neox ? rope_neox : rope_norm)(x.data(), heads, hd, rows.data(), dims, ts, fs, factors ? f.data() : nullptr,
                                       mscale, yarn, corr0, corr1);
    });
    check(std::string(neox ? "rope_neox" : "rope_norm") + (factors ? " with factors" : "") +
              (dims < hd ? " partial" : "") + (yarn ? " yarn" : "") + (mscale != 1 ? " mscale" : ""),
          x, want, 1e-4f);
}

// test_attention runs one pass of two sequences' rows: sequence A (cache
// capacity 16, 5 held) gets 3 new rows, sequence B (capacity 8, 2 held) 1,
// interleaved A B A A in the pass, in layer 1 of two-layer caches.
static void test_attention(int window) {
    const int heads = 4, kvh = 2, hd = 64, kvd = kvh * hd, layers = 2, layer = 1, stride = 16;
    float scale = 1.0f / sqrtf((float)hd);
    struct Seq {
        int cap, held;
        std::vector<unsigned short> cache;
        std::vector<float> kall, vall; // every position's key and value, f32
    } seqs[2] = {{16, 5, {}, {}, {}}, {8, 2, {}, {}, {}}};
    const int which[] = {0, 1, 0, 0}, n = 4;
    for (auto &q : seqs) {
        q.cache.assign((size_t)layers * 2 * q.cap * kvd, 0);
        q.kall = rvec((size_t)q.cap * kvd), q.vall = rvec((size_t)q.cap * kvd);
        unsigned short *kc = &q.cache[(size_t)2 * layer * q.cap * kvd], *vc = kc + (size_t)q.cap * kvd;
        for (int i = 0; i < q.held * kvd; i++) kc[i] = emu_f2h(q.kall[i]), vc[i] = emu_f2h(q.vall[i]);
    }
    std::vector<long long> rows;
    std::vector<float> k((size_t)n * kvd), v((size_t)n * kvd);
    int next[2] = {seqs[0].held, seqs[1].held};
    std::vector<int> pos(n);
    for (int b = 0; b < n; b++) {
        Seq &q = seqs[which[b]];
        pos[b] = next[which[b]]++;
        rows.insert(rows.end(), {(long long)(uintptr_t)q.cache.data(), q.cap, pos[b], 0});
        memcpy(&k[(size_t)b * kvd], &q.kall[(size_t)pos[b] * kvd], 4 * kvd);
        memcpy(&v[(size_t)b * kvd], &q.vall[(size_t)pos[b] * kvd], 4 * kvd);
    }
    emu_launch(d3((kvd + 255) / 256, n), d3(256), [&] { kv_write(k.data(), v.data(), rows.data(), layer, kvd); });
    std::vector<float> kgot, kwant;
    for (int s = 0; s < 2; s++) {
        Seq &q = seqs[s];
        const unsigned short *kc = &q.cache[(size_t)2 * layer * q.cap * kvd], *vc = kc + (size_t)q.cap * kvd;
        for (int i = 0; i < next[s] * kvd; i++) {
            kgot.push_back(emu_h2f(kc[i])), kwant.push_back(q.kall[i]);
            kgot.push_back(emu_h2f(vc[i])), kwant.push_back(q.vall[i]);
        }
        for (int i = 0; i < q.cap * kvd; i++) // layer 0 untouched
            if (q.cache[i] != 0) kgot.push_back(1), kwant.push_back(0);
    }
    check("kv_write (two sequences, layer 1)", kgot, kwant, 1e-3f);
    std::vector<float> qv = rvec((size_t)n * heads * hd), out((size_t)n * heads * hd), scores((size_t)n * heads * stride);
    emu_launch(d3(heads, n), d3(128), [&] {
        attention(qv.data(), rows.data(), layer, out.data(), scores.data(), heads, kvh, hd, stride, scale, window);
    });
    std::vector<float> want((size_t)n * heads * hd);
    for (int b = 0; b < n; b++) {
        Seq &q = seqs[which[b]];
        const unsigned short *kc = &q.cache[(size_t)2 * layer * q.cap * kvd], *vc = kc + (size_t)q.cap * kvd;
        for (int h = 0; h < heads; h++) {
            int g = h / (heads / kvh), len = pos[b] + 1;
            int first = window > 0 && len > window ? len - window : 0;
            std::vector<double> p(len);
            double m = -1e30, sum = 0;
            for (int t = first; t < len; t++) {
                double s = 0;
                for (int d = 0; d < hd; d++)
                    s += (double)emu_h2f(emu_f2h(qv[(b * heads + h) * hd + d])) * emu_h2f(kc[t * kvd + g * hd + d]);
                p[t] = s * scale;
                m = std::max(m, p[t]);
            }
            for (int t = first; t < len; t++) sum += (p[t] = exp(p[t] - m));
            for (int t = first; t < len; t++) p[t] = emu_h2f(emu_f2h((float)(p[t] / sum))); // f16 probabilities, as the CPU forward
            for (int d = 0; d < hd; d++) {
                double o = 0;
                for (int t = first; t < len; t++) o += p[t] * emu_h2f(vc[t * kvd + g * hd + d]);
                want[(b * heads + h) * hd + d] = (float)o;
            }
        }
    }
    check(std::string("attention (GQA, causal, two sequences in one pass") + (window ? ", window 3)" : ")"), out, want,
          1e-4f);
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
    std::vector<float> gg = rvec(len, 4), gu = rvec(len), gwant_(len);
    gg[0] = -12, gg[1] = 11, gg[2] = -10, gg[3] = 10;
    for (int i = 0; i < len; i++) {
        float v = gg[i];
        if (v <= -10) gwant_[i] = 0;
        else if (v >= 10) gwant_[i] = v * gu[i];
        else {
            double xr = emu_h2f(emu_f2h(v));
            double ge = 0.5 * xr * (1 + tanh(0.7978845608028654 * xr * (1 + 0.044715 * xr * xr)));
            gwant_[i] = emu_h2f(emu_f2h((float)ge)) * gu[i];
        }
    }
    emu_launch(d3((len + 255) / 256), d3(256), [&] { geglu(gg.data(), gu.data(), len); });
    check("geglu", gg, gwant_, 1e-3f);
    std::vector<float> sx = rvec(len, 20), swant(len), cx = sx, cwant(len);
    for (int i = 0; i < len; i++) swant[i] = sx[i] * 16, cwant[i] = (float)(tanh(cx[i] / 30.0) * 30);
    emu_launch(d3((len + 255) / 256), d3(256), [&] { scale(sx.data(), 16, len); });
    check("scale", sx, swant, 0);
    emu_launch(d3((len + 255) / 256), d3(256), [&] { softcap(cx.data(), 30, len); });
    check("softcap", cx, cwant, 1e-6f);
    {
        const int mcols = 300;
        std::vector<float> mx = rvec((size_t)4 * mcols), my = rvec((size_t)2 * mcols), mwant = mx, mw = {0.25f, 0.75f};
        std::vector<int> mrows = {3, 0};
        for (int j = 0; j < 2; j++)
            for (int i = 0; i < mcols; i++) mwant[(size_t)mrows[j] * mcols + i] += my[(size_t)j * mcols + i] * mw[j];
        emu_launch(d3((mcols + 255) / 256, 2), d3(256), [&] { moe_add(mx.data(), my.data(), mrows.data(), mw.data(), mcols); });
        check("moe_add", mx, mwant, 1e-6f);
    }
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
    const int cols = 300;
    std::vector<float> hs = rvec((size_t)5 * cols), gathered((size_t)2 * cols), gwant;
    std::vector<int> sel = {4, 1};
    for (int j : sel) gwant.insert(gwant.end(), &hs[(size_t)j * cols], &hs[(size_t)(j + 1) * cols]);
    emu_launch(d3((cols + 255) / 256, 2), d3(256), [&] { gather_rows(hs.data(), sel.data(), gathered.data(), cols); });
    check("gather_rows", gathered, gwant, 0);
}

int main() {
    test_quantize();
    test_rmsnorm();
    for (bool neox : {false, true}) {
        test_rope(neox, false, 64, false, 1);
        test_rope(neox, true, 64, false, 1);
        test_rope(neox, false, 48, false, 1.19f);
        test_rope(neox, true, 64, true, 1.2f);
        test_rope(neox, false, 48, true, 1.2f);
    }
    test_attention(0);
    test_attention(3);
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
