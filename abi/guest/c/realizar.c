/*
 * realizar.c — the C guest SDK for the realizar-host plugin ABI, version 1.
 * See realizar.h. Compile with -ffp-contract=off and without -ffast-math:
 * every floating-point operation below is one IEEE operation, in the order
 * written, exactly as abi (Go) performs it.
 */
#include "realizar.h"

/* ---- RNG ---- */

void realizar_rng_seed(realizar_rng *r, uint64_t seed) {
    uint64_t x = seed;
    for (int i = 0; i < 4; i++) {
        x += 0x9e3779b97f4a7c15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        r->s[i] = z ^ (z >> 31);
    }
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t realizar_rng_next(realizar_rng *r) {
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double realizar_rng_uniform(realizar_rng *r) {
    return (double)(realizar_rng_next(r) >> 11) * 0x1p-53;
}

/* ---- Exp ---- */

static inline double from_bits(uint64_t b) {
    union { uint64_t u; double d; } v = {b};
    return v.d;
}

static inline uint64_t to_bits(double d) {
    union { double d; uint64_t u; } v = {d};
    return v.u;
}

double realizar_exp(double x) { return realizar_exp_inline(x); }

/* ---- Log (fdlibm's e_log.c algorithm) ---- */

static const double
    ln2_hi = 6.93147180369123816490e-01, /* 0x3fe62e42fee00000 */
    ln2_lo = 1.90821492927058770002e-10, /* 0x3dea39ef35793c76 */
    Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01,
    Lg3 = 2.857142874366239149e-01, Lg4 = 2.222219843214978396e-01,
    Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
    Lg7 = 1.479819860511658591e-01;

double realizar_log(double x) {
    if (x != x || x < 0) return from_bits(0x7ff8000000000001ULL);
    if (x == 0) return from_bits(0xfff0000000000000ULL);
    if (x > 0x1.fffffffffffffp1023) return x;
    int32_t k = 0;
    if (x < 0x1p-1022) { /* subnormal: scale into the normal range */
        x = x * 0x1p54;
        k = -54;
    }
    uint64_t b = to_bits(x);
    k += (int32_t)(b >> 52) - 1023;
    double m = from_bits((b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL); /* [1, 2) */
    if (m > 0x1.6a09e667f3bcdp+0) { /* sqrt 2 */
        m = m * 0.5;
        k++;
    }
    double f = m - 1;
    double s = f / (2 + f);
    double z = s * s;
    double w = z * z;
    double t1 = w * (Lg2 + w * (Lg4 + w * Lg6));
    double t2 = z * (Lg1 + w * (Lg3 + w * (Lg5 + w * Lg7)));
    double R = t2 + t1;
    double hfsq = 0.5 * f * f;
    double kf = (double)k;
    return kf * ln2_hi - ((hfsq - (s * (hfsq + R) + kf * ln2_lo)) - f);
}

/* ---- order, softmax, draw ---- */

int realizar_before(int32_t ida, float la, int32_t idb, float lb) {
    int nana = la != la, nanb = lb != lb;
    if (nana != nanb) return nanb;
    if (!nana && la != lb) return la > lb;
    return ida < idb;
}

static void sift_down(int32_t *ids, float *logits, int32_t root, int32_t n) {
    for (;;) {
        int32_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && realizar_before(ids[child], logits[child], ids[child + 1], logits[child + 1]))
            child++;
        if (!realizar_before(ids[root], logits[root], ids[child], logits[child])) return;
        int32_t ti = ids[root]; ids[root] = ids[child]; ids[child] = ti;
        float tl = logits[root]; logits[root] = logits[child]; logits[child] = tl;
        root = child;
    }
}

void realizar_sort(int32_t *ids, float *logits, int32_t n) {
    if (n <= 32) {
        for (int32_t i = 1; i < n; i++) {
            int32_t id = ids[i];
            float l = logits[i];
            int32_t j = i;
            while (j > 0 && realizar_before(id, l, ids[j - 1], logits[j - 1])) {
                ids[j] = ids[j - 1];
                logits[j] = logits[j - 1];
                j--;
            }
            ids[j] = id;
            logits[j] = l;
        }
        return;
    }
    for (int32_t i = n / 2 - 1; i >= 0; i--) sift_down(ids, logits, i, n);
    for (int32_t end = n - 1; end > 0; end--) {
        int32_t ti = ids[0]; ids[0] = ids[end]; ids[end] = ti;
        float tl = logits[0]; logits[0] = logits[end]; logits[end] = tl;
        sift_down(ids, logits, 0, end);
    }
}

/* offer puts (id, l) into the heap ids/vals of size k (root = the entry
 * that sorts last) if it sorts before the root. */
static inline void offer(int32_t *ids, float *vals, int32_t k, int32_t id, float l) {
    if (realizar_before(id, l, ids[0], vals[0])) {
        ids[0] = id;
        vals[0] = l;
        sift_down(ids, vals, 0, k);
    }
}

int32_t realizar_select_top(const float *logits, int32_t n, int32_t k, int32_t *ids, float *vals) {
    if (k > n) k = n;
    if (k <= 0) return 0;
    for (int32_t i = 0; i < k; i++) {
        ids[i] = i;
        vals[i] = logits[i];
    }
    for (int32_t i = k / 2 - 1; i >= 0; i--) sift_down(ids, vals, i, k);
    int32_t i = k;
    /* Ids ascend, so an entry beats the root exactly when its logit is
     * greater (or the root is NaN and the entry is not). */
    for (; i + 8 <= n; i += 8) {
        float t = vals[0];
        const float *l = logits + i;
        if (t == t && !((l[0] > t) | (l[1] > t) | (l[2] > t) | (l[3] > t) |
                        (l[4] > t) | (l[5] > t) | (l[6] > t) | (l[7] > t)))
            continue;
        for (int32_t j = 0; j < 8; j++) offer(ids, vals, k, i + j, l[j]);
    }
    for (; i < n; i++) offer(ids, vals, k, i, logits[i]);
    realizar_sort(ids, vals, k);
    return k;
}

double realizar_softmax(double *probs, const float *logits, int32_t n, double temp) {
    if (n <= 0) return 0;
    double m = (double)logits[0];
    if (m != m || m < -0x1.fffffffffffffp1023) {
        for (int32_t i = 0; i < n; i++) probs[i] = 0;
        return 0;
    }
    double sum = 0;
    for (int32_t i = 0; i < n; i++) {
        float l = logits[i];
        if (l != l) {
            probs[i] = 0;
            continue;
        }
        double p = realizar_exp(((double)l - m) / temp);
        probs[i] = p;
        sum += p;
    }
    return sum;
}

int32_t realizar_draw(const double *probs, int32_t n, double sum, double u) {
    double target = u * sum;
    double cum = 0;
    int32_t last = 0;
    for (int32_t i = 0; i < n; i++) {
        cum += probs[i];
        if (target < cum) return i;
        if (probs[i] > 0) last = i;
    }
    return last;
}

/* ---- memory ---- */

#ifdef __wasm__
/* With -mbulk-memory clang lowers these builtins to the memory.fill and
 * memory.copy instructions, which the engine runs natively (a byte loop
 * would pay ABI §6's per-iteration cost for every byte). Natively, libc
 * provides them. */
void *memset(void *dst, int c, size_t n) {
    __builtin_memset(dst, c, n);
    return dst;
}

void *memcpy(void *dst, const void *src, size_t n) {
    __builtin_memcpy(dst, src, n);
    return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
    __builtin_memmove(dst, src, n);
    return dst;
}
#endif

int realizar_memeq(const void *a, const void *b, size_t n) {
    const uint8_t *x = a, *y = b;
    for (size_t i = 0; i < n; i++)
        if (x[i] != y[i]) return 0;
    return 1;
}

/* ---- parsing ---- */

static const double pow10_exact[23] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

int realizar_parse_f64(const uint8_t *s, int32_t n, double *out) {
    int32_t i = 0;
    int neg = 0;
    if (i < n && s[i] == '-') {
        neg = 1;
        i++;
    }
    uint64_t mant = 0;
    int32_t digits = 0, exp10 = 0, seen = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen++) {
        if (mant == 0 && s[i] == '0') continue;
        if (++digits > 19) return -1;
        mant = mant * 10 + (uint64_t)(s[i] - '0');
    }
    if (i < n && s[i] == '.') {
        i++;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, seen++) {
            exp10--;
            if (mant == 0 && s[i] == '0') continue;
            if (++digits > 19) return -1;
            mant = mant * 10 + (uint64_t)(s[i] - '0');
        }
    }
    if (!seen) return -1;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        int eneg = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) eneg = s[i++] == '-';
        int32_t e = 0, ed = 0;
        for (; i < n && s[i] >= '0' && s[i] <= '9'; i++, ed++) {
            if (e > 10000) return -1;
            e = e * 10 + (s[i] - '0');
        }
        if (!ed) return -1;
        exp10 += eneg ? -e : e;
    }
    if (i != n) return -1;
    double v;
    if (mant == 0) {
        v = 0;
    } else if (mant > (1ULL << 53)) {
        return -1;
    } else if (exp10 >= 0 && exp10 <= 22) {
        v = (double)mant * pow10_exact[exp10];
    } else if (exp10 < 0 && exp10 >= -22) {
        v = (double)mant / pow10_exact[-exp10];
    } else {
        return -1;
    }
    *out = neg ? -v : v;
    return 0;
}

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int32_t hex4(const uint8_t *s, int32_t n, int32_t i) {
    if (i + 4 > n) return -1;
    int32_t v = 0;
    for (int k = 0; k < 4; k++) {
        int h = hexval(s[i + k]);
        if (h < 0) return -1;
        v = v * 16 + h;
    }
    return v;
}

