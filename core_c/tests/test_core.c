// Unit tests of the supertok C core's public API (no framework).
//
// Build and run from the repository root:
//   gcc -std=c11 -Icore_c/include core_c/src/*/*.c core_c/tests/test_core.c -o test_core
//   ./test_core    # prints failures, then "N passed, M failed"; exits 1 on any failure
// core_c/tests/run.sh builds it with ASan/UBSan and runs it.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "error_contract.h"
#include "check.h"
#include "../src/text/pretokenize.h" /* the encoder's batch scanner against the one-piece one */
#include "../src/text/normalize.h"   /* the NFC fast path's list against the tables */
#include "../src/text/nfc_tables.h"
#include "../src/text/utf8.h"        /* the word-at-a-time scans against a byte loop */


#define ST_CANARY_T ((size_t)0x5A5A5A5Au)


static void hex(char *out, size_t outcap, const unsigned char *s, size_t len) {
    size_t o = 0;
    out[0] = 0;
    for (size_t i = 0; i < len && o + 4 < outcap; i++) o += (size_t)snprintf(out + o, outcap - o, "%02X ", s[i]);
}

static const int patterns[7] = {ST_PATTERN_GPT2,     ST_PATTERN_CL100K, ST_PATTERN_O200K,      ST_PATTERN_SUPERBPE,
                                 ST_PATTERN_LLAMA3,   ST_PATTERN_QWEN2,  ST_PATTERN_DEEPSEEK_V3};
#define N_PATTERNS ((int)(sizeof patterns / sizeof patterns[0]))

/* ---- status strings, versions ------------------------------------------------------------ */

static void test_status_str(void) {
    /* The numbers are pinned. */
    CHECK(ST_OK == 0 && ST_ERR_INVALID_ARGUMENT == 1 && ST_ERR_OUT_OF_MEMORY == 2 &&
              ST_ERR_INVALID_UTF8 == 3 && ST_ERR_BUFFER_TOO_SMALL == 4 &&
              ST_ERR_UNKNOWN_PATTERN == 5 && ST_ERR_UNKNOWN_SCRIPT == 6,
          "status numbers changed");
    const char *unknown = st_status_str(1000);
    CHECK(unknown && strcmp(unknown, "unknown status") == 0, "st_status_str(1000) = %s", unknown);
    /* Statuses are numbered 0..last without gaps (new ones are appended): every one has its
     * own message, and every number after the last is "unknown status". */
    int last = -1;
    while (last < 255 && strcmp(st_status_str(last + 1), "unknown status") != 0) last++;
    CHECK(last >= ST_ERR_UNKNOWN_SCRIPT, "statuses 0..6 not all known: last known is %d", last);
    for (int s = 0; s <= last; s++) {
        const char *m = st_status_str(s);
        CHECK(m != NULL && m[0] != 0, "st_status_str(%d) empty", s);
        for (int t = 0; t < s; t++)
            CHECK(strcmp(m, st_status_str(t)) != 0, "st_status_str(%d) == st_status_str(%d): %s", s, t, m);
    }
    for (int s = last + 1; s < last + 64; s++) {
        const char *m = st_status_str(s);
        CHECK(m && strcmp(m, "unknown status") == 0, "st_status_str(%d) = %s after the last status %d", s,
              m ? m : "(null)", last);
    }
    CHECK(strcmp(st_status_str(ST_OK), "ok") == 0, "ST_OK message: %s", st_status_str(ST_OK));
    CHECK(strcmp(st_status_str(ST_ERR_INVALID_UTF8), "invalid UTF-8") == 0, "ST_ERR_INVALID_UTF8 message");
    const int others[] = {-1, -100, 1000, 0x7FFFFFFF, -0x7FFFFFFF - 1};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        const char *m = st_status_str(others[k]);
        CHECK(m && strcmp(m, "unknown status") == 0, "st_status_str(%d) = %s", others[k], m ? m : "(null)");
    }
}

static void test_version(void) {
    uint32_t v = st_version();
    uint32_t want = ((uint32_t)ST_VERSION_MAJOR << 16) | ((uint32_t)ST_VERSION_MINOR << 8) | ST_VERSION_PATCH;
    CHECK(v == want, "st_version() = 0x%06X, want 0x%06X", (unsigned)v, (unsigned)want);
    char buf[64];
    snprintf(buf, sizeof buf, "%u.%u.%u", (unsigned)(v >> 16), (unsigned)((v >> 8) & 0xFF), (unsigned)(v & 0xFF));
    const char *vs = st_version_str();
    CHECK(vs && strcmp(vs, buf) == 0, "st_version_str() = %s, want %s", vs ? vs : "(null)", buf);
    CHECK(vs && strcmp(vs, "0.1.0") == 0, "st_version_str() = %s", vs ? vs : "(null)");
    const char *uv = st_unicode_version();
    CHECK(uv && strcmp(uv, "16.0") == 0, "st_unicode_version() = %s", uv ? uv : "(null)");
}

/* ---- UTF-8 validation ----------------------------------------------------------------------- */

typedef struct bytes {
    const char *s;
    size_t n;
    const char *what;
} bytes;

#define B(lit, what) {lit, sizeof(lit) - 1, what}

static const bytes valid_texts[] = {
    B("", "empty"),
    B("a", "one ASCII byte"),
    B("hello, world", "ASCII"),
    B("\x00\x01\x7F", "NUL, U+0001, U+007F"),
    B("a\x00" "b", "embedded NUL"),
    B("\xC2\x80", "U+0080"),
    B("\xDF\xBF", "U+07FF"),
    B("\xE0\xA0\x80", "U+0800"),
    B("\xED\x9F\xBF", "U+D7FF"),
    B("\xEE\x80\x80", "U+E000"),
    B("\xEF\xBF\xBF", "U+FFFF"),
    B("\xF0\x90\x80\x80", "U+10000"),
    B("\xF3\xBF\xBF\xBF", "U+FFFFF"),
    B("\xF4\x8F\xBF\xBF", "U+10FFFF"),
    B("h\xC3\xA9llo \xE4\xB8\x80\xE4\xBA\x8C \xF0\x9F\x98\x80!", "mixed 1-4 byte"),
    B("abcdefgh\xC3\xA9" "abcdefghijklmnop\xF0\x9F\x98\x80", "fast path then multibyte"),
};

/* Bad sequences; each is tested at the start, after several prefixes and before suffixes. */
static const bytes bad_seqs[] = {
    B("\x80", "lone continuation 80"),
    B("\xBF", "lone continuation BF"),
    B("\x80\x80\x80", "three continuations"),
    B("\xC3", "truncated 2-byte (1 of 2)"),
    B("\xE4", "truncated 3-byte (1 of 3)"),
    B("\xE4\xB8", "truncated 3-byte (2 of 3)"),
    B("\xF0", "truncated 4-byte (1 of 4)"),
    B("\xF0\x9F", "truncated 4-byte (2 of 4)"),
    B("\xF0\x9F\x98", "truncated 4-byte (3 of 4)"),
    B("\xC0\x80", "overlong 2-byte C0 80"),
    B("\xC0\xAF", "overlong 2-byte C0 AF"),
    B("\xC1\xBF", "overlong 2-byte C1 BF"),
    B("\xE0\x80\x80", "overlong 3-byte E0 80 80"),
    B("\xE0\x9F\xBF", "overlong 3-byte E0 9F BF"),
    B("\xF0\x80\x80\x80", "overlong 4-byte F0 80 80 80"),
    B("\xF0\x8F\xBF\xBF", "overlong 4-byte F0 8F BF BF"),
    B("\xED\xA0\x80", "surrogate U+D800"),
    B("\xED\xBF\xBF", "surrogate U+DFFF"),
    B("\xED\xB0\x80", "surrogate U+DC00"),
    B("\xF4\x90\x80\x80", "U+110000"),
    B("\xF4\xBF\xBF\xBF", "U+13FFFF"),
    B("\xF5\x80\x80\x80", "lead F5"),
    B("\xF6\x80\x80\x80", "lead F6"),
    B("\xF7\xBF\xBF\xBF", "lead F7"),
    B("\xF8\x88\x80\x80\x80", "lead F8 (5-byte form)"),
    B("\xF9", "lead F9"),
    B("\xFA", "lead FA"),
    B("\xFB", "lead FB"),
    B("\xFC\x84\x80\x80\x80\x80", "lead FC (6-byte form)"),
    B("\xFD", "lead FD"),
    B("\xFE", "byte FE"),
    B("\xFF", "byte FF"),
    B("\xC3\xC3", "2-byte lead then lead"),
    B("\xE4\x41", "3-byte lead then ASCII"),
    B("\xE4\xB8\x41", "3-byte, third is ASCII"),
    B("\xF0\x9F\x98\x41", "4-byte, fourth is ASCII"),
    B("\xF0\x9F\x41\x80", "4-byte, third is ASCII"),
    B("\xE4\xB8\xC3\xA9", "truncated 3-byte before a 2-byte char"),
};

static const bytes prefixes[] = {
    B("", "(start)"),
    B("ab", "ab"),
    B("\xC3\xA9", "U+00E9"),
    B("\xE4\xB8\x80", "U+4E00"),
    B("\xF0\x9F\x98\x80", "U+1F600"),
    B("abcdefghi", "9 ASCII (past the 8-byte fast path)"),
    B("abcdefghijklmnop", "16 ASCII"),
    B("x \xCC\x81y\r\n", "mixed"),
};

