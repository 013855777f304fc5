/*
 * json — processor: JSON mode. Masks (edits to -Inf) every token whose
 * piece would make the generated text stop being a prefix of a JSON value
 * (RFC 8259), so that the output is valid JSON: ollama's "format": "json",
 * OpenAI's response_format {"type": "json_object"}. Chain it before any
 * sampler.
 *
 * Config (defaults in brackets):
 *   eog            (required) the end-of-generation ids, a non-empty array:
 *                  once the value is complete only these are allowed, and
 *                  only then. The guest cannot tell them from bytes; the
 *                  host's tokenizer knows them.
 *   control        [[]] ids always masked (control tokens render as their
 *                  text, "<s>", which would otherwise be valid string text)
 *   any_value      [false] the top-level value may be any JSON value; by
 *                  default it is an object, as OpenAI's json_object
 *   max_depth      [64] the deepest nesting of objects and arrays (<= 1024)
 *   max_whitespace [32] the longest run of whitespace outside strings, so
 *                  that a model cannot loop on spaces or newlines
 *   cache          [true] keep each state's answer (below); false computes
 *                  every step afresh (for tests and measurements)
 *   max_tokens     [0 = none] the turn's token budget: when set, a token is
 *                  allowed only if the value can still be completed in the
 *                  tokens left (one byte per token: the vocabulary must
 *                  hold single-byte tokens for { } ] " : 0, the letters of
 *                  true/false/null and the bytes 0x80 0x90 0xA0; without
 *                  them the budget is off, with a warning in the log).
 *                  The budget's last token is kept for end of generation:
 *                  the value closes within max_tokens - 1 tokens where it
 *                  can, within max_tokens where only that fits.
 *
 * Tokens with an empty piece are always masked. After the value is
 * complete (or at a complete top-level number) the end-of-generation ids
 * get their logits back; once the value is complete nothing else does.
 *
 * The state machine: a mode (which byte may come next), a few counters and
 * a stack of open containers. A token is simulated byte by byte from the
 * current state without touching the stack (pops read through it, pushes
 * go to a small overlay), and the accepted token (prev) is applied the same
 * way and then written back.
 *
 * Cost per step (ABI §6: every loop iteration is paid for, about 40 ns).
 * At init each token is classified once: "plain" (only bytes that stay
 * inside a string: printable ASCII but " and \, whole UTF-8 sequences) or
 * not, and bucketed by its first byte, or by its first byte after leading
 * whitespace. Inside a string only the non-plain tokens are simulated and
 * the plain ones are allowed wholesale; elsewhere only the buckets whose
 * first byte the state accepts are simulated. The answer is kept by state
 * (see the cache below), so a state seen before costs one copy. The output
 * is an edit of every masked id: inside a string the short list of masked
 * ids; elsewhere a template of all n_vocab ids at -Inf kept from step to
 * step, in which the allowed ids get their own logit back (and lose it the
 * next step).
 */
#include "realizar.h"

REALIZAR_MARKER(processor)
REALIZAR_ALLOC_EXPORT

/* Modes: what the next byte may be. */
enum {
    M_VALUE,     /* a value (top level, after ':' or after ',' in an array) */
    M_ARR_FIRST, /* after '[': a value or ']' */
    M_OBJ_FIRST, /* after '{': a key or '}' */
    M_OBJ_KEY,   /* after ',' in an object: a key */
    M_COLON,     /* after a key */
    M_AFTER,     /* after a value in a container: ',' or the closer */
    M_DONE,      /* the top-level value is complete */
    M_STR,       /* in a string; a = 1 for a key */
    M_STR_ESC,   /* after '\' */
    M_STR_U,     /* in \uXXXX; b = hex digits seen */
    M_STR_UTF8,  /* in a UTF-8 sequence; b = bytes to come, c = range of the next */
    M_NUM_MINUS, M_NUM_ZERO, M_NUM_INT, M_NUM_DOT, M_NUM_FRAC, M_NUM_E, M_NUM_ESIGN, M_NUM_EXP,
    M_LIT,       /* in true/false/null; b = literal, c = bytes matched */
};

enum { C_OBJ = 1, C_ARR = 2 };

