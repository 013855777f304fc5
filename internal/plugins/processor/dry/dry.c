/*
 * dry — processor: llama.cpp's DRY ("don't repeat yourself") repetition
 * penalty (originally from koboldcpp). Chain it before any sampler.
 *
 * Config (llama.cpp's server names; defaults in brackets):
 *   dry_multiplier      [0.8]  llama.cpp's default is 0.0 = off; loading
 *                              this plugin asks for DRY, so it is on (0 = off)
 *   dry_base            [1.75]
 *   dry_allowed_length  [2]    repeats longer than this are penalised
 *   dry_penalty_last_n  [64]   the last tokens scanned (prompt + output),
 *                              llama.cpp's default; 0 = off, -1 = all
 *   dry_sequence_breakers ["\n", ":", "\"", "*"]
 *
 * If the last tokens repeat an earlier sequence of length L >=
 * allowed_length, the token that followed that earlier sequence gets
 * logit -= multiplier · base^(L - allowed_length) (the largest L per token;
 * the exponent capped so the penalty stays finite in float32). A repeat
 * does not extend across a sequence breaker.
 *
 * Sequence breakers: llama.cpp also tokenizes the tail of a breaker that
 * starts inside a token; a guest has no tokenizer, so here a breaker is
 * any token whose piece contains a whole breaker string. For the default
 * one-character breakers the two rules are the same.
 *
 * Full-logits mode: the host copies the logits natively; the guest reads
 * and edits only the penalised ids, and scans the token history (O(n) per
 * step, the Z-algorithm as in llama.cpp).
 */
#include "realizar.h"

REALIZAR_MARKER(processor)

#define MAX_BREAKERS 64

static float multiplier = 0.8f, base = 1.75f;
static int32_t allowed = 2, last_n = 64;
static int32_t n_vocab, max_piece;
static float *region;       /* n_vocab logits, then n_vocab (id, logit) edits */
static int32_t *edits;
static uint8_t *breaker;    /* per id: 1 if its piece contains a breaker */
static int32_t *maxrep;     /* per id: the longest repeat it would extend (0 = none) */
static int32_t *touched, n_touched;
static int32_t *hist, hist_len, hist_cap;
static int32_t *rep;        /* the repeat counts of the scanned window */
static int32_t max_exponent;

static void *need(uint32_t n) { return realizar_alloc_bytes(n ? n : 1); }

static int contains(const uint8_t *h, int32_t hn, const uint8_t *nd, int32_t nn) {
    for (int32_t i = 0; i + nn <= hn; i++)
        if (realizar_memeq(h + i, nd, (uint32_t)nn)) return 1;
    return 0;
}

static int read_breakers(void) {
    static const uint8_t defaults[] = "\n:\"*";
    uint8_t *strs = (uint8_t *)defaults;
    int32_t lens[MAX_BREAKERS] = {1, 1, 1, 1}, n = 4;
    uint8_t *raw;
    int32_t raw_len;
    int r = realizar_config_raw("dry_sequence_breakers", &raw, &raw_len);
    if (r < 0) return r;
    if (r) {
        strs = need((uint32_t)raw_len + 1);
        if (!strs) return REALIZAR_ERR_FAILED;
        n = realizar_json_strings(raw, raw_len, strs, raw_len, lens, MAX_BREAKERS);
        if (n < 0) {
            realizar_logs(REALIZAR_LOG_ERROR, "dry: dry_sequence_breakers must be an array of at most 64 strings");
            return REALIZAR_ERR_CONFIG;
        }
    }
    uint8_t *piece = need((uint32_t)max_piece);
    if (!piece) return REALIZAR_ERR_FAILED;
    for (int32_t id = 0; id < n_vocab; id++) {
        int32_t pl = realizar_vocab_piece(id, piece, max_piece);
        if (pl > max_piece) pl = max_piece;
        int32_t off = 0;
        for (int32_t k = 0; k < n && pl > 0; k++) {
            if (lens[k] > 0 && lens[k] <= 40 && contains(piece, pl, strs + off, lens[k])) {
                breaker[id] = 1;
                break;
            }
            off += lens[k];
        }
    }
    return 0;
}

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t nv, int32_t mp, int32_t config_ptr, int32_t config_len) {
    (void)config_ptr; (void)config_len;
    if (nv <= 0 || mp <= 0) return REALIZAR_ERR_VOCAB;
    n_vocab = nv;
    max_piece = mp;
    double f;
    int r;
    if ((r = realizar_config_f64("dry_multiplier", &f)) < 0) return r;
    if (r) multiplier = (float)f;
    if ((r = realizar_config_f64("dry_base", &f)) < 0) return r;
    if (r) base = (float)f;
    if ((r = realizar_config_i32("dry_allowed_length", &allowed)) < 0) return r;
    if ((r = realizar_config_i32("dry_penalty_last_n", &last_n)) < 0) return r;
    if (last_n < -1 || allowed < 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "dry: dry_penalty_last_n must be >= -1 and dry_allowed_length >= 0");
        return REALIZAR_ERR_CONFIG;
    }
    region = need((uint32_t)nv * 12);
    breaker = need((uint32_t)nv);
    maxrep = need((uint32_t)nv * 4);
    touched = need((uint32_t)nv * 4);
    if (!region || !breaker || !maxrep || !touched) return REALIZAR_ERR_FAILED;
    edits = (int32_t *)(region + nv);
    memset(breaker, 0, (uint32_t)nv);
    memset(maxrep, 0, (uint32_t)nv * 4);
    if ((r = read_breakers()) < 0) return r;
    /* float32's largest log, as llama.cpp caps the exponent */
    if (base > 1.000001f) max_exponent = (int32_t)(88.7228391 / realizar_log((double)base));
    return realizar_pack_init((uint32_t)(uintptr_t)region, 0);
}

