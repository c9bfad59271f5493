// Deterministic random stress test of the pre-tokenizers.
//
//   gcc -std=c11 -O1 -g -fsanitize=address,undefined -Icore_c/include core_c/src/*/*.c
//       core_c/tests/stress.c -o stress
//   (add -DST_TEST_COUNTERS: the core's work counter, work_counter.h, is required)
//   ./stress [seed [iterations]]    (defaults: 1 2000)
//
// Each iteration builds a random byte string (ASCII, valid UTF-8 of every length from
// interesting ranges, and sometimes invalid bytes), runs it through every pattern (gpt2,
// cl100k, o200k) x {plain, script-aware with the default scripts, with "", with
// "Latin,Greek"} and checks the invariants of invariants.h in both offset modes. Then long
// inputs (16 KB growing to 1 MB) are run per configuration, to catch quadratic behaviour: the
// core's work counter (characters examined, work_counter.h) is read around each call, and a call
// whose work grows more than 5x for 4x the input, or exceeds WORK_PER_BYTE per byte, fails.
// Nothing is timed (a busy machine must not fail a test; timings belong in bench/). The
// per-byte work at 1 MB is printed. The last line is
// "N passed, M failed"; the exit status is 1 on any failure.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "invariants.h"
#include "supertok.h"
#include "error_contract.h"
#include "../src/base/work_counter.h"

#ifndef ST_TEST_COUNTERS
#error "stress.c needs the core's work counter: build the core and this file with -DST_TEST_COUNTERS"
#endif

