/*
 * whole_vocab.c — the standard sampler's chain over the full logits with
 * top_k 0, without sorting the vocabulary. Not a translation unit of its
 * own: standard.c includes it, and it works on standard.c's config and
 * scratch (region, ids, vals, probs, tkeys, tidx, the radix buffers) and
 * its helpers (insertion_sort, radix, order_key).
 */

/* ---- top_k 0: the whole vocabulary without sorting it ----
 *
 * With top_k 0 the chain walks the whole vocabulary in contract order:
 * top-p needs the softmax sum over all of it, then top-p, min-p and the
 * draw each keep a prefix. whole_vocab gives the same answer, bit for bit,
 * without sorting the vocabulary:
 *
 *  - ids are bucketed by d = max - logit (float32 operations, so the
 *    bucket never decreases along the contract order): a bucket is a run
 *    of the sorted order, its ids ascending until it is sorted;
 *  - adding a stretch of the order (a bucket, or a run of neighbouring
 *    buckets) to a running sum c gives, in any order, the contract-order
 *    result when every addition stays in c's binade [2^e, 2^(e+1)) and
 *    none is a tie: each then adds round(v / ulp) ulps, an integer sum
 *    (ulp_sum checks both conditions);
 *  - a run where that fails is redone bucket by bucket; a bucket where it
 *    fails, or where a prefix ends (top-p, min-p, the draw), is sorted and
 *    walked one entry at a time;
 *  - ids with d >= 40 * max(1, T) are never looked at: their probability
 *    (< e^-39.9) is under half an ulp of any sum that already holds the
 *    first entry's Exp(0) = 1, so adding them changes nothing. A walk that
 *    would go on among them gives up.
 *
 * whole_vocab returns the chosen id, or -1 (the caller then runs the full
 * sort) on a NaN or +Inf logit, on logits that are all -Inf, or on such a
 * walk (a -Inf logit, a masked id, has probability 0 and is never looked
 * at); *u is the uniform when it
 * has been drawn, and wv_sum the sum it was drawn against. Mirostat
 * (standard.c's mirostat_step) draws here too when it keeps every id. Loops over the vocabulary do many entries per iteration
 * (ABI section 6: each costs a call into the engine) and use wasm SIMD.
 * typical_p < 1 still sorts everything (its order is by another key). */
#define NB 1024  /* buckets; NB itself holds the ids never looked at */
#define RUN 1024 /* entries a run of buckets adds at once, at least */
static int32_t bstart[NB + 2]; /* bucket b is positions [bstart[b], bstart[b+1]) of ids/vals */
static int32_t bpos[NB + 1];
static int32_t seg_b[NB];        /* the final softmax's segments: first bucket */
static double seg_cum[NB];       /* and the running sum after the segment */
static uint8_t bsorted[NB + 1];  /* bucket in contract order */
static uint8_t bp_ok[NB + 1];    /* probs holds its T=1 probabilities */
static uint8_t bw_ok[NB + 1];    /* tkeys holds its temperature probabilities */
static double wm;                /* the max logit, widened */
static double wv_sum;            /* the final softmax's sum, once whole_vocab has drawn */

static __attribute__((noinline)) void sort_bucket(int32_t b) {
    if (bsorted[b]) return;
    int32_t s = bstart[b], k = bstart[b + 1] - s;
    if (k <= 32) {
        insertion_sort(ids + s, vals + s, k);
    } else if (k <= 1024) {
        realizar_sort(ids + s, vals + s, k);
    } else { /* ids ascend: the radix keeps them so within a logit */
        const float *l = (const float *)region;
        for (int32_t i = 0; i < k; i++) rkeys[i] = order_key(vals[s + i]);
        radix(rkeys, ids + s, rkeys2, ids2, k, 32);
        for (int32_t i = 0; i < k; i++) vals[s + i] = l[ids[s + i]];
    }
    bsorted[b] = 1;
    bp_ok[b] = bw_ok[b] = 0;
}

