/*
 * standard — sampler: llama.cpp's default chain with its default
 * parameters, in the contract's arithmetic. The chain and every operation
 * are specified in ../chain.go (package standard), which the Go build of this
 * sampler runs; this file performs the same operations in the same order,
 * and the cross-language test checks that both choose the same tokens.
 * One exception: with top_k 0 (full logits) whole_vocab reaches the same
 * sums and cut points without sorting the vocabulary (see there; the
 * trace test, plugins/standard_trace_test.go, compares them bit for bit).
 *
 * Config keys (JSON numbers unless stated; defaults in brackets):
 *   temperature [0.8], top_k [40], top_p [0.95], min_p [0.05],
 *   typical_p [1.0], repeat_penalty [1.0], presence_penalty [0.0],
 *   frequency_penalty [0.0], repeat_last_n [64],
 *   logit_bias [none]: {"id": bias, ...} or [[id, bias], ...]; false = -inf.
 * Ranges (as chain.go's Config.check): top_k >= 0; top_p, min_p and
 * typical_p in [0, 1]; repeat_penalty > 0; repeat_last_n >= -1; any
 * temperature (<= 0 is greedy). Another key is refused, naming it.
 */
#include "realizar.h"

#include <wasm_simd128.h> /* built with -msimd128 (plugins/build.sh) */

REALIZAR_MARKER(sampler)
REALIZAR_ALLOC_EXPORT

/* The config keys, in the order of chain.go's Keys. */
static const char *const keys[] = {"temperature", "top_k", "top_p", "min_p", "typical_p", "repeat_penalty",
                                   "repeat_last_n", "presence_penalty", "frequency_penalty", "logit_bias"};

/* config */
static double temperature = 0.8, top_p = 0.95, min_p = 0.05, typical_p = 1.0;
static int32_t top_k = 40, last_n = 64;
static float repeat_penalty = 1.0f, presence = 0.0f, frequency = 0.0f;

static int32_t n_vocab, top_n;
static int32_t *region; /* top-N: ids then logits; full: logits */

/* logit bias: dense values and the distinct ids that have one */
static float *bias;
static int32_t *bias_ids, n_bias;

/* penalties: counts of ids in the window, the window, the distinct ids */
static int pen_on;
static int32_t *counts, *ring, ring_head, ring_len;
static int32_t *distinct, n_distinct, distinct_cap;

/* scratch */
static int32_t *ids, *tidx, *ids2;
static float *vals, *vals2;
static double *probs, *tkeys;
static uint64_t *rkeys, *rkeys2; /* radix sort, full mode only */

static realizar_rng rng;
static int ready;

static void *need(uint32_t bytes) {
    void *p = realizar_alloc_bytes(bytes ? bytes : 1);
    if (!p) realizar_logs(REALIZAR_LOG_ERROR, "standard: out of memory");
    return p;
}

/* ---- config: logit_bias ---- */

static int32_t ws(const uint8_t *s, int32_t n, int32_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) i++;
    return i;
}

/* value parses a bias at s[i]: a number or false (-inf). */
static int32_t value(const uint8_t *s, int32_t n, int32_t i, float *out) {
    if (i + 5 <= n && realizar_memeq(s + i, "false", 5)) {
        *out = -__builtin_inff();
        return i + 5;
    }
    int32_t j = i;
    while (j < n && ((s[j] >= '0' && s[j] <= '9') || s[j] == '-' || s[j] == '+' || s[j] == '.' || s[j] == 'e' || s[j] == 'E')) j++;
    double v;
    if (j == i || realizar_parse_f64(s + i, j - i, &v) != 0) return -1;
    *out = (float)v;
    return j;
}

static int32_t token_id(const uint8_t *s, int32_t n, int32_t i, int32_t *out) {
    int32_t v = 0, j = i;
    while (j < n && s[j] >= '0' && s[j] <= '9' && j - i < 10) v = v * 10 + (s[j++] - '0');
    if (j == i || v < 0 || v >= n_vocab) return -1;
    *out = v;
    return j;
}

