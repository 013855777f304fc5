/*
 * realizar.h — the C guest SDK for the realizar-host plugin ABI, versions 1
 * and 2 (abi/ABI.md; version 2 is §11). Pair it with realizar.c.
 *
 * It carries the contract's constants, its arithmetic (the RNG of §9.1, Exp
 * of §9.2, the candidate order of §4.2, softmax and the draw of §9.3), the
 * host imports of §7, a bump allocator over the guest's linear memory and
 * small config readers. Everything a policy needs for probabilities goes
 * through these functions, so a C policy and a Go policy written with
 * abi/guest pick the same tokens for the same logits, config and seed.
 *
 * Build (wasm32, no libc): clang --target=wasm32 -mbulk-memory -nostdlib
 * -O2 -ffp-contract=off -fno-fast-math -Wl,--no-entry (bulk memory makes
 * memset/memcpy single instructions). The arithmetic part also
 * compiles natively (the SDK's vector test builds it with gcc
 * -ffp-contract=off); the host imports and the allocator exist only on wasm.
 *
 * Numbers are binary64 unless stated; nothing may be fused: keep
 * -ffp-contract=off and never -ffast-math.
 */
#ifndef REALIZAR_H
#define REALIZAR_H

#include <stdint.h>
#include <stddef.h>

/* Constants. abi/guest/c_header_test.go checks each against package abi. */
#define REALIZAR_ABI_VERSION 1
#define REALIZAR_MAX_TOP_N 4096
#define REALIZAR_MAX_STOP_N 536870911 /* 2^29 - 1 */

/* Error codes (negative results), abi.ErrCode. FEATURE is ABI 2's. */
#define REALIZAR_ERR_FAILED (-1)
#define REALIZAR_ERR_CONFIG (-2)
#define REALIZAR_ERR_VOCAB (-3)
#define REALIZAR_ERR_STATE (-4)
#define REALIZAR_ERR_FEATURE (-5)

/* Stop actions, abi.StopAction. */
#define REALIZAR_STOP_CONTINUE 0
#define REALIZAR_STOP_KEEP 1
#define REALIZAR_STOP_TRIM 2

/* Log levels, abi.LogDebug..abi.LogError. */
#define REALIZAR_LOG_DEBUG 0
#define REALIZAR_LOG_INFO 1
#define REALIZAR_LOG_WARN 2
#define REALIZAR_LOG_ERROR 3

/* Exp's range, abi.ExpMax and abi.ExpMin. */
#define REALIZAR_EXP_MAX 709.0
#define REALIZAR_EXP_MIN (-708.0)

/* Salt of the WASI random_get stream, abi.RandomGetSalt. */
#define REALIZAR_RANDOM_GET_SALT 0x72616e646f6d2d31ULL

/* realizar_init's answer (abi.PackInit): the input region's address and
 * top_n (0 = full logits, 1..REALIZAR_MAX_TOP_N candidates). */
static inline int64_t realizar_pack_init(uint32_t addr, int32_t top_n) {
    return (int64_t)addr | ((int64_t)(top_n & 0x1fff) << 32);
}

/* realizar_check's answer (abi.PackStop): n << 2 | action. */
static inline int32_t realizar_pack_stop(int32_t action, int32_t n) {
    return (int32_t)((uint32_t)n << 2) | action;
}

/* Export and marker helpers:
 *   REALIZAR_EXPORT("realizar_init") int64_t init(...) { ... }
 *   REALIZAR_MARKER(sampler)     defines the export realizar_abi_v1_sampler;
 *   REALIZAR_MARKER_V2(processor) realizar_abi_v2_processor (build the
 *   module's metadata with wasmmeta -abi 2). */