/* A running sum c > 0 of values >= 0 lies in a binade [2^e, 2^(e+1)) of
 * ulp 2^(e-52). While it stays there, c + v rounds to c + round(v / ulp)
 * ulps, the nearest whole number of ulps, except at a tie, where the
 * parity of c decides. A bucket's additions therefore give, in any order,
 * c + the sum of the rounded ulp counts, when none is a tie and the total
 * stays below the binade's end. ulp_sum carries that count for one
 * bucket. */
typedef struct {
    double inv;   /* 1 / ulp of c; 0 when c cannot be used */
    double ulps;  /* whole ulps so far (exact below 2^53) */
    int bad;      /* a tie, or a value too large */
} ulp_sum;

static inline __attribute__((always_inline)) void ulp_begin(ulp_sum *a, double c) {
    uint64_t bits;
    memcpy(&bits, &c, 8);
    int32_t ex = (int32_t)(bits >> 52); /* biased exponent; c > 0 has no sign bit */
    a->ulps = 0;
    a->bad = !(c > 0) || ex < 64 || ex > 1023 + 64;
    uint64_t inv_bits = (uint64_t)(2098 - ex) << 52; /* 2^(52 - e) */
    memcpy(&a->inv, &inv_bits, 8);
    if (a->bad) a->inv = 0;
}

/* ulp_add counts v: (y + 2^52) - 2^52 rounds y in [0, 2^52) to the nearest
 * whole number, exactly. */
static inline __attribute__((always_inline)) void ulp_add(ulp_sum *a, double v) {
    double y = v * a->inv;
    double r = (y + 0x1p52) - 0x1p52;
    double f = y - r;
    a->ulps = a->ulps + r;
    a->bad |= (y >= 0x1p52) | (f == 0.5) | (f == -0.5);
}

/* ulp_end returns 0 and sets *c to c + the counted values, or -1 (c
 * unchanged) when the order could matter. */
static inline __attribute__((always_inline)) int ulp_end(const ulp_sum *a, double *c) {
    if (a->bad) return -1;
    double kc = *c * a->inv; /* c in ulps: a whole number in [2^52, 2^53) */
    if (!(a->ulps <= 0x1p53 - 2 - kc)) return -1;
    double ulp = 1 / a->inv; /* a power of two: exact */
    *c = (kc + a->ulps) * ulp;
    return 0;
}

/* ulp2v is ulp_add on two lanes; *ulps and *bad are per lane. */
static inline __attribute__((always_inline)) void ulp2v(v128_t v, v128_t inv, v128_t *ulps, v128_t *bad) {
    v128_t y = wasm_f64x2_mul(v, inv);
    v128_t r = wasm_f64x2_sub(wasm_f64x2_add(y, wasm_f64x2_splat(0x1p52)), wasm_f64x2_splat(0x1p52));
    v128_t f = wasm_f64x2_sub(y, r);
    *ulps = wasm_f64x2_add(*ulps, r);
    *bad = wasm_v128_or(*bad, wasm_v128_or(wasm_f64x2_ge(y, wasm_f64x2_splat(0x1p52)),
                                           wasm_f64x2_eq(wasm_f64x2_abs(f), wasm_f64x2_splat(0.5))));
}

/* exp8v sets dst[0..8) = Exp((src[i] - m) / t) and counts them as
 * ulp2v does. It is realizar_exp on eight lanes (four vectors of two),
 * each x <= 0 or -Inf (never NaN): the same IEEE operations in the same
 * order, per lane (wasm SIMD has no fused operations), the four vectors
 * step by step so that the processor overlaps their dependency chains.
 * Not inline: the embedded module stays small. */
static __attribute__((noinline)) void exp8v(const float *src, double *dst, v128_t m, v128_t tv, v128_t inv,
                                            v128_t *ulps, v128_t *bad) {
    v128_t a4 = wasm_v128_load(src), b4 = wasm_v128_load(src + 4);
    v128_t x[4] = {wasm_f64x2_promote_low_f32x4(a4), wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(a4, a4, 2, 3, 2, 3)),
                   wasm_f64x2_promote_low_f32x4(b4), wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(b4, b4, 2, 3, 2, 3))};
    v128_t k[4], r[4], p[4];
    int divide = !wasm_i64x2_all_true(wasm_f64x2_eq(tv, wasm_f64x2_splat(1))); /* x / 1 is x */
