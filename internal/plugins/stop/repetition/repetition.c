/*
 * repetition — stop policy: stops a loop, when the last tokens are one
 * pattern of 1..max_pattern tokens repeated `repeats` times in a row
 * (with the defaults: "the cat" four times, or one token four times). It
 * stops with stop-keep: the loop's text
 * has been streamed already (nothing is held back), so it stays.
 *
 * Config: max_pattern [16] (tokens, 1..1024), min_pattern [1],
 * repeats [4] (>= 2).
 */
#include "realizar.h"

REALIZAR_MARKER(stop)

static int32_t max_pattern = 16, min_pattern = 1, repeats = 4;
static uint8_t *region;
static int32_t *hist, hist_len, hist_cap; /* the last max_pattern·repeats ids */

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t n_vocab, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    (void)config_ptr; (void)config_len;
    if (n_vocab <= 0 || max_piece <= 0) return REALIZAR_ERR_VOCAB;
    int r;
    if ((r = realizar_config_i32("max_pattern", &max_pattern)) < 0) return r;
    if ((r = realizar_config_i32("min_pattern", &min_pattern)) < 0) return r;
    if ((r = realizar_config_i32("repeats", &repeats)) < 0) return r;
    if (max_pattern < 1 || max_pattern > 1024 || min_pattern < 1 || min_pattern > max_pattern ||
        repeats < 2 || repeats > 1024) {
        realizar_logs(REALIZAR_LOG_ERROR, "repetition: need 1 <= min_pattern <= max_pattern <= 1024 and 2 <= repeats <= 1024");
        return REALIZAR_ERR_CONFIG;
    }
    hist_cap = max_pattern * repeats;
    hist = realizar_alloc_bytes((uint32_t)hist_cap * 4);
    region = realizar_alloc_bytes((uint32_t)max_piece);
    if (!hist || !region) return REALIZAR_ERR_FAILED;
    return realizar_pack_init((uint32_t)(uintptr_t)region, 0);
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    (void)seed; (void)n_prompt;
    hist_len = 0;
    return 0;
}

REALIZAR_EXPORT("realizar_check")
int32_t check(int32_t token, int32_t len) {
    (void)len;
    if (hist_len == hist_cap) {
        memmove(hist, hist + 1, (uint32_t)(hist_cap - 1) * 4);
        hist_len--;
    }
    hist[hist_len++] = token;
    for (int32_t p = min_pattern; p <= max_pattern; p++) {
        int32_t span = p * repeats;
        if (span > hist_len) break;
        const int32_t *t = hist + hist_len - span;
        int32_t i = p;
        while (i < span && t[i] == t[i - p]) i++;
        if (i == span) return realizar_pack_stop(REALIZAR_STOP_KEEP, 0);
    }
    return realizar_pack_stop(REALIZAR_STOP_CONTINUE, 0);
}