/* Suffixes start with a byte that cannot continue any sequence, so the error stays put. */
static const bytes suffixes[] = {
    B("", "(end)"),
    B("xyz", "xyz"),
    B("\xC3\xA9", "U+00E9"),
    B("\xF0\x9F\x98\x80 and more ASCII text", "U+1F600 + ASCII"),
    B("\xFF", "a second bad byte"),
};

static void test_utf8_valid(void) {
    st_error err;
    for (size_t k = 0; k < sizeof valid_texts / sizeof valid_texts[0]; k++) {
        st_status st = CHECKED(err, st_utf8_validate(valid_texts[k].s, valid_texts[k].n, &err));
        CHECK(st == ST_OK, "st_utf8_validate(%s) = %d", valid_texts[k].what, st);
        CHECK(err.unit == ST_UNIT_NONE && err.offset == 0, "st_utf8_validate(%s) reported a position on success",
              valid_texts[k].what);
    }
    /* Every code point, encoded by the test, is accepted. */
    int bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        if (cp >= 0xD800 && cp <= 0xDFFF) continue;
        unsigned char b[4];
        size_t n;
        if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
        else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
        else if (cp < 0x10000) {
            b[0] = (unsigned char)(0xE0 | (cp >> 12)); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
            b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3;
        } else {
            b[0] = (unsigned char)(0xF0 | (cp >> 18)); b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
            b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (unsigned char)(0x80 | (cp & 0x3F)); n = 4;
        }
        if (CHECKED(err, st_utf8_validate((const char *)b, n, &err)) != ST_OK && bad++ < 5)
            printf("  U+%04X rejected\n", (unsigned)cp);
    }
    CHECK(bad == 0, "st_utf8_validate rejected %d valid code points", bad);
    /* Every encoded surrogate is rejected at 0. */
    bad = 0;
    for (uint32_t cp = 0xD800; cp <= 0xDFFF; cp++) {
        unsigned char b[3] = {(unsigned char)(0xE0 | (cp >> 12)), (unsigned char)(0x80 | ((cp >> 6) & 0x3F)),
                              (unsigned char)(0x80 | (cp & 0x3F))};
        if ((CHECKED(err, st_utf8_validate((const char *)b, 3, &err)) != ST_ERR_INVALID_UTF8 ||
             !error_at(&err, ST_UNIT_BYTE, 0)) &&
            bad++ < 5)
            printf("  surrogate U+%04X accepted\n", (unsigned)cp);
    }
    CHECK(bad == 0, "st_utf8_validate accepted %d surrogates", bad);
    /* Every two-byte string: valid iff ASCII pair or a 2-byte sequence C2..DF 80..BF. */
    bad = 0;
    for (int x = 0; x < 256; x++)
        for (int y = 0; y < 256; y++) {
            unsigned char b[2] = {(unsigned char)x, (unsigned char)y};
            int want_ok = (x < 0x80 && y < 0x80) || (x >= 0xC2 && x <= 0xDF && y >= 0x80 && y <= 0xBF);
            size_t want_off = x < 0x80 ? 1 : 0;
            st_status st = CHECKED(err, st_utf8_validate((const char *)b, 2, &err));
            int ok = want_ok ? st == ST_OK : (st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, want_off));
            if (!ok && bad++ < 5) printf("  %02X %02X: status %d offset %zu\n", x, y, st, (size_t)err.offset);
        }
    CHECK(bad == 0, "st_utf8_validate wrong on %d two-byte strings", bad);
}

static void test_utf8_invalid(void) {
    st_error err;
    st_pretokenizer *pts[2 * N_PATTERNS] = {0};
    for (int p = 0; p < N_PATTERNS; p++) {
        CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], 0, NULL, 0, NULL, &pts[2 * p], &err)) == ST_OK,
              "new plain");
        CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], ST_PRETOK_SCRIPT_AWARE, NULL, 0, NULL, &pts[2 * p + 1],
                                               &err)) == ST_OK,
              "new script-aware");
    }
    unsigned char buf[256];
    size_t ends[256];
    char hx[800];
    for (size_t b = 0; b < sizeof bad_seqs / sizeof bad_seqs[0]; b++)
        for (size_t p = 0; p < sizeof prefixes / sizeof prefixes[0]; p++)
            for (size_t q = 0; q < sizeof suffixes / sizeof suffixes[0]; q++) {
                size_t n = 0;
                memcpy(buf + n, prefixes[p].s, prefixes[p].n); n += prefixes[p].n;
                memcpy(buf + n, bad_seqs[b].s, bad_seqs[b].n); n += bad_seqs[b].n;
                memcpy(buf + n, suffixes[q].s, suffixes[q].n); n += suffixes[q].n;
                size_t want = prefixes[p].n;
                hex(hx, sizeof hx, buf, n);
                st_status st = CHECKED(err, st_utf8_validate((const char *)buf, n, &err));
                CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, want),
                      "st_utf8_validate(%s + %s + %s) [%s] = %d at %zu, want 3 at %zu", prefixes[p].what,
                      bad_seqs[b].what, suffixes[q].what, hx, st, (size_t)err.offset, want);
                /* a NULL error report is allowed */
                CHECK(st_utf8_validate((const char *)buf, n, NULL) == ST_ERR_INVALID_UTF8, "validate, NULL report");
                for (int t = 0; t < 2 * N_PATTERNS; t++) {
                    if (!pts[t]) continue;
                    for (int mode = 0; mode < 2; mode++) {
                        size_t np = 777;
                        st = CHECKED(err, st_pretokenize(pts[t], (const char *)buf, n, mode ? ST_OFFSETS_CODEPOINTS : 0,
                                                         ends, sizeof ends / sizeof ends[0], &np, &err));
                        CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, want) && np == 0,
                              "st_pretokenize(pt %d, mode %d, [%s]) = %d at %zu, n %zu; want 3 at %zu, n 0", t, mode,
                              hx, st, (size_t)err.offset, np, want);
                    }
                    size_t np = 777;
                    st = CHECKED(err, st_pretokenize_count(pts[t], (const char *)buf, n, &np, &err));
                    CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, want) && np == 0,
                          "st_pretokenize_count(pt %d, [%s]) = %d at %zu", t, hx, st, (size_t)err.offset);
                    st = st_pretokenize(pts[t], (const char *)buf, n, 0, ends, 256, &np, NULL);
                    CHECK(st == ST_ERR_INVALID_UTF8, "st_pretokenize with NULL report");
                }
            }
    /* The bad byte at every position of a long ASCII text (exercises the 8-byte fast path). */
    for (size_t pos = 0; pos < 40; pos++) {
        unsigned char t[41];
        memset(t, 'a', sizeof t);
        t[pos] = 0x80;
        st_status st = CHECKED(err, st_utf8_validate((const char *)t, sizeof t, &err));
        CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, pos), "0x80 at %zu of 41 ASCII: %d at %zu", pos,
              st, (size_t)err.offset);
        t[pos] = 0xE4; /* truncated at the very end when pos == 40 */
        st = CHECKED(err, st_utf8_validate((const char *)t, sizeof t, &err));
        CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, pos), "E4 at %zu of 41 ASCII: %d at %zu", pos,
              st, (size_t)err.offset);
        /* the length limit is respected: the same bad byte just past len is not seen */
        st = CHECKED(err, st_utf8_validate((const char *)t, pos, &err));
        CHECK(st == ST_OK, "validate stops at len (pos %zu): %d", pos, st);
    }
    /* A sequence cut by len, even when the bytes after len would complete it. */
    {
        const char full[] = "ab\xF0\x9F\x98\x80";
        for (size_t n = 3; n < 6; n++) {
            st_status st = CHECKED(err, st_utf8_validate(full, n, &err));
            CHECK(st == ST_ERR_INVALID_UTF8 && error_at(&err, ST_UNIT_BYTE, 2), "U+1F600 cut at len %zu: %d at %zu", n,
                  st, (size_t)err.offset);
        }
        CHECK(CHECKED(err, st_utf8_validate(full, 6, &err)) == ST_OK, "U+1F600 whole");
    }
    for (int t = 0; t < 2 * N_PATTERNS; t++) st_pretokenizer_free(pts[t]);
}

/* ---- NULL and bad arguments --------------------------------------------------------------- */