#pragma clang loop unroll(full)
    for (int j = 0; j < 4; j++) {
        x[j] = wasm_f64x2_sub(x[j], m);
        if (divide) x[j] = wasm_f64x2_div(x[j], tv);
    }
#pragma clang loop unroll(full)
    for (int j = 0; j < 4; j++) {
        v128_t t = wasm_f64x2_mul(x[j], wasm_f64x2_splat(0x1.71547652b82fep+0));
        v128_t half = wasm_v128_bitselect(wasm_f64x2_splat(0.5), wasm_f64x2_splat(-0.5),
                                          wasm_f64x2_ge(t, wasm_f64x2_splat(0)));
        k[j] = wasm_i32x4_trunc_sat_f64x2_zero(wasm_f64x2_add(t, half)); /* toward zero, as (int32_t) */
        v128_t kf = wasm_f64x2_convert_low_i32x4(k[j]);
        r[j] = wasm_f64x2_sub(wasm_f64x2_sub(x[j], wasm_f64x2_mul(kf, wasm_f64x2_splat(0x1.62e42fee00000p-1))),
                              wasm_f64x2_mul(kf, wasm_f64x2_splat(0x1.a39ef35793c76p-33)));
        p[j] = wasm_f64x2_splat(realizar_exp_coef[11]);
    }
#pragma clang loop unroll(full)
    for (int i = 10; i >= 0; i--) {
#pragma clang loop unroll(full)
        for (int j = 0; j < 4; j++) p[j] = wasm_f64x2_add(wasm_f64x2_mul(p[j], r[j]), wasm_f64x2_splat(realizar_exp_coef[i]));
    }
#pragma clang loop unroll(full)
    for (int j = 0; j < 4; j++) {
        p[j] = wasm_f64x2_add(wasm_f64x2_mul(p[j], r[j]), wasm_f64x2_splat(1));
        p[j] = wasm_f64x2_add(wasm_f64x2_mul(p[j], r[j]), wasm_f64x2_splat(1));
        v128_t two_k = wasm_i64x2_shl(wasm_i64x2_add(wasm_i64x2_extend_low_i32x4(k[j]), wasm_i64x2_splat(1023)), 52);
        /* x < -708 (or -Inf) gives 0; the lane's other results are discarded */
        p[j] = wasm_v128_andnot(wasm_f64x2_mul(p[j], two_k), wasm_f64x2_lt(x[j], wasm_f64x2_splat(REALIZAR_EXP_MIN)));
        wasm_v128_store(dst + 2 * j, p[j]);
        ulp2v(p[j], inv, ulps, bad);
    }
}

/* ulp_merge adds the lanes' counts to a (whole numbers below 2^53 add
 * exactly, in any order). */
static inline __attribute__((always_inline)) void ulp_merge(ulp_sum *a, v128_t ulps, v128_t bad) {
    a->ulps = a->ulps + (wasm_f64x2_extract_lane(ulps, 0) + wasm_f64x2_extract_lane(ulps, 1));
    a->bad |= wasm_v128_any_true(bad);
}

/* fill_run sets dst[i] = Exp((logit_i - max) / t) over positions [i, e)
 * (whole buckets), as realizar_softmax computes each entry, and adds them
 * to *c as ulp_end does (returns its answer). Sixteen entries per loop
 * iteration. */
static __attribute__((noinline)) int fill_run(double *dst, int32_t i, int32_t e, double t, double *c) {
    ulp_sum a;
    ulp_begin(&a, *c);
    v128_t inv = wasm_f64x2_splat(a.inv), ulps = wasm_f64x2_splat(0), bad = wasm_i64x2_splat(0);
    v128_t m = wasm_f64x2_splat(wm), tv = wasm_f64x2_splat(t);
    for (; i + 16 <= e; i += 16) {
        exp8v(vals + i, dst + i, m, tv, inv, &ulps, &bad);
        exp8v(vals + i + 8, dst + i + 8, m, tv, inv, &ulps, &bad);
    }
    if (i + 8 <= e) {
        exp8v(vals + i, dst + i, m, tv, inv, &ulps, &bad);
        i += 8;
    }
    ulp_merge(&a, ulps, bad);
    for (; i < e; i++) {
        double p_ = realizar_exp(((double)vals[i] - wm) / t);
        dst[i] = p_;
        ulp_add(&a, p_);
    }
    return ulp_end(&a, c);
}

