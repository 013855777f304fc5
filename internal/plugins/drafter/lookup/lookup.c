/*
 * lookup — drafter, ABI 2 (abi/ABI.md §12): n-gram prompt lookup, the
 * reference drafter. It drafts the tokens that followed the latest earlier
 * occurrence of the sequence's trailing n-gram (the longest of max_ngram
 * down to min_ngram tokens that occurred before) in the sequence's own
 * prompt and output; past the end of the sequence the copy runs on into
 * the draft's own tokens (a loop drafts a whole draft, not its period).
 * The draft length is the one expected to yield the most tokens per unit
 * of a verify pass's cost, (1 + p + ... + p^k) / (1 + 0.2 k), where p is
 * the decayed share of drafted tokens accepted (start 0.85, weight 4,
 * decay 0.9 a draft), counted apart for each length of n-gram matched; a
 * draft of which nothing was accepted, from the
 * second such in a row, pauses drafting for a number of calls that doubles
 * with each (up to 16). The same rules and arithmetic as the host's
 * built-in lookup (package draft), so both draft alike.
 *
 * Config (all optional):
 *   min_ngram  [2]  shortest n-gram looked up, >= 1
 *   max_ngram  [4]  longest, >= min_ngram
 *   max_draft  [32] longest draft, 1..32
 *
 * The sequence lives in the guest's memory, given once: the prompt at
 * reset, then the tokens that joined it at each draft call.
 */
#include "realizar.h"

REALIZAR_MARKER_V2(drafter)
REALIZAR_ALLOC_EXPORT

#define MAX_PAUSE 16
#define ROW_COST 0.2
#define DECAY 0.9
#define PRIOR_HITS 3.4
#define PRIOR_BREAKS 0.6

static int32_t min_n = 2, max_n = 4, max_draft = REALIZAR_MAX_DRAFT;
static int32_t out[REALIZAR_MAX_DRAFT]; /* the draft region */
static uint32_t turn_mark;              /* heap at the start of a turn */
static int32_t *seq;                    /* the sequence so far */
static int32_t len, cap;
static int32_t misses, pause_left;      /* misses in a row, calls to skip */
static double *hits, *breaks;           /* decayed counts by n-gram length: accepted, cut short */
static int32_t classes, cls;            /* max_n - min_n + 1; the current draft's */

/* reserve makes room for need tokens, moving seq to a larger block (the
 * old one is given back at the next reset). */
static int reserve(int32_t need) {
    if (need <= cap) return 0;
    int32_t c = cap < 256 ? 256 : cap;
    while (c < need) c *= 2;
    int32_t *s = realizar_alloc_bytes((uint32_t)c * 4);
    if (!s) return -1;
    for (int32_t i = 0; i < len; i++) s[i] = seq[i];
    seq = s, cap = c;
    return 0;
}

REALIZAR_EXPORT("realizar_init")
int64_t lookup_init(int32_t n_vocab, int32_t max_piece, int32_t cfg_ptr, int32_t cfg_len, int64_t features) {
    (void)n_vocab, (void)max_piece;
    if (!(features & REALIZAR_FEATURE_ACCEPTED)) return REALIZAR_ERR_FEATURE;
    static const char *const keys[] = {"max_draft", "max_ngram", "min_ngram"};
    if (realizar_config_check_keys((const uint8_t *)(uintptr_t)cfg_ptr, cfg_len, keys, 3) != 0) return REALIZAR_ERR_CONFIG;
    if (realizar_config_i32("min_ngram", &min_n) < 0 || realizar_config_i32("max_ngram", &max_n) < 0 ||
        realizar_config_i32("max_draft", &max_draft) < 0)
        return REALIZAR_ERR_CONFIG;
    if (min_n < 1 || max_n < min_n || max_draft < 1 || max_draft > REALIZAR_MAX_DRAFT) {
        realizar_logs(REALIZAR_LOG_ERROR, "config: need 1 <= min_ngram <= max_ngram and 1 <= max_draft <= 32");
        return REALIZAR_ERR_CONFIG;
    }
    classes = max_n - min_n + 1;
    hits = realizar_alloc_bytes((uint32_t)classes * 8);
    breaks = realizar_alloc_bytes((uint32_t)classes * 8);
    if (!hits || !breaks) return REALIZAR_ERR_FAILED;
    turn_mark = realizar_heap_mark();
    return realizar_pack_init_v2((uint32_t)(uintptr_t)out, 0, REALIZAR_OUTPUT_EDITS);
}

