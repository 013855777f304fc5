//go:build cudaemu && !cuda

// The host kernel emulator's scheduler, and the C entry points the cudaemu
// backend (device_emu.go) calls: memory, copies and launches by name.
#include "testdata/emu/emu.cpp"
// Go's build cache does not hash files a cgo source #includes from another
// folder: after editing testdata/emu/*, change this line so that the
// package is rebuilt. emu revision 3 (per-row pass table, batched gemv).

#include <cstdint>
#include <cstdlib>
#include <map>
#include <string>

typedef unsigned char u8;
typedef unsigned short u16;
typedef long long ll;

extern "C" {
void quantize_q8(const float *, signed char *, float *, int2 *, ll);
void quantize_q8k(const float *, signed char *, float *, int2 *, ll);
#define GQ(n) void n(const u8 *, ll, ll, ll, ll, const signed char *, const float *, const int2 *, const float *, float *);
#define GF(n) void n(const u8 *, ll, ll, ll, ll, const float *, const float *, float *);
#define EM(n) void n(const u8 *, ll, ll, const int *, float *);
GQ(gemv_q4_0) GQ(gemv_q4_1) GQ(gemv_q5_0) GQ(gemv_q5_1) GQ(gemv_q8_0) GQ(gemv_q4_k) GQ(gemv_q5_k) GQ(gemv_q6_k)
GF(gemv_f32) GF(gemv_f16) GF(gemv_bf16)
EM(embed_f32) EM(embed_f16) EM(embed_bf16) EM(embed_q4_0) EM(embed_q4_1) EM(embed_q5_0) EM(embed_q5_1)
EM(embed_q8_0) EM(embed_q4_k) EM(embed_q5_k) EM(embed_q6_k)
void rmsnorm(const float *, const float *, float *, ll, float);
void rope_norm(float *, ll, ll, const ll *, ll, float, float, const float *, float, ll, float, float);
void rope_neox(float *, ll, ll, const ll *, ll, float, float, const float *, float, ll, float, float);
void kv_write(const float *, const float *, const ll *, ll, ll);
void attention(const float *, const ll *, ll, float *, float *, ll, ll, ll, ll, float, ll);
void swiglu(float *, const float *, ll);
void geglu(float *, const float *, ll);
void scale(float *, float, ll);
void softcap(float *, float, ll);
void moe_add(float *, const float *, const int *, const float *, ll);
void add(float *, const float *, ll);
void argmax(const float *, ll, int *);
void gather_rows(const float *, const int *, float *, ll);
}