/* The state without its stack. */
typedef struct {
    uint8_t mode, a, b, c;
    int32_t ws;    /* whitespace bytes in the current run outside strings */
    int32_t base;  /* entries of the real stack still in effect */
    int32_t nloc;  /* entries pushed on the overlay */
} jstate;

static const char *const literals[3] = {"true", "false", "null"};
static const uint8_t lit_len[3] = {4, 5, 4};

/* Config. */
static int any_value, max_depth = 64, max_ws = 32, max_tokens, use_cache = 1;
static int budget; /* max_tokens is on and the vocabulary can honour it */

/* The vocabulary. */
static int32_t n_vocab, max_piece;
static uint32_t *off;    /* [n_vocab + 1] piece offsets into bytes */
static uint8_t *bytes;
static uint8_t *cls;     /* [n_vocab] CLS_* */
enum { CLS_NEVER = 1, CLS_EOG = 2, CLS_PLAIN = 4 };
#define N_BUCKETS 514    /* 0..256: first byte (256: unused); 257..513: after leading whitespace (513: all whitespace) */
static int32_t bucket_at[N_BUCKETS + 1];
static int32_t *bucket_ids;          /* ids of the non-never, non-EOG tokens, by bucket */
static int32_t *nonplain, n_nonplain; /* those of them that are not plain */
static int32_t *never, n_never;       /* empty pieces and control ids */
static int32_t *eog, n_eog;

/* Per turn. */
static jstate cur;
static uint8_t *stack;   /* [max_depth] */
static uint8_t *loc;     /* [max_piece + 1] the overlay of a simulation */
static uint64_t sbits;   /* bit d: stack[d] is an array, for d < 64 */
static int32_t steps;    /* process calls this turn */
static int broken;       /* an accepted token did not continue the text */

/* Output. */
static float *logits;    /* the input region */
static int32_t *edits;   /* [2 n_vocab] (id, logit) */
static int32_t dirty;    /* edits[0..dirty) hold a masked list, not the template */
static int32_t *allowed, n_allowed, *shown, n_shown; /* template entries given their logit */

static const float neg_inf = -__builtin_inff();

static void *need(uint32_t n) { return realizar_alloc_bytes(n ? n : 1); }

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

static inline int top(const jstate *s) {
    if (s->nloc > 0) return loc[s->nloc - 1];
    return s->base > 0 ? stack[s->base - 1] : 0;
}

static inline int push(jstate *s, uint8_t kind) {
    if (s->base + s->nloc >= max_depth) return 0;
    loc[s->nloc++] = kind;
    return 1;
}

static inline void pop(jstate *s) {
    if (s->nloc > 0) s->nloc--;
    else s->base--;
}

static inline void value_done(jstate *s) { s->mode = s->base + s->nloc == 0 ? M_DONE : M_AFTER; }

static int start_value(jstate *s, uint8_t ch) {
    if (!any_value && s->base + s->nloc == 0 && ch != '{') return 0;
    switch (ch) {
    case '{': if (!push(s, C_OBJ)) return 0; s->mode = M_OBJ_FIRST; return 1;
    case '[': if (!push(s, C_ARR)) return 0; s->mode = M_ARR_FIRST; return 1;
    }
    switch (ch) {
    case '"': s->mode = M_STR; s->a = 0; return 1;
    case '-': s->mode = M_NUM_MINUS; return 1;
    case '0': s->mode = M_NUM_ZERO; return 1;
    case 't': s->mode = M_LIT; s->b = 0; s->c = 1; return 1;
    case 'f': s->mode = M_LIT; s->b = 1; s->c = 1; return 1;
    case 'n': s->mode = M_LIT; s->b = 2; s->c = 1; return 1;
    }
    if (ch >= '1' && ch <= '9') { s->mode = M_NUM_INT; return 1; }
    return 0;
}

static inline int close_container(jstate *s, int kind) {
    if (top(s) != kind) return 0;
    pop(s);
    value_done(s);
    return 1;
}