static void test_null_args(void) {
    st_error err;
    st_pretokenizer *pt = NULL;
    size_t n = 0, ends[16];
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_GPT2, 0, NULL, 0, NULL, NULL, &err)) == ST_ERR_INVALID_ARGUMENT,
          "new with NULL out");
    CHECK(st_pretokenizer_new(ST_PATTERN_GPT2, 0, NULL, 0, NULL, NULL, NULL) == ST_ERR_INVALID_ARGUMENT,
          "new with NULL out and NULL report");
    /* scripts NULL means the default set, whatever scripts_len says */
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_GPT2, ST_PRETOK_SCRIPT_AWARE, NULL, 5, NULL, &pt, &err)) ==
                  ST_OK &&
              pt,
          "new with NULL scripts, len 5");
    st_pretokenizer_free(pt);
    pt = NULL;
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_GPT2, 0, NULL, 0, NULL, &pt, &err)) == ST_OK && pt, "new");
    st_pretokenizer_free(NULL); /* no crash */

    CHECK(CHECKED(err, st_pretokenize(NULL, "ab", 2, 0, ends, 16, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize NULL pt");
    CHECK(CHECKED(err, st_pretokenize(pt, NULL, 2, 0, ends, 16, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize NULL text");
    CHECK(CHECKED(err, st_pretokenize(pt, "ab", 2, 0, NULL, 16, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize NULL ends, cap 16");
    CHECK(CHECKED(err, st_pretokenize(pt, "ab", 2, 0, ends, 16, NULL, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize NULL n");
    CHECK(CHECKED(err, st_pretokenize(pt, "ab", 2, 2, ends, 16, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize flags 2");
    CHECK(CHECKED(err, st_pretokenize(pt, "ab", 2, 0x80000000u, ends, 16, &n, &err)) == ST_ERR_INVALID_ARGUMENT,
          "pretokenize flags 0x80000000");
    n = 99;
    CHECK(CHECKED(err, st_pretokenize(pt, NULL, 0, 0, NULL, 0, &n, &err)) == ST_OK && n == 0,
          "pretokenize NULL text, len 0");
    n = 99;
    CHECK(CHECKED(err, st_pretokenize(pt, "a b", 3, 0, NULL, 0, &n, &err)) == ST_ERR_BUFFER_TOO_SMALL && n == 2,
          "pretokenize NULL ends, cap 0 (size query): n = %zu", n);
    n = 99;
    CHECK(st_pretokenize(pt, "a b", 3, 0, ends, 16, &n, NULL) == ST_OK && n == 2, "pretokenize NULL report");

    CHECK(CHECKED(err, st_pretokenize_count(NULL, "ab", 2, &n, &err)) == ST_ERR_INVALID_ARGUMENT, "count NULL pt");
    CHECK(CHECKED(err, st_pretokenize_count(pt, NULL, 2, &n, &err)) == ST_ERR_INVALID_ARGUMENT, "count NULL text");
    CHECK(CHECKED(err, st_pretokenize_count(pt, "ab", 2, NULL, &err)) == ST_ERR_INVALID_ARGUMENT, "count NULL n");
    n = 99;
    CHECK(CHECKED(err, st_pretokenize_count(pt, NULL, 0, &n, &err)) == ST_OK && n == 0, "count NULL text, len 0");
    n = 99;
    CHECK(st_pretokenize_count(pt, "a b", 3, &n, NULL) == ST_OK && n == 2, "count NULL report");

    CHECK(CHECKED(err, st_utf8_validate(NULL, 3, &err)) == ST_ERR_INVALID_ARGUMENT, "validate NULL text, len 3");
    CHECK(CHECKED(err, st_utf8_validate(NULL, 0, &err)) == ST_OK, "validate NULL text, len 0");
    CHECK(st_utf8_validate(NULL, 0, NULL) == ST_OK, "validate NULL, NULL");

    CHECK(st_script_from_name(NULL, 3) == -1, "st_script_from_name(NULL, 3)");
    CHECK(st_script_from_name(NULL, 0) == -1, "st_script_from_name(NULL, 0)");
    CHECK(st_script_from_name("", 0) == -1, "st_script_from_name(\"\")");
    CHECK(st_script_from_name("___", 3) == -1, "st_script_from_name(\"___\")");
    CHECK(st_script_name(-1) == NULL, "st_script_name(-1)");
    CHECK(st_script_name(st_script_count()) == NULL, "st_script_name(count)");
    CHECK(st_script_name(1 << 30) == NULL, "st_script_name(2^30)");
    st_pretokenizer_free(pt);

    void *p = st_malloc(0);
    st_free(p);
    p = st_malloc(100);
    CHECK(p != NULL, "st_malloc(100)");
    if (p) memset(p, 1, 100);
    st_free(p);
    st_free(NULL);
}

/* ---- pieces: size query, coverage, offsets -------------------------------------------------- */

static const bytes sample_texts[] = {
    B("Hello world", "hello"),
    B("Hello world 12345, it's 2024!\nI'LL be there's   \t\n\n  ok  ", "english"),
    B("  leading and trailing  ", "spaces"),
    B("\r\n\r\n", "crlf"),
    B("a/b//c\r\n/", "slashes"),
    B("caf\xC3\xA9 na\xC3\xAFve \xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C \xF0\x9F\x98\x80\xF0\x9F\x98\x81", "mixed"),
    B("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xB2\xE3\x82\x89\xE3\x81\x8C\xE3\x81\xAA\xE3\x82\xAB\xE3\x82\xBF\xE3\x82\xAB\xE3\x83\x8A",
      "japanese"),
    B("\xE0\xB8\xAA\xE0\xB8\xA7\xE0\xB8\xB1\xE0\xB8\xAA\xE0\xB8\x94\xE0\xB8\xB5 abc", "thai"),
    B("x\xCC\x81\xCC\x82 \xCC\x81", "combining marks"),
    B("\xC2\x85\xC2\xA0\xE2\x80\xA8\xE3\x80\x80x", "unicode spaces"),
    B("'s 'S '\xC5\xBF 'll 'LL 'Ll 've 're 'd 'm 't 'x '", "contractions"),
    B("HelloWorld CamelCase ABCdef \xC7\x85" "ab", "camel"),
    B("\xCE\x91\xCE\xB2\xCE\xB3 \xD0\x90\xD0\xB1\xD0\xB2 abc\xCE\xB1\xCE\xB2", "greek/cyrillic"),
    B("\xD9\xA0\xD9\xA1\xD9\xA2\xD9\xA3 \xEF\xBC\x91\xEF\xBC\x92 \xE2\x85\xA0\xE2\x85\xA1 \xC2\xB2", "digits"),
    B("\x00\x01\x02 \x7F", "controls"),
};

static void test_pieces(void) {
    st_error err;
    size_t ends[512], ends_cp[512];
    for (int p = 0; p < N_PATTERNS; p++)
        for (int sa = 0; sa < 2; sa++) {
            st_pretokenizer *pt = NULL;
            st_status st = CHECKED(
                err, st_pretokenizer_new(patterns[p], sa ? ST_PRETOK_SCRIPT_AWARE : 0, NULL, 0, NULL, &pt, &err));
            CHECK(st == ST_OK && pt, "new(%d, %d)", patterns[p], sa);
            if (!pt) continue;
            /* empty text */
            size_t n = 99;
            CHECK(CHECKED(err, st_pretokenize(pt, "", 0, 0, ends, 512, &n, &err)) == ST_OK && n == 0,
                  "empty text: n = %zu", n);
            n = 99;
            CHECK(CHECKED(err, st_pretokenize(pt, "", 0, ST_OFFSETS_CODEPOINTS, NULL, 0, &n, &err)) == ST_OK && n == 0,
                  "empty text, cap 0: n = %zu", n);
            n = 99;
            CHECK(CHECKED(err, st_pretokenize_count(pt, "", 0, &n, &err)) == ST_OK && n == 0,
                  "empty text count: n = %zu", n);

            for (size_t t = 0; t < sizeof sample_texts / sizeof sample_texts[0]; t++) {
                const char *s = sample_texts[t].s;
                size_t len = sample_texts[t].n;
                const char *what = sample_texts[t].what;
                /* size query */
                size_t full = 0;
                st = CHECKED(err, st_pretokenize(pt, s, len, 0, NULL, 0, &full, &err));
                CHECK(st == ST_ERR_BUFFER_TOO_SMALL && full > 0 && full <= len,
                      "[%d/%d %s] size query: %d, n %zu", p, sa, what, st, full);
                size_t cnt = 0;
                CHECK(CHECKED(err, st_pretokenize_count(pt, s, len, &cnt, &err)) == ST_OK && cnt == full,
                      "[%d/%d %s] count %zu != size query %zu", p, sa, what, cnt, full);
                /* cap = count, and every cap below it */
                for (int mode = 0; mode < 2; mode++) {
                    uint32_t fl = mode ? ST_OFFSETS_CODEPOINTS : 0;
                    for (size_t k = 0; k < 512; k++) ends[k] = ST_CANARY_T;
                    n = 0;
                    st = CHECKED(err, st_pretokenize(pt, s, len, fl, ends, full, &n, &err));
                    CHECK(st == ST_OK && n == full, "[%d/%d %s] cap = count: %d n %zu", p, sa, what, st, n);
                    CHECK(ends[full] == ST_CANARY_T, "[%d/%d %s] wrote past cap = count", p, sa, what);
                    for (size_t cap = 1; cap < full; cap++) {
                        for (size_t k = 0; k < 512; k++) ends[k] = ST_CANARY_T;
                        n = 0;
                        st = CHECKED(err, st_pretokenize(pt, s, len, fl, ends, cap, &n, &err));
                        int untouched = 1;
                        for (size_t k = cap; k < full + 2; k++) untouched &= ends[k] == ST_CANARY_T;
                        CHECK(st == ST_ERR_BUFFER_TOO_SMALL && n == full && untouched,
                              "[%d/%d %s] cap %zu < %zu: %d n %zu untouched %d", p, sa, what, cap, full, st, n,
                              untouched);
                    }
                }
                /* cap = len (always enough); byte ends cover the text */
                n = 0;
                st = CHECKED(err, st_pretokenize(pt, s, len, 0, ends, len, &n, &err));
                CHECK(st == ST_OK && n == full, "[%d/%d %s] cap = len", p, sa, what);
                int increasing = 1, boundary = 1;
                for (size_t k = 0; k < n; k++) {
                    if (ends[k] <= (k ? ends[k - 1] : 0)) increasing = 0;
                    if (ends[k] < len && (((unsigned char)s[ends[k]]) & 0xC0) == 0x80) boundary = 0;
                }
                CHECK(increasing, "[%d/%d %s] byte ends not strictly increasing", p, sa, what);
                CHECK(boundary, "[%d/%d %s] a byte end inside a character", p, sa, what);
                CHECK(n && ends[n - 1] == len, "[%d/%d %s] last end != len", p, sa, what);
                /* code point ends are the byte ends converted */
                size_t n2 = 0;
                st = CHECKED(err, st_pretokenize(pt, s, len, ST_OFFSETS_CODEPOINTS, ends_cp, len, &n2, &err));
                CHECK(st == ST_OK && n2 == n, "[%d/%d %s] code point mode", p, sa, what);
                size_t pos = 0, cps = 0;
                int agree = 1;
                for (size_t k = 0; k < n && k < n2; k++) {
                    for (; pos < ends[k]; pos++) cps += (((unsigned char)s[pos]) & 0xC0) != 0x80;
                    if (ends_cp[k] != cps) agree = 0;
                }
                CHECK(agree, "[%d/%d %s] code point ends disagree with byte ends", p, sa, what);
            }
            st_pretokenizer_free(pt);
        }
}

/* Splits checked against the patterns by hand (regex.findall with tiktoken's pat_str). */
typedef struct split_case {
    int pattern;
    uint32_t flags;
    const char *scripts; /* NULL: default set */
    const char *text;
    size_t n;
    size_t ends[16];
} split_case;

static const split_case split_cases[] = {
    {ST_PATTERN_GPT2, 0, NULL, "Hello world", 2, {5, 11}},
    {ST_PATTERN_GPT2, 0, NULL, "it's", 2, {2, 4}},
    {ST_PATTERN_GPT2, 0, NULL, "IT'S", 3, {2, 3, 4}}, /* gpt2 contractions are case-sensitive */
    {ST_PATTERN_GPT2, 0, NULL, "a  b", 3, {1, 2, 4}},
    {ST_PATTERN_GPT2, 0, NULL, "a  ", 2, {1, 3}},
    {ST_PATTERN_GPT2, 0, NULL, "12345", 1, {5}},
    {ST_PATTERN_CL100K, 0, NULL, "Hello world 12345", 5, {5, 11, 12, 15, 17}},
    {ST_PATTERN_CL100K, 0, NULL, "IT'S", 2, {2, 4}},
    {ST_PATTERN_CL100K, 0, NULL, "a \n\nb", 3, {1, 4, 5}},
    {ST_PATTERN_CL100K, 0, NULL, "x!!\n\ny", 3, {1, 5, 6}},
    {ST_PATTERN_O200K, 0, NULL, "HelloWorld", 2, {5, 10}},
    {ST_PATTERN_O200K, 0, NULL, "it's", 1, {4}},
    {ST_PATTERN_O200K, 0, NULL, "a//b\n", 4, {1, 3, 4, 5}},
    {ST_PATTERN_O200K, 0, NULL, "1234567", 3, {3, 6, 7}},
    /* superbpe: the regex's matches and the text between them (regex.finditer, HuggingFace's Split) */
    {ST_PATTERN_SUPERBPE, 0, NULL, "Hello world 12345", 3, {12, 15, 17}},
    {ST_PATTERN_SUPERBPE, 0, NULL, "a  b!!\n/c", 5, {1, 2, 4, 8, 9}},
    {ST_PATTERN_SUPERBPE, 0, NULL, "x   \n", 3, {1, 4, 5}},
    {ST_PATTERN_SUPERBPE, 0, NULL, "1234567 ok", 4, {3, 6, 7, 10}},
    /* llama3, qwen2, deepseek_v3: as HuggingFace tokenizers 0.23.3 splits with their tokenizer.json */
    {ST_PATTERN_LLAMA3, 0, NULL, "Hello world 12345", 5, {5, 11, 12, 15, 17}},
    {ST_PATTERN_LLAMA3, 0, NULL, "IT'S", 2, {2, 4}},
    {ST_PATTERN_LLAMA3, 0, NULL, "a \n\nb", 3, {1, 4, 5}},
    {ST_PATTERN_LLAMA3, 0, NULL, "x!!\n\ny", 3, {1, 5, 6}},
    {ST_PATTERN_LLAMA3, 0, NULL, "a  \n  ", 3, {1, 4, 6}}, /* \s*[\r\n]+ before \s+(?!\S); no \s++$ */
    {ST_PATTERN_QWEN2, 0, NULL, "Hello world 12345", 8, {5, 11, 12, 13, 14, 15, 16, 17}},
    {ST_PATTERN_QWEN2, 0, NULL, "it'll 2024", 7, {2, 5, 6, 7, 8, 9, 10}},
    {ST_PATTERN_DEEPSEEK_V3, 0, NULL, "Hello world 12345", 5, {5, 11, 12, 15, 17}},
    {ST_PATTERN_DEEPSEEK_V3, 0, NULL, "(foo) #bar", 4, {4, 5, 7, 10}},
    /* 日本語テキスト123abc: the CJK run, a digit group, letters */
    {ST_PATTERN_DEEPSEEK_V3, 0, NULL,
     "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x83\x86\xE3\x82\xAD\xE3\x82\xB9\xE3\x83\x88" "123abc", 3,
     {21, 24, 27}},
    {ST_PATTERN_DEEPSEEK_V3, 0, NULL, "a\x01" "b \x01", 4, {1, 3, 4, 5}}, /* a control character matches nothing */
    {ST_PATTERN_DEEPSEEK_V3, 0, NULL, "x  \n\ny", 3, {1, 5, 6}},
    /* 日本語: one letter run; script-aware (Han in the default set) splits per character */
    {ST_PATTERN_O200K, 0, NULL, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 1, {9}},
    {ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, NULL, "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 3, {3, 6, 9}},
    {ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 1, {9}},
    {ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "han", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 3, {3, 6, 9}},
    {ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Thai", "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E", 1, {9}},
    /* abcαβγ: one letter run, but two script chunks in script-aware mode */
    {ST_PATTERN_CL100K, 0, NULL, "abc\xCE\xB1\xCE\xB2\xCE\xB3", 1, {9}},
    {ST_PATTERN_CL100K, ST_PRETOK_SCRIPT_AWARE, NULL, "abc\xCE\xB1\xCE\xB2\xCE\xB3", 2, {3, 9}},
    {ST_PATTERN_CL100K, ST_PRETOK_SCRIPT_AWARE, "Latin,Greek", "abc\xCE\xB1\xCE\xB2\xCE\xB3", 6,
     {1, 2, 3, 5, 7, 9}},
};

static void test_known_splits(void) {
    st_error err;
    for (size_t k = 0; k < sizeof split_cases / sizeof split_cases[0]; k++) {
        const split_case *c = &split_cases[k];
        st_pretokenizer *pt = NULL;
        size_t sl = c->scripts ? strlen(c->scripts) : 0;
        st_status st = CHECKED(err, st_pretokenizer_new(c->pattern, c->flags, c->scripts, sl, NULL, &pt, &err));
        CHECK(st == ST_OK, "split case %zu: new = %d", k, st);
        if (!pt) continue;
        size_t ends[64], n = 0, len = strlen(c->text);
        st = CHECKED(err, st_pretokenize(pt, c->text, len, 0, ends, 64, &n, &err));
        int same = st == ST_OK && n == c->n;
        for (size_t i = 0; same && i < n; i++) same = ends[i] == c->ends[i];
        char got[256] = "", *g = got;
        for (size_t i = 0; i < n && i < 64 && g < got + 200; i++) g += sprintf(g, "%zu ", ends[i]);
        CHECK(same, "split case %zu (pattern %d, flags %u, \"%s\"): got %zu pieces [%s], want %zu", k, c->pattern,
              (unsigned)c->flags, c->text, n, got, c->n);
        st_pretokenizer_free(pt);
    }
}

/* ---- st_pretokenizer_new arguments, script lists ------------------------------------------- */

static void test_new_args(void) {
    st_error err;
    st_pretokenizer *pt = (st_pretokenizer *)&pt; /* must be reset to NULL on failure */
    const int bad_patterns[] = {0, 8, -1, 100, 0x7FFFFFFF};
    for (size_t k = 0; k < sizeof bad_patterns / sizeof bad_patterns[0]; k++) {
        pt = (st_pretokenizer *)&pt;
        st_status st = CHECKED(err, st_pretokenizer_new(bad_patterns[k], 0, NULL, 0, NULL, &pt, &err));
        CHECK(st == ST_ERR_UNKNOWN_PATTERN && pt == NULL, "pattern %d: %d", bad_patterns[k], st);
    }
    const uint32_t bad_flags[] = {2, 3, 0x100, 0x80000000u, 0xFFFFFFFFu};
    for (size_t k = 0; k < sizeof bad_flags / sizeof bad_flags[0]; k++) {
        pt = (st_pretokenizer *)&pt;
        st_status st = CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, bad_flags[k], NULL, 0, NULL, &pt, &err));
        CHECK(st == ST_ERR_INVALID_ARGUMENT && pt == NULL, "flags 0x%X: %d", (unsigned)bad_flags[k], st);
    }
    for (int p = 0; p < N_PATTERNS; p++)
        for (uint32_t fl = 0; fl < 2; fl++) {
            pt = NULL;
            CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], fl, NULL, 0, NULL, &pt, &err)) == ST_OK && pt,
                  "new(%d, %u)", patterns[p], (unsigned)fl);
            st_pretokenizer_free(pt);
        }

    /* script lists: (list, expected status, expected error offset) */
    struct {
        const char *list;
        st_status st;
        size_t off;
    } lists[] = {
        {"Han,Nope,Thai", ST_ERR_UNKNOWN_SCRIPT, 4},
        {"Nope", ST_ERR_UNKNOWN_SCRIPT, 0},
        {"Han,Thai,Xyz", ST_ERR_UNKNOWN_SCRIPT, 9},
        {"Han, Nope", ST_ERR_UNKNOWN_SCRIPT, 5},
        {"Han,  Nope  ,Thai", ST_ERR_UNKNOWN_SCRIPT, 6},
        {"Latin,Greek", ST_OK, 0},
        {"han", ST_OK, 0},
        {"HIRAGANA", ST_OK, 0},
        {"old_italic", ST_OK, 0},
        {"Old Italic", ST_OK, 0},
        {"Old-Italic", ST_OK, 0},
        {"OLDITALIC", ST_OK, 0},
        {"Ital", ST_OK, 0},
        {"Hani,Hira,Kana", ST_OK, 0},
        {"Han , Thai", ST_OK, 0},
        {"Han,,Thai,", ST_OK, 0},
        {",", ST_OK, 0},
        {" ", ST_OK, 0},
        {"", ST_OK, 0},
        {"Common,Inherited,Unknown", ST_OK, 0},
        {"Zyyy,Zinh,Zzzz", ST_OK, 0},
        {"Han;Thai", ST_ERR_UNKNOWN_SCRIPT, 0},
        {"Hanx", ST_ERR_UNKNOWN_SCRIPT, 0},
        {"Ha", ST_ERR_UNKNOWN_SCRIPT, 0},
    };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        pt = (st_pretokenizer *)&pt;
        st_status st = CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, lists[k].list,
                                                        strlen(lists[k].list), NULL, &pt, &err));
        CHECK(st == lists[k].st, "scripts \"%s\": status %d, want %d", lists[k].list, st, lists[k].st);
        if (lists[k].st != ST_OK) {
            CHECK(error_at(&err, ST_UNIT_BYTE, lists[k].off), "scripts \"%s\": offset %zu, want %zu", lists[k].list,
                  (size_t)err.offset, lists[k].off);
            CHECK(pt == NULL, "scripts \"%s\": *out not NULL on failure", lists[k].list);
        } else {
            CHECK(pt != NULL && pt != (st_pretokenizer *)&pt, "scripts \"%s\": no handle", lists[k].list);
            st_pretokenizer_free(pt);
        }
    }
    /* scripts_len bounds the list: "HanXYZ" with length 3 is "Han" */
    pt = NULL;
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "HanXYZ", 3, NULL, &pt, &err)) ==
              ST_OK,
          "scripts_len bounds the list");
    st_pretokenizer_free(pt);
    /* an embedded NUL is part of the name and never matches */
    pt = NULL;
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, ST_PRETOK_SCRIPT_AWARE, "Thai,Ha\0n", 9, NULL, &pt,
                                           &err)) == ST_ERR_UNKNOWN_SCRIPT &&
              error_at(&err, ST_UNIT_BYTE, 5),
          "embedded NUL in a script name: offset %zu", (size_t)err.offset);
    /* the script list applies without SCRIPT_AWARE too (parsed, validated, unused) */
    pt = NULL;
    CHECK(CHECKED(err, st_pretokenizer_new(ST_PATTERN_GPT2, 0, "Han,Nope", 8, NULL, &pt, &err)) ==
                  ST_ERR_UNKNOWN_SCRIPT &&
              error_at(&err, ST_UNIT_BYTE, 4),
          "bad script list without SCRIPT_AWARE: offset %zu", (size_t)err.offset);
    /* a NULL error report with a bad list */
    pt = NULL;
    CHECK(st_pretokenizer_new(ST_PATTERN_GPT2, ST_PRETOK_SCRIPT_AWARE, "Nope", 4, NULL, &pt, NULL) ==
              ST_ERR_UNKNOWN_SCRIPT,
          "bad script list, NULL report");

    /* names ignore case, '_', '-', ' ' */
    int han = st_script_from_name("Han", 3);
    CHECK(han >= 0 && han == st_script_of(0x4E00), "Han id %d", han);
    CHECK(st_script_from_name("han", 3) == han && st_script_from_name("HAN", 3) == han &&
              st_script_from_name("Hani", 4) == han && st_script_from_name("h_a_n", 5) == han,
          "Han aliases");
    int hira = st_script_from_name("HIRAGANA", 8);
    CHECK(hira >= 0 && hira == st_script_of(0x3042), "HIRAGANA");
    int ital = st_script_from_name("old_italic", 10);
    CHECK(ital >= 0 && ital == st_script_of(0x10300), "old_italic = %d, U+10300 is %d", ital, st_script_of(0x10300));
    CHECK(st_script_from_name("Old Italic", 10) == ital && st_script_from_name("Old-Italic", 10) == ital &&
              st_script_from_name("Ital", 4) == ital,
          "Old Italic aliases");
    CHECK(st_script_from_name("Hanx", 4) == -1 && st_script_from_name("Ha", 2) == -1, "prefix/extension not matched");
    CHECK(st_script_from_name("Han", 2) == -1, "len respected");
}

/* ---- allocators --------------------------------------------------------------------------- */

#define MAX_LIVE 64

typedef struct counting {
    int allocs, frees, bad_frees;
    size_t live_bytes;
    int fail_after; /* -1: never fail; n: the (n+1)th and later allocations fail */
    void *ptrs[MAX_LIVE];
    size_t sizes[MAX_LIVE];
} counting;

static void *counting_alloc(void *ctx, size_t size) {
    counting *c = (counting *)ctx;
    if (c->fail_after >= 0 && c->allocs >= c->fail_after) return NULL;
    void *p = malloc(size ? size : 1);
    if (!p) return NULL;
    c->allocs++;
    c->live_bytes += size;
    for (int k = 0; k < MAX_LIVE; k++)
        if (!c->ptrs[k]) {
            c->ptrs[k] = p;
            c->sizes[k] = size;
            break;
        }
    return p;
}

static void counting_free(void *ctx, void *ptr, size_t size) {
    counting *c = (counting *)ctx;
    int found = 0;
    for (int k = 0; k < MAX_LIVE; k++)
        if (c->ptrs[k] == ptr) {
            if (c->sizes[k] != size) c->bad_frees++; /* free must get the size asked of alloc */
            c->ptrs[k] = NULL;
            found = 1;
            break;
        }
    if (!found) c->bad_frees++;
    c->frees++;
    c->live_bytes -= size;
    free(ptr);
}

static void test_allocators(void) {
    st_error err;
    for (int p = 0; p < N_PATTERNS; p++)
        for (uint32_t fl = 0; fl < 2; fl++) {
            counting c;
            memset(&c, 0, sizeof c);
            c.fail_after = -1;
            st_allocator a = {counting_alloc, counting_free, &c};
            st_pretokenizer *pt = NULL;
            CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], fl, NULL, 0, &a, &pt, &err)) == ST_OK && pt,
                  "counting allocator: new");
            CHECK(c.allocs >= 1, "counting allocator unused (%d allocs)", c.allocs);
            size_t ends[32], n = 0;
            CHECK(CHECKED(err, st_pretokenize(pt, "hello world", 11, 0, ends, 32, &n, &err)) == ST_OK && n == (patterns[p] == ST_PATTERN_SUPERBPE ? 1u : 2u),
                  "pretokenize with counting allocator");
            st_pretokenizer_free(pt);
            CHECK(c.allocs == c.frees && c.live_bytes == 0 && c.bad_frees == 0,
                  "counting allocator: %d allocs, %d frees, %zu live bytes, %d bad frees", c.allocs, c.frees,
                  c.live_bytes, c.bad_frees);

            /* an unknown script frees what was allocated */
            memset(&c, 0, sizeof c);
            c.fail_after = -1;
            pt = NULL;
            CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], fl, "Han,Nope", 8, &a, &pt, &err)) ==
                          ST_ERR_UNKNOWN_SCRIPT &&
                      pt == NULL,
                  "counting allocator: unknown script");
            CHECK(c.allocs == c.frees && c.live_bytes == 0 && c.bad_frees == 0,
                  "unknown script leaked: %d allocs, %d frees", c.allocs, c.frees);

            /* a bad pattern or bad flags frees whatever was allocated */
            memset(&c, 0, sizeof c);
            c.fail_after = -1;
            pt = NULL;
            CHECK(CHECKED(err, st_pretokenizer_new(0, fl, NULL, 0, &a, &pt, &err)) == ST_ERR_UNKNOWN_PATTERN &&
                      pt == NULL,
                  "counting allocator: bad pattern");
            CHECK(CHECKED(err, st_pretokenizer_new(patterns[p], fl | 2u, NULL, 0, &a, &pt, &err)) ==
                          ST_ERR_INVALID_ARGUMENT &&
                      pt == NULL,
                  "counting allocator: bad flags");
            CHECK(c.allocs == c.frees && c.live_bytes == 0 && c.bad_frees == 0,
                  "bad pattern/flags leaked: %d allocs, %d frees", c.allocs, c.frees);

            /* every allocation failing in turn: OOM and no leak, or success */
            for (int fail = 0; fail < 8; fail++) {
                memset(&c, 0, sizeof c);
                c.fail_after = fail;
                pt = NULL;
                st_status st = CHECKED(err, st_pretokenizer_new(patterns[p], fl, "Latin,Greek", 11, &a, &pt, &err));
                CHECK(st == ST_OK || (st == ST_ERR_OUT_OF_MEMORY && pt == NULL),
                      "fail after %d: status %d", fail, st);
                if (fail == 0) CHECK(st == ST_ERR_OUT_OF_MEMORY, "first allocation failing gives %d", st);
                st_pretokenizer_free(pt);
                CHECK(c.allocs == c.frees && c.live_bytes == 0 && c.bad_frees == 0,
                      "fail after %d leaked: %d allocs, %d frees", fail, c.allocs, c.frees);
            }
        }
}