static int add_bias(int32_t id, float v) {
    if (!bias) {
        bias = need((uint32_t)n_vocab * 4);
        bias_ids = need((uint32_t)n_vocab * 4);
        if (!bias || !bias_ids) return -1;
        memset(bias, 0, (uint32_t)n_vocab * 4);
    }
    int32_t k = 0;
    while (k < n_bias && bias_ids[k] != id) k++;
    if (k == n_bias) bias_ids[n_bias++] = id;
    bias[id] = bias[id] + v;
    return 0;
}

static int parse_bias(const uint8_t *s, int32_t n) {
    int32_t i = ws(s, n, 0);
    if (i >= n) return -1;
    int obj = s[i] == '{';
    if (!obj && s[i] != '[') return -1;
    i = ws(s, n, i + 1);
    if (i < n && s[i] == (obj ? '}' : ']')) return ws(s, n, i + 1) == n ? 0 : -1;
    for (;;) {
        int32_t id;
        float v;
        if (obj) {
            if (i >= n || s[i] != '"') return -1;
            if ((i = token_id(s, n, i + 1, &id)) < 0 || i >= n || s[i] != '"') return -1;
            i = ws(s, n, i + 1);
            if (i >= n || s[i] != ':') return -1;
            if ((i = value(s, n, ws(s, n, i + 1), &v)) < 0) return -1;
        } else {
            if (i >= n || s[i] != '[') return -1;
            if ((i = token_id(s, n, ws(s, n, i + 1), &id)) < 0) return -1;
            i = ws(s, n, i);
            if (i >= n || s[i] != ',') return -1;
            if ((i = value(s, n, ws(s, n, i + 1), &v)) < 0) return -1;
            i = ws(s, n, i);
            if (i >= n || s[i] != ']') return -1;
            i++;
        }
        if (v != v || add_bias(id, v) != 0) return -1;
        i = ws(s, n, i);
        if (i < n && s[i] == ',') {
            i = ws(s, n, i + 1);
            continue;
        }
        if (i < n && s[i] == (obj ? '}' : ']')) return ws(s, n, i + 1) == n ? 0 : -1;
        return -1;
    }
}

/* ---- init ---- */

