/*
 * standard — sampler: llama.cpp's default chain with its default
 * parameters, in the contract's arithmetic. The chain and every operation
 * are specified in ../chain.go (package standard), which the Go build of this
 * sampler runs; this file performs the same operations in the same order,
 * and the cross-language test checks that both choose the same tokens.
 * One exception: with top_k 0 (full logits) whole_vocab reaches the same
 * sums and cut points without sorting the vocabulary (see there; the
 * trace test, internal/plugins/standard_trace_test.go, compares them bit for bit;
 * the code is in whole_vocab.c, included below).
 *
 * Config keys (JSON numbers unless stated; defaults in brackets):
 *   temperature [0.8], top_k [40], top_p [0.95], min_p [0.05],
 *   typical_p [1.0], repeat_penalty [1.0], presence_penalty [0.0],
 *   frequency_penalty [0.0], repeat_last_n [64], top_n_sigma [0: off],
 *   xtc_probability [0: off], xtc_threshold [0.1], dynatemp_range [0: off],
 *   dynatemp_exponent [1], mirostat [0: off; 1: Mirostat], mirostat_tau [5],
 *   mirostat_eta [0.1],
 *   logit_bias [none]: {"id": bias, ...} or [[id, bias], ...]; false = -inf,
 *   samplers [penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature]:
 *   the chain's order, a list of names or a ";"-separated string (config.go's
 *   ParseSamplers; names and aliases as its samplerNames).
 * Ranges (as config.go's Config.Check): temperature >= 0 (0 is greedy);
 * top_k >= 0; top_p, min_p and typical_p in [0, 1]; repeat_penalty > 0;
 * presence_penalty and frequency_penalty in [-2, 2]; repeat_last_n >= -1;
 * top_n_sigma >= 0 or -1 (off); xtc_probability in [0, 1]; xtc_threshold
 * in [0, 0.5]; dynatemp_range and dynatemp_exponent >= 0; mirostat 0 or 1;
 * mirostat_tau and mirostat_eta >= 0; samplers entries known, offered, once
 * each, penalties first (dry aside).
 * Another key is refused, naming it.
 */
#include "realizar.h"

#include <wasm_simd128.h> /* built with -msimd128 (internal/plugins/build.sh) */

/* COLD marks code off the per-step hot path (config, and the opt-in
 * stages), compiled for size and kept out of line so that the module stays
 * under 40 KiB (TestBuiltin). */
#define COLD __attribute__((minsize, noinline))

#define LN2 0x1.62e42fefa39efp-1

REALIZAR_MARKER(sampler)
REALIZAR_ALLOC_EXPORT

/* The config keys, in the order of chain.go's Keys. */
static const char *const keys[] = {"temperature", "top_k", "top_p", "min_p", "typical_p", "repeat_penalty",
                                   "repeat_last_n", "presence_penalty", "frequency_penalty", "logit_bias",
                                   "top_n_sigma", "xtc_probability", "xtc_threshold", "dynatemp_range",
                                   "dynatemp_exponent", "samplers", "mirostat", "mirostat_tau", "mirostat_eta"};

/* config */
static double temperature = 0.8, top_p = 0.95, min_p = 0.05, typical_p = 1.0;
static double top_n_sigma = 0, xtc_p = 0, xtc_t = 0.1, dyn_range = 0, dyn_exp = 1;
static double sigma_cut; /* top-n-sigma's threshold this step */
static int32_t top_k = 40, last_n = 64;
static int32_t mirostat;                   /* 1: Mirostat replaces the stages */
static double m_tau = 5, m_eta = 0.1, mu;  /* its target, rate and threshold (bits) */
static double mt[99];                      /* t_i = Log((i+2)/(i+1)), chain.go's MirostatM - 1 */
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