/* ---- scripts ------------------------------------------------------------------------------ */

static void test_scripts(void) {
    struct {
        uint32_t cp;
        const char *name;
    } known[] = {
        {0x0041, "Latin"},    {0x007A, "Latin"},     {0x00E9, "Latin"},    {0x4E00, "Han"},
        {0x0020, "Common"},   {0x0000, "Common"},    {0x0031, "Common"},   {0x3000, "Common"},
        {0x0301, "Inherited"}, {0x0378, "Unknown"},  {0x20000, "Han"},     {0x3042, "Hiragana"},
        {0x30A2, "Katakana"}, {0x0E01, "Thai"},      {0x0391, "Greek"},    {0x0410, "Cyrillic"},
        {0x0627, "Arabic"},   {0x05D0, "Hebrew"},    {0x0905, "Devanagari"}, {0xAC00, "Hangul"},
        {0x1F600, "Common"},  {0xE0100, "Inherited"}, {0xE000, "Unknown"},  {0xD800, "Unknown"},
        {0x10FFFF, "Unknown"}, {0x1000, "Myanmar"},  {0x1780, "Khmer"},    {0x0E81, "Lao"},
    };
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        int id = st_script_of(known[k].cp);
        const char *name = st_script_name(id);
        CHECK(name && strcmp(name, known[k].name) == 0, "st_script_of(U+%04X) = %d (%s), want %s",
              (unsigned)known[k].cp, id, name ? name : "(null)", known[k].name);
    }
    CHECK(st_script_of(0x110000) == -1, "st_script_of(0x110000) = %d", st_script_of(0x110000));
    CHECK(st_script_of(0xFFFFFFFFu) == -1, "st_script_of(0xFFFFFFFF)");
    CHECK(st_script_of(0x80000000u) == -1, "st_script_of(0x80000000)");
    CHECK(st_script_of(0x41) == st_script_from_name("Latin", 5), "Latin by name");
    CHECK(st_script_from_name("Unknown", 7) == 0 && st_script_from_name("Common", 6) == 1 &&
              st_script_from_name("Inherited", 9) == 2,
          "ids 0, 1, 2");

    int count = st_script_count();
    CHECK(count > 150 && count <= 256, "st_script_count() = %d", count);
    int bad = 0;
    for (int id = 0; id < count; id++) {
        const char *name = st_script_name(id);
        if (!name || !name[0]) {
            if (bad++ < 5) printf("  st_script_name(%d) is empty\n", id);
            continue;
        }
        size_t n = strlen(name);
        char low[128], up[128], spaced[256];
        size_t m = 0;
        for (size_t i = 0; i < n && i < 120; i++) {
            low[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32 : name[i]);
            up[i] = (char)(name[i] >= 'a' && name[i] <= 'z' ? name[i] - 32 : name[i]);
            spaced[m++] = name[i];
            spaced[m++] = (i % 2) ? '_' : ' ';
        }
        if (st_script_from_name(name, n) != id || st_script_from_name(low, n) != id ||
            st_script_from_name(up, n) != id || st_script_from_name(spaced, m) != id) {
            if (bad++ < 5) printf("  round trip of %d \"%s\" failed: %d\n", id, name, st_script_from_name(name, n));
        }
        for (int j = 0; j < id; j++)
            if (st_script_name(j) && strcmp(st_script_name(j), name) == 0 && bad++ < 5)
                printf("  ids %d and %d share the name %s\n", j, id, name);
    }
    CHECK(bad == 0, "script name round trips: %d failures", bad);

    /* Every code point maps to a valid id. */
    bad = 0;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp++) {
        int id = st_script_of(cp);
        if ((id < 0 || id >= count) && bad++ < 5) printf("  st_script_of(U+%04X) = %d\n", (unsigned)cp, id);
    }
    CHECK(bad == 0, "st_script_of out of range for %d code points", bad);
}

