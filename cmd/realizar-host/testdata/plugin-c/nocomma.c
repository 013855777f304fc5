#include <stdint.h>
#define EXPORT(name) __attribute__((export_name(name)))
#define IMPORT(name) __attribute__((import_module("realizar"), import_name(name)))
#define TOP_N 40

IMPORT("vocab_piece") int32_t vocab_piece(int32_t id, uint8_t *buf, int32_t limit);

/* The host writes TOP_N ids, then their logits; the edits follow: (id, logit) pairs. */
static struct {
    int32_t ids[TOP_N];
    float logits[TOP_N];
    struct { int32_t id; float logit; } edits[TOP_N];
} region;
static uint8_t piece[256];

EXPORT("realizar_abi_v1_processor") void marker(void) {}

EXPORT("realizar_init")
int64_t init(int32_t n_vocab, int32_t max_piece, int32_t config_ptr, int32_t config_len) {
    if (max_piece > (int32_t)sizeof piece) return -3;
    return (int64_t)(uint32_t)(uintptr_t)&region | ((int64_t)TOP_N << 32); /* address, top_n */
}

EXPORT("realizar_reset") int32_t reset(int64_t seed, int32_t n_prompt) { return 0; }

/* Sets the logit of every candidate whose piece holds a comma to -Inf; returns the edits' count. */
EXPORT("realizar_process") int32_t process(int32_t prev, int32_t count) {
    int32_t e = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t n = vocab_piece(region.ids[i], piece, sizeof piece);
        for (int32_t j = 0; j < n && j < (int32_t)sizeof piece; j++) {
            if (piece[j] == ',') {
                region.edits[e].id = region.ids[i];
                region.edits[e].logit = -__builtin_inff();
                e++;
                break;
            }
        }
    }
    return e;
}