static int fill_sum(double *dst, int32_t b, double t, double *c) {
    return fill_run(dst, bstart[b], bstart[b + 1], t, c);
}

static void fill(double *dst, int32_t b, double t) {
    double c = 0;
    (void)fill_sum(dst, b, t, &c);
}

static void need_p(int32_t b) {
    if (!bp_ok[b]) fill(probs, b, 1.0);
    bp_ok[b] = 1;
}

static void need_w(int32_t b) {
    if (!bw_ok[b]) fill(tkeys, b, temperature);
    bw_ok[b] = 1;
}

/* stored_sum adds v over bucket b to *c as ulp_end does. */
static __attribute__((noinline)) int stored_sum(const double *v, int32_t b, double *c) {
    int32_t i = bstart[b], e = bstart[b + 1];
    ulp_sum a;
    ulp_begin(&a, *c);
    v128_t inv = wasm_f64x2_splat(a.inv), ulps = wasm_f64x2_splat(0), bad = wasm_i64x2_splat(0);
    for (; i + 4 <= e; i += 4) {
        ulp2v(wasm_v128_load(v + i), inv, &ulps, &bad);
        ulp2v(wasm_v128_load(v + i + 2), inv, &ulps, &bad);
    }
    ulp_merge(&a, ulps, bad);
    for (; i < e; i++) ulp_add(&a, v[i]);
    return ulp_end(&a, c);
}

/* div_sum adds probs[i] / sum over bucket b to *c as ulp_end does. */
static __attribute__((noinline)) int div_sum(int32_t b, double sum, double *c) {
    int32_t i = bstart[b], e = bstart[b + 1];
    ulp_sum a;
    ulp_begin(&a, *c);
    v128_t inv = wasm_f64x2_splat(a.inv), ulps = wasm_f64x2_splat(0), bad = wasm_i64x2_splat(0);
    v128_t sv = wasm_f64x2_splat(sum);
    for (; i + 4 <= e; i += 4) {
        ulp2v(wasm_f64x2_div(wasm_v128_load(probs + i), sv), inv, &ulps, &bad);
        ulp2v(wasm_f64x2_div(wasm_v128_load(probs + i + 2), sv), inv, &ulps, &bad);
    }
    ulp_merge(&a, ulps, bad);
    for (; i < e; i++) ulp_add(&a, probs[i] / sum);
    return ulp_end(&a, c);
}

#ifdef STANDARD_TRACE
/* Test builds (internal/plugins/standard_trace_test.go) log each whole_vocab step:
 * "whole SUM N1 N2 SUMT" (the sums' bits in hex, 0 when not computed) or
 * "whole fallback". */
static void trace(double sum, int32_t n1, int32_t n2, double sum_t, int fallback) {
    char buf[96];
    int32_t k = 0;
    const char *head = fallback ? "whole fallback" : "whole";
    while (*head) buf[k++] = *head++;
    if (!fallback) {
        uint64_t v[4];
        memcpy(&v[0], &sum, 8);
        v[1] = (uint64_t)n1;
        v[2] = (uint64_t)n2;
        memcpy(&v[3], &sum_t, 8);
        for (int j = 0; j < 4; j++) {
            buf[k++] = ' ';
            int started = 0;
            for (int sh = 60; sh >= 0; sh -= 4) {
                int d = (int)((v[j] >> sh) & 15);
                if (d || started || sh == 0) {
                    buf[k++] = "0123456789abcdef"[d];
                    started = 1;
                }
            }
        }
    }
    realizar_log_msg(REALIZAR_LOG_DEBUG, buf, k);
}
#define TRACE(sum, n1, n2, sum_t, fallback) trace(sum, n1, n2, sum_t, fallback)
#else
#define TRACE(sum, n1, n2, sum_t, fallback) ((void)(sum), (void)(n1))
#endif