static int read_config(void) {
    double f;
    int r;
    if ((r = realizar_config_f64("temperature", &temperature)) < 0) return r;
    if ((r = realizar_config_i32("top_k", &top_k)) < 0) return r;
    if ((r = realizar_config_f64("top_p", &top_p)) < 0) return r;
    if ((r = realizar_config_f64("min_p", &min_p)) < 0) return r;
    if ((r = realizar_config_f64("typical_p", &typical_p)) < 0) return r;
    if ((r = realizar_config_f64("repeat_penalty", &f)) < 0) return r;
    if (r) repeat_penalty = (float)f;
    if ((r = realizar_config_f64("presence_penalty", &f)) < 0) return r;
    if (r) presence = (float)f;
    if ((r = realizar_config_f64("frequency_penalty", &f)) < 0) return r;
    if (r) frequency = (float)f;
    if ((r = realizar_config_i32("repeat_last_n", &last_n)) < 0) return r;
    const char *bad = 0;
    if (top_k < 0) bad = "config: top_k must be >= 0";
    else if (!(top_p >= 0 && top_p <= 1)) bad = "config: top_p must be in [0, 1]";
    else if (!(min_p >= 0 && min_p <= 1)) bad = "config: min_p must be in [0, 1]";
    else if (!(typical_p >= 0 && typical_p <= 1)) bad = "config: typical_p must be in [0, 1]";
    else if (!(repeat_penalty > 0)) bad = "config: repeat_penalty must be > 0";
    else if (last_n < -1) bad = "config: repeat_last_n must be >= -1";
    if (bad) {
        realizar_logs(REALIZAR_LOG_ERROR, bad);
        return REALIZAR_ERR_CONFIG;
    }
    uint8_t *raw;
    int32_t len;
    if ((r = realizar_config_raw("logit_bias", &raw, &len)) < 0) return r;
    if (r && parse_bias(raw, len) != 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "standard: logit_bias must be {\"id\": bias} or [[id, bias]] with ids in the vocabulary");
        return REALIZAR_ERR_CONFIG;
    }
    return 0;
}

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t nv, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    (void)max_piece;
    if (nv <= 0) return REALIZAR_ERR_VOCAB;
    n_vocab = nv;
    int r = realizar_config_check_keys((const uint8_t *)(uintptr_t)config_ptr, config_len, keys,
                                       (int32_t)(sizeof keys / sizeof keys[0]));
    if (r < 0) return r;
    r = read_config();
    if (r < 0) return r;
    pen_on = last_n != 0 && (repeat_penalty != 1.0f || presence != 0.0f || frequency != 0.0f);

    /* Top-N mode when the top-N candidates of the raw logits are sure to
     * hold the top_k of the adjusted ones: no adjustment raises a logit,
     * and N leaves room for every id an adjustment may lower. See chain.go. */
    int raises = repeat_penalty < 1.0f || presence < 0.0f || frequency < 0.0f;
    int64_t lowered = pen_on ? (last_n < 0 ? (int64_t)n_vocab : last_n) : 0;
    for (int32_t k = 0; k < n_bias; k++) {
        if (bias[bias_ids[k]] > 0) raises = 1;
        else if (bias[bias_ids[k]] < 0) lowered++;
    }
    int64_t want = temperature <= 0 ? 1 : top_k;
    top_n = 0;
    if (want >= 1 && !(pen_on && raises) && !(n_bias && raises)) {
        int64_t n = want + lowered;
        if (n <= REALIZAR_MAX_TOP_N) top_n = (int32_t)n;
    }
    int32_t cap = top_n ? top_n : n_vocab;
    region = need(top_n ? (uint32_t)top_n * 8 : (uint32_t)n_vocab * 4);
    ids = need((uint32_t)cap * 4);
    vals = need((uint32_t)cap * 4);
    ids2 = need((uint32_t)cap * 4);
    vals2 = need((uint32_t)cap * 4);
    tidx = need((uint32_t)cap * 4);
    probs = need((uint32_t)cap * 8);
    tkeys = need((uint32_t)cap * 8);
    if (!region || !ids || !vals || !ids2 || !vals2 || !tidx || !probs || !tkeys) return REALIZAR_ERR_FAILED;
    if (!top_n) {
        rkeys = need((uint32_t)n_vocab * 8);
        rkeys2 = need((uint32_t)n_vocab * 8);
        if (!rkeys || !rkeys2) return REALIZAR_ERR_FAILED;
    }
    if (pen_on) {
        counts = need((uint32_t)n_vocab * 4);
        distinct_cap = last_n < 0 ? n_vocab : last_n;
        distinct = need((uint32_t)distinct_cap * 4);
        ring = last_n > 0 ? need((uint32_t)last_n * 4) : 0;
        if (!counts || !distinct || (last_n > 0 && !ring)) return REALIZAR_ERR_FAILED;
        memset(counts, 0, (uint32_t)n_vocab * 4);
    }
    return realizar_pack_init((uint32_t)(uintptr_t)region, top_n);
}

/* ---- the penalty window ---- */

static void count_in(int32_t id) {
    if (counts[id]++ == 0) distinct[n_distinct++] = id;
}

static void count_out(int32_t id) {
    if (--counts[id] == 0) {
        for (int32_t k = 0; k < n_distinct; k++) {
            if (distinct[k] == id) {
                distinct[k] = distinct[--n_distinct];
                break;
            }
        }
    }
}