#define REALIZAR_EXPORT(name) __attribute__((export_name(name)))
#define REALIZAR_MARKER(kind) \
    REALIZAR_EXPORT("realizar_abi_v1_" #kind) void realizar_marker_##kind(void) {}
#define REALIZAR_MARKER_V2(kind) \
    REALIZAR_EXPORT("realizar_abi_v2_" #kind) void realizar_marker_v2_##kind(void) {}

/* ---- ABI 2 (§11) ----
 * realizar_init gains a fifth argument, the host's features (int64_t):
 *   int64_t realizar_init(int32_t n_vocab, int32_t max_piece,
 *                         int32_t config_ptr, int32_t config_len, int64_t features)
 * realizar_sample and realizar_process receive (n_accepted, count): the
 * number of tokens accepted since the previous call (read them with
 * realizar_accepted_get during the call) instead of v1's prev. */
#define REALIZAR_ABI_VERSION2 2

/* Features the host announces (abi.Feature). */
#define REALIZAR_FEATURE_MASK 1        /* the mask output mode */
#define REALIZAR_FEATURE_TOKEN_ATTRS 2 /* the token_attrs import */
#define REALIZAR_FEATURE_ACCEPTED 4    /* n_accepted and accepted_get */

/* A processor's output mode (abi.Output), bits 45..46 of init's answer. */
#define REALIZAR_OUTPUT_EDITS 0
#define REALIZAR_OUTPUT_MASK 1

/* Token attribute flags (abi.TokenAttr); the piece length is bits 8..31. */
#define REALIZAR_ATTR_EOG 1
#define REALIZAR_ATTR_CONTROL 2
#define REALIZAR_ATTR_BYTE 4

/* A v2 realizar_init answer (abi.PackInitV2). A mask-mode processor
 * answers realizar_pack_init_v2(0, 0, REALIZAR_OUTPUT_MASK). */
static inline int64_t realizar_pack_init_v2(uint32_t addr, int32_t top_n, int32_t output) {
    return realizar_pack_init(addr, top_n) | ((int64_t)(output & 3) << 45);
}

/* ---- The drafter kind (ABI 2, §12) ----
 * REALIZAR_MARKER_V2(drafter), then
 *   int64_t realizar_init(n_vocab, max_piece, config_ptr, config_len, features)
 *     answers realizar_pack_init_v2(addr, 0, REALIZAR_OUTPUT_EDITS) where addr
 *     is its draft region of REALIZAR_MAX_DRAFT int32_t ids;
 *   int32_t realizar_reset(int64_t seed, int32_t n_prompt): the prompt
 *     through realizar_prompt_get (seed is 0);
 *   int32_t realizar_draft(int32_t n_new, int32_t max, int32_t drafted,
 *                          int32_t accepted)
 *     n_new tokens joined the sequence since the prompt or the previous
 *     call (realizar_accepted_get copies them during the call); drafted and
 *     accepted are the previous non-empty draft's outcome (0, 0: none);
 *     writes k <= max ids (1 <= max <= REALIZAR_MAX_DRAFT) at addr and
 *     returns k, or a negative error code. */
#define REALIZAR_MAX_DRAFT 32

static inline int32_t realizar_attr_piece_len(uint32_t attr) { return (int32_t)(attr >> 8); }

/* The allowed-token mask: ceil(n_vocab/32) little-endian u32 words, bit
 * id%32 of word id/32 allows token id; bits past n_vocab are ignored. A
 * mask-mode realizar_process returns the mask's address (or 0 for "every
 * token allowed this step"); keep the mask in memory between calls and
 * change only the bits that change. */
static inline int32_t realizar_mask_words(int32_t n_vocab) { return (n_vocab + 31) / 32; }
static inline void realizar_mask_allow(uint32_t *mask, int32_t id) { mask[id >> 5] |= 1u << (id & 31); }
static inline void realizar_mask_deny(uint32_t *mask, int32_t id) { mask[id >> 5] &= ~(1u << (id & 31)); }
static inline int realizar_mask_allows(const uint32_t *mask, int32_t id) { return (mask[id >> 5] >> (id & 31)) & 1; }

/* ---- §9.1 RNG: xoshiro256** seeded by SplitMix64 ---- */

typedef struct { uint64_t s[4]; } realizar_rng;

void realizar_rng_seed(realizar_rng *r, uint64_t seed);
uint64_t realizar_rng_next(realizar_rng *r);
/* A double in [0, 1): (next >> 11) * 2^-53. */
double realizar_rng_uniform(realizar_rng *r);

/* ---- §9.2 Exp, and the SDK's Log ---- */

/* The contract's exponential (abi.Exp). */
double realizar_exp(double x);

/* realizar_exp inline, for loops over a whole vocabulary (a call per
 * entry keeps the engine from overlapping them): the one definition,
 * which realizar_exp calls. */
static const double realizar_exp_coef[12] = {
    0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,
    0x1.1111111111111p-7,  0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
    0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22,
    0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
};

static inline double realizar_exp_inline(double x) {
    union { uint64_t u; double d; } two_k;
    if (x != x) return x;
    if (x > REALIZAR_EXP_MAX) {
        two_k.u = 0x7ff0000000000000ULL;
        return two_k.d;
    }
    if (x < REALIZAR_EXP_MIN) return 0;
    double t = x * 0x1.71547652b82fep+0;
    int32_t k = t >= 0 ? (int32_t)(t + 0.5) : (int32_t)(t - 0.5);
    double kf = (double)k;
    double r = (x - kf * 0x1.62e42fee00000p-1) - kf * 0x1.a39ef35793c76p-33;
    double p = realizar_exp_coef[11];
#ifdef __clang__
#pragma clang loop unroll(full) /* also at -Os */
#endif
    for (int i = 10; i >= 0; i--) p = p * r + realizar_exp_coef[i];
    p = p * r + 1;
    p = p * r + 1;
    two_k.u = (uint64_t)((int64_t)k + 1023) << 52;
    return p * two_k.d;
}

/* Natural logarithm, an SDK function beyond §9 shared with the Go SDK
 * (guest.Log): the same operations in the same order, so both languages
 * agree bit for bit. Log(0) = -Inf, Log(x < 0) = NaN, Log(+Inf) = +Inf,
 * subnormal inputs are scaled first. Within 1 ulp of ln x. */
double realizar_log(double x);

/* ---- §4.2 order, §9.3 softmax and draw ---- */

/* Whether (ida, la) sorts before (idb, lb): logit descending, id ascending,
 * NaN after everything (abi.Before). */
int realizar_before(int32_t ida, float la, int32_t idb, float lb);

/* Sorts n (id, logit) pairs into the contract order, in place. Any correct
 * sort gives the same result; this one is an insertion sort for n <= 32
 * and a heapsort above. */
void realizar_sort(int32_t *ids, float *logits, int32_t n);

/* Selects the min(k, n) best of logits[0..n) (the id is the index) into
 * ids and vals, in contract order: the first stage of a top-k sampler over
 * full logits. k >= 1. The scan does eight entries per loop iteration
 * (a guest pays for every loop iteration, ABI §6). */
int32_t realizar_select_top(const float *logits, int32_t n, int32_t k, int32_t *ids, float *vals);

/* Unnormalised probabilities of n logits already in contract order, at
 * temperature temp > 0, into probs; returns their sum (abi.Softmax). */
double realizar_softmax(double *probs, const float *logits, int32_t n, double temp);

/* Picks an index of probs (abi.Draw) with u from realizar_rng_uniform. */
int32_t realizar_draw(const double *probs, int32_t n, double sum, double u);

/* ---- memory and strings (no libc) ---- */

/* On wasm32 realizar.c defines memset, memcpy and memmove (as memory.fill
 * and memory.copy); natively libc does. */
void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int realizar_memeq(const void *a, const void *b, size_t n);

#ifdef __wasm__
/* Bump allocator over linear memory, growing it as needed: 16-byte aligned
 * blocks, never freed (a plugin allocates at init). NULL past the page
 * cap. realizar_heap_mark/realizar_heap_release give back everything
 * allocated since the mark (scratch of a single call). */
void *realizar_alloc_bytes(uint32_t size);
uint32_t realizar_heap_mark(void);
void realizar_heap_release(uint32_t mark);

/* ---- §7 host functions, module "realizar" ---- */
#define REALIZAR_IMPORT(name) __attribute__((import_module("realizar"), import_name(name)))
REALIZAR_IMPORT("config_get") int32_t realizar_config_get(const void *key, int32_t key_len, void *buf, int32_t limit);
REALIZAR_IMPORT("vocab_size") int32_t realizar_vocab_size(void);
REALIZAR_IMPORT("vocab_piece") int32_t realizar_vocab_piece(int32_t id, void *buf, int32_t limit);
REALIZAR_IMPORT("prompt_get") int32_t realizar_prompt_get(void *buf, int32_t limit);
REALIZAR_IMPORT("log") void realizar_log_msg(int32_t level, const void *msg, int32_t len);
REALIZAR_IMPORT("clock_ns") int64_t realizar_clock_ns(void);
/* ABI 2 only (a v1 module importing them is refused). token_attrs writes
 * the attribute words of ids first..first+n-1, n = min(count,
 * n_vocab-first), and returns n (-1 for first out of range); accepted_get
 * copies the tokens accepted since the previous step call, during
 * realizar_sample, realizar_process or realizar_draft, and returns their
 * number. */
REALIZAR_IMPORT("token_attrs") int32_t realizar_token_attrs(int32_t first, uint32_t *buf, int32_t count);
REALIZAR_IMPORT("accepted_get") int32_t realizar_accepted_get(int32_t *buf, int32_t limit);

/* Logs a NUL-terminated message. */
void realizar_logs(int32_t level, const char *msg);

/* Config readers (through config_get). Each returns 0 and leaves *out
 * alone when key is absent, 1 when it set *out, and REALIZAR_ERR_CONFIG
 * (after logging which key) when the value is not of the type asked. */
int realizar_config_f64(const char *key, double *out);
int realizar_config_i32(const char *key, int32_t *out);
int realizar_config_bool(const char *key, int *out);
/* The raw value (a string decoded, anything else as compact JSON) in a
 * fresh allocation, NUL-terminated; *len is its length. */
int realizar_config_raw(const char *key, uint8_t **out, int32_t *len);

/* Refuses a config with a top-level key not in known[0..n_known): cfg is
 * the config JSON as realizar_init receives it (config_ptr, config_len;
 * the plugin defines REALIZAR_ALLOC_EXPORT so that the host passes it).
 * Returns 0 (also for len 0, no config), or REALIZAR_ERR_CONFIG after
 * logging "config: unknown key KEY (the keys are A, B, C)", the line the Go
 * SDK's guest.CheckKeys gives. Scratch memory is given back. */
int realizar_config_check_keys(const uint8_t *cfg, int32_t len, const char *const *known, int32_t n_known);

/* Defines the optional realizar_alloc export (ABI §4) over the bump
 * allocator, so that realizar_init receives the raw config. */
#define REALIZAR_ALLOC_EXPORT \
    REALIZAR_EXPORT("realizar_alloc") int32_t realizar_alloc(int32_t size) { \
        return (int32_t)(uintptr_t)realizar_alloc_bytes(size > 0 ? (uint32_t)size : 1u); \
    }
#endif

/* Parses a JSON number (the whole of s[0..n)) as a double. Accepted: at
 * most 19 significant digits whose integer fits 2^53 and a decimal
 * exponent whose power of ten is exact (|e| <= 22 after moving the digits),
 * so that one IEEE division or multiplication gives the correctly rounded
 * value, as Go's strconv.ParseFloat does. Returns 0 on success, -1 for
 * anything else (refused rather than rounded twice). */
int realizar_parse_f64(const uint8_t *s, int32_t n, double *out);

/* Decodes a JSON array of strings s[0..n) into out (the strings' bytes one
 * after another, capacity cap) and lens (at most max entries). Returns the
 * number of strings, or -1 when s is not such an array, is not valid UTF-8
 * or does not fit. The same parser as the Go SDK's guest.ParseStrings. */
int32_t realizar_json_strings(const uint8_t *s, int32_t n, uint8_t *out, int32_t cap, int32_t *lens, int32_t max);

/* Decodes the top-level keys of the JSON object s[0..n) into out and lens,
 * as realizar_json_strings does for an array's strings; values are skipped
 * (the host has already checked the config is valid JSON). Returns the
 * number of keys, or -1. The same scanner as the Go SDK's guest.ObjectKeys. */
int32_t realizar_json_keys(const uint8_t *s, int32_t n, uint8_t *out, int32_t cap, int32_t *lens, int32_t max);

#endif /* REALIZAR_H */