/* bucket_all buckets the whole vocabulary (see above): ids/vals hold it
 * bucket by bucket, buckets [0, NB) in contract order between them and
 * unsorted inside, bucket NB the ids never looked at; wm is the max. It
 * returns the number of ids before bucket NB, or -1 on a NaN or +Inf
 * logit or logits that are all -Inf. */
static __attribute__((noinline)) int32_t bucket_all(void) {
    const float *l = (const float *)region;
    int32_t n = n_vocab, i = 0;

    /* max, min, finiteness */
    float mx = l[0], mn = l[0];
    int bad = 0;
    v128_t vmx = wasm_f32x4_splat(mx), vmn = vmx, vbad = wasm_i32x4_splat(0), vinf = wasm_f32x4_splat(__builtin_inff());
    for (; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int j = 0; j < 64; j += 4) {
            v128_t x = wasm_v128_load(l + i + j);
            /* NaN or +Inf; -Inf (a masked id: probability 0) lands among the ids never looked at */
            vbad = wasm_v128_or(vbad, wasm_v128_or(wasm_f32x4_ne(x, x), wasm_f32x4_eq(x, vinf)));
            vmx = wasm_f32x4_pmax(vmx, x);
            vmn = wasm_f32x4_pmin(vmn, x);
        }
    }
    bad = wasm_v128_any_true(vbad);
#pragma clang loop unroll(full)
    for (int j = 0; j < 4; j++) {
        float a = wasm_f32x4_extract_lane(vmx, 0), b = wasm_f32x4_extract_lane(vmn, 0);
        mx = a > mx ? a : mx;
        mn = b < mn ? b : mn;
        vmx = wasm_i32x4_shuffle(vmx, vmx, 1, 2, 3, 0);
        vmn = wasm_i32x4_shuffle(vmn, vmn, 1, 2, 3, 0);
    }
    for (; i < n; i++) {
        float x = l[i];
        bad |= x != x || x == __builtin_inff();
        mx = x > mx ? x : mx;
        mn = x < mn ? x : mn;
    }
    if (bad || mx == -__builtin_inff()) return -1;
    wm = (double)mx;

    /* buckets */
    float cut = temperature > 1 ? (float)(40.0 * temperature) : 40.0f;
    float span = mx - mn;
    if (!(span < cut)) span = cut;
    float scale = span > 0x1p-100f ? (float)(NB - 1) / span : 0;
    memset(bstart, 0, sizeof bstart);
#define REALIZAR_BUCKET(i)                                                        \
    do {                                                                          \
        float d_ = mx - l[i], x_ = d_ * scale;                                    \
        int32_t b_ = d_ < cut ? (x_ < (float)(NB - 1) ? (int32_t)x_ : NB - 1) : NB; \
        tidx[i] = b_;                                                             \
        bstart[b_ + 1]++;                                                         \
    } while (0)
    /* the same, four lanes at a time: trunc_sat then min is the clamp above */
    v128_t vm = wasm_f32x4_splat(mx), vs = wasm_f32x4_splat(scale), vc = wasm_f32x4_splat(cut);
    for (i = 0; i + 32 <= n; i += 32) {
#pragma clang loop unroll(full)
        for (int32_t j = i; j < i + 32; j += 4) {
            v128_t d = wasm_f32x4_sub(vm, wasm_v128_load(l + j));
            v128_t b4 = wasm_i32x4_min(wasm_i32x4_trunc_sat_f32x4(wasm_f32x4_mul(d, vs)), wasm_i32x4_splat(NB - 1));
            b4 = wasm_v128_bitselect(b4, wasm_i32x4_splat(NB), wasm_f32x4_lt(d, vc));
            wasm_v128_store(tidx + j, b4);
            bstart[wasm_i32x4_extract_lane(b4, 0) + 1]++;
            bstart[wasm_i32x4_extract_lane(b4, 1) + 1]++;
            bstart[wasm_i32x4_extract_lane(b4, 2) + 1]++;
            bstart[wasm_i32x4_extract_lane(b4, 3) + 1]++;
        }
    }
    for (; i < n; i++) REALIZAR_BUCKET(i);