static void push(int32_t id) {
    if (!pen_on || id < 0 || id >= n_vocab) return;
    if (last_n > 0) {
        if (ring_len == last_n) {
            count_out(ring[ring_head]);
            ring[ring_head] = id;
            ring_head = ring_head + 1 == last_n ? 0 : ring_head + 1;
        } else {
            int32_t at = ring_head + ring_len;
            ring[at >= last_n ? at - last_n : at] = id;
            ring_len++;
        }
    }
    count_in(id);
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    realizar_rng_seed(&rng, (uint64_t)seed);
    ready = 1;
    if (!pen_on) return 0;
    for (int32_t k = 0; k < n_distinct; k++) counts[distinct[k]] = 0;
    n_distinct = ring_len = ring_head = 0;
    if (n_prompt <= 0) return 0;
    uint32_t mark = realizar_heap_mark();
    int32_t *prompt = realizar_alloc_bytes((uint32_t)n_prompt * 4);
    if (!prompt) {
        realizar_logs(REALIZAR_LOG_ERROR, "standard: no memory for the prompt");
        return REALIZAR_ERR_FAILED;
    }
    int32_t n = realizar_prompt_get(prompt, n_prompt);
    if (n > n_prompt) n = n_prompt;
    int32_t from = last_n > 0 && n > last_n ? n - last_n : 0;
    for (int32_t i = from; i < n; i++) push(prompt[i]);
    realizar_heap_release(mark);
    return 0;
}

/* ---- the chain ---- */

/* radix sorts (key, val) pairs by key ascending, stably, in passes of 11
 * bits from bit 0 below bits: the result is in key/val (copied back from
 * the scratch after an odd number of passes). O(n) loop iterations per
 * pass: a full-vocabulary sort costs a few passes, not n log n compares. */
static __attribute__((noinline)) void radix(uint64_t *key, int32_t *val, uint64_t *tkey, int32_t *tval, int32_t n, int bits) {
    static int32_t count[2048];
    int passes = 0;
    for (int shift = 0; shift < bits; shift += 11, passes++) {
        memset(count, 0, sizeof count);
        for (int32_t i = 0; i < n; i++) count[(key[i] >> shift) & 2047]++;
        int32_t sum = 0;
        for (int32_t b = 0; b < 2048; b++) {
            int32_t c = count[b];
            count[b] = sum;
            sum += c;
        }
        for (int32_t i = 0; i < n; i++) {
            int32_t at = count[(key[i] >> shift) & 2047]++;
            tkey[at] = key[i];
            tval[at] = val[i];
        }
        uint64_t *k = key; key = tkey; tkey = k;
        int32_t *v = val; val = tval; tval = v;
    }
    if (passes & 1) {
        memcpy(tkey, key, (uint32_t)n * 8);
        memcpy(tval, val, (uint32_t)n * 4);
    }
}

/* order_key maps a logit to a key whose ascending order is the contract
 * order's (logit descending, NaN last; -0 as +0); ties keep their input
 * order, which is id order here. */