COLD static int parse_bias(const uint8_t *s, int32_t n) {
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

/* append copies the string p to buf at k and returns the new length. */
static int32_t append(char *buf, int32_t k, const char *p) {
    while (*p) buf[k++] = *p++;
    return k;
}

/* ---- config: samplers (config.go's ParseSamplers, stages, neutralize, plan) ---- */

static const struct { const char *name; char stage; } sampler_names[] = {
    {"penalties", 'e'}, {"dry", 'd'}, {"top_n_sigma", 's'}, {"top_k", 'k'}, {"typ_p", 'y'},
    {"typical_p", 'y'}, {"typ", 'y'}, {"top_p", 'p'}, {"nucleus", 'p'}, {"min_p", 'm'},
    {"xtc", 'x'}, {"temperature", 't'}, {"temp", 't'}, {"infill", 'i'}, {"adaptive_p", 'a'}};

static char listed[16] = "edskypmxt"; /* the samplers entries' stages */
static int32_t n_listed = 9;
static char order[8]; /* the stages that run (chain.go's Chain.order) */
static int32_t n_order;
static int k_early, sigma_all, canon; /* canon: order is the default's relative order */

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* name_is: s[0..n) is canon in ASCII case, each '_' as '_' (mode 0), '-'
 * (mode 1) or left out (mode 2). */
static int name_is(const uint8_t *s, int32_t n, const char *p, int mode) {
    int32_t i = 0;
    for (; *p; p++) {
        char want = *p;
        if (want == '_' && mode == 2) continue;
        if (want == '_' && mode == 1) want = '-';
        if (i >= n) return 0;
        uint8_t c = s[i++];
        if (c >= 'A' && c <= 'Z') c = (uint8_t)(c + 32);
        if (c != (uint8_t)want) return 0;
    }
    return i == n;
}

static int has_stage(char st) {
    for (int32_t j = 0; j < n_listed; j++)
        if (listed[j] == st) return 1;
    return 0;
}

/* add_stage resolves the entry s[0..n) (spaces around it dropped) and
 * appends its stage, or logs config.go's SamplerError and returns -1. */
COLD static int add_stage(const uint8_t *s, int32_t n) {
    while (n > 0 && is_space(s[0])) s++, n--;
    while (n > 0 && is_space(s[n - 1])) n--;
    char st = 0;
    for (int32_t k = 0; !st && k < (int32_t)(sizeof sampler_names / sizeof sampler_names[0]); k++)
        for (int mode = 0; !st && mode < 3; mode++)
            if (name_is(s, n, sampler_names[k].name, mode)) st = sampler_names[k].stage;
    const char *why = 0;
    if (!st) why = "is unknown";
    else if (st == 'i' || st == 'a') why = "is not offered";
    for (int32_t j = 0; !why && j < n_listed; j++) {
        if (listed[j] == st) why = "is listed twice";
        else if (st == 'e' && listed[j] != 'd') why = "must come before every stage but dry";
    }
    if (why) {
        char buf[96];
        int32_t k = append(buf, 0, "config: samplers: \"");
        for (int32_t i = 0; i < n && i < 32; i++) buf[k++] = (char)s[i];
        k = append(buf, k, "\" ");
        k = append(buf, k, why);
        realizar_log_msg(REALIZAR_LOG_ERROR, buf, k);
        return -1;
    }
    listed[n_listed++] = st;
    return 0;
}

/* parse_samplers reads the samplers value s[0..n) (a JSON list of strings
 * without escapes, else names separated by ';'); with apply 0 it only
 * checks the list's shape (-2 when wrong), with apply 1 it adds the stages
 * (-1 on a bad entry, logged). */
COLD static int parse_samplers(const uint8_t *s, int32_t n, int apply) {
    int32_t a = 0, b = n;
    while (a < b && is_space(s[a])) a++;
    while (b > a && is_space(s[b - 1])) b--;
    if (a == b) return 0;
    if (s[a] == '{') return -2;
    if (s[a] != '[') {
        for (int32_t i = 0, from = 0; i <= n; i++)
            if (i == n || s[i] == ';') {
                if (apply && add_stage(s + from, i - from)) return -1;
                from = i + 1;
            }
        return 0;
    }
    int32_t i = ws(s, b, a + 1);
    if (i < b && s[i] == ']') return ws(s, b, i + 1) == b ? 0 : -2;
    for (;;) {
        if (i >= b || s[i] != '"') return -2;
        int32_t j = i + 1;
        while (j < b && s[j] != '"' && s[j] != '\\' && s[j] >= 0x20) j++;
        if (j >= b || s[j] != '"') return -2;
        if (apply && add_stage(s + i + 1, j - i - 1)) return -1;
        i = ws(s, b, j + 1);
        if (i < b && s[i] == ',') {
            i = ws(s, b, i + 1);
            continue;
        }
        if (i < b && s[i] == ']') return ws(s, b, i + 1) == b ? 0 : -2;
        return -2;
    }
}

/* plan turns off the stages not listed and sets order, k_early, sigma_all
 * (chain.go's neutralize and plan) and canon. */
COLD static void plan(void) {
    if (mirostat) { /* chain.go's neutralize: only the temperature */
        top_n_sigma = 0, top_k = 0, typical_p = 1, top_p = 1, min_p = 0, xtc_p = 0, dyn_range = 0;
        repeat_penalty = 1.0f, presence = 0.0f, frequency = 0.0f;
        for (int32_t i = 0; i < 99; i++) mt[i] = realizar_log((double)(i + 2) / (double)(i + 1));
        return;
    }
    if (!has_stage('s')) top_n_sigma = 0;
    if (!has_stage('k')) top_k = 0;
    if (!has_stage('y')) typical_p = 1;
    if (!has_stage('p')) top_p = 1;
    if (!has_stage('m')) min_p = 0;
    if (!has_stage('x')) xtc_p = 0;
    if (!has_stage('t')) temperature = 1, dyn_range = 0;
    int wide = 0, dropped = 0;
    canon = 1;
    for (int32_t j = 0; j < n_listed; j++) {
        char st = listed[j];
        int on = st == 's' ? top_n_sigma > 0 : st == 'k' ? top_k > 0 : st == 'y' ? typical_p < 1.0
               : st == 'p' ? top_p < 1.0 : st == 'm' ? min_p > 0.0 : st == 'x' ? xtc_p > 0 : st == 't';
        if (!on) continue;
        order[n_order++] = st;
        if (st == 's') sigma_all = !dropped;
        else if (st == 'k') k_early = !wide, dropped = 1;
        else if (st == 't') wide |= dyn_range > 0;
        else wide = dropped = 1;
    }
    const char *rank = "skypmxt";
    for (int32_t j = 1; j < n_order; j++) {
        int32_t a = 0, b = 0;
        while (rank[a] != order[j - 1]) a++;
        while (rank[b] != order[j]) b++;
        if (a > b) canon = 0;
    }
}

/* ---- init ---- */

/* pen: repeat, presence and frequency penalty as read (float32 once
 * checked); unread marks the integers of read_config's table. */
static double pen[3] = {1, 0, 0}, unread;

COLD static int read_config(void) {
    int r;
    if ((r = realizar_config_i32("top_k", &top_k)) < 0) return r;
    if ((r = realizar_config_i32("repeat_last_n", &last_n)) < 0) return r;
    if ((r = realizar_config_i32("mirostat", &mirostat)) < 0) return r;
    /* Each value with its range [lo, hi] and the range's words, in the
     * order of config.go's Check (the first value out of range is named). */
    static const struct { const char *key; double *v, lo, hi; const char *want; } vals[] = {
        {"temperature", &temperature, 0, __builtin_inf(), ">= 0"},
        {"top_k", &unread, 0, 0, ">= 0"},
        {"top_p", &top_p, 0, 1, "in [0, 1]"},
        {"min_p", &min_p, 0, 1, "in [0, 1]"},
        {"typical_p", &typical_p, 0, 1, "in [0, 1]"},
        {"repeat_penalty", &pen[0], 0x1p-149, __builtin_inf(), "> 0"}, /* as a float32: > 0 */
        {"presence_penalty", &pen[1], -2, 2, "in [-2, 2]"},
        {"frequency_penalty", &pen[2], -2, 2, "in [-2, 2]"},
        {"repeat_last_n", &unread, 0, 0, ">= -1"},
        {"top_n_sigma", &top_n_sigma, 0, __builtin_inf(), "-1 or >= 0 (-1 and 0 are off)"},
        {"xtc_probability", &xtc_p, 0, 1, "in [0, 1]"},
        {"xtc_threshold", &xtc_t, 0, 0.5, "in [0, 0.5]"},
        {"dynatemp_range", &dyn_range, 0, __builtin_inf(), ">= 0"},
        {"dynatemp_exponent", &dyn_exp, 0, __builtin_inf(), ">= 0"},
        {"mirostat", &unread, 0, 0, "0 or 1 (2 is the mirostat-v2 sampler)"},
        {"mirostat_tau", &m_tau, 0, __builtin_inf(), ">= 0"},
        {"mirostat_eta", &m_eta, 0, __builtin_inf(), ">= 0"},
    };
    int32_t n = (int32_t)(sizeof vals / sizeof vals[0]);
    for (int32_t i = 0; i < n; i++)
        if (vals[i].v != &unread && (r = realizar_config_f64(vals[i].key, vals[i].v)) < 0) return r;
    repeat_penalty = (float)pen[0];
    presence = (float)pen[1];
    frequency = (float)pen[2];
    pen[0] = repeat_penalty; /* checked as the float32 it became */
    for (int32_t i = 0; i < n; i++) {
        double v = *vals[i].v;
        int ok = v >= vals[i].lo && v <= vals[i].hi;
        if (i == 1) ok = top_k >= 0;
        if (i == 8) ok = last_n >= -1;
        if (i == 14) ok = mirostat == 0 || mirostat == 1;
        if (vals[i].v == &top_n_sigma) ok |= v == -1;
        if (!ok) {
            char buf[96];
            int32_t k = append(buf, 0, "config: ");
            k = append(buf, k, vals[i].key);
            k = append(buf, k, " must be ");
            k = append(buf, k, vals[i].want);
            realizar_log_msg(REALIZAR_LOG_ERROR, buf, k);
            return REALIZAR_ERR_CONFIG;
        }
    }
    uint8_t *raw;
    int32_t len;
    if ((r = realizar_config_raw("samplers", &raw, &len)) < 0) return r;
    if (r) {
        if (parse_samplers(raw, len, 0) != 0) {
            realizar_logs(REALIZAR_LOG_ERROR, "config: samplers must be a list of names or a \";\"-separated string");
            return REALIZAR_ERR_CONFIG;
        }
        n_listed = 0;
        if (parse_samplers(raw, len, 1) != 0) return REALIZAR_ERR_CONFIG;
    }
    if ((r = realizar_config_raw("logit_bias", &raw, &len)) < 0) return r;
    if (r && parse_bias(raw, len) != 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "standard: logit_bias must be {\"id\": bias} or [[id, bias]] with ids in the vocabulary");
        return REALIZAR_ERR_CONFIG;
    }
    return 0;
}