REALIZAR_EXPORT("realizar_reset")
int32_t lookup_reset(int64_t seed, int32_t n_prompt) {
    (void)seed;
    realizar_heap_release(turn_mark);
    seq = 0, len = cap = 0;
    misses = pause_left = cls = 0;
    for (int32_t c = 0; c < classes; c++) hits[c] = PRIOR_HITS, breaks[c] = PRIOR_BREAKS;
    if (reserve(n_prompt) != 0) return REALIZAR_ERR_FAILED;
    len = n_prompt > 0 ? realizar_prompt_get(seq, n_prompt) : 0;
    if (len > n_prompt) len = n_prompt;
    return 0;
}

/* accepted records a draft's outcome. */
static void accepted(int32_t drafted, int32_t acc) {
    if (drafted <= 0) return;
    hits[cls] = DECAY * hits[cls] + (double)acc;
    breaks[cls] *= DECAY;
    if (acc < drafted) breaks[cls] += 1;
    if (acc > 0) {
        misses = 0;
        return;
    }
    misses++;
    if (misses > 1) {
        int32_t p = misses - 2 < 30 ? 1 << (misses - 2) : 1 << 30;
        pause_left = p < MAX_PAUSE ? p : MAX_PAUSE;
    }
}

/* best_length is the length in 1..most with the most tokens expected per
 * unit of a verify pass's cost at the rate so far (0 when most is). */
static int32_t best_length(int32_t most) {
    if (most <= 0) return 0;
    double p = hits[cls] / (hits[cls] + breaks[cls]), sum = 1, pk = 1, best_gain = 0;
    int32_t best = 1;
    for (int32_t k = 1; k <= most; k++) {
        pk *= p;
        sum += pk;
        double g = sum / (1 + ROW_COST * (double)k);
        if (g > best_gain) best = k, best_gain = g;
    }
    return best;
}

/* find returns the index of the token that followed the latest earlier
 * occurrence of the trailing n-gram (the longest of max_n..min_n), or -1,
 * and sets cls to that n-gram's length less min_n. */
static int32_t find(void) {
    int32_t end = len, maxn = max_n < end - 1 ? max_n : end - 1, at = -1, best = 0;
    int32_t last = seq[end - 1];
    for (int32_t i = end - 2; i >= min_n - 1; i--) {
        if (seq[i] != last) continue;
        int32_t l = 1;
        while (l < maxn && i - l >= 0 && seq[i - l] == seq[end - 1 - l]) l++;
        if (l >= min_n && l > best) {
            at = i + 1, best = l;
            if (best == maxn) break;
        }
    }
    if (at >= 0) cls = best - min_n;
    return at;
}

REALIZAR_EXPORT("realizar_draft")
int32_t lookup_draft(int32_t n_new, int32_t max, int32_t drafted, int32_t acc) {
    if (n_new > 0) {
        if (reserve(len + n_new) != 0) return REALIZAR_ERR_FAILED;
        len += realizar_accepted_get(seq + len, n_new);
    }
    accepted(drafted, acc);
    if (pause_left > 0) {
        pause_left--;
        return 0;
    }
    if (len <= min_n) return 0;
    int32_t at = find();
    if (at < 0) return 0;
    int32_t k = best_length(max_draft < max ? max_draft : max);
    if (k <= 0) return 0;
    for (int32_t j = 0; j < k; j++) out[j] = at + j < len ? seq[at + j] : out[at + j - len];
    return k;
}