namespace {
template <class T> T P(uint64_t a) { return (T)(uintptr_t)a; }
ll L(uint64_t a) { return (ll)a; }
float F(uint64_t a) {
    uint32_t u = (uint32_t)a;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

typedef std::function<void(const uint64_t *)> Call;

std::map<std::string, Call> table() {
    std::map<std::string, Call> t;
    t["quantize_q8"] = [](const uint64_t *a) {
        quantize_q8(P<const float *>(a[0]), P<signed char *>(a[1]), P<float *>(a[2]), P<int2 *>(a[3]), L(a[4]));
    };
    t["quantize_q8k"] = [](const uint64_t *a) {
        quantize_q8k(P<const float *>(a[0]), P<signed char *>(a[1]), P<float *>(a[2]), P<int2 *>(a[3]), L(a[4]));
    };
#define TQ(n)                                                                                                        \
    t[#n] = [](const uint64_t *a) {                                                                                  \
        n(P<const u8 *>(a[0]), L(a[1]), L(a[2]), L(a[3]), L(a[4]), P<const signed char *>(a[5]),                     \
          P<const float *>(a[6]), P<const int2 *>(a[7]), P<const float *>(a[8]), P<float *>(a[9]));                  \
    };
#define TF(n)                                                                                                        \
    t[#n] = [](const uint64_t *a) {                                                                                  \
        n(P<const u8 *>(a[0]), L(a[1]), L(a[2]), L(a[3]), L(a[4]), P<const float *>(a[5]), P<const float *>(a[6]),   \
          P<float *>(a[7]));                                                                                         \
    };
#define TE(n)                                                                                                        \
    t[#n] = [](const uint64_t *a) { n(P<const u8 *>(a[0]), L(a[1]), L(a[2]), P<const int *>(a[3]), P<float *>(a[4])); };
    TQ(gemv_q4_0) TQ(gemv_q4_1) TQ(gemv_q5_0) TQ(gemv_q5_1) TQ(gemv_q8_0) TQ(gemv_q4_k) TQ(gemv_q5_k) TQ(gemv_q6_k)
    TF(gemv_f32) TF(gemv_f16) TF(gemv_bf16)
    TE(embed_f32) TE(embed_f16) TE(embed_bf16) TE(embed_q4_0) TE(embed_q4_1) TE(embed_q5_0) TE(embed_q5_1)
    TE(embed_q8_0) TE(embed_q4_k) TE(embed_q5_k) TE(embed_q6_k)
    t["rmsnorm"] = [](const uint64_t *a) {
        rmsnorm(P<const float *>(a[0]), P<const float *>(a[1]), P<float *>(a[2]), L(a[3]), F(a[4]));
    };
    t["rope_norm"] = [](const uint64_t *a) {
        rope_norm(P<float *>(a[0]), L(a[1]), L(a[2]), P<const ll *>(a[3]), L(a[4]), F(a[5]), F(a[6]), P<const float *>(a[7]),
                  F(a[8]), L(a[9]), F(a[10]), F(a[11]));
    };
    t["rope_neox"] = [](const uint64_t *a) {
        rope_neox(P<float *>(a[0]), L(a[1]), L(a[2]), P<const ll *>(a[3]), L(a[4]), F(a[5]), F(a[6]), P<const float *>(a[7]),
                  F(a[8]), L(a[9]), F(a[10]), F(a[11]));
    };
    t["kv_write"] = [](const uint64_t *a) {
        kv_write(P<const float *>(a[0]), P<const float *>(a[1]), P<const ll *>(a[2]), L(a[3]), L(a[4]));
    };
    t["attention"] = [](const uint64_t *a) {
        attention(P<const float *>(a[0]), P<const ll *>(a[1]), L(a[2]), P<float *>(a[3]), P<float *>(a[4]), L(a[5]),
                  L(a[6]), L(a[7]), L(a[8]), F(a[9]), L(a[10]));
    };
    t["swiglu"] = [](const uint64_t *a) { swiglu(P<float *>(a[0]), P<const float *>(a[1]), L(a[2])); };
    t["geglu"] = [](const uint64_t *a) { geglu(P<float *>(a[0]), P<const float *>(a[1]), L(a[2])); };
    t["scale"] = [](const uint64_t *a) { scale(P<float *>(a[0]), F(a[1]), L(a[2])); };
    t["moe_add"] = [](const uint64_t *a) {
        moe_add(P<float *>(a[0]), P<const float *>(a[1]), P<const int *>(a[2]), P<const float *>(a[3]), L(a[4]));
    };
    t["softcap"] = [](const uint64_t *a) { softcap(P<float *>(a[0]), F(a[1]), L(a[2])); };
    t["add"] = [](const uint64_t *a) { add(P<float *>(a[0]), P<const float *>(a[1]), L(a[2])); };
    t["argmax"] = [](const uint64_t *a) { argmax(P<const float *>(a[0]), L(a[1]), P<int *>(a[2])); };
    t["gather_rows"] = [](const uint64_t *a) {
        gather_rows(P<const float *>(a[0]), P<const int *>(a[1]), P<float *>(a[2]), L(a[3]));
    };
    return t;
}
} // namespace

extern "C" {
uint64_t emu_alloc(uint64_t n) { return (uint64_t)(uintptr_t)calloc(n, 1); }
void emu_free(uint64_t p) { free((void *)(uintptr_t)p); }
void emu_htod(uint64_t dst, const void *src, uint64_t n) { memcpy((void *)(uintptr_t)dst, src, n); }
void emu_dtoh(void *dst, uint64_t src, uint64_t n) { memcpy(dst, (const void *)(uintptr_t)src, n); }
void emu_dtod(uint64_t dst, uint64_t src, uint64_t n) { memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n); }

// emu_launch_by_name runs kernel name; 0 on success, -1 for an unknown name.
int emu_launch_by_name(const char *name, int gx, int gy, int bx, int by, const uint64_t *args) {
    static const std::map<std::string, Call> t = table();
    auto it = t.find(name);
    if (it == t.end()) return -1;
    dim3 g, b;
    g.x = gx, g.y = gy, b.x = bx, b.y = by;
    const Call &call = it->second;
    emu_launch(g, b, [&] { call(args); });
    return 0;
}
}