/* utf8_lead sets the state for a UTF-8 lead byte ch >= 0x80; 0 if invalid. */
static inline int utf8_lead(jstate *s, uint8_t ch) {
    uint8_t more, range = 0; /* ranges: 0 80-BF, 1 A0-BF, 2 80-9F, 3 90-BF, 4 80-8F */
    if (ch >= 0xC2 && ch <= 0xDF) more = 1;
    else if (ch >= 0xE0 && ch <= 0xEF) { more = 2; range = ch == 0xE0 ? 1 : ch == 0xED ? 2 : 0; }
    else if (ch >= 0xF0 && ch <= 0xF4) { more = 3; range = ch == 0xF0 ? 3 : ch == 0xF4 ? 4 : 0; }
    else return 0;
    s->mode = M_STR_UTF8;
    s->b = more;
    s->c = range;
    return 1;
}

static inline int is_hex(uint8_t ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
}

/* structural advances s, in a mode between tokens of the grammar, by ch. */
static int structural(jstate *s, uint8_t ch) {
    if (is_ws(ch)) return s->mode != M_DONE && ++s->ws <= max_ws;
    s->ws = 0;
    switch (s->mode) {
    case M_VALUE: return start_value(s, ch);
    case M_ARR_FIRST: return ch == ']' ? close_container(s, C_ARR) : start_value(s, ch);
    case M_OBJ_FIRST:
        if (ch == '}') return close_container(s, C_OBJ);
        /* fall through */
    case M_OBJ_KEY:
        if (ch != '"') return 0;
        s->mode = M_STR;
        s->a = 1;
        return 1;
    case M_COLON:
        if (ch != ':') return 0;
        s->mode = M_VALUE;
        return 1;
    case M_AFTER:
        if (ch == ',') {
            s->mode = top(s) == C_OBJ ? M_OBJ_KEY : M_VALUE;
            return 1;
        }
        if (ch == '}') return close_container(s, C_OBJ);
        if (ch == ']') return close_container(s, C_ARR);
        return 0;
    }
    return 0; /* M_DONE */
}

/* step advances s by one byte; 0 if the text would stop being a JSON
 * prefix. No loop: a guest pays for every loop iteration (ABI §6). */
static int step(jstate *s, uint8_t ch) {
    switch (s->mode) {
    case M_STR:
        if (ch == '"') {
            if (s->a) s->mode = M_COLON;
            else value_done(s);
            return 1;
        }
        if (ch == '\\') { s->mode = M_STR_ESC; return 1; }
        if (ch < 0x20) return 0;
        if (ch < 0x80) return 1;
        return utf8_lead(s, ch);
    case M_STR_ESC:
        switch (ch) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            s->mode = M_STR;
            return 1;
        case 'u': s->mode = M_STR_U; s->b = 0; return 1;
        }
        return 0;
    case M_STR_U:
        if (!is_hex(ch)) return 0;
        if (++s->b == 4) s->mode = M_STR;
        return 1;
    case M_STR_UTF8: {
        static const uint8_t lo[5] = {0x80, 0xA0, 0x80, 0x90, 0x80}, hi[5] = {0xBF, 0xBF, 0x9F, 0xBF, 0x8F};
        if (ch < lo[s->c] || ch > hi[s->c]) return 0;
        s->c = 0;
        if (--s->b == 0) s->mode = M_STR;
        return 1;
    }
    case M_LIT:
        if (ch != (uint8_t)literals[s->b][s->c]) return 0;
        if (++s->c == lit_len[s->b]) value_done(s);
        return 1;
    case M_NUM_MINUS:
        if (ch == '0') { s->mode = M_NUM_ZERO; return 1; }
        if (ch >= '1' && ch <= '9') { s->mode = M_NUM_INT; return 1; }
        return 0;
    case M_NUM_DOT:
        if (ch >= '0' && ch <= '9') { s->mode = M_NUM_FRAC; return 1; }
        return 0;
    case M_NUM_E:
        if (ch == '+' || ch == '-') { s->mode = M_NUM_ESIGN; return 1; }
        /* fall through */
    case M_NUM_ESIGN:
        if (ch >= '0' && ch <= '9') { s->mode = M_NUM_EXP; return 1; }
        return 0;
    case M_NUM_ZERO: case M_NUM_INT: case M_NUM_FRAC: case M_NUM_EXP:
        if (ch >= '0' && ch <= '9' && s->mode != M_NUM_ZERO) return 1;
        if (ch == '.' && s->mode <= M_NUM_INT) { s->mode = M_NUM_DOT; return 1; }
        if ((ch == 'e' || ch == 'E') && s->mode != M_NUM_EXP) { s->mode = M_NUM_E; return 1; }
        value_done(s); /* the number ended before ch */
        return structural(s, ch);
    }
    return structural(s, ch);
}

