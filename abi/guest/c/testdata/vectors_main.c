/*
 * vectors_main.c — the C SDK's vector check, built natively by
 * abi/guest/c_test.go with gcc -ffp-contract=off -fno-fast-math together with
 * ../realizar.c. It reads commands on stdin, one per line, and answers each
 * on one line of stdout, every float as its bits in hex:
 *
 *   rng SEED              -> 8 Next outputs, then 8 Uniform bits
 *   exp XBITS             -> Exp(x) bits
 *   log XBITS             -> Log(x) bits
 *   sort N ID... LBITS... -> the ids in contract order
 *   softmax N TBITS SEED LBITS... -> N prob bits, the sum bits, 16 draws
 *   parse TEXT            -> the double's bits, or "err"
 *   json HEX              -> realizar_json_strings of the bytes: the count,
 *                            then each string in hex ("-" for empty)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../realizar.h"

static double d_of(uint64_t b) { double d; memcpy(&d, &b, 8); return d; }
static uint64_t b_of(double d) { uint64_t b; memcpy(&b, &d, 8); return b; }
static float f_of(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }

int main(void) {
    char cmd[32];
    while (scanf("%31s", cmd) == 1) {
        if (!strcmp(cmd, "rng")) {
            unsigned long long seed;
            scanf("%llx", &seed);
            realizar_rng r;
            realizar_rng_seed(&r, seed);
            for (int i = 0; i < 8; i++) printf("0x%016llx ", (unsigned long long)realizar_rng_next(&r));
            for (int i = 0; i < 8; i++) printf("0x%016llx ", (unsigned long long)b_of(realizar_rng_uniform(&r)));
        } else if (!strcmp(cmd, "exp") || !strcmp(cmd, "log")) {
            unsigned long long x;
            scanf("%llx", &x);
            double y = cmd[0] == 'e' ? realizar_exp(d_of(x)) : realizar_log(d_of(x));
            printf("0x%016llx", (unsigned long long)b_of(y));
        } else if (!strcmp(cmd, "sort")) {
            int n;
            scanf("%d", &n);
            int32_t ids[64];
            float ls[64];
            for (int i = 0; i < n; i++) scanf("%d", &ids[i]);
            for (int i = 0; i < n; i++) { unsigned int b; scanf("%x", &b); ls[i] = f_of(b); }
            realizar_sort(ids, ls, n);
            for (int i = 0; i < n; i++) printf("%d ", ids[i]);
        } else if (!strcmp(cmd, "softmax")) {
            int n;
            unsigned long long tb, seed;
            scanf("%d %llx %llx", &n, &tb, &seed);
            float ls[64];
            double probs[64];
            for (int i = 0; i < n; i++) { unsigned int b; scanf("%x", &b); ls[i] = f_of(b); }
            double sum = realizar_softmax(probs, ls, n, d_of(tb));
            for (int i = 0; i < n; i++) printf("0x%016llx ", (unsigned long long)b_of(probs[i]));
            printf("0x%016llx ", (unsigned long long)b_of(sum));
            realizar_rng r;
            realizar_rng_seed(&r, seed);
            for (int i = 0; i < 16; i++) printf("%d ", realizar_draw(probs, n, sum, realizar_rng_uniform(&r)));
        } else if (!strcmp(cmd, "parse")) {
            char text[128];
            scanf("%127s", text);
            double v;
            if (realizar_parse_f64((const uint8_t *)text, (int32_t)strlen(text), &v) == 0)
                printf("0x%016llx", (unsigned long long)b_of(v));
            else
                printf("err");
        } else if (!strcmp(cmd, "json")) {
            static char hex[8192];
            static uint8_t in[4096], out[4096];
            int32_t lens[64];
            scanf("%8191s", hex);
            int32_t n = 0;
            for (int32_t i = 0; hex[2 * i] && hex[2 * i + 1] && n < 4096; i++) {
                unsigned int b;
                sscanf(hex + 2 * i, "%2x", &b);
                in[n++] = (uint8_t)b;
            }
            if (!strcmp(hex, "-")) n = 0;
            int32_t c = realizar_json_strings(in, n, out, sizeof out, lens, 64);
            printf("%d", c);
            int32_t off = 0;
            for (int32_t k = 0; k < c; k++) {
                printf(" ");
                if (lens[k] == 0) printf("-");
                for (int32_t j = 0; j < lens[k]; j++) printf("%02x", out[off + j]);
                off += lens[k];
            }
        } else {
            printf("unknown");
        }
        printf("\n");
    }
    return 0;
}