/* ---- PRNG: xorshift64* -------------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rng(void) {
    uint64_t x = rng_state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    rng_state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

static uint32_t below(uint32_t n) { return (uint32_t)((rng() >> 32) % n); }

/* ---- text generation ---------------------------------------------------------------------- */

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *src, size_t n) {
    if (!n) return;
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap * 2 : 256;
        while (c < b->n + n) c *= 2;
        unsigned char *q = (unsigned char *)realloc(b->p, c);
        if (!q) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->p = q;
        b->cap = c;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put_byte(buf *b, unsigned v) {
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put_cp(buf *b, uint32_t cp) {
    unsigned char e[4];
    size_t n;
    if (cp < 0x80) { e[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { e[0] = (unsigned char)(0xC0 | (cp >> 6)); e[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else if (cp < 0x10000) {
        e[0] = (unsigned char)(0xE0 | (cp >> 12)); e[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        e[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
    } else {
        e[0] = (unsigned char)(0xF0 | (cp >> 18)); e[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        e[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); e[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
    }
    put(b, e, n);
}

typedef struct range {
    uint32_t lo, hi;
} range;

/* Interesting code point ranges: letters of many scripts and cases, marks, digits, spaces. */
static const range letters[] = {
    {'a', 'z'}, {'A', 'Z'}, {0xC0, 0xFF}, {0x100, 0x17F}, {0x180, 0x24F}, /* Latin (Lu/Ll mixes) */
    {0x1C4, 0x1CC},                                                       /* Lt: Dž Lj Nj */
    {0x1F88, 0x1F8F},                                                     /* Greek Lt */
    {0x2B0, 0x2C1},                                                       /* Lm modifiers */
    {0x391, 0x3A9}, {0x3B1, 0x3C9},                                       /* Greek */
    {0x410, 0x44F},                                                       /* Cyrillic */
    {0x5D0, 0x5EA},                                                       /* Hebrew */
    {0x621, 0x64A}, {0x640, 0x640},                                       /* Arabic, tatweel (Lm, Common) */
    {0x905, 0x939},                                                       /* Devanagari */
    {0xE01, 0xE30},                                                       /* Thai */
    {0xE81, 0xEA3},                                                       /* Lao */
    {0x1000, 0x102A},                                                     /* Myanmar */
    {0x1780, 0x17B3},                                                     /* Khmer */
    {0x10A0, 0x10C5},                                                     /* Georgian Lu */
    {0x3041, 0x3096}, {0x309D, 0x309E},                                   /* Hiragana */
    {0x30A1, 0x30FA}, {0x30FC, 0x30FC},                                   /* Katakana, ー (Common Lm) */
    {0x4E00, 0x9FFF},                                                     /* Han */
    {0xAC00, 0xD7A3},                                                     /* Hangul */
    {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A},                                   /* fullwidth Latin */
    {0x10400, 0x1044F},                                                   /* Deseret Lu/Ll */
    {0x10300, 0x1031F},                                                   /* Old Italic */
    {0x1D400, 0x1D4FF},                                                   /* math alphanumerics (Common) */
    {0x1E900, 0x1E943},                                                   /* Adlam Lu/Ll */
    {0x20000, 0x2A6DF},                                                   /* Han ext B */
};

static const range marks[] = {
    {0x300, 0x36F},   /* combining diacritics (Inherited) */
    {0x93E, 0x94D},   /* Devanagari signs (Mc/Mn) */
    {0xE31, 0xE31}, {0xE34, 0xE3A}, {0xE47, 0xE4E}, /* Thai */
    {0x102B, 0x103E}, /* Myanmar */
    {0x17B6, 0x17D3}, /* Khmer */
    {0x20D0, 0x20F0}, /* combining for symbols (Me/Mn) */
    {0x3099, 0x309A}, /* kana voicing marks (Inherited) */
    {0xFE00, 0xFE0F}, /* variation selectors */
    {0xE0100, 0xE01EF},
};

static const range digits[] = {
    {'0', '9'}, {0x660, 0x669}, {0x966, 0x96F}, {0xE50, 0xE59}, {0xFF10, 0xFF19},
    {0x2160, 0x2188}, /* Nl */
    {0xB2, 0xB3}, {0xBC, 0xBE}, {0x2460, 0x249B}, /* No */
    {0x1D7CE, 0x1D7FF}, {0x104A0, 0x104A9},
};

static const uint32_t spaces[] = {' ', ' ', ' ', '\t', '\n', '\r', 0x0B, 0x0C, 0x85, 0xA0, 0x1680,
                                  0x2000, 0x2005, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000,
                                  0x200B /* not White_Space */, 0x180E /* not White_Space */};

static const range others[] = {
    {'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}, {0, 0x1F}, {0x7F, 0x9F}, {0xA1, 0xBF},
    {0x2010, 0x2027}, {0x2030, 0x205E}, {0x3001, 0x3003}, {0xFF01, 0xFF0F}, {0x1F300, 0x1F64F},
    {0xE000, 0xE0FF} /* private use */, {0xFFF0, 0xFFFF}, {0x10FFF0, 0x10FFFF}, {0x378, 0x379},
};

static const char *const snippets[] = {
    "'s", "'S", "'t", "'re", "'RE", "'Re", "'ve", "'m", "'ll", "'LL", "'lL", "'d", "'D", "'",
    "'\xC5\xBF", /* 'ſ: folds to 's */
    "\xC5\xBF", "\r\n", "\n\n", " \n", "\r", "//", "/", " /", "  ", " 's", "a's", "A'S",
    "Hello", " world", "HelloWorld", "ABCdef", " 123", "12345", "...", " !?", "\t\t", "x\xCC\x81",
};

static uint32_t from(const range *r, size_t n) {
    const range *x = &r[below((uint32_t)n)];
    return x->lo + below(x->hi - x->lo + 1);
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static void put_invalid(buf *b) {
    static const char *const bad[] = {
        "\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xE0\x9F\xBF", "\xF0\x80\x80\x80",
        "\xF0\x8F\xBF\xBF", "\xED\xA0\x80", "\xED\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
        "\xF8\x88\x80\x80\x80", "\xFE", "\xFF", "\xC3", "\xE4\xB8", "\xF0\x9F\x98", "\xE4", "\xF0",
    };
    switch (below(3)) {
    case 0: put_byte(b, 0x80 + below(0x80)); break;
    case 1: {
        const char *s = bad[below(COUNT(bad))];
        put(b, s, strlen(s));
        break;
    }
    default: { /* a valid 2..4-byte character cut short */
        uint32_t cp = below(2) ? from(letters, COUNT(letters)) : 0x10000 + below(0x100000);
        buf t = {0, 0, 0};
        put_cp(&t, cp);
        if (t.n > 1) put(b, t.p, 1 + below((uint32_t)t.n - 1));
        free(t.p);
        break;
    }
    }
}

/* One random character or snippet. A "theme" biases a whole string toward one class so that
 * long runs (of letters, spaces, marks...) occur often. */
static void put_random(buf *b, int theme, int invalid_ok) {
    uint32_t r = below(100);
    if (theme >= 0 && below(2)) r = (uint32_t)theme;
    if (r < 20) put_cp(b, 'a' + below(26));
    else if (r < 25) put_cp(b, 'A' + below(26));
    else if (r < 45) put_cp(b, from(letters, COUNT(letters)));
    else if (r < 53) put_cp(b, from(marks, COUNT(marks)));
    else if (r < 60) put_cp(b, from(digits, COUNT(digits)));
    else if (r < 75) put_cp(b, spaces[below(COUNT(spaces))]);
    else if (r < 85) {
        const char *s = snippets[below(COUNT(snippets))];
        put(b, s, strlen(s));
    } else if (r < 93) put_cp(b, from(others, COUNT(others)));
    else if (r < 97) {
        uint32_t cp; /* any scalar value */
        do cp = below(0x110000); while (cp >= 0xD800 && cp <= 0xDFFF);
        put_cp(b, cp);
    } else if (invalid_ok) put_invalid(b);
    else put_cp(b, 0x17F);
}

static void gen_text(buf *b) {
    b->n = 0;
    uint32_t len;
    switch (below(8)) {
    case 0: len = below(4); break;
    case 1: len = 200 + below(1800); break;
    default: len = below(60); break;
    }
    int theme = below(3) ? -1 : (int)below(100);
    int invalid_ok = below(8) == 0;
    for (uint32_t k = 0; k < len; k++) put_random(b, theme, invalid_ok);
    /* occasionally a single random byte flipped anywhere */
    if (b->n && below(16) == 0) b->p[below((uint32_t)b->n)] = (unsigned char)below(256);
}

/* ---- configurations ----------------------------------------------------------------------- */

#define N_CONFIGS 28

typedef struct config {
    int pattern;
    uint32_t flags;
    const char *scripts; /* NULL: default set */
    const char *name;
} config;

static config configs[N_CONFIGS];
static st_pretokenizer *handles[N_CONFIGS];

static int make_configs(void) {
    static const int pats[7] = {ST_PATTERN_GPT2,   ST_PATTERN_CL100K, ST_PATTERN_O200K,      ST_PATTERN_SUPERBPE,
                                ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2,  ST_PATTERN_DEEPSEEK_V3};
    static const char *const pnames[7] = {"gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3"};
    static char names[N_CONFIGS][64];
    st_error err;
    int k = 0;
    for (int p = 0; p < 7; p++)
        for (int v = 0; v < 4; v++, k++) {
            configs[k].pattern = pats[p];
            configs[k].flags = v ? ST_PRETOK_SCRIPT_AWARE : 0;
            configs[k].scripts = v == 2 ? "" : v == 3 ? "Latin,Greek" : NULL;
            snprintf(names[k], sizeof names[k], "%s/%s", pnames[p],
                     v == 0 ? "plain" : v == 1 ? "sa-default" : v == 2 ? "sa-none" : "sa-latin-greek");
            configs[k].name = names[k];
            size_t sl = configs[k].scripts ? strlen(configs[k].scripts) : 0;
            if (CHECKED(err, st_pretokenizer_new(configs[k].pattern, configs[k].flags, configs[k].scripts, sl, NULL,
                                                 &handles[k], &err)) != ST_OK) {
                printf("FAIL: st_pretokenizer_new for %s\n", configs[k].name);
                return 0;
            }
        }
    return 1;
}

/* ---- main --------------------------------------------------------------------------------- */

static int g_pass, g_fail;

static void print_hex(const unsigned char *s, size_t n) {
    size_t shown = n < 200 ? n : 200;
    for (size_t i = 0; i < shown; i++) printf("%02X", s[i]);
    if (shown < n) printf("... (%zu bytes)", n);
    printf("\n");
}

static const char *short_name(int c) {
    static char names[N_CONFIGS][24];
    static const char *const p[7] = {"gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3"};
    static const char *const v[4] = {"", "-sa", "-none", "-lg"};
    snprintf(names[c], sizeof names[c], "%s%s", p[c / 4], v[c % 4]);
    return names[c];
}

/* Long inputs: each kind is built at 16 KB, 64 KB, 256 KB and 1 MB. Every configuration runs
 * pretokenize in bytes, in code points, and pretokenize_count at each size, and the core's work
 * counter is read around each call (the most of the three is the size's work). A size fails if
 * its work is over WORK_RATIO times the previous size's (a quarter as long: linear code gives
 * 4x, quadratic 16x) or over WORK_PER_BYTE per byte of input (the scanners look at each
 * character a small fixed number of times), and then the larger sizes are skipped, so a
 * quadratic scanner fails in seconds instead of hanging. The 1 MB work per byte is printed. */
#define WORK_RATIO 5.0
#define WORK_PER_BYTE 8.0
typedef struct long_kind {
    const char *name;
    const char *head, *unit, *tail; /* head + unit repeated + tail */
} long_kind;

static const long_kind long_kinds[] = {
    {"'a' x 1M", "", "a", ""},
    {"'A' x 1M", "", "A", ""},
    {"spaces", "", " ", ""},
    {"digits", "", "7", ""},
    {"\\r\\n", "", "\r\n", ""},
    {"U+0301 marks", "", "\xCC\x81", ""},
    {"'a' + U+0301 marks", "a", "\xCC\x81", ""},
    {"U+4E00 Han", "", "\xE4\xB8\x80", ""},
    {"U+3000 ideographic spaces", "", "\xE3\x80\x80", ""},
    {"U+00A0 no-break spaces", "", "\xC2\xA0", ""},
    {"spaces then 'x'", "", " ", "x"},
    {"spaces + \\n then 'x'", "", " ", "\nx"},
    {"apostrophes", "", "'", ""},
    {"'!' then 'A's", "!", "A", ""},
    {"'A's then 'a'", "", "A", "a"},
    {"\"a \" alternating", "", "a ", ""},
    {"Latin/Greek alternating", "", "a\xCE\xB1", ""},
    {"'a' + spaces + Greek", "a", " ", "\xCE\xB1"},
    {"'a' + digits + Greek", "a", "1", "\xCE\xB1"},
    {"Lo/Lu mix", "", "A\xE4\xB8\x80", ""},
    {"'/' slashes", "", "/", ""},
    {"'!' punctuation", "", "!", ""},
    /* superbpe's alternatives: pairs that start a match at every other character, runs that
     * end in a line break, spaces before words */
    {"\" !\" alternating", "", " !", ""},
    {"\"\u00e9!\" alternating", "", "\xC3\xA9!", ""}, /* (o200k takes "a!" without counting) */
    {"\" !!\" repeated", "", " !!", ""},
    {"\"!!\\n/\" repeated", "", "!!\n/", ""},
    {"\"  a\" repeated", "", "  a", ""},
    {"\" \\t\" alternating", "", " \t", ""},
    {"\"1a\" alternating", "", "1a", ""},
    {"spaces then '!!'", "", " ", "!!"},
    /* deepseek_v3's: a control character before letters (the prefix), alone (no match: the text
     * between matches), punctuation before ASCII letters, CJK runs cut by digits, Katakana
     * punctuation inside a CJK run */
    {"\"\\x01\u00e9\" alternating", "", "\x01\xC3\xA9", ""}, /* (ASCII letters: o200k counts no work) */
    {"U+0001 controls", "", "\x01", ""},
    {"U+E000 private use", "", "\xEE\x80\x80", ""},
    {"\"#ab\u00e9\" repeated", "", "#ab\xC3\xA9", ""},
    {"\"\u65e5" "1\" alternating", "", "\xE6\x97\xA5" "1", ""},
    {"\"\u30fb\u30ab\" alternating", "", "\xE3\x83\xBB\xE3\x82\xAB", ""},
    {"\" \\u3000\" alternating", "", " \xE3\x80\x80", ""},
};

static void build_long(buf *b, const long_kind *k, size_t size) {
    size_t h = strlen(k->head), u = strlen(k->unit), t = strlen(k->tail);
    b->n = 0;
    put(b, k->head, h);
    while (b->n + u + t <= size) put(b, k->unit, u);
    put(b, k->tail, t);
}

static void long_inputs(void) {
    static const size_t sizes[4] = {16 << 10, 64 << 10, 256 << 10, 1 << 20};
    buf b = {0, 0, 0};
    st_check_buf cb = {0, 0, 0, 0};
    double worst = 0; /* work per byte */
    const char *worst_name = "";
    if (!st_check_buf_reserve(&cb, sizes[3] + 2)) {
        printf("FAIL: out of memory\n");
        g_fail++;
        return;
    }
    printf("long inputs (1 MB each): work per byte (characters examined, the most of pretokenize(bytes),\n"
           "pretokenize(codepoints), pretokenize_count) per configuration (sa = script-aware, default\n"
           "scripts; none = \"\"; lg = \"Latin,Greek\")\n");
    printf("  %-26s", "");
    for (int c = 0; c < N_CONFIGS; c++) printf(" %11s", short_name(c));
    printf("\n");
    int dead[N_CONFIGS] = {0}; /* a configuration that failed once is not run again */
    st_error err;
    for (size_t k = 0; k < COUNT(long_kinds); k++) {
        double prev[N_CONFIGS] = {0}, last[N_CONFIGS] = {0};
        for (int z = 0; z < 4; z++) {
            build_long(&b, &long_kinds[k], sizes[z]);
            for (int c = 0; c < N_CONFIGS; c++) {
                if (dead[c]) continue;
                size_t n1 = 0, n2 = 0, n3 = 0;
                st__test_work_take();
                st_status s1 =
                    CHECKED(err, st_pretokenize(handles[c], (const char *)b.p, b.n, 0, cb.ends_b, b.n, &n1, &err));
                double w1 = (double)st__test_work_take();
                st_status s2 = CHECKED(err, st_pretokenize(handles[c], (const char *)b.p, b.n, ST_OFFSETS_CODEPOINTS,
                                                           cb.ends_c, b.n, &n2, &err));
                double w2 = (double)st__test_work_take();
                st_status s3 = CHECKED(err, st_pretokenize_count(handles[c], (const char *)b.p, b.n, &n3, &err));
                double w3 = (double)st__test_work_take();
                double m = w1;
                if (w2 > m) m = w2;
                if (w3 > m) m = w3;
                if (m / (double)b.n > worst) {
                    worst = m / (double)b.n;
                    worst_name = long_kinds[k].name;
                }
                int superlinear = z > 0 && m > WORK_RATIO * prev[c];
                int ok = s1 == ST_OK && s2 == ST_OK && s3 == ST_OK && n1 == n2 && n1 == n3 && n1 > 0 &&
                         cb.ends_b[n1 - 1] == b.n && m > 0 && m <= WORK_PER_BYTE * (double)b.n && !superlinear;
                if (ok) g_pass++;
                else {
                    g_fail++;
                    dead[c] = 1 + (int)k;
                    printf("FAIL: long input %s (%zu bytes) with %s: status %d/%d/%d, pieces %zu/%zu/%zu, "
                           "work %.0f (%.2f per byte, limit %.0f; %.0f at a quarter of the size, ratio limit %.0f)\n",
                           long_kinds[k].name, b.n, configs[c].name, s1, s2, s3, n1, n2, n3, m, m / (double)b.n,
                           WORK_PER_BYTE, prev[c], WORK_RATIO);
                }
                prev[c] = m;
                last[c] = m / (double)b.n;
            }
            /* full invariants at 1 MB on one configuration per input (o200k script-aware) */
            if (z == 3 && !dead[9]) {
                const char *why = st_check_text(handles[9], b.p, b.n, &cb, rng());
                if (why) {
                    g_fail++;
                    printf("FAIL: long input %s: %s\n", long_kinds[k].name, why);
                } else g_pass++;
            }
        }
        printf("  %-26s", long_kinds[k].name);
        for (int c = 0; c < N_CONFIGS; c++) {
            if (dead[c]) printf(" %11s", dead[c] == 1 + (int)k ? "FAIL" : "-");
            else printf(" %11.2f", last[c]);
        }
        printf("\n");
    }
    printf("most work per byte in one call: %.2f (%s)\n", worst, worst_name);
    free(b.p);
    st_check_buf_free(&cb);
}

/* NFC (st_normalize_nfc) on long adversarial inputs: the work (items of the decomposed text
 * visited, work_counter.h) must grow linearly, at most NFC_WORK_PER_BYTE per input byte. A run of
 * marks out of order is walked once per class present (at most 2 x (1 + 2 x 54) visits per mark
 * over the two walks), so the worst input is a run cycling through many classes out of order. */
#define NFC_WORK_PER_BYTE 160.0

static size_t nfc_put_cp(unsigned char *p, uint32_t cp) {
    if (cp < 0x80) { p[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { p[0] = (unsigned char)(0xC0 | (cp >> 6)); p[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        p[0] = (unsigned char)(0xE0 | (cp >> 12)); p[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        p[2] = (unsigned char)(0x80 | (cp & 0x3F)); return 3;
    }
    p[0] = (unsigned char)(0xF0 | (cp >> 18)); p[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    p[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); p[3] = (unsigned char)(0x80 | (cp & 0x3F)); return 4;
}

static void nfc_long_inputs(void) {
    /* marks of many distinct classes (1 ... 240), out of order */
    static const uint32_t desc[] = {0x345, 0x35D, 0x35C, 0x31B, 0x301, 0x302, 0x316, 0x334, 0x327, 0x5B0, 0x5B1,
                                    0x5B2, 0x5B3, 0x5B4, 0x5B5, 0x5B6, 0x5B7, 0x5B8, 0x5B9, 0x5BB, 0x5BC, 0x5BD,
                                    0x5BF, 0x5C1, 0x5C2, 0xFB1E, 0x64B, 0x64C, 0x64D, 0x64E, 0x64F, 0x650, 0x651,
                                    0x652, 0x670, 0x711, 0xC55, 0xC56, 0xE38, 0xE48, 0xEB8, 0xEC8, 0xF71, 0xF72,
                                    0xF74, 0x94D, 0x93C, 0x3099, 0x1DCE, 0x302A, 0x302B, 0x302C, 0x302D, 0x302E};
    static const char *names[4] = {"marks of many classes, unordered", "one mark repeated", "base + 3 marks",
                                   "Hangul jamo L V T"};
    static const size_t sizes[4] = {16 << 10, 64 << 10, 256 << 10, 1 << 20};
    unsigned char *t = (unsigned char *)malloc((1 << 20) + 8);
    char *out = (char *)malloc(3 * ((1 << 20) + 8));
    if (!t || !out) {
        printf("FAIL: out of memory\n");
        g_fail++;
        free(t);
        free(out);
        return;
    }
    printf("NFC, long inputs: work per byte at 1 MB\n");
    for (int k = 0; k < 4; k++) {
        double prev = 0, last = 0;
        for (int z = 0; z < 4; z++) {
            size_t n = 0, i = 0;
            if (k != 3) n += nfc_put_cp(t, 'a');
            while (n + 4 <= sizes[z]) {
                uint32_t cp = k == 0 ? desc[i % (sizeof desc / sizeof desc[0])]
                            : k == 1 ? 0x301
                            : k == 2 ? (i % 4 == 0 ? 'e' : i % 4 == 1 ? 0x301 : i % 4 == 2 ? 0x316 : 0x302)
                                     : 0x1100 + (uint32_t)(i % 3) * 0x61; /* U+1100, U+1161, U+11C2 */
                n += nfc_put_cp(t + n, cp);
                i++;
            }
            size_t on = 0;
            st_error err;
            st__test_work_take();
            st_status st = CHECKED(err, st_normalize_nfc((const char *)t, n, out, NULL, 3 * n, &on, &err));
            double w = (double)st__test_work_take();
            int ok = st == ST_OK && w <= NFC_WORK_PER_BYTE * (double)n && !(z > 0 && w > WORK_RATIO * prev);
            if (ok) g_pass++;
            else {
                g_fail++;
                printf("FAIL: NFC long input %s (%zu bytes): status %d, work %.0f (%.2f per byte; %.0f at a "
                       "quarter of the size)\n", names[k], n, st, w, w / (double)n, prev);
            }
            prev = w;
            last = w / (double)n;
        }
        printf("  %-34s %8.2f\n", names[k], last);
    }
    free(t);
    free(out);
}

int main(int argc, char **argv) {
    uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
    long iters = argc > 2 ? strtol(argv[2], NULL, 0) : 2000;
    rng_state = seed * 0x9E3779B97F4A7C15ULL + 0x1234567ULL;
    if (!rng_state) rng_state = 1;
    printf("stress: seed %llu, %ld iterations\n", (unsigned long long)seed, iters);
    if (!make_configs()) {
        printf("0 passed, 1 failed\n");
        return 1;
    }
    buf b = {0, 0, 0};
    st_check_buf cb = {0, 0, 0, 0};
    long invalid = 0, shown = 0;
    st_error err;
    for (long it = 0; it < iters; it++) {
        gen_text(&b);
        if (CHECKED(err, st_utf8_validate((const char *)b.p, b.n, &err)) != ST_OK) invalid++;
        for (int c = 0; c < N_CONFIGS; c++) {
            const char *why = st_check_text(handles[c], b.n ? b.p : (const unsigned char *)"", b.n, &cb, rng());
            if (!why) {
                g_pass++;
                continue;
            }
            g_fail++;
            if (shown++ < 10) {
                printf("FAIL: iteration %ld, %s: %s\n  input: ", it, configs[c].name, why);
                print_hex(b.p, b.n);
            }
        }
    }
    printf("random: %ld texts (%ld invalid UTF-8) x %d configurations\n", iters, invalid, N_CONFIGS);
    long_inputs();
    nfc_long_inputs();
    for (int c = 0; c < N_CONFIGS; c++) st_pretokenizer_free(handles[c]);
    free(b.p);
    st_check_buf_free(&cb);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