static inline __attribute__((always_inline)) uint64_t order_key(float l) {
    if (l != l) return 0xffffffffu;
    if (l == 0) l = 0; /* -0 */
    uint32_t b;
    memcpy(&b, &l, 4);
    uint32_t asc = (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    return (uint64_t)(uint32_t)~asc;
}

static inline __attribute__((always_inline)) float penalize(float l, int32_t c) {
    l = l <= 0 ? l * repeat_penalty : l / repeat_penalty;
    return l - ((float)c * frequency + presence);
}

static __attribute__((noinline)) void insertion_sort(int32_t *a, float *b, int32_t n) {
    for (int32_t i = 1; i < n; i++) {
        int32_t id = a[i];
        float l = b[i];
        int32_t j = i;
        while (j > 0 && realizar_before(id, l, a[j - 1], b[j - 1])) {
            a[j] = a[j - 1];
            b[j] = b[j - 1];
            j--;
        }
        a[j] = id;
        b[j] = l;
    }
}

/* adjust_full applies logit bias, then penalties, to the full logits in
 * the region (full mode). */
static void adjust_full(void) {
    float *l = (float *)region;
    for (int32_t k = 0; k < n_bias; k++) l[bias_ids[k]] = l[bias_ids[k]] + bias[bias_ids[k]];
    if (pen_on)
        for (int32_t k = 0; k < n_distinct; k++) l[distinct[k]] = penalize(l[distinct[k]], counts[distinct[k]]);
}

/* candidates fills ids/vals with the candidates in contract order after
 * logit bias and penalties (adjust_full, in full mode), and returns their
 * number. */
static int32_t candidates(int32_t count) {
    if (top_n) {
        int32_t n = count < top_n ? count : top_n;
        int32_t *rid = region;
        float *rl = (float *)(region + top_n);
        int moved = 0;
        for (int32_t i = 0; i < n; i++) {
            int32_t id = rid[i];
            float l = rl[i];
            if (id < 0 || id >= n_vocab) id = 0; /* cannot happen: the host selects */
            if (n_bias) {
                l = l + bias[id];
                moved = 1;
            }
            if (pen_on && counts[id] > 0) {
                l = penalize(l, counts[id]);
                moved = 1;
            }
            ids[i] = id;
            vals[i] = l;
        }
        if (moved) {
            /* nearly sorted: only adjusted entries move; heapsort when that could be long */
            if ((int64_t)(n_distinct + n_bias) * n <= 65536) insertion_sort(ids, vals, n);
            else realizar_sort(ids, vals, n);
        }
        return n;
    }
    float *l = (float *)region; /* adjust_full has applied bias and penalties */
    if (temperature <= 0) return realizar_select_top(l, n_vocab, 1, ids, vals);
    if (top_k > 0 && top_k < n_vocab) return realizar_select_top(l, n_vocab, top_k, ids, vals);
    for (int32_t i = 0; i < n_vocab; i++) {
        ids[i] = i;
        rkeys[i] = order_key(l[i]);
    }
    radix(rkeys, ids, rkeys2, ids2, n_vocab, 32);
    for (int32_t i = 0; i < n_vocab; i++) vals[i] = l[ids[i]];
    return n_vocab;
}

static inline __attribute__((always_inline)) int key_before(double ka, int32_t ia, double kb, int32_t ib) {
    return ka < kb || (ka == kb && ia < ib);
}

/* sort_keys sorts tidx[0..n) by (tkeys ascending, index ascending). */
static void sort_keys(int32_t n) {
    for (int32_t start = n / 2 - 1, end = n;;) {
        int32_t root;
        if (start >= 0) {
            root = start--;
        } else {
            if (--end <= 0) return;
            double tk = tkeys[0]; tkeys[0] = tkeys[end]; tkeys[end] = tk;
            int32_t ti = tidx[0]; tidx[0] = tidx[end]; tidx[end] = ti;
            root = 0;
        }
        for (;;) {
            int32_t c = 2 * root + 1;
            if (c >= end) break;
            if (c + 1 < end && key_before(tkeys[c], tidx[c], tkeys[c + 1], tidx[c + 1])) c++;
            if (!key_before(tkeys[root], tidx[root], tkeys[c], tidx[c])) break;
            double tk = tkeys[root]; tkeys[root] = tkeys[c]; tkeys[c] = tk;
            int32_t ti = tidx[root]; tidx[root] = tidx[c]; tidx[c] = ti;
            root = c;
        }
    }
}

static int32_t typical(int32_t n) {
    double sum = realizar_softmax(probs, vals, n, 1.0);
    if (!(sum > 0)) return n;
    double h = 0;
    for (int32_t i = 0; i < n; i++) {
        double p = probs[i] / sum;
        probs[i] = p;
        if (p > 0) h = h - p * realizar_log(p);
    }
    for (int32_t i = 0; i < n; i++) {
        double s = -realizar_log(probs[i]) - h;
        double a = s < 0 ? -s : s;
        if (a == 0) a = 0; /* -0 as +0, for the radix keys */
        tkeys[i] = a;
        tidx[i] = i;
    }
    if (rkeys) { /* full mode: radix on the bits of the non-negative scores */
        for (int32_t i = 0; i < n; i++) memcpy(&rkeys[i], &tkeys[i], 8);
        radix(rkeys, tidx, rkeys2, ids2, n, 64);
        for (int32_t i = 0; i < n; i++) memcpy(&tkeys[i], &rkeys[i], 8);
    } else {
        sort_keys(n);
    }
    double cum = 0;
    int32_t last = n;
    for (int32_t j = 0; j < n; j++) {
        cum = cum + probs[tidx[j]];
        if (cum > typical_p) {
            last = j + 1;
            break;
        }
    }
    for (int32_t j = 0; j < last; j++) {
        ids2[j] = ids[tidx[j]];
        vals2[j] = vals[tidx[j]];
    }
    for (int32_t j = 0; j < last; j++) {
        ids[j] = ids2[j];
        vals[j] = vals2[j];
    }
    realizar_sort(ids, vals, last);
    return last;
}

static int32_t nucleus(int32_t n) {
    double sum = realizar_softmax(probs, vals, n, 1.0);
    if (!(sum > 0)) return n;
    double cum = 0;
    for (int32_t i = 0; i < n; i++) {
        cum = cum + probs[i] / sum;
        if (cum >= top_p) return i + 1;
    }
    return n;
}

static int32_t minimum(int32_t n) {
    double sum = realizar_softmax(probs, vals, n, 1.0);
    if (!(sum > 0)) return n;
    double thr = min_p * probs[0];
    for (int32_t i = 1; i < n; i++)
        if (probs[i] < thr) return i;
    return n;
}

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
 * sort) on a non-finite logit or such a walk; *u is the uniform when it
 * has been drawn. Loops over the vocabulary do many entries per iteration
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
/* Test builds (plugins/standard_trace_test.go) log each whole_vocab step:
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

static __attribute__((noinline)) int32_t whole_vocab(double *u) {
    const float *l = (const float *)region;
    int32_t n = n_vocab, i = 0;

    /* max, min, finiteness */
    float mx = l[0], mn = l[0];
    int bad = 0;
    v128_t vmx = wasm_f32x4_splat(mx), vmn = vmx, vbad = wasm_i32x4_splat(0);
    for (; i + 64 <= n; i += 64) {
#pragma clang loop unroll(full)
        for (int j = 0; j < 64; j += 4) {
            v128_t x = wasm_v128_load(l + i + j);
            vbad = wasm_v128_or(vbad, wasm_f32x4_ne(wasm_f32x4_sub(x, x), wasm_f32x4_splat(0)));
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
        bad |= x - x != 0;
        mx = x > mx ? x : mx;
        mn = x < mn ? x : mn;
    }
    if (bad) return -1;
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
    int32_t nsig = bstart[NB]; /* ids before the ones never looked at */
    memset(bsorted, 0, sizeof bsorted);
    memset(bp_ok, 0, sizeof bp_ok);
    memset(bw_ok, 0, sizeof bw_ok);

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
        double thr = min_p * realizar_exp(((double)mx - wm) / 1.0);
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

REALIZAR_EXPORT("realizar_sample")
int32_t sample(int32_t prev, int32_t count) {
    if (!ready) {
        realizar_logs(REALIZAR_LOG_ERROR, "standard: sample before reset");
        return -1;
    }
    push(prev);
    double u = -1; /* the uniform, once drawn */
    if (!top_n) {
        adjust_full();
        if (temperature > 0 && !(top_k > 0 && top_k < n_vocab) && !(typical_p < 1.0)) {
            int32_t id = whole_vocab(&u);
            if (id >= 0) return id;
            TRACE(0, 0, 0, 0, 1);
        }
    }
    int32_t n = candidates(count);
    if (n <= 0) return -1;
    if (temperature <= 0) return ids[0];
    if (top_k > 0 && n > top_k) n = top_k;
    if (typical_p < 1.0) n = typical(n);
    if (top_p < 1.0) n = nucleus(n);
    if (min_p > 0.0) n = minimum(n);
    double sum = realizar_softmax(probs, vals, n, temperature);
    if (u < 0) u = realizar_rng_uniform(&rng);
    return ids[realizar_draw(probs, n, sum, u)];
}