/* ---- NFC normalization (st_normalize_nfc) ------------------------------------------------- */

static int nfc_is(const char *in, size_t in_len, const char *want, size_t want_len, const size_t *want_map) {
    char out[64];
    size_t map[64], n = 0;
    st_error e;
    if (st_normalize_nfc(in, in_len, out, map, sizeof out, &n, &e) != ST_OK) return 0;
    if (n != want_len || memcmp(out, want, n) != 0) return 0;
    for (size_t k = 0; want_map && k < n; k++)
        if (map[k] != want_map[k]) return 0;
    return 1;
}

static void test_nfc(void) {
    /* a + acute (230) + grave below (220): reordered, then a + acute composed; the grave below
     * maps to the smallest offset of the run from its place on (the acute's, 1). */
    static const size_t m1[] = {0, 0, 1, 1, 5};
    CHECK(nfc_is("a\xCC\x81\xCC\x96" "b", 6, "\xC3\xA1\xCC\x96" "b", 5, m1), "a acute grave-below b");
    /* U+1D160 is a composition exclusion: three characters (12 bytes) from one (4). */
    static const size_t m2[] = {0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 5};
    CHECK(nfc_is("x\xF0\x9D\x85\xA0y", 6, "x\xF0\x9D\x85\x98\xF0\x9D\x85\xA5\xF0\x9D\x85\xAEy", 14, m2), "U+1D160");
    /* Hangul L V T composes; U+0CC6 U+0CC2 U+0CD5 composes to U+0CCB (three starters). */
    CHECK(nfc_is("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", 9, "\xEA\xB0\x81", 3, NULL), "Hangul LVT");
    CHECK(nfc_is("\xE0\xB3\x86\xE0\xB3\x82\xE0\xB3\x95", 9, "\xE0\xB3\x8B", 3, NULL), "Kannada U+0CCB");
    CHECK(nfc_is("\xE0\xB3\x8B", 3, "\xE0\xB3\x8B", 3, NULL), "U+0CCB stays");
    /* Unicode 9.0: the Dives Akuru pair (13.0) is not composed. */
    CHECK(nfc_is("\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0", 8, "\xF0\x91\xA4\xB5\xF0\x91\xA4\xB0", 8, NULL), "U+11935 U+11930");
    /* The fast path: nothing at or above U+0300, unchanged; the map points at character starts. */
    static const size_t m3[] = {0, 1, 1, 3};
    CHECK(nfc_is("A\xC3\xA9z", 4, "A\xC3\xA9z", 4, m3), "fast path");
    CHECK(nfc_is("", 0, "", 0, NULL), "empty");

    /* Size query and a short buffer: the full length, nothing past cap. */
    char out[16];
    size_t map[16], n = 99;
    st_error e;
    CHECK(st_normalize_nfc("x\xF0\x9D\x85\xA0", 5, NULL, NULL, 0, &n, &e) == ST_ERR_BUFFER_TOO_SMALL && n == 13 &&
          e.status == ST_ERR_BUFFER_TOO_SMALL, "size query");
    memset(out, 0x55, sizeof out);
    for (size_t k = 0; k < 16; k++) map[k] = ST_CANARY_T;
    CHECK(st_normalize_nfc("x\xF0\x9D\x85\xA0", 5, out, map, 6, &n, &e) == ST_ERR_BUFFER_TOO_SMALL && n == 13 &&
          (unsigned char)out[6] == 0x55 && map[6] == ST_CANARY_T && map[5] == 1, "short buffer");
    CHECK(st_normalize_nfc("a\xCC", 2, out, map, 16, &n, &e) == ST_ERR_INVALID_UTF8 && e.offset == 1, "invalid UTF-8");
    CHECK(st_normalize_nfc("a", 1, out, map, 16, NULL, &e) == ST_ERR_INVALID_ARGUMENT, "out_len NULL");
    CHECK(st_normalize_nfc(NULL, 1, out, map, 16, &n, &e) == ST_ERR_INVALID_ARGUMENT, "text NULL");
    CHECK(st_normalize_nfc("a", 1, NULL, NULL, 16, &n, &e) == ST_ERR_INVALID_ARGUMENT, "out NULL with cap");

    /* 100,000 marks after one base, alternating grave below (220) and acute (230): the run is
     * sorted whole (as tokenizers does) and the acute composes once: a-acute, 50,000 grave
     * below, 49,999 acute. */
    size_t marks = 100000, len = 1 + 2 * marks;
    char *big = (char *)malloc(len), *o = (char *)malloc(3 * len);
    size_t *bm = (size_t *)malloc(3 * len * sizeof(size_t));
    if (big && o && bm) {
        big[0] = 'a';
        for (size_t k = 0; k < marks; k++) {
            big[1 + 2 * k] = '\xCC';
            big[2 + 2 * k] = (k & 1) ? '\x81' : '\x96';
        }
        int ok = st_normalize_nfc(big, len, o, bm, 3 * len, &n, &e) == ST_OK && n == 2 + 2 * (marks - 1) &&
                 memcmp(o, "\xC3\xA1", 2) == 0;
        for (size_t k = 0; ok && k < marks - 1; k++)
            ok = (unsigned char)o[2 + 2 * k] == 0xCC &&
                 (unsigned char)o[3 + 2 * k] == (k < marks / 2 ? 0x96 : 0x81);
        for (size_t k = 1; ok && k < n; k++) ok = bm[k - 1] <= bm[k] && bm[k] < len;
        CHECK(ok, "a run of 100,000 marks");
    }
    free(big);
    free(o);
    free(bm);
}


