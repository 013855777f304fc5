#include <stdint.h>
#define EXPORT(name) __attribute__((export_name(name)))

static uint8_t piece[256]; /* the host writes each token's bytes here */

EXPORT("realizar_abi_v1_stop") void marker(void) {}

EXPORT("realizar_init")
int64_t init(int32_t n_vocab, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    if (max_piece > (int32_t)sizeof piece) return -3; /* vocab error: pieces too long */
    return (int64_t)(uint32_t)(uintptr_t)piece;       /* address; top_n = 0 for a stop policy */
}

EXPORT("realizar_reset") int32_t reset(int64_t seed, int32_t n_prompt) { return 0; }

/* n << 2 | action: 0 continue (n bytes held back), 1 stop and keep the token, 2 stop and trim n bytes */
EXPORT("realizar_check") int32_t check(int32_t token, int32_t len) {
    for (int32_t i = 0; i < len; i++)
        if (piece[i] == '.') return 1; /* stop-keep: the sentence ends with its period */
    return 0;                          /* continue, nothing held back */
}