/* accepting reports whether the text so far is a whole JSON text. */
static int accepting(const jstate *s) {
    if (s->mode == M_DONE) return 1;
    if (s->base + s->nloc != 0) return 0;
    return s->mode == M_NUM_ZERO || s->mode == M_NUM_INT || s->mode == M_NUM_FRAC || s->mode == M_NUM_EXP;
}

/* cost is the number of bytes (one single-byte token each) that complete
 * the value from s at the least: the shortest completion closes the
 * current string, escape, number or literal, gives a key the value 0 and
 * closes every container. */
static int32_t cost(const jstate *s) {
    int32_t d = s->base + s->nloc;
    switch (s->mode) {
    case M_DONE: return 0;
    case M_VALUE: return d == 0 ? (any_value ? 1 : 2) : 1 + d;
    case M_ARR_FIRST: case M_OBJ_FIRST: case M_AFTER: return d;
    case M_OBJ_KEY: return 4 + d; /* "":0 */
    case M_COLON: return 2 + d;   /* :0 */
    case M_STR: return 1 + (s->a ? 2 : 0) + d;
    case M_STR_ESC: return 2 + (s->a ? 2 : 0) + d;
    case M_STR_U: return 4 - s->b + 1 + (s->a ? 2 : 0) + d;
    case M_STR_UTF8: return s->b + 1 + (s->a ? 2 : 0) + d;
    case M_LIT: return lit_len[s->b] - s->c + d;
    case M_NUM_MINUS: case M_NUM_DOT: case M_NUM_E: case M_NUM_ESIGN: return 1 + d;
    }
    return d; /* a number that may end here */
}

/* simulate runs token id's piece from s; 0 if it is not a continuation.
 * Four bytes a loop iteration (ABI §6). */
static int simulate(jstate *s, int32_t id) {
    const uint8_t *p = bytes + off[id];
    int32_t n = (int32_t)(off[id + 1] - off[id]), i = 0;
    s->nloc = 0;
    for (; i + 4 <= n; i += 4)
        if (!step(s, p[i]) || !step(s, p[i + 1]) || !step(s, p[i + 2]) || !step(s, p[i + 3])) return 0;
    switch (n - i) {
    case 3: if (!step(s, p[i++])) return 0; /* fall through */
    case 2: if (!step(s, p[i++])) return 0; /* fall through */
    case 1: if (!step(s, p[i])) return 0;
    }
    return 1;
}

/* fits reports whether a token leading to s leaves the value completable
 * within the budget (left: tokens after this one). */
static inline int fits(const jstate *s, int32_t left) { return !budget || cost(s) <= left; }

/* ---- output ---- */

static inline void set_edit(int32_t k, int32_t id, float v) {
    edits[2 * k] = id;
    ((float *)edits)[2 * k + 1] = v;
}

/* emit_template turns the allowed ids (and the end-of-generation ids when
 * eog_ok) into the template's edits and returns their count, n_vocab. */
static int32_t emit_template(int eog_ok) {
    for (int32_t i = 0; i < dirty; i++) set_edit(i, i, neg_inf);
    dirty = 0;
    for (int32_t k = 0; k < n_shown; k++) ((float *)edits)[2 * shown[k] + 1] = neg_inf;
    if (eog_ok)
        for (int32_t k = 0; k < n_eog; k++) allowed[n_allowed++] = eog[k];
    for (int32_t k = 0; k < n_allowed; k++) ((float *)edits)[2 * allowed[k] + 1] = logits[allowed[k]];
    int32_t *t = shown;
    shown = allowed;
    n_shown = n_allowed;
    allowed = t;
    n_allowed = 0;
    return n_vocab;
}

/* ---- the step ---- */

/* in_string: the plain tokens leave the state as it is. */
static int in_string(void) { return cur.mode == M_STR; }

/* collect puts into allowed the candidates that continue the text (and
 * fit in left more tokens when use_budget); inside a string only the
 * non-plain ones (the caller decides about the plain ones). */