/* The random tests' generator: one step of a 64-bit LCG (use its high bits). */
static void lcg_step(uint64_t *seed) { *seed = *seed * 6364136223846793005ull + 1442695040888963407ull; }
/* The encoder reads pieces a batch at a time (st__pieces_fill, each pattern's loop with its
 * scanner inlined), st_pretokenize and training one at a time (st__pieces_next, the scanner
 * through a pointer, which the regex-differential tests hold to the pattern). The two must give
 * the same ends for every text, whatever the batch size: random texts from
 * fragments around the stretch's edges (case changes, spaces and runs of them, contractions,
 * punctuation, digits, line breaks, combining marks and other letters that are not ASCII), each
 * pattern, batches of 1, 2, 3, 7 and 128. */
static void test_batch_scanner(void) {
    static const char *const frag[] = {"a", "b", "z", "A", "B", "Z", "Q", " ", " ", " ", "  ", "   ", ",", ".",
                                       "'", "'s", "'LL", "\n", "\r\n", "1", "123", "\xc3\xa9", "\xc3\x89",
                                       "\xcc\x81", "\xce\xa9", "\xe4\xb8\xad", "\t", "/", "-", "the",
                                       " the", "The", "camelCase", "HTTPServer", "abcdefghijklmnop",
                                       "ABCDEFGHIJ"};
    static const int pats[] = {ST_PATTERN_O200K, ST_PATTERN_CL100K, ST_PATTERN_GPT2, ST_PATTERN_LLAMA3};
    static const size_t caps[] = {1, 2, 3, 7, 128};
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    char text[600];
    size_t want[600], got[600];
    int bad = 0;
    for (size_t pi = 0; pi < sizeof pats / sizeof *pats; pi++) {
        st_pretokenizer *pt = NULL;
        CHECK(st_pretokenizer_new(pats[pi], 0, NULL, 0, NULL, &pt, NULL) == ST_OK, "pretokenizer %d", pats[pi]);
        for (int round = 0; round < 20000 && !bad; round++) {
            size_t len = 0;
            lcg_step(&seed);
            size_t nfrag = (size_t)(seed >> 33) % 60;
            for (size_t k = 0; k < nfrag; k++) {
                lcg_step(&seed);
                const char *f = frag[(seed >> 33) % (sizeof frag / sizeof *frag)];
                size_t fl = strlen(f);
                if (len + fl >= sizeof text) break;
                memcpy(text + len, f, fl);
                len += fl;
            }
            st__piece_iter it;
            st__pieces_init(&it, pt, (const uint8_t *)text, len);
            size_t nw = 0;
            while (it.i < len) want[nw++] = st__pieces_next(&it);
            size_t cap = caps[round % 5], ng = 0;
            st__pieces_init(&it, pt, (const uint8_t *)text, len);
            for (size_t m; (m = st__pieces_fill(&it, got + ng, cap)) > 0;) ng += m;
            if (ng != nw || memcmp(got, want, nw * sizeof *want) != 0) {
                bad = 1;
                CHECK(0, "pattern %d, batch %zu: %zu pieces against %zu one at a time for \"%.*s\"", pats[pi], cap, ng,
                      nw, (int)len, text);
            }
        }
        st_pretokenizer_free(pt);
    }
    CHECK(!bad, "the batch scanner gives the one-piece scanner's ends");
}