static int32_t skip_ws(const uint8_t *s, int32_t n, int32_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* utf8_valid reports whether s[0..n) is valid UTF-8 (no surrogates, no
 * overlong forms), as Go's utf8.Valid. */
static int utf8_valid(const uint8_t *s, int32_t n) {
    for (int32_t i = 0; i < n;) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        int32_t k;
        uint32_t cp, lo;
        if (c >= 0xc2 && c <= 0xdf) { k = 1; cp = c & 0x1f; lo = 0x80; }
        else if (c >= 0xe0 && c <= 0xef) { k = 2; cp = c & 0x0f; lo = 0x800; }
        else if (c >= 0xf0 && c <= 0xf4) { k = 3; cp = c & 0x07; lo = 0x10000; }
        else return 0;
        for (int32_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xc0) != 0x80) return 0;
            cp = cp << 6 | (s[i + j] & 0x3f);
        }
        if (cp < lo || cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000)) return 0;
        i += k + 1;
    }
    return 1;
}

/* json_str decodes the JSON string whose opening quote is s[i-1], from
 * s[i], appending its bytes to out at *o (capacity cap; out NULL: decode
 * and check only). Returns the index after the closing quote, or -1. */
static int32_t json_str(const uint8_t *s, int32_t n, int32_t i, uint8_t *out, int32_t cap, int32_t *o) {
    for (;;) {
        if (i >= n) return -1;
        uint8_t c = s[i++];
        if (c == '"') return i;
        if (c < 0x20) return -1;
        if (c != '\\') {
            if (out) {
                if (*o >= cap) return -1;
                out[*o] = c;
            }
            (*o)++;
            continue;
        }
        if (i >= n) return -1;
        c = s[i++];
        uint32_t cp;
        switch (c) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = 8; break;
        case 'f': cp = 12; break;
        case 'n': cp = 10; break;
        case 'r': cp = 13; break;
        case 't': cp = 9; break;
        case 'u': {
            int32_t h = hex4(s, n, i);
            if (h < 0) return -1;
            i += 4;
            cp = (uint32_t)h;
            if (cp >= 0xd800 && cp < 0xdc00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
                int32_t lo = hex4(s, n, i + 2);
                if (lo >= 0xdc00 && lo < 0xe000) {
                    cp = 0x10000 + ((cp - 0xd800) << 10) + ((uint32_t)lo - 0xdc00);
                    i += 6;
                }
            }
            if (cp >= 0xd800 && cp < 0xe000) cp = 0xfffd; /* lone surrogate, as Go decodes it */
            break;
        }
        default:
            return -1;
        }
        uint8_t enc[4];
        int32_t k;
        if (cp < 0x80) {
            enc[0] = (uint8_t)cp; k = 1;
        } else if (cp < 0x800) {
            enc[0] = (uint8_t)(0xc0 | cp >> 6); enc[1] = (uint8_t)(0x80 | (cp & 0x3f)); k = 2;
        } else if (cp < 0x10000) {
            enc[0] = (uint8_t)(0xe0 | cp >> 12); enc[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
            enc[2] = (uint8_t)(0x80 | (cp & 0x3f)); k = 3;
        } else {
            enc[0] = (uint8_t)(0xf0 | cp >> 18); enc[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
            enc[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f)); enc[3] = (uint8_t)(0x80 | (cp & 0x3f)); k = 4;
        }
        if (out) {
            if (*o + k > cap) return -1;
            for (int32_t q = 0; q < k; q++) out[*o + q] = enc[q];
        }
        *o += k;
    }
}