static void collect(int use_budget, int32_t left) {
    int saved = budget;
    budget = budget && use_budget;
    n_allowed = 0;
    jstate t;
    if (in_string()) {
        for (int32_t k = 0; k < n_nonplain; k++) {
            t = cur;
            if (simulate(&t, nonplain[k]) && fits(&t, left)) allowed[n_allowed++] = nonplain[k];
        }
        budget = saved;
        return;
    }
    for (int g = 0; g < 2; g++) {
        jstate from = cur;
        if (g == 1) { /* tokens with leading whitespace: filter by the state after it */
            from.nloc = 0;
            if (!step(&from, ' ')) break;
        }
        int32_t first = g ? 257 : 0;
        for (int key = 0; key < 257; key++) {
            int32_t b0 = bucket_at[first + key], b1 = bucket_at[first + key + 1];
            if (b0 == b1) continue;
            if (key < 256) {
                t = from;
                t.nloc = 0;
                if (!step(&t, (uint8_t)key)) continue;
            }
            for (int32_t j = b0; j < b1; j++) {
                t = cur;
                if (simulate(&t, bucket_ids[j]) && fits(&t, left)) allowed[n_allowed++] = bucket_ids[j];
            }
        }
    }
    budget = saved;
}

static void log_id(int32_t level, const char *msg, int32_t id) {
    char buf[200];
    int32_t n = 0;
    for (const char *p = msg; *p && n < 180; p++) buf[n++] = *p;
    char digits[12];
    int32_t d = 0;
    uint32_t v = id < 0 ? (uint32_t)(-(int64_t)id) : (uint32_t)id;
    do { digits[d++] = (char)('0' + v % 10); v /= 10; } while (v);
    if (id < 0) buf[n++] = '-';
    while (d) buf[n++] = digits[--d];
    realizar_log_msg(level, buf, n);
}

/* advance applies the accepted token to the state; 0 if it does not
 * continue the text. */
static int advance(int32_t id) {
    if (cls[id] & CLS_EOG) return accepting(&cur);
    if (cls[id] & CLS_NEVER) return 0;
    jstate t = cur;
    if (!simulate(&t, id)) return 0;
    if (t.base < 64) sbits &= (1ULL << t.base) - 1;
    for (int32_t k = 0; k < t.nloc; k++) {
        stack[t.base + k] = loc[k];
        if (t.base + k < 64 && loc[k] == C_ARR) sbits |= 1ULL << (t.base + k);
    }
    t.base += t.nloc;
    t.nloc = 0;
    cur = t;
    return 1;
}

/* ---- the cache of masks by state ----
 *
 * What a step allows depends on the state only (the budget aside), and a
 * generation comes back to the same states again and again (in a string
 * at the same depth, after a value in the same container). So each
 * computed answer is kept, keyed by the whole state: the scalars, the
 * depth and, up to depth 64, the stack as bits. A direct-mapped table of
 * N_CACHE slots over an arena; when the arena is full it is emptied. */
#define N_CACHE 64
enum { CACHE_MASKED = 1, CACHE_ALLOWED = 2 };
typedef struct {
    jstate key;      /* nloc is 0 */
    uint64_t sbits;
    int32_t kind;    /* 0 (empty), CACHE_MASKED (edits) or CACHE_ALLOWED (ids) */
    int32_t eog_ok, count;
    uint32_t at;     /* byte offset in the arena */
} centry;
static centry cache[N_CACHE];
static uint8_t *arena;
static uint32_t arena_cap, arena_used;

static centry *slot(void) {
    uint32_t h = (uint32_t)cur.mode * 0x9e3779b1u ^ (uint32_t)cur.a << 8 ^ (uint32_t)cur.b << 12 ^
                 (uint32_t)cur.c << 16 ^ (uint32_t)cur.ws * 0x85ebca6bu ^ (uint32_t)cur.base * 0xc2b2ae35u ^
                 (uint32_t)sbits ^ (uint32_t)(sbits >> 32) * 0x27d4eb2fu;
    return &cache[(h ^ h >> 15) % N_CACHE];
}

static centry *lookup(void) {
    centry *e = slot();
    if (e->kind && e->key.mode == cur.mode && e->key.a == cur.a && e->key.b == cur.b && e->key.c == cur.c &&
        e->key.ws == cur.ws && e->key.base == cur.base && e->sbits == sbits)
        return e;
    return 0;
}