/* The block scanners of o200k, cl100k, llama3 and qwen2 (64 ASCII bytes at a time, classified a
 * byte at a time and with the build's SIMD kernel) give the one-piece scanners' ends: random
 * texts of every ASCII byte, the patterns' hard cases (contractions, CR/LF and '/' after
 * punctuation, \s runs with and without CR/LF, runs longer than a block) and non-ASCII
 * characters that end a block (a letter, a mark, a long s that folds to 's', no-break space,
 * Arabic digits), at batch sizes that cut blocks. */
static void test_block_scanners(void) {
    static const char *const frag[] = {
        " ", " ", " ", "  ", "\t", "\n", "\r\n", "\n\n", " \n", "\n ", "\v", "\f", "a", "e", "s", "t",
        "A", "S", "Z", "the", " the", "The", "camelCase", "HTTPServer", "'", "'s", "'S", "'t", "'re", "'VE",
        "'ll", "'Ll", "'m", "'d", "'x", "it's", "don't", "'s's", ".", ",", "(", ")", "/", "//", ".\n", ".\n/",
        "-", "\"", "1", "12", "123", "1234", "\x01", "\x1c", "\x1f", "\x7f", "\xc3\xa9", "\xc3\x89",
        "\xcc\x81", "\xc5\xbf", "\xc2\xa0", "\xd9\xa3", "\xe4\xb8\xad", "\xe2\x80\xa8",
        "                                                                      ",
        "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz",
        "0123456789012345678901234567890123456789012345678901234567890123456789",
        "\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n\n",
        ".................................................................."};
    static const size_t caps[] = {1, 2, 3, 7, 64, 128};
    uint64_t seed = 0x2545F4914F6CDD1Dull;
    char text[1200];
    size_t want[1200], got[1200];
    int bad = 0;
    static const int pats[] = {ST_PATTERN_O200K, ST_PATTERN_CL100K, ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2};
    for (int round = 0; round < 120000 && !bad; round++) {
        int pat = pats[round % 4];
        size_t len = 0;
        lcg_step(&seed);
        int bytes = (seed >> 60) < 4; /* a quarter: random ASCII bytes, no fragments */
        size_t nfrag = (size_t)(seed >> 33) % (bytes ? 300 : 120);
        for (size_t k = 0; k < nfrag; k++) {
            lcg_step(&seed);
            char one[2] = {(char)((seed >> 33) % 128), 0};
            const char *f = bytes ? one : frag[(seed >> 33) % (sizeof frag / sizeof *frag)];
            size_t fl = bytes ? 1 : strlen(f);
            if (len + fl >= sizeof text) break;
            memcpy(text + len, f, fl);
            len += fl;
        }
        const uint8_t *t = (const uint8_t *)text;
        size_t nw = 0;
        for (size_t i = 0; i < len; i = want[nw++]) st__fill_blocks_kernel(pat, t, len, i, want + nw, 1, ST_BLOCKS_NONE);
        for (int kernel = ST_BLOCKS_PORTABLE; kernel <= ST_BLOCKS && !bad; kernel++) {
            size_t cap = caps[(round / 4) % 6], ng = 0, i = 0, m;
            while (i < len && (m = st__fill_blocks_kernel(pat, t, len, i, got + ng, cap, kernel)) > 0) {
                ng += m;
                i = got[ng - 1];
            }
            if (ng != nw || memcmp(got, want, nw * sizeof *want) != 0) {
                size_t k = 0;
                while (k < ng && k < nw && got[k] == want[k]) k++;
                bad = 1;
                CHECK(0, "pattern %d, kernel %d, batch %zu: %zu pieces against %zu, first difference at piece %zu (end %zu against %zu) in \"%.*s\"",
                      pat, kernel, cap, ng, nw, k, k < ng ? got[k] : 0, k < nw ? want[k] : 0, (int)len, text);
            }
        }
    }
    CHECK(!bad, "the block scanners give the one-piece scanners' ends, each pattern with either classifier");
}

/* normalize.c's list of starters that compose as a second (its fast path's test) is the tables'
 * st_nfc_comp_second entries of class 0, no more and no fewer. */
static void test_nfc_starter_seconds(void) {
    int bad = 0;
    for (uint32_t cp = 0; cp < ST_NFC_LIMIT; cp++) {
        int second = 0;
        for (size_t k = 0; k < st_nfc_comp_second_count; k++)
            if (st_nfc_comp_second[k] == cp) second = 1;
        uint8_t ccc = st_nfc_ccc_blocks[((size_t)st_nfc_ccc_index[cp >> ST_NFC_CCC_SHIFT] << ST_NFC_CCC_SHIFT) |
                                        (cp & ((1u << ST_NFC_CCC_SHIFT) - 1))];
        if ((second && ccc == 0) != st__nfc_starter_second(cp)) {
            if (!bad) CHECK(0, "U+%04X: a starter second in the tables %d, in normalize.c's list %d", (unsigned)cp,
                            second && ccc == 0, st__nfc_starter_second(cp));
            bad = 1;
        }
    }
    CHECK(!bad, "normalize.c's starter seconds are the tables'");
}

/* st__nfc_unchanged never says "unchanged" of a text NFC changes (random mixtures of letters,
 * marks, precomposed and decomposed letters, starters that compose as a second, Hangul jamo and
 * syllables, composition exclusions), and says it of most text that is NFC. */