/* greedy: temperature 0 without a dynamic range (chain.go's greedy). */
static int greedy(void) { return temperature <= 0 && dyn_range <= 0; }

REALIZAR_EXPORT("realizar_init")
COLD int64_t init(int32_t nv, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    (void)max_piece;
    if (nv <= 0) return REALIZAR_ERR_VOCAB;
    n_vocab = nv;
    int r = realizar_config_check_keys((const uint8_t *)(uintptr_t)config_ptr, config_len, keys,
                                       (int32_t)(sizeof keys / sizeof keys[0]));
    if (r < 0) return r;
    r = read_config();
    if (r < 0) return r;
    plan();
    pen_on = has_stage('e') && last_n != 0 && (repeat_penalty != 1.0f || presence != 0.0f || frequency != 0.0f);

    /* Top-N mode when the top-N candidates of the raw logits are sure to
     * hold the top_k of the adjusted ones: no adjustment raises a logit,
     * and N leaves room for every id an adjustment may lower. See chain.go. */
    int raises = repeat_penalty < 1.0f || presence < 0.0f || frequency < 0.0f;
    int64_t lowered = pen_on ? (last_n < 0 ? (int64_t)n_vocab : last_n) : 0;
    for (int32_t k = 0; k < n_bias; k++) {
        if (bias[bias_ids[k]] > 0) raises = 1;
        else if (bias[bias_ids[k]] < 0) lowered++;
    }
    int64_t want = greedy() ? 1 : k_early ? top_k : 0;
    top_n = 0;
    if (want >= 1 && !(pen_on && raises) && !(n_bias && raises) && !(top_n_sigma > 0)) {
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
COLD int32_t reset(int64_t seed, int32_t n_prompt) {
    realizar_rng_seed(&rng, (uint64_t)seed);
    mu = 2 * m_tau;
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

/* sigma_cut_of is top-n-sigma's threshold over the n logits l in their
 * order (chain.go's sigmaCutOf): the maximum minus top_n_sigma deviations,
 * -Inf skipped; NaN when a logit is NaN. Two passes over the whole
 * vocabulary when top-n-sigma is first: eight entries per iteration (ABI
 * section 6), each added in order. */
static __attribute__((noinline)) double sigma_cut_of(const float *l, int32_t n) {
    double mx = -__builtin_inf(), sum = 0, acc = 0;
    int32_t k = 0, i = 0;
    for (; i + 8 <= n; i += 8) {
#pragma clang loop unroll(full)
        for (int32_t j = 0; j < 8; j++) {
            double x = (double)l[i + j];
            if (x == -__builtin_inf()) continue;
            if (x > mx) mx = x;
            sum = sum + x;
            k++;
        }
    }
    for (; i < n; i++) {
        double x = (double)l[i];
        if (x == -__builtin_inf()) continue;
        if (x > mx) mx = x;
        sum = sum + x;
        k++;
    }
    if (k == 0) return -__builtin_inf();
    double mean = sum / (double)k;
    for (i = 0; i + 8 <= n; i += 8) {
#pragma clang loop unroll(full)
        for (int32_t j = 0; j < 8; j++) {
            double x = (double)l[i + j];
            if (x == -__builtin_inf()) continue;
            double d = x - mean;
            acc = acc + d * d;
        }
    }
    for (; i < n; i++) {
        double x = (double)l[i];
        if (x == -__builtin_inf()) continue;
        double d = x - mean;
        acc = acc + d * d;
    }
    return mx - top_n_sigma * __builtin_sqrt(acc / (double)k);
}

/* adjust_full applies logit bias, then penalties, to the full logits in
 * the region (full mode). */
static void adjust_full(void) {
    float *l = (float *)region;
    for (int32_t k = 0; k < n_bias; k++) l[bias_ids[k]] = l[bias_ids[k]] + bias[bias_ids[k]];
    if (pen_on)
        for (int32_t k = 0; k < n_distinct; k++) l[distinct[k]] = penalize(l[distinct[k]], counts[distinct[k]]);
}

static int32_t sort_all(void);

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
    if (top_n_sigma > 0 && sigma_all) sigma_cut = sigma_cut_of(l, n_vocab);
    if (greedy()) return realizar_select_top(l, n_vocab, 1, ids, vals);
    if (mirostat) return realizar_select_top(l, n_vocab, 100, ids, vals);
    if (k_early && top_k < n_vocab) return realizar_select_top(l, n_vocab, top_k, ids, vals);
    return sort_all();
}

/* sort_all fills ids/vals with the n_vocab adjusted logits of the region in
 * contract order (chain.go's sortAll) and returns n_vocab. */
static int32_t sort_all(void) {
    float *l = (float *)region;
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

/* entropy sets probs[0..n) to Softmax(T=t)/sum and returns their entropy
 * H = sum of -p * Log(p) over p > 0; -1 when every probability is 0. */
static double entropy(int32_t n, double t) {
    double sum = realizar_softmax(probs, vals, n, t);
    if (!(sum > 0)) return -1;
    double h = 0;
    for (int32_t i = 0; i < n; i++) {
        double p = probs[i] / sum;
        probs[i] = p;
        if (p > 0) h = h - p * realizar_log(p);
    }
    return h;
}

static int32_t typical(int32_t n, double t) {
    double h = entropy(n, t);
    if (h < 0) return n;
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

static int32_t nucleus(int32_t n, double t) {
    double sum = realizar_softmax(probs, vals, n, t);
    if (!(sum > 0)) return n;
    double cum = 0;
    for (int32_t i = 0; i < n; i++) {
        cum = cum + probs[i] / sum;
        if (cum >= top_p) return i + 1;
    }
    return n;
}

static int32_t minimum(int32_t n, double t) {
    double sum = realizar_softmax(probs, vals, n, t);
    if (!(sum > 0)) return n;
    double thr = min_p * probs[0];
    for (int32_t i = 1; i < n; i++)
        if (probs[i] < thr) return i;
    return n;
}

/* sigma masks the candidates below sigma_cut (-inf in their place). */
COLD static void sigma(int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if ((double)vals[i] < sigma_cut) vals[i] = -__builtin_inff();
}

/* xtc is the XTC stage at temperature t with the step's uniform u. */
COLD static int32_t xtc(int32_t n, double t, double u) {
    if (u > xtc_p) return n;
    double sum = realizar_softmax(probs, vals, n, t);
    if (!(sum > 0)) return n;
    int32_t last = 0;
    for (int32_t i = 0; i < n; i++) {
        if (!(probs[i] / sum >= xtc_t)) break;
        last = i;
    }
    if (last == 0) return n;
    memmove(ids, ids + last, (uint32_t)(n - last) * 4);
    memmove(vals, vals + last, (uint32_t)(n - last) * 4);
    return n - last;
}

/* pow_ is x^e for x >= 0: Exp(e * Log(x)); 1 for e = 0, 0 for x = 0. */
COLD static double pow_(double x, double e) {
    if (e == 0) return 1;
    if (!(x > 0)) return 0;
    return realizar_exp(e * realizar_log(x));
}

/* dynamic_temperature is the step's temperature from the entropy of the
 * n >= 2 candidates (chain.go's stage 8). */
COLD static double dynamic_temperature(int32_t n) {
    double h = entropy(n, 1.0);
    if (h < 0) return temperature;
    double lo = temperature - dyn_range, hi = temperature + dyn_range;
    if (lo < 0) lo = 0;
    return lo + (hi - lo) * pow_(h / realizar_log((double)n), dyn_exp);
}

/* ---- top_k 0: whole_vocab ---- */

#include "whole_vocab.c"

/* mirostat_step is chain.go's mirostatStep over the n best candidates.
 * Past them, the best k come from whole_vocab's buckets, sorted only as
 * far as k reaches; when k is the whole vocabulary, whole_vocab draws
 * (top_p is 1 and min_p 0 under mirostat): the same sum and the same id
 * without sorting. */
COLD static int32_t mirostat_step(int32_t n) {
    double t = temperature;
    int32_t m = n < 100 ? n : 100;
    double num = 0, den = 0;
    for (int32_t i = 0; i < m - 1; i++) {
        double b = ((double)vals[i] - (double)vals[i + 1]) / t;
        num = num + mt[i] * b;
        den = den + mt[i] * mt[i];
    }
    double s = num / den, eps = s - 1;
    double x = eps * realizar_exp(mu * LN2) / (1 - realizar_exp(-eps * realizar_log((double)n_vocab)));
    double kf = pow_(x, 1 / s), u = -1;
    int32_t k = kf >= (double)n_vocab ? n_vocab : kf >= 1 ? (int32_t)kf : 1;
    if (k <= n) {
        n = k;
    } else if (k < n_vocab && bucket_all() >= k) {
        /* the best k: whole_vocab's buckets that hold them, sorted */
        for (int32_t b = 0; b < NB && bstart[b] < k; b++) sort_bucket(b);
        n = k;
    } else if (k == n_vocab && (n = whole_vocab(&u)) >= 0) {
        double p = realizar_exp(((double)((const float *)region)[n] - wm) / t);
        mu = mu - m_eta * (-realizar_log(p / wv_sum) / LN2 - m_tau);
        return n;
    } else if ((int64_t)k * 8 < n_vocab) {
        n = realizar_select_top((const float *)region, n_vocab, k, ids, vals);
    } else {
        sort_all();
        n = k; /* k <= n_vocab */
    }
    double sum = realizar_softmax(probs, vals, n, t);
    if (!(sum > 0)) return ids[0];
    int32_t j = 0;
    if (n >= 2) {
        if (u < 0) u = realizar_rng_uniform(&rng);
        j = realizar_draw(probs, n, sum, u);
    }
    mu = mu - m_eta * (-realizar_log(probs[j] / sum) / LN2 - m_tau);
    return ids[j];
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
        if (canon && !mirostat && temperature > 0 && !(top_k > 0 && top_k < n_vocab) && !(typical_p < 1.0) && !(top_n_sigma > 0) &&
            !(xtc_p > 0) && !(dyn_range > 0)) {
            int32_t id = whole_vocab(&u);
            if (id >= 0) return id;
            TRACE(0, 0, 0, 0, 1);
        }
    }
    int32_t n = candidates(count);
    if (n <= 0) return -1;
    if (greedy()) return ids[0];
    if (mirostat) return mirostat_step(n);
    double t = 1; /* 1 until the temperature stage (chain.go's Sample) */
    for (int32_t s = 0; s < n_order; s++) {
        switch (order[s]) {
        case 's':
            if (!sigma_all) sigma_cut = sigma_cut_of(vals, n);
            sigma(n);
            break;
        case 'k':
            if (n > top_k) n = top_k;
            break;
        case 'y': n = typical(n, t); break;
        case 'p': n = nucleus(n, t); break;
        case 'm': n = minimum(n, t); break;
        case 'x':
            if (n >= 2) n = xtc(n, t, realizar_rng_uniform(&rng));
            break;
        case 't':
            t = temperature;
            if (dyn_range > 0) {
                if (n < 2) return ids[0];
                if ((t = dynamic_temperature(n)) <= 0) return ids[0];
            }
            break;
        }
    }
    double sum = realizar_softmax(probs, vals, n, t);
    if (u < 0) u = realizar_rng_uniform(&rng);
    return ids[realizar_draw(probs, n, sum, u)];
}