static void store(int32_t kind, const void *src, int32_t count, int32_t eog_ok) {
    uint32_t size = (uint32_t)count * (kind == CACHE_MASKED ? 8 : 4);
    if (size > arena_cap) return;
    if (arena_used + size > arena_cap) {
        for (int32_t k = 0; k < N_CACHE; k++) cache[k].kind = 0;
        arena_used = 0;
    }
    centry *e = slot();
    memcpy(arena + arena_used, src, size);
    *e = (centry){.key = cur, .sbits = sbits, .kind = kind, .eog_ok = eog_ok, .count = count, .at = arena_used};
    arena_used += size;
}

REALIZAR_EXPORT("realizar_reset")
int32_t reset(int64_t seed, int32_t n_prompt) {
    (void)seed; (void)n_prompt;
    cur = (jstate){.mode = M_VALUE};
    sbits = 0;
    steps = 0;
    broken = 0;
    return 0;
}

REALIZAR_EXPORT("realizar_process")
int32_t process(int32_t prev, int32_t count) {
    if (count != n_vocab) return REALIZAR_ERR_STATE;
    if (broken) return REALIZAR_ERR_STATE;
    if (prev >= 0 && prev < n_vocab && !advance(prev)) {
        broken = 1;
        log_id(REALIZAR_LOG_ERROR, "json: the accepted token does not continue the JSON text: id ", prev);
        return REALIZAR_ERR_STATE;
    }
    steps++;
    /* the tokens after this one, less the last, kept for end of
     * generation: within them the value must close, so that a turn at its
     * budget ends by end of generation (finish_reason "stop", which
     * clients parse; "length" they take for a truncated value) */
    int32_t left = max_tokens - steps - 1;
    int relaxed = 0; /* left gave back the kept token (a budget too small for both) */
    /* a byte raises the cost by at most 4 (',' in an object: "":0) */
    int cacheable = use_cache && cur.base <= 64 && (!budget || (int64_t)left >= (int64_t)cost(&cur) + 4 * (int64_t)max_piece);
    centry *hit = cacheable ? lookup() : 0;
    if (hit && hit->kind == CACHE_MASKED) {
        memcpy(edits, arena + hit->at, (uint32_t)hit->count * 8);
        if (hit->count > dirty) dirty = hit->count;
        return hit->count;
    }
    if (hit) {
        memcpy(allowed, arena + hit->at, (uint32_t)hit->count * 4);
        n_allowed = hit->count;
        return emit_template(hit->eog_ok);
    }
    int use_budget = 1;
    for (;;) {
        collect(use_budget, left);
        if (in_string() && (!budget || !use_budget || cost(&cur) <= left)) {
            /* the plain tokens are allowed: edit the few masked ids */
            int32_t e = 0;
            for (int32_t k = 0; k < n_never; k++) set_edit(e++, never[k], neg_inf);
            for (int32_t k = 0; k < n_eog; k++) set_edit(e++, eog[k], neg_inf);
            for (int32_t k = 0, j = 0; k < n_nonplain; k++) {
                if (j < n_allowed && allowed[j] == nonplain[k]) j++;
                else set_edit(e++, nonplain[k], neg_inf);
            }
            if (e > dirty) dirty = e;
            n_allowed = 0;
            if (cacheable) store(CACHE_MASKED, edits, e, 0);
            return e;
        }
        int eog_ok = accepting(&cur);
        if (n_allowed > 0 || eog_ok) {
            if (cacheable && use_budget) store(CACHE_ALLOWED, allowed, n_allowed, eog_ok);
            return emit_template(eog_ok);
        }
        if (budget && use_budget && !relaxed) {
            relaxed = 1; /* close the value at least, without end of generation */
            left++;
            continue;
        }
        if (budget && use_budget) {
            log_id(REALIZAR_LOG_WARN, "json: max_tokens is too small to complete the value; tokens left: ", left);
            use_budget = 0;
            continue;
        }
        log_id(REALIZAR_LOG_ERROR, "json: no token of the vocabulary continues the JSON text at step ", steps);
        return REALIZAR_ERR_FAILED;
    }
}

/* ---- init ---- */

/* parse_ids reads a JSON array of ids in [0, n_vocab) (compact text, as
 * config_get gives it) into out (at most max); the count, or -1. */