#undef REALIZAR_BUCKET
    for (int32_t b = 1; b + 8 <= NB + 2; b += 8) {
#pragma clang loop unroll(full)
        for (int32_t j = b; j < b + 8; j++) bstart[j] += bstart[j - 1];
    }
    for (int32_t b = (NB + 1) / 8 * 8 + 1; b <= NB + 1; b++) bstart[b] += bstart[b - 1];
    memcpy(bpos, bstart, sizeof bpos);
#define REALIZAR_SCATTER(i)             \
    do {                                \
        int32_t at_ = bpos[tidx[i]]++;  \
        ids[at_] = (i);                 \
        vals[at_] = l[i];               \
    } while (0)
    for (i = 0; i + 32 <= n; i += 32) {
#pragma clang loop unroll(full)
        for (int32_t j = i; j < i + 32; j++) REALIZAR_SCATTER(j);
    }
    for (; i < n; i++) REALIZAR_SCATTER(i);
#undef REALIZAR_SCATTER
    memset(bsorted, 0, sizeof bsorted);
    memset(bp_ok, 0, sizeof bp_ok);
    memset(bw_ok, 0, sizeof bw_ok);
    return bstart[NB];
}

static __attribute__((noinline)) int32_t whole_vocab(double *u) {
    int32_t n = n_vocab;
    int32_t nsig = bucket_all(); /* ids before the ones never looked at */
    if (nsig < 0) return -1;

    int32_t keep = n; /* the prefix kept so far */
    double top_sum = 0;
    int32_t n1 = n;

    /* top-p: the sum over all, then the first prefix reaching top_p */
    if (top_p < 1.0) {
        /* in runs of buckets of RUN entries or more (a run is a stretch of
         * the contract order too); bucket by bucket where a run fails */
        double sum = 0;
        for (int32_t b = 0; b < NB;) {
            int32_t s = bstart[b], b1 = b + 1;
            if (s == bstart[b1]) {
                b++;
                continue;
            }
            if (sum > 0) {
                while (b1 < NB && bstart[b1] - s < RUN) b1++;
                if (fill_run(probs, s, bstart[b1], 1.0, &sum) == 0) {
                    memset(bp_ok + b, 1, (uint32_t)(b1 - b));
                    b = b1;
                    continue;
                }
                memset(bp_ok + b, 1, (uint32_t)(b1 - b));
            }
            for (; b < b1; b++) {
                int32_t bs = bstart[b], be = bstart[b + 1];
                if (bs == be || (bp_ok[b] && stored_sum(probs, b, &sum) == 0)) continue;
                sort_bucket(b);
                need_p(b);
                for (int32_t j = bs; j < be; j++) sum = sum + probs[j];
            }
        }
        if (!(sum > 0)) return -1;
        double cum = 0;
        int32_t at = -1;
        for (int32_t b = 0; b < NB && at < 0; b++) {
            int32_t s = bstart[b], e = bstart[b + 1];
            if (s == e) continue;
            if (!bsorted[b]) {
                double c = cum;
                if (div_sum(b, sum, &c) == 0 && !(c >= top_p)) {
                    cum = c;
                    continue;
                }
                sort_bucket(b);
                need_p(b);
            }
            for (int32_t j = s; j < e; j++) {
                cum = cum + probs[j] / sum;
                if (cum >= top_p) {
                    at = j + 1;
                    break;
                }
            }
        }
        if (at < 0) return -1;
        keep = n1 = at;
        top_sum = sum;
    }

    /* min-p: the first entry under min_p times the first's probability */
    if (min_p > 0.0) {
        double thr = min_p * realizar_exp((wm - wm) / 1.0); /* the first entry: the max */
        int32_t lim = keep < nsig ? keep : nsig, at = -1;
        for (int32_t b = 0; b < NB && at < 0; b++) {
            int32_t s = bstart[b], e = bstart[b + 1];
            if (s >= lim) break;
            if (e > lim) {
                e = lim;
                sort_bucket(b); /* already sorted: the prefix ended inside it */
            }
            need_p(b);
            if (!bsorted[b]) {
                v128_t vb = wasm_i64x2_splat(0), vt = wasm_f64x2_splat(thr);
                int32_t j = s;
                for (; j + 4 <= e; j += 4)
                    vb = wasm_v128_or(vb, wasm_v128_or(wasm_f64x2_lt(wasm_v128_load(probs + j), vt),
                                                       wasm_f64x2_lt(wasm_v128_load(probs + j + 2), vt)));
                int below = wasm_v128_any_true(vb);
                for (; j < e; j++) below |= probs[j] < thr;
                if (!below) continue;
                sort_bucket(b);
                need_p(b);
            }
            for (int32_t j = s > 1 ? s : 1; j < e; j++) {
                if (probs[j] < thr) {
                    at = j;
                    break;
                }
            }
        }
        if (at >= 0) keep = at;
        else if (keep > nsig && thr > 1e-17) keep = nsig; /* the first never looked at: p < e^-39.9 < thr */
        else if (keep > nsig) return -1;
    }

    /* the final softmax at the temperature over [0, keep), then the draw;
     * keep > nsig only when keep = n, and the rest then adds nothing */
    int32_t lim = keep < nsig ? keep : nsig;
    double sum = 0;
    int32_t nseg = 0;
    for (int32_t b = 0; b < NB;) {
        int32_t s = bstart[b], b1 = b + 1;
        if (s >= lim) break;
        if (s == bstart[b1]) {
            b++;
            continue;
        }
        if (sum > 0 && bstart[b1] <= lim) { /* a run of whole buckets */
            while (b1 < NB && bstart[b1] - s < RUN && bstart[b1 + 1] <= lim) b1++;
            memset(bw_ok + b, 1, (uint32_t)(b1 - b));
            if (fill_run(tkeys, s, bstart[b1], temperature, &sum) == 0) {
                seg_b[nseg] = b;
                seg_cum[nseg++] = sum;
                b = b1;
                continue;
            }
        }
        for (; b < b1; b++) { /* bucket by bucket */
            int32_t bs = bstart[b], be = bstart[b + 1];
            if (bs == be) continue;
            if (be > lim) {
                be = lim;
                sort_bucket(b); /* already sorted: the prefix ended inside it */
            } else if (bw_ok[b] && stored_sum(tkeys, b, &sum) == 0) {
                seg_b[nseg] = b;
                seg_cum[nseg++] = sum;
                continue;
            }
            sort_bucket(b);
            need_w(b);
            for (int32_t j = bs; j < be; j++) sum = sum + tkeys[j];
            seg_b[nseg] = b;
            seg_cum[nseg++] = sum;
        }
    }
    if (!(sum > 0)) return -1;
    TRACE(top_sum, n1, keep, sum, 0);
    wv_sum = sum;

    /* the draw: the walk's running sum is the sum's, so it lands in the
     * first segment whose sum exceeds the target; inside it, bucket by
     * bucket, then entry by entry in the bucket where it lands */
    *u = realizar_rng_uniform(&rng);
    double target = *u * sum, cum = 0;
    for (int32_t k = 0; k < nseg; k++) {
        if (!(target < seg_cum[k])) {
            cum = seg_cum[k];
            continue;
        }
        int32_t end = k + 1 < nseg ? seg_b[k + 1] : NB;
        for (int32_t b = seg_b[k]; b < end; b++) {
            int32_t s = bstart[b], e = bstart[b + 1];
            if (s >= lim) break;
            if (s == e) continue;
            if (e > lim) {
                e = lim;
            } else if (bw_ok[b]) {
                double c = cum;
                if (stored_sum(tkeys, b, &c) == 0 && !(target < c)) {
                    cum = c;
                    continue;
                }
            }
            sort_bucket(b);
            need_w(b);
            for (int32_t j = s; j < e; j++) {
                cum += tkeys[j];
                if (target < cum) return ids[j];
            }
        }
        return -1; /* cannot happen: the walk repeats the sum */
    }
    return -1; /* target reached the sum: the last id with p > 0 may be among those never looked at */
}
