/*
 * mirostat-v2 — sampler: Mirostat 2.0 (Basu et al., 2021) after a
 * temperature, as llama.cpp chains it (temp -> mirostat_v2), in the
 * contract's arithmetic plus the SDK's Log.
 *
 * Config: temperature [0.8], mirostat_tau [5.0] (target surprise, bits),
 * mirostat_eta [0.1] (learning rate), log_mu [false] (log "mu=0x<bits>" at
 * debug level after every step, for tests).
 *
 * Per turn: mu = 2·tau, the RNG from the seed. Per step, over the full
 * logits l (this sampler needs every probability, so it reads the whole
 * vocabulary: eight entries per loop iteration):
 *   T = temperature (<= 0: the argmax, no draw, mu unchanged)
 *   m = the largest logit; e_i = Exp((l_i - m) / T) (0 for NaN);
 *   S = Σ e_i in id order
 *   keep K = {i : e_i / S >= Exp(-mu · ln 2)} (a surprise of at most mu
 *   bits), at least the best candidate
 *   K in contract order; p = Softmax(K, T), sum; j = Draw(p, sum, uniform)
 *   surprise = -Log(p_j / sum) / ln 2;  mu = mu - eta · (surprise - tau)
 */
#include "realizar.h"

REALIZAR_MARKER(sampler)

#define LN2 0x1.62e42fefa39efp-1

static double temperature = 0.8, tau = 5.0, eta = 0.1, mu;
static int log_mu;
static int32_t n_vocab;
static float *region;
static int32_t *ids;
static float *vals;
static double *probs;
static realizar_rng rng;
static int ready;

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t nv, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    (void)max_piece; (void)config_ptr; (void)config_len;
    if (nv <= 0) return REALIZAR_ERR_VOCAB;
    n_vocab = nv;
    int r;
    if ((r = realizar_config_f64("temperature", &temperature)) < 0) return r;
    if ((r = realizar_config_f64("mirostat_tau", &tau)) < 0) return r;
    if ((r = realizar_config_f64("mirostat_eta", &eta)) < 0) return r;
    if ((r = realizar_config_bool("log_mu", &log_mu)) < 0) return r;
    region = realizar_alloc_bytes((uint32_t)nv * 4);
    ids = realizar_alloc_bytes((uint32_t)nv * 4);
    vals = realizar_alloc_bytes((uint32_t)nv * 4);
    probs = realizar_alloc_bytes((uint32_t)nv * 8);
    if (!region || !ids || !vals || !probs) return REALIZAR_ERR_FAILED;
    return realizar_pack_init((uint32_t)(uintptr_t)region, 0);
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    (void)n_prompt;
    realizar_rng_seed(&rng, (uint64_t)seed);
    mu = 2 * tau;
    ready = 1;
    return 0;
}

static void report(void) {
    if (!log_mu) return;
    char msg[21] = "mu=0x";
    uint64_t b;
    memcpy(&b, &mu, 8);
    for (int i = 0; i < 16; i++) msg[5 + i] = "0123456789abcdef"[(b >> (60 - 4 * i)) & 15];
    realizar_log_msg(REALIZAR_LOG_DEBUG, msg, 21);
}

REALIZAR_EXPORT("realizar_sample")
int32_t sample(int32_t prev, int32_t count) {
    (void)prev;
    if (!ready || count != n_vocab) return -1;
    realizar_select_top(region, n_vocab, 1, ids, vals);
    if (temperature <= 0) return ids[0];
    double m = (double)vals[0];
    if (m != m || m < -0x1.fffffffffffffp1023) return ids[0]; /* nothing finite */
    /* e_i (0 for NaN) into probs and S in id order, four per iteration */
    double s = 0;
    int32_t i = 0;
    for (; i + 4 <= n_vocab; i += 4) {
        for (int j = 0; j < 4; j++) {
            float l = region[i + j];
            double e = l == l ? realizar_exp(((double)l - m) / temperature) : 0;
            probs[i + j] = e;
            s += e;
        }
    }
    for (; i < n_vocab; i++) {
        float l = region[i];
        double e = l == l ? realizar_exp(((double)l - m) / temperature) : 0;
        probs[i] = e;
        s += e;
    }
    /* K: e_i / S >= 2^-mu (a surprise of at most mu bits) */
    double thr = realizar_exp(-mu * LN2);
    int32_t n = 0;
    for (i = 0; i + 4 <= n_vocab; i += 4) {
        for (int j = 0; j < 4; j++) {
            if (probs[i + j] / s >= thr) {
                ids[n] = i + j;
                vals[n] = region[i + j];
                n++;
            }
        }
    }
    for (; i < n_vocab; i++) {
        if (probs[i] / s >= thr) {
            ids[n] = i;
            vals[n] = region[i];
            n++;
        }
    }
    if (n == 0) {
        realizar_select_top(region, n_vocab, 1, ids, vals);
        n = 1;
    }
    realizar_sort(ids, vals, n);
    double sum = realizar_softmax(probs, vals, n, temperature);
    int32_t j = realizar_draw(probs, n, sum, realizar_rng_uniform(&rng));
    double surprise = -realizar_log(probs[j] / sum) / LN2;
    mu = mu - eta * (surprise - tau);
    report();
    return ids[j];
}
