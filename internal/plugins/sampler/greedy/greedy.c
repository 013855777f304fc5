/*
 * greedy — sampler: the token with the highest logit, the lowest id on
 * ties (the contract order's first candidate). It asks the host for the
 * top-1 candidate, so a step costs one native selection and a call that
 * reads one i32: nothing runs over the vocabulary in the guest.
 * Config: none. It never draws from the RNG.
 */
#include "realizar.h"

REALIZAR_MARKER(sampler)

static int32_t region[2]; /* top-1: one id, then one logit */

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t n_vocab, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    (void)max_piece; (void)config_ptr; (void)config_len;
    if (n_vocab <= 0) return REALIZAR_ERR_VOCAB;
    return realizar_pack_init((uint32_t)(uintptr_t)region, 1);
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    (void)seed; (void)n_prompt;
    return 0;
}

REALIZAR_EXPORT("realizar_sample")
int32_t sample(int32_t prev, int32_t count) {
    (void)prev;
    return count > 0 ? region[0] : -1;
}