static void test_nfc_unchanged(void) {
    static const char *const pool[] = {
        "a", "e", " ", "\n", "\xc3\xa9", "e\xcc\x81", "\xcc\x81", "\xcc\xa3", "\xcd\x84", "\xd0\xb9",
        "\xd0\xb8\xcc\x86", "\xd0\xb6", "\xce\xac", "\xce\xb1\xcc\x81", "\xe1\xbe\x82", "\xe4\xb8\xad",
        "\xe1\x84\x80", "\xe1\x85\xa1", "\xe1\x86\xa8", "\xea\xb0\x80", "\xea\xb0\x81", "\xe0\xad\x87",
        "\xe0\xac\xbe", "\xe0\xad\x97", "\xe0\xa5\x98", "\xe2\x84\xab", "\xe2\x84\xa6", "\xcd\xb4",
        "\xe0\xbd\xb3", "\xe0\xbd\xb1", "\xd9\x8e", "\xd8\xb9", "\xe0\xa4\x95", "\xe0\xa4\xbc",
        "\xf0\x9d\x85\x9e", "\xf0\x9d\x85\xa5", "\xe1\xba\xa1", "\xe1\xbb\x87",
        /* Devanagari: na (composes with the nukta), virama, vowel sign i, udatta and anudatta
         * (classes 230 and 220), and a mark of class 220 that composes with nothing */
        "\xe0\xa4\xa8", "\xe0\xa5\x8d", "\xe0\xa4\xbf", "\xe0\xa5\x91", "\xe0\xa5\x92", "\xcc\x96"};
    uint64_t seed = 0xA0761D6478BD642Full;
    char text[200];
    uint8_t out[700];
    int bad = 0, said = 0;
    for (int round = 0; round < 200000 && !bad; round++) {
        size_t len = 0;
        lcg_step(&seed);
        size_t nfrag = 1 + (size_t)(seed >> 33) % 12;
        for (size_t k = 0; k < nfrag; k++) {
            lcg_step(&seed);
            const char *f = pool[(seed >> 33) % (sizeof pool / sizeof *pool)];
            size_t fl = strlen(f);
            if (len + fl > sizeof text) break;
            memcpy(text + len, f, fl);
            len += fl;
        }
        if (!st__nfc_unchanged((const uint8_t *)text, len)) continue;
        said++;
        size_t m = st__nfc((const uint8_t *)text, len, out, NULL, sizeof out);
        if (m != len || memcmp(out, text, len) != 0) {
            bad = 1;
            CHECK(0, "st__nfc_unchanged says NFC leaves \"%.*s\" as it is, but NFC changes it", (int)len, text);
        }
    }
    CHECK(!bad && said > 1000, "st__nfc_unchanged is never wrong (%d texts it passed)", said);
}

/* st__ascii_end and st__find_byte give what a byte loop gives, from every start, in buffers of
 * every length up to 40 (the word loop's ends and tails), with the byte sought (or a non-ASCII
 * byte) at every place and with 0x80 and 0xFF around it. */
static void test_byte_scans(void) {
    uint8_t buf[48];
    int bad = 0;
    for (size_t len = 0; len <= 40 && !bad; len++)
        for (size_t at = 0; at <= len && !bad; at++)
            for (int fill = 0; fill < 3 && !bad; fill++) {
                for (size_t k = 0; k < len; k++) buf[k] = fill == 0 ? 'a' : fill == 1 ? (uint8_t)('a' + k % 26) : '<' + 1;
                uint8_t keep = at < len ? buf[at] : 0;
                if (at < len) buf[at] = '<';
                for (size_t from = 0; from <= len; from++) {
                    size_t want = from;
                    while (want < len && buf[want] != '<') want++;
                    if (st__find_byte(buf, from, len, '<') != want) bad = 1;
                }
                for (size_t from = 0; from <= len; from++) { /* '<' or '\n' (none in the fill) */
                    size_t want = from;
                    while (want < len && buf[want] != '<' && buf[want] != '\n') want++;
                    if (st__find_either(buf, from, len, '\n', '<') != want) bad = 1;
                    if (st__find_either(buf, from, len, '<', 0xFE) != want) bad = 1;
                }
                if (at < len) buf[at] = fill == 2 ? 0xFF : 0x80;
                for (size_t from = 0; from <= len; from++) {
                    size_t want = from;
                    while (want < len && buf[want] < 0x80) want++;
                    if (st__ascii_end(buf, from, len) != want) bad = 1;
                }
                if (at < len) buf[at] = keep;
            }
    CHECK(!bad, "st__find_byte, st__find_either and st__ascii_end agree with a byte loop");
}

/* The SIMD validator (where this processor runs one) against the scalar one: on valid text of
 * every character length and on every kind of error at every place across its block edges, the
 * same status, offset and message, and the prefix it vouches for is valid (a character cut at
 * its end would not be) and, on valid text, reaches the last block. */
static int kernel_case_ok(const uint8_t *t, size_t n, int *reached) {
    st_error a, b;
    st_status sa = st_utf8_validate((const char *)t, n, &a), sb = st__utf8_validate_from((const char *)t, n, 0, &b);
    if (sa != sb || a.offset != b.offset || a.unit != b.unit || strcmp(a.message, b.message) != 0) return 0;
    size_t p = st__utf8_valid_prefix(t, n);
    /* s[0..p) valid (so p cuts no character: a cut one would be truncated) */
    if (p > n || st__utf8_validate_from((const char *)t, p, 0, NULL) != ST_OK) return 0;
    if (sb == ST_OK && n >= 64 && p + 35 < n) *reached = 0;
    return 1;
}

static void test_utf8_kernels(void) {
#if ST_X86_DISPATCH
    if (!st__cpu_has_avx2()) {
        printf("test_utf8_kernels: skipped, no AVX2 kernel runs on this processor\n");
        return;
    }
    static const char *chars[] = {"a", " ", "\n", "\xC3\xA9", "\xD0\xB6", "\xDF\xBF", "\xC2\x80", "\xE4\xB8\xAD",
                                  "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80", "\xEF\xBF\xBF", "\xF0\x90\x80\x80",
                                  "\xF0\x9F\x98\x80", "\xF4\x8F\xBF\xBF", "\xF3\xA0\x80\x81"};
    static const char *bad[] = {"\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xE0\x9F\xBF", "\xED\xA0\x80", "\xED\xBF\xBF",
                                "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80",
                                "\xF8\x88\x80\x80\x80", "\xFF", "\xFE", "\x80", "\xBF", "\xC2", "\xE2\x82", "\xF0\x9F\x98",
                                "\xC2\x41", "\xE2\x41\x41", "\xE2\x82\x41", "\xF0\x9F\x41", "\xF0\x9F\x98\x41",
                                "\xC3\xA9\x80", "\xE4\xB8\xAD\xAD", "\xF0\x9F\x98\x80\x80", "\xC2\xC2\x80"};
    const size_t nchars = sizeof chars / sizeof chars[0], nbad = sizeof bad / sizeof bad[0];
    uint8_t t[600];
    int wrong = 0, reached = 1, cases = 0;
    uint64_t r = 12345;
    for (int round = 0; round < 3000 && wrong < 3; round++) {
        /* a valid text of mixed characters (runs of one kind, as in real text, and ASCII blocks) */
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        size_t n = 0, target = (size_t)(r >> 33) % 520;
        while (n + 8 < target) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            const char *c = (r >> 60) < 5 ? "a" : chars[(r >> 40) % nchars];
            size_t run = 1 + (size_t)((r >> 20) % 12), l = strlen(c);
            for (size_t k = 0; k < run && n + l <= target; k++, n += l) memcpy(t + n, c, l);
        }
        cases++;
        if (!kernel_case_ok(t, n, &reached)) wrong++, printf("valid text %d (%zu bytes) differs\n", round, n);
        if (n < 8) continue;
        /* an error at each place from 0 to n, over the character there */
        for (size_t at = 0; at + 8 <= n && wrong < 3; at += 1 + (size_t)(round % 3)) {
            uint8_t keep[8];
            const char *e = bad[(at + (size_t)round) % nbad];
            size_t l = strlen(e);
            memcpy(keep, t + at, l);
            memcpy(t + at, e, l);
            cases++;
            if (!kernel_case_ok(t, n, &reached)) wrong++, printf("round %d: error %zu at %zu of %zu differs\n", round, (at + (size_t)round) % nbad, at, n);
            memcpy(t + at, keep, l);
        }
    }
    /* a character cut by a block's end, then ASCII blocks (which the kernel reads in steps of
     * four without a check of their own: the cut one must still be seen) */
    static const char *cut[] = {"\xC2", "\xE2\x82", "\xF0\x9F\x98", "\xE4", "\xF0", "\xF4\x8F"};
    for (size_t g = 32; g <= 512; g += 32)
        for (size_t c = 0; c < sizeof cut / sizeof cut[0]; c++) {
            size_t l = strlen(cut[c]);
            memset(t, 'a', sizeof t);
            memcpy(t + g - l, cut[c], l);
            cases++;
            if (!kernel_case_ok(t, sizeof t, &reached)) wrong++, printf("cut character %zu before %zu differs\n", c, g);
        }
    CHECK(!wrong && cases > 100000, "the AVX2 UTF-8 validator agrees with the scalar one (%d cases)", cases);
    CHECK(reached, "the AVX2 UTF-8 validator reads valid text to its last block");
#else
    printf("test_utf8_kernels: skipped, this build has no run-time kernels\n");
#endif
}

int main(void) {
    test_status_str();
    test_version();
    test_utf8_valid();
    test_utf8_invalid();
    test_null_args();
    test_pieces();
    test_known_splits();
    test_new_args();
    test_allocators();
    test_scripts();
    test_nfc();
    test_batch_scanner();
    test_block_scanners();
    test_nfc_starter_seconds();
    test_nfc_unchanged();
    test_byte_scans();
    test_utf8_kernels();
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
