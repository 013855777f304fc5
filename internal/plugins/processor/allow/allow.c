/*
 * allow — processor, ABI 2: allows only a fixed set of tokens, the example
 * of the allowed-token mask output mode (abi/ABI.md §11).
 *
 * Config:
 *   tokens  (required) the allowed token ids, a JSON array of integers
 *   eog     [true]  also allow every end-of-generation token, which the
 *                   guest finds through realizar.token_attrs (the caller
 *                   passes no EOG list)
 *   once    [false] a listed token is allowed until it is accepted, then
 *                   denied for the rest of the turn
 *
 * The guest builds its mask (ceil(n_vocab/32) u32 words) once at init and
 * keeps it in its memory; realizar_process returns its address. A step
 * costs the guest O(tokens accepted since the last step), not O(n_vocab):
 * with once it clears their bits, otherwise it does nothing. The host
 * copies no logits to it (mask mode has no input region) and sets every
 * disallowed logit to -Inf; a mask left allowing nothing ends the turn
 * with the host's engine.ErrNoTokenAllowed.
 */
#include "realizar.h"

REALIZAR_MARKER_V2(processor)
REALIZAR_ALLOC_EXPORT

static int32_t n_vocab, words;
static uint32_t *base; /* built at init */
static uint32_t *live; /* base at each reset, minus what once denied */
static int once;
static int32_t *accepted;
static int32_t accepted_cap;

/* parse_ids sets the bit of each id of the JSON array s[0..n) in base. */
static int parse_ids(const uint8_t *s, int32_t n) {
    int32_t i = 0, count = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r')) i++;
    if (i >= n || s[i++] != '[') return -1;
    for (;;) {
        while (i < n && s[i] == ' ') i++;
        if (i < n && s[i] == ']' && count == 0) return 0;
        int64_t id = 0;
        int32_t digits = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9' && digits < 10) id = id * 10 + (s[i++] - '0'), digits++;
        if (digits == 0 || id >= n_vocab) {
            realizar_logs(REALIZAR_LOG_ERROR, "config: tokens must be ids in [0, n_vocab)");
            return -1;
        }
        realizar_mask_allow(base, (int32_t)id);
        count++;
        while (i < n && s[i] == ' ') i++;
        if (i < n && s[i] == ',') { i++; continue; }
        return i < n && s[i] == ']' ? 0 : -1;
    }
}

/* allow_eog allows every end-of-generation token, reading the attributes
 * of the whole vocabulary in one host call (scratch given back). */
static int allow_eog(void) {
    uint32_t mark = realizar_heap_mark();
    uint32_t *attrs = realizar_alloc_bytes((uint32_t)n_vocab * 4);
    if (!attrs || realizar_token_attrs(0, attrs, n_vocab) != n_vocab) return -1;
    int32_t id = 0;
    for (; id + 8 <= n_vocab; id += 8) { /* eight per iteration (ABI §6) */
        uint32_t any = attrs[id] | attrs[id + 1] | attrs[id + 2] | attrs[id + 3] |
                       attrs[id + 4] | attrs[id + 5] | attrs[id + 6] | attrs[id + 7];
        if (!(any & REALIZAR_ATTR_EOG)) continue;
        for (int32_t k = id; k < id + 8; k++)
            if (attrs[k] & REALIZAR_ATTR_EOG) realizar_mask_allow(base, k);
    }
    for (; id < n_vocab; id++)
        if (attrs[id] & REALIZAR_ATTR_EOG) realizar_mask_allow(base, id);
    realizar_heap_release(mark);
    return 0;
}

REALIZAR_EXPORT("realizar_init")
int64_t allow_init(int32_t n, int32_t max_piece, int32_t cfg_ptr, int32_t cfg_len, int64_t features) {
    (void)max_piece;
    const int64_t need = REALIZAR_FEATURE_MASK | REALIZAR_FEATURE_TOKEN_ATTRS | REALIZAR_FEATURE_ACCEPTED;
    if ((features & need) != need) {
        realizar_logs(REALIZAR_LOG_ERROR, "the host lacks the mask, token_attrs or accepted feature");
        return REALIZAR_ERR_FEATURE;
    }
    static const char *const known[] = {"tokens", "eog", "once"};
    if (realizar_config_check_keys((const uint8_t *)(uintptr_t)cfg_ptr, cfg_len, known, 3)) return REALIZAR_ERR_CONFIG;
    n_vocab = n;
    words = realizar_mask_words(n);
    base = realizar_alloc_bytes((uint32_t)words * 4);
    live = realizar_alloc_bytes((uint32_t)words * 4);
    if (!base || !live) return REALIZAR_ERR_FAILED;
    memset(base, 0, (size_t)words * 4);
    uint8_t *raw;
    int32_t len;
    int r = realizar_config_raw("tokens", &raw, &len);
    if (r < 0) return r;
    if (r == 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "config: tokens is required");
        return REALIZAR_ERR_CONFIG;
    }
    if (parse_ids(raw, len) < 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "config: tokens must be an array of token ids");
        return REALIZAR_ERR_CONFIG;
    }
    int eog = 1;
    if ((r = realizar_config_bool("eog", &eog)) < 0) return r;
    if ((r = realizar_config_bool("once", &once)) < 0) return r;
    if (eog && allow_eog() < 0) return REALIZAR_ERR_FAILED;
    return realizar_pack_init_v2(0, 0, REALIZAR_OUTPUT_MASK);
}

REALIZAR_EXPORT("realizar_reset")
int32_t allow_reset(int64_t seed, int32_t n_prompt) {
    (void)seed, (void)n_prompt;
    memcpy(live, base, (size_t)words * 4);
    return 0;
}

REALIZAR_EXPORT("realizar_process")
int32_t allow_process(int32_t n_accepted, int32_t count) {
    (void)count; /* 0: mask mode has no input */
    if (once && n_accepted > 0) {
        if (n_accepted > accepted_cap) { /* rare: more than ever before */
            accepted = realizar_alloc_bytes((uint32_t)n_accepted * 4);
            if (!accepted) return REALIZAR_ERR_FAILED;
            accepted_cap = n_accepted;
        }
        int32_t got = realizar_accepted_get(accepted, accepted_cap);
        for (int32_t k = 0; k < got && k < accepted_cap; k++)
            if (accepted[k] >= 0 && accepted[k] < n_vocab) realizar_mask_deny(live, accepted[k]);
    }
    return (int32_t)(uintptr_t)live;
}