static int32_t parse_ids(const uint8_t *s, int32_t n, int32_t *out, int32_t max) {
    int32_t i = 0, count = 0;
    if (n < 2 || s[0] != '[' || s[n - 1] != ']') return -1;
    i = 1;
    if (n == 2) return 0;
    while (i < n - 1) {
        int64_t v = 0;
        int32_t start = i;
        while (i < n - 1 && s[i] >= '0' && s[i] <= '9' && v < n_vocab) v = v * 10 + (s[i++] - '0');
        if (i == start || v >= n_vocab || count >= max) return -1;
        out[count++] = (int32_t)v;
        if (i < n - 1) {
            if (s[i] != ',') return -1;
            i++;
            if (i == n - 1) return -1;
        }
    }
    return count;
}

static int read_ids(const char *key, int32_t **out, int32_t *count) {
    uint8_t *raw;
    int32_t len;
    int r = realizar_config_raw(key, &raw, &len);
    /* null is absent; the host gives it as "" (and may as "null") */
    if (r <= 0 || len == 0 || (len == 4 && realizar_memeq(raw, "null", 4))) return r < 0 ? r : 0;
    int32_t max = len / 2 + 1;
    *out = need((uint32_t)max * 4);
    if (!*out) return REALIZAR_ERR_FAILED;
    *count = parse_ids(raw, len, *out, max);
    if (*count < 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "json: config: eog and control must be arrays of token ids in [0, n_vocab)");
        return REALIZAR_ERR_CONFIG;
    }
    return 1;
}

static int read_config(const uint8_t *cfg, int32_t len) {
    static const char *const keys[] = {"eog", "control", "any_value", "max_depth", "max_whitespace", "max_tokens", "cache"};
    int r;
    if ((r = realizar_config_check_keys(cfg, len, keys, 7)) < 0) return r;
    if ((r = realizar_config_bool("cache", &use_cache)) < 0) return r;
    if ((r = realizar_config_bool("any_value", &any_value)) < 0) return r;
    if ((r = realizar_config_i32("max_depth", &max_depth)) < 0) return r;
    if ((r = realizar_config_i32("max_whitespace", &max_ws)) < 0) return r;
    if ((r = realizar_config_i32("max_tokens", &max_tokens)) < 0) return r;
    if (max_depth < 1 || max_depth > 1024 || max_ws < 0 || max_tokens < 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "json: config: max_depth must be in [1, 1024], max_whitespace and max_tokens >= 0");
        return REALIZAR_ERR_CONFIG;
    }
    if ((r = read_ids("eog", &eog, &n_eog)) < 0) return r;
    if (n_eog == 0) {
        realizar_logs(REALIZAR_LOG_ERROR, "json: config: eog (the end-of-generation ids, a non-empty array) is required");
        return REALIZAR_ERR_CONFIG;
    }
    int32_t *control = 0, n_control = 0;
    if ((r = read_ids("control", &control, &n_control)) < 0) return r;
    for (int32_t k = 0; k < n_control; k++) cls[control[k]] |= CLS_NEVER;
    for (int32_t k = 0; k < n_eog; k++) cls[eog[k]] = CLS_EOG;
    return 0;
}

/* plain reports whether p[0..n) stays inside a string as it is: no quote,
 * backslash or control byte, and only whole UTF-8 sequences. */
static int plain(const uint8_t *p, int32_t n) {
    jstate s = {.mode = M_STR};
    for (int32_t i = 0; i < n; i++) {
        if (p[i] == '"' || p[i] == '\\' || !step(&s, p[i])) return 0;
    }
    return s.mode == M_STR;
}

static int32_t bucket_of(const uint8_t *p, int32_t n) {
    if (!is_ws(p[0])) return p[0];
    for (int32_t i = 1; i < n; i++)
        if (!is_ws(p[i])) return 257 + p[i];
    return 513;
}