static int enabled(void) { return multiplier != 0.0f && base >= 1.0f && last_n != 0; }

/* grow makes room for n tokens of history (and their repeat counts). */
static int grow(int32_t n) {
    if (n <= hist_cap) return 0;
    int32_t cap = hist_cap ? hist_cap : 1024;
    while (cap < n) cap *= 2;
    int32_t *h = need((uint32_t)cap * 4), *rp = need((uint32_t)cap * 4);
    if (!h || !rp) return -1;
    memcpy(h, hist, (uint32_t)hist_len * 4);
    hist = h;
    rep = rp;
    hist_cap = cap;
    return 0;
}

static int push(int32_t id) {
    if (id < 0 || id >= n_vocab) return 0;
    if (last_n > 0 && hist_len == last_n) { /* keep the last last_n */
        memmove(hist, hist + 1, (uint32_t)(last_n - 1) * 4);
        hist_len--;
    }
    if (grow(hist_len + 1) != 0) return -1;
    hist[hist_len++] = id;
    return 0;
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    (void)seed;
    hist_len = 0;
    if (!enabled() || n_prompt <= 0) return 0;
    if (grow(n_prompt) != 0) return REALIZAR_ERR_FAILED;
    int32_t n = realizar_prompt_get(hist, n_prompt);
    hist_len = n < n_prompt ? n : n_prompt;
    if (last_n > 0 && hist_len > last_n) {
        memmove(hist, hist + hist_len - last_n, (uint32_t)last_n * 4);
        hist_len = last_n;
    }
    for (int32_t i = 0; i < hist_len; i++)
        if (hist[i] < 0 || hist[i] >= n_vocab) hist[i] = 0;
    return 0;
}

/* rat(i) is the i-th token from the end (0 = the last). */
#define rat(i) hist[hist_len - 1 - (i)]

REALIZAR_EXPORT("realizar_process")
int32_t process(int32_t prev, int32_t count) {
    if (!enabled()) return 0;
    if (push(prev) != 0) return REALIZAR_ERR_FAILED;
    if (count != n_vocab) return REALIZAR_ERR_STATE;
    int32_t n = hist_len;
    if (n <= allowed) return 0;

    /* 1: a breaker limits how far back a repeat may reach */
    int32_t rep_limit = n;
    for (int32_t i = 0; i < n; i++) {
        if (breaker[rat(i)]) {
            rep_limit = i;
            break;
        }
    }
    if (rep_limit < allowed) return 0;

    /* 2: rep[last - k] = the length of the longest suffix that also ends
     * k tokens before the end (Z-algorithm, backwards), capped */
    int32_t last = n - 1;
    for (int32_t i = 0; i < n; i++) rep[i] = 0;
    int32_t lt = 0, rt = 0;
    for (int32_t k = 1; k < n; k++) {
        if (k > rt) {
            int32_t m = 0;
            while (m + k < n && rat(m) == rat(m + k)) m++;
            rep[last - k] = m < rep_limit ? m : rep_limit;
            if (m > 0) {
                lt = k;
                rt = k + m - 1;
            }
        } else {
            int32_t p = k - lt, right = rt - k + 1;
            if (rep[last - p] < right) {
                int32_t m = rep[last - p];
                rep[last - k] = m < rep_limit ? m : rep_limit;
            } else {
                int32_t i = rt + 1;
                while (i < n && rat(i) == rat(i - k)) i++;
                int32_t m = i - k;
                rep[last - k] = m < rep_limit ? m : rep_limit;
                lt = k;
                rt = i - 1;
            }
        }
    }

    /* 3: the token after each repeat would extend it */
    n_touched = 0;
    for (int32_t i = 0; i < n - 1; i++) {
        int32_t len = rep[i];
        if (len < allowed) continue;
        int32_t tok = rat(n - 2 - i);
        if (maxrep[tok] == 0) touched[n_touched++] = tok;
        if (maxrep[tok] < len) maxrep[tok] = len;
    }

    /* 4: penalties, as edits */
    float *logits = region;
    int32_t e = 0;
    for (int32_t t = 0; t < n_touched; t++) {
        int32_t tok = touched[t];
        int32_t len = maxrep[tok];
        maxrep[tok] = 0;
        if (breaker[tok]) continue;
        int32_t x = len - allowed;
        if (max_exponent > 0 && x > max_exponent) x = max_exponent;
        double pw = 1;
        for (int32_t k = 0; k < x; k++) pw = pw * (double)base;
        float penalty = (float)((double)multiplier * pw);
        edits[2 * e] = tok;
        ((float *)edits)[2 * e + 1] = logits[tok] - penalty;
        e++;
    }
    return e;
}