int32_t realizar_json_strings(const uint8_t *s, int32_t n, uint8_t *out, int32_t cap, int32_t *lens, int32_t max) {
    if (!utf8_valid(s, n)) return -1;
    int32_t i = skip_ws(s, n, 0), o = 0, count = 0;
    if (i >= n || s[i++] != '[') return -1;
    i = skip_ws(s, n, i);
    if (i < n && s[i] == ']') return skip_ws(s, n, i + 1) == n ? 0 : -1;
    for (;;) {
        if (i >= n || s[i++] != '"' || count >= max) return -1;
        int32_t start = o;
        if ((i = json_str(s, n, i, out, cap, &o)) < 0) return -1;
        lens[count++] = o - start;
        i = skip_ws(s, n, i);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == ']') return skip_ws(s, n, i + 1) == n ? count : -1;
        return -1;
    }
}

static int is_delim(uint8_t c) {
    return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* skip_value returns the index after the JSON value at s[i] (as the Go
 * SDK's skipValue), or -1. */
static int32_t skip_value(const uint8_t *s, int32_t n, int32_t i) {
    int32_t o = 0;
    if (i >= n) return -1;
    if (s[i] == '"') return json_str(s, n, i + 1, 0, 0, &o);
    if (s[i] == '{' || s[i] == '[') {
        int32_t depth = 0;
        while (i < n) {
            uint8_t c = s[i];
            if (c == '"') {
                if ((i = json_str(s, n, i + 1, 0, 0, &o)) < 0) return -1;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            if ((c == '}' || c == ']') && --depth == 0) return i + 1;
            i++;
        }
        return -1;
    }
    int32_t j = i;
    while (j < n && !is_delim(s[j])) j++;
    return j > i ? j : -1;
}

int32_t realizar_json_keys(const uint8_t *s, int32_t n, uint8_t *out, int32_t cap, int32_t *lens, int32_t max) {
    if (!utf8_valid(s, n)) return -1;
    int32_t i = skip_ws(s, n, 0), o = 0, count = 0;
    if (i >= n || s[i++] != '{') return -1;
    i = skip_ws(s, n, i);
    if (i < n && s[i] == '}') return skip_ws(s, n, i + 1) == n ? 0 : -1;
    for (;;) {
        if (i >= n || s[i++] != '"' || count >= max) return -1;
        int32_t start = o;
        if ((i = json_str(s, n, i, out, cap, &o)) < 0) return -1;
        i = skip_ws(s, n, i);
        if (i >= n || s[i] != ':') return -1;
        if ((i = skip_value(s, n, skip_ws(s, n, i + 1))) < 0) return -1;
        lens[count++] = o - start;
        i = skip_ws(s, n, i);
        if (i < n && s[i] == ',') {
            i = skip_ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == '}') return skip_ws(s, n, i + 1) == n ? count : -1;
        return -1;
    }
}

#ifdef __wasm__
/* ---- allocator ---- */

extern unsigned char __heap_base;
static uint32_t heap_top;

void *realizar_alloc_bytes(uint32_t size) {
    if (heap_top == 0) heap_top = (uint32_t)(uintptr_t)&__heap_base;
    uint32_t at = (heap_top + 15) & ~15u;
    uint64_t end = (uint64_t)at + size;
    if (end > 0xffffffffULL) return NULL;
    uint32_t need = (uint32_t)((end + 65535) >> 16);
    uint32_t have = (uint32_t)__builtin_wasm_memory_size(0);
    if (need > have && __builtin_wasm_memory_grow(0, need - have) == (size_t)-1) return NULL;
    heap_top = (uint32_t)end;
    return (void *)(uintptr_t)at;
}

uint32_t realizar_heap_mark(void) {
    if (heap_top == 0) heap_top = (uint32_t)(uintptr_t)&__heap_base;
    return heap_top;
}

void realizar_heap_release(uint32_t mark) { heap_top = mark; }

/* ---- host helpers ---- */

static int32_t cstrlen(const char *s) {
    int32_t n = 0;
    while (s[n]) n++;
    return n;
}

void realizar_logs(int32_t level, const char *msg) { realizar_log_msg(level, msg, cstrlen(msg)); }

static void log_key(const char *what, const char *key) {
    char buf[160];
    int32_t n = 0;
    for (const char *p = "config: "; *p && n < 150; p++) buf[n++] = *p;
    for (const char *p = key; *p && n < 150; p++) buf[n++] = *p;
    buf[n++] = ' ';
    for (const char *p = what; *p && n < 159; p++) buf[n++] = *p;
    realizar_log_msg(REALIZAR_LOG_ERROR, buf, n);
}

int realizar_config_raw(const char *key, uint8_t **out, int32_t *len) {
    int32_t kl = cstrlen(key);
    int32_t n = realizar_config_get(key, kl, 0, 0);
    if (n < 0) return 0;
    uint8_t *buf = realizar_alloc_bytes((uint32_t)n + 1);
    if (!buf) {
        log_key("does not fit memory", key);
        return REALIZAR_ERR_CONFIG;
    }
    realizar_config_get(key, kl, buf, n);
    buf[n] = 0;
    *out = buf;
    *len = n;
    return 1;
}

/* small reads a short value into buf; -1 absent, -2 too long. */
static int32_t small(const char *key, uint8_t *buf, int32_t cap) {
    int32_t n = realizar_config_get(key, cstrlen(key), buf, cap);
    if (n < 0) return -1;
    if (n > cap) return -2;
    return n;
}

int realizar_config_f64(const char *key, double *out) {
    uint8_t buf[64];
    int32_t n = small(key, buf, sizeof buf);
    if (n == -1) return 0;
    double v;
    if (n < 0 || realizar_parse_f64(buf, n, &v) != 0) {
        log_key("is not a number with at most 15 significant digits", key);
        return REALIZAR_ERR_CONFIG;
    }
    *out = v;
    return 1;
}

int realizar_config_i32(const char *key, int32_t *out) {
    double v;
    int r = realizar_config_f64(key, &v);
    if (r != 1) return r;
    if (v != (double)(int32_t)v || v < -2147483648.0 || v > 2147483647.0) {
        log_key("is not a 32-bit integer", key);
        return REALIZAR_ERR_CONFIG;
    }
    *out = (int32_t)v;
    return 1;
}

int realizar_config_bool(const char *key, int *out) {
    uint8_t buf[8];
    int32_t n = small(key, buf, sizeof buf);
    if (n == -1) return 0;
    if (n == 4 && realizar_memeq(buf, "true", 4)) {
        *out = 1;
        return 1;
    }
    if (n == 5 && realizar_memeq(buf, "false", 5)) {
        *out = 0;
        return 1;
    }
    log_key("is not true or false", key);
    return REALIZAR_ERR_CONFIG;
}

/* append copies the NUL-terminated t (or n bytes of t when n >= 0) to
 * buf at *at, up to cap. */
static void append(char *buf, int32_t *at, int32_t cap, const char *t, int32_t n) {
    for (int32_t k = 0; (n < 0 ? t[k] != 0 : k < n) && *at < cap; k++) buf[(*at)++] = t[k];
}

int realizar_config_check_keys(const uint8_t *cfg, int32_t len, const char *const *known, int32_t n_known) {
    if (len <= 0) return 0;
    uint32_t mark = realizar_heap_mark();
    int32_t max = len / 4 + 1; /* each key takes at least "":0 and a brace or comma */
    uint8_t *keys = realizar_alloc_bytes((uint32_t)len);
    int32_t *lens = realizar_alloc_bytes((uint32_t)max * 4);
    int32_t count = keys && lens ? realizar_json_keys(cfg, len, keys, len, lens, max) : -1;
    int r = 0;
    char msg[512];
    int32_t at = 0, cap = (int32_t)sizeof msg;
    if (count < 0) {
        append(msg, &at, cap, "config: not a JSON object", -1);
        r = REALIZAR_ERR_CONFIG;
    }
    for (int32_t k = 0, off = 0; k < count && r == 0; off += lens[k++]) {
        int found = 0;
        for (int32_t j = 0; j < n_known && !found; j++) {
            found = cstrlen(known[j]) == lens[k] && realizar_memeq(known[j], keys + off, (size_t)lens[k]);
        }
        if (found) continue;
        /* the same line as the Go SDK's guest.UnknownKeyMessage */
        append(msg, &at, cap, "config: unknown key ", -1);
        append(msg, &at, cap, (const char *)keys + off, lens[k]);
        append(msg, &at, cap, " (the keys are ", -1);
        for (int32_t j = 0; j < n_known; j++) {
            if (j) append(msg, &at, cap, ", ", -1);
            append(msg, &at, cap, known[j], -1);
        }
        append(msg, &at, cap, ")", -1);
        r = REALIZAR_ERR_CONFIG;
    }
    if (r) realizar_log_msg(REALIZAR_LOG_ERROR, msg, at);
    realizar_heap_release(mark);
    return r;
}
#endif