/* read_vocab copies every piece into guest memory and classifies it. */
static int read_vocab(void) {
    uint64_t total = 0;
    for (int32_t id = 0; id < n_vocab; id++) {
        int32_t l = realizar_vocab_piece(id, 0, 0);
        off[id] = (uint32_t)total;
        total += (uint32_t)(l < 0 ? 0 : l < max_piece ? l : max_piece);
    }
    off[n_vocab] = (uint32_t)total;
    bytes = need((uint32_t)total);
    if (!bytes || total > 0x7fffffff) return REALIZAR_ERR_FAILED;
    int32_t n_np = 0;
    for (int32_t id = 0; id < n_vocab; id++) {
        int32_t l = (int32_t)(off[id + 1] - off[id]);
        if (l > 0) realizar_vocab_piece(id, bytes + off[id], l);
        if (cls[id] & CLS_EOG) continue;
        if (l == 0) cls[id] |= CLS_NEVER;
        if (cls[id] & CLS_NEVER) {
            n_never++;
            continue;
        }
        if (plain(bytes + off[id], l)) cls[id] |= CLS_PLAIN;
        else n_np++;
        bucket_at[bucket_of(bytes + off[id], l) + 1]++;
    }
    for (int32_t k = 0; k < N_BUCKETS; k++) bucket_at[k + 1] += bucket_at[k];
    bucket_ids = need((uint32_t)bucket_at[N_BUCKETS] * 4);
    nonplain = need((uint32_t)n_np * 4);
    never = need((uint32_t)n_never * 4);
    int32_t *fill = need(N_BUCKETS * 4);
    if (!bucket_ids || !nonplain || !never || !fill) return REALIZAR_ERR_FAILED;
    memcpy(fill, bucket_at, N_BUCKETS * 4);
    n_never = 0;
    for (int32_t id = 0; id < n_vocab; id++) {
        if (cls[id] & CLS_EOG) continue;
        if (cls[id] & CLS_NEVER) {
            never[n_never++] = id;
            continue;
        }
        const uint8_t *p = bytes + off[id];
        bucket_ids[fill[bucket_of(p, (int32_t)(off[id + 1] - off[id]))]++] = id;
        if (!(cls[id] & CLS_PLAIN)) nonplain[n_nonplain++] = id;
    }
    return 0;
}

/* budget_possible reports whether every byte of a shortest completion has
 * a single-byte token. */
static int budget_possible(void) {
    static const uint8_t need_bytes[] = "{}]\":0truefalsnl\x80\x90\xa0";
    uint8_t have[256] = {0};
    for (int32_t id = 0; id < n_vocab; id++)
        if (off[id + 1] - off[id] == 1 && !(cls[id] & (CLS_NEVER | CLS_EOG))) have[bytes[off[id]]] = 1;
    for (const uint8_t *p = need_bytes; *p; p++)
        if (!have[*p]) return 0;
    return 1;
}

REALIZAR_EXPORT("realizar_init")
int64_t init(int32_t nv, int32_t mp, int32_t config_ptr, int32_t config_len) {
    if (nv <= 0 || mp <= 0) return REALIZAR_ERR_VOCAB;
    n_vocab = nv;
    max_piece = mp;
    cls = need((uint32_t)nv);
    off = need(((uint32_t)nv + 1) * 4);
    logits = need((uint32_t)nv * 12);
    if (!cls || !off || !logits) return REALIZAR_ERR_FAILED;
    memset(cls, 0, (uint32_t)nv);
    edits = (int32_t *)(logits + nv);
    int r = read_config((const uint8_t *)(uintptr_t)config_ptr, config_len);
    if (r < 0) return r;
    stack = need((uint32_t)max_depth);
    loc = need((uint32_t)mp + 1);
    allowed = need((uint32_t)(nv + n_eog) * 4);
    shown = need((uint32_t)(nv + n_eog) * 4);
    arena_cap = (uint32_t)nv * 8 > (1u << 18) ? (uint32_t)nv * 8 : (1u << 18);
    arena = need(arena_cap);
    if (!stack || !loc || !allowed || !shown || !arena) return REALIZAR_ERR_FAILED;
    if ((r = read_vocab()) < 0) return r;
    budget = max_tokens > 0 && budget_possible();
    if (max_tokens > 0 && !budget)
        realizar_logs(REALIZAR_LOG_WARN, "json: max_tokens is ignored: the vocabulary lacks a single-byte token a completion needs");
    for (int32_t i = 0; i < nv; i++) set_edit(i, i, neg_inf);
    reset(0, 0);
    return realizar_pack_init((uint32_t)(uintptr_t)logits, 0);
}
