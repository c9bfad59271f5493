/* Pre-tokenizers: hand-written scanners giving exactly regex.findall(pat_str, text) for
 * tiktoken 0.14's patterns (docs/design.md §5), SuperBPE's Stage-2 split (its regex's matches
 * and the text between them), the pre-tokenizers of Llama 3, Qwen 2/3 and DeepSeek V3 as
 * HuggingFace tokenizers splits with them, and the script-aware chunking mode.
 *
 * Each scanner is a function (text, end, start) -> end of the piece starting at `start`.
 * regex tries a pattern's alternatives in order and takes the first that matches, each with
 * its own greedy-then-backtrack search; every scanner below walks the alternatives in the same
 * order, and the comment on each branch says which alternative it is and why its backtracking
 * reduces to the closed form used. `end` is the end of the text, or of the script chunk in
 * script-aware mode (regex.findall runs on each chunk alone, so `$` and the lookahead in
 * \s+(?!\S) see the chunk's end).
 *
 * The text has been validated as UTF-8 before any scanner runs. */
#include "pretokenize.h"
#include "unicode.h"
#include "utf8.h"

/* Predicate bits per class byte (class in bits 0-2, White_Space in bit 3, \p{P} in bit 4,
 * \p{S} in bit 5). */
enum {
    P_L = 1,     /* \p{L} */
    P_N = 2,     /* \p{N} */
    P_WS = 4,    /* \s */
    P_O = 8,     /* [^\s\p{L}\p{N}] */
    P_U = 16,    /* o200k upper part: [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] */
    P_W = 32,    /* o200k lower part: [\p{Ll}\p{Lm}\p{Lo}\p{M}] */
    P_M = 64,    /* \p{M} */
    P_PRE = 128, /* [^\r\n\p{L}\p{N}] minus CR/LF, which are tested by code point */
    P_PS = 256   /* [\p{P}\p{S}] (deepseek_v3) */
};

/* The 64 possible class bytes mapped to predicate bits, computed once at compile time. */
#define PRED(cls) ((uint16_t)( \
    ((((cls) & 7) >= 1 && ((cls) & 7) <= 5) ? P_L : 0) | \
    ((((cls) & 7) == 7) ? P_N : 0) | \
    (((cls) & 8) ? P_WS : 0) | \
    ((!((cls) & 8) && !(((cls) & 7) >= 1 && ((cls) & 7) <= 5) && ((cls) & 7) != 7) ? P_O : 0) | \
    ((((cls) & 7) == 1 || ((cls) & 7) == 3 || ((cls) & 7) == 4 || ((cls) & 7) == 5 || ((cls) & 7) == 6) ? P_U : 0) | \
    ((((cls) & 7) == 2 || ((cls) & 7) == 4 || ((cls) & 7) == 5 || ((cls) & 7) == 6) ? P_W : 0) | \
    ((((cls) & 7) == 6) ? P_M : 0) | \
    ((!(((cls) & 7) >= 1 && ((cls) & 7) <= 5) && ((cls) & 7) != 7) ? P_PRE : 0) | \
    (((cls) & 48) ? P_PS : 0)))
#define PRED8(c) PRED(c), PRED(c + 1), PRED(c + 2), PRED(c + 3), PRED(c + 4), PRED(c + 5), PRED(c + 6), PRED(c + 7)

static const uint16_t preds_of_class[64] = {PRED8(0),  PRED8(8),  PRED8(16), PRED8(24),
                                            PRED8(32), PRED8(40), PRED8(48), PRED8(56)};

/* One decoded character: its code point, byte length and predicate bits. At the end of the
 * text (i >= end) len and preds are 0, so every predicate is false. */
typedef struct ch {
    uint32_t cp;
    uint32_t len;
    uint32_t preds;
} ch;

ST_INLINE ch char_at(const uint8_t *s, size_t end, size_t i) {
    ch c;
    if (i >= end) { c.cp = 0; c.len = 0; c.preds = 0; return c; }
    ST_COUNT(1);
    uint8_t b = s[i];
    if (b < 0x80) {
        c.cp = b;
        c.len = 1;
        c.preds = preds_of_class[st_ucd_bmp_class[b]];
        return c;
    }
    c.len = (uint32_t)st__utf8_decode(s + i, &c.cp);
    c.preds = preds_of_class[st_ucd_class(c.cp)];
    return c;
}

/* \p{N}{1,3} after its first digit: the end of up to two more digits from e. */
ST_INLINE size_t digits_1_3(const uint8_t *s, size_t end, size_t e) {
    for (int k = 1; k < 3; k++) {
        ch n = char_at(s, end, e);
        if (!(n.preds & P_N)) break;
        e += n.len;
    }
    return e;
}

/* End of the maximal run of characters having any of `mask`, starting at i. */
ST_INLINE size_t run_of(const uint8_t *s, size_t end, size_t i, uint32_t mask) {
    while (i < end) {
        uint8_t b = s[i];
        if (b < 0x80) {
            ST_COUNT(1);
            if (!(preds_of_class[st_ucd_bmp_class[b]] & mask)) break;
            i++;
            continue;
        }
        ch c = char_at(s, end, i);
        if (!(c.preds & mask)) break;
        i += c.len;
    }
    return i;
}

ST_INLINE int is_crlf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

/* End of a run of [\r\n] (or [\r\n/] with slash) starting at i. */
ST_INLINE size_t run_crlf(const uint8_t *s, size_t end, size_t i, int slash) {
    while (i < end && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/'))) { ST_COUNT(1); i++; }
    return i;
}

/* Characters that (?i:x) matches under regex's simple case folding, for the contraction
 * letters; only 's' has a non-ASCII one (U+017F LATIN SMALL LETTER LONG S). The unicode
 * table test checks this against regex for every code point. */
ST_INLINE int fold_eq(uint32_t cp, char lower) {
    if (cp < 0x80) return (cp | 0x20) == (uint32_t)lower && ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
    return lower == 's' && cp == 0x17F;
}

/* The contraction after an apostrophe at i. Returns the end, or 0 if none.
 * gpt2:  '(?:[sdmt]|ll|ve|re)  case-sensitive.
 * other: (?i:'s|'t|'re|'ve|'m|'ll|'d)  (same set, case-insensitive). */
ST_INLINE size_t contraction(const uint8_t *s, size_t end, size_t i, int fold) {
    if (i >= end || s[i] != '\'') return 0;
    ch a = char_at(s, end, i + 1);
    if (!a.len) return 0;
    if (!fold) {
        if (a.cp == 's' || a.cp == 'd' || a.cp == 'm' || a.cp == 't') return i + 2;
        if (i + 2 < end) {
            uint8_t b = s[i + 2];
            if ((a.cp == 'l' && b == 'l') || (a.cp == 'v' && b == 'e') || (a.cp == 'r' && b == 'e'))
                return i + 3;
        }
        return 0;
    }
    size_t j = i + 1 + a.len;
    if (fold_eq(a.cp, 's') || fold_eq(a.cp, 'd') || fold_eq(a.cp, 'm') || fold_eq(a.cp, 't')) return j;
    ch b = char_at(s, end, j);
    if (!b.len) return 0;
    if ((fold_eq(a.cp, 'l') && fold_eq(b.cp, 'l')) || (fold_eq(a.cp, 'v') && fold_eq(b.cp, 'e')) ||
        (fold_eq(a.cp, 'r') && fold_eq(b.cp, 'e')))
        return j + b.len;
    return 0;
}

/* The whitespace alternatives, shared by every pattern. The run of \s from i ends at j;
 * `last` is where its last character starts and `crlf_end` is just past its last CR or LF
 * (0 if it has none). Which of them a pattern uses, in which order, is decided by the caller. */
typedef struct ws_run {
    size_t j, last, crlf_end;
} ws_run;

ST_INLINE ws_run scan_ws(const uint8_t *s, size_t end, size_t i) {
    ws_run r;
    r.crlf_end = 0;
    r.last = i;
    size_t k = i;
    while (k < end) {
        ch c = char_at(s, end, k);
        if (!(c.preds & P_WS)) break;
        r.last = k;
        k += c.len;
        if (is_crlf(c.cp)) r.crlf_end = k;
    }
    r.j = k;
    return r;
}

/* \s+(?!\S) then \s: the run minus its last character when that leaves something and text
 * follows (the last space then starts the next piece), else the whole run (which, since the
 * earlier case failed, is the run to the end or a single character). */
ST_INLINE size_t ws_tail(const ws_run *r, size_t i, size_t end) {
    if (r->j == end) return end;
    if (r->last > i) return r->last;
    return r->j;
}

/* ---- ASCII words, eight bytes at a time ----------------------------------------------------
 * Most pieces of Latin-script text and code are an optional ASCII prefix (a space, a
 * punctuation mark) and a word of ASCII letters ended by an ASCII byte. For those the scanners
 * below take the word's end from bit masks of eight bytes (portable SWAR: no SIMD, the same in
 * wasm32) instead of walking the pattern's alternatives a character at a time, and fall back to
 * that walk whenever the word is empty or a non-ASCII byte follows it (a non-ASCII letter could
 * extend the run). Every mask below has bit 7 of a byte set when the byte is in the class. */
#define ST_BYTES(x) (0x0101010101010101ull * (uint64_t)(x))

/* The eight bytes at p as a little-endian word on any host (one load where the host is
 * little-endian; compilers fold the shifts). */
ST_INLINE uint64_t load8(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* Bytes of w in [lo, hi] (lo >= 1, hi < 0x80). The low seven bits plus a constant below 0x80
 * never carry into the next byte; bytes >= 0x80 are cleared by ~w. */
ST_INLINE uint64_t bytes_in(uint64_t w, unsigned lo, unsigned hi) {
    uint64_t x = w & ST_BYTES(0x7F);
    return (x + ST_BYTES(0x80 - lo)) & ~(x + ST_BYTES(0x7F - hi)) & ~w & ST_BYTES(0x80);
}

/* Index of the first byte whose bit 7 is set in m (m != 0). */
ST_INLINE size_t first_byte(uint64_t m) {
#if defined(__GNUC__) || defined(__clang__)
    return (size_t)__builtin_ctzll(m) >> 3;
#else
    size_t k = 0;
    while (!(m & 0x80)) { m >>= 8; k++; }
    return k;
#endif
}

enum { RUN_UPPER, RUN_LOWER, RUN_LETTER };

ST_INLINE uint64_t run_mask(uint64_t w, int kind) {
    if (kind == RUN_UPPER) return bytes_in(w, 'A', 'Z');
    if (kind == RUN_LOWER) return bytes_in(w, 'a', 'z');
    return bytes_in(w | ST_BYTES(0x20), 'a', 'z'); /* |0x20 maps A-Z onto a-z and no other byte */
}

/* End of the maximal run of ASCII bytes of one kind from a. */
ST_INLINE size_t ascii_run(const uint8_t *s, size_t end, size_t a, int kind) {
    while (end - a >= 8) {
        ST_COUNT(1);
        uint64_t out = ~run_mask(load8(s + a), kind) & ST_BYTES(0x80);
        if (out) return a + first_byte(out);
        a += 8;
    }
    for (; a < end; a++) {
        uint8_t b = s[a];
        int in = kind == RUN_UPPER ? (uint8_t)(b - 'A') < 26
               : kind == RUN_LOWER ? (uint8_t)(b - 'a') < 26
                                   : (uint8_t)((b | 0x20) - 'a') < 26;
        if (!in) break;
    }
    return a;
}

/* The byte at e (e <= end) ends an ASCII word: the text ends there or goes on in ASCII. */
ST_INLINE int ascii_stop(const uint8_t *s, size_t end, size_t e) { return e == end || s[e] < 0x80; }

/* The start of an ASCII word for a pattern whose word may follow one character that is no
 * letter, digit, CR or LF (o200k, cl100k: [^\r\n\p{L}\p{N}]?): i itself for an ASCII letter,
 * i + 1 after such an ASCII character when an ASCII letter follows it, else NO_WORD. */
#define NO_WORD ((size_t)-1)
ST_INLINE size_t ascii_word_start(const uint8_t *s, size_t end, size_t i) {
    uint8_t b = s[i];
    if ((uint8_t)((b | 0x20) - 'a') < 26) return i;
    if (b == ' ') /* the common prefix, tested first */
        return i + 1 < end && (uint8_t)((s[i + 1] | 0x20) - 'a') < 26 ? i + 1 : NO_WORD;
    if (b >= 0x80 || (preds_of_class[st_ucd_bmp_class[b]] & (P_L | P_N)) || b == '\r' || b == '\n' ||
        i + 1 >= end || (uint8_t)((s[i + 1] | 0x20) - 'a') >= 26)
        return NO_WORD;
    return i + 1;
}

/* o200k's [A-Z]*[a-z]* from w, where s[w] is an ASCII letter, when an ASCII byte or the end of
 * the text follows it: its end; else 0. One word of eight bytes answers for words up to seven
 * letters; longer ones take the runs a word at a time. */
ST_INLINE size_t o200k_ascii_word(const uint8_t *s, size_t end, size_t w) {
    size_t e;
    if (end - w >= 8) {
        uint64_t x = load8(s + w);
        uint64_t not_up = ~bytes_in(x, 'A', 'Z') & ST_BYTES(0x80);
        if (not_up) {
            size_t u = first_byte(not_up);
            uint64_t not_lo = ~bytes_in(x, 'a', 'z') & ST_BYTES(0x80) & (~0ull << (8 * u));
            if (not_lo) {
                size_t k = first_byte(not_lo);
                return (x >> (8 * k)) & 0x80 ? 0 : w + k;
            }
        }
        e = ascii_run(s, end, ascii_run(s, end, w, RUN_UPPER), RUN_LOWER);
    } else {
        e = ascii_run(s, end, ascii_run(s, end, w, RUN_UPPER), RUN_LOWER);
    }
    return ascii_stop(s, end, e) ? e : 0;
}

/* cl100k's and gpt2's [A-Za-z]+ from w, where s[w] is an ASCII letter, when an ASCII byte or
 * the end of the text follows it: its end; else 0. */
ST_INLINE size_t ascii_letters(const uint8_t *s, size_t end, size_t w) {
    if (end - w >= 8) {
        uint64_t x = load8(s + w);
        uint64_t out = ~run_mask(x, RUN_LETTER) & ST_BYTES(0x80);
        if (out) {
            size_t k = first_byte(out);
            return (x >> (8 * k)) & 0x80 ? 0 : w + k;
        }
    }
    size_t e = ascii_run(s, end, w, RUN_LETTER);
    return ascii_stop(s, end, e) ? e : 0;
}

/* ---- gpt2 (r50k_base, p50k_base) ---------------------------------------------------------
 * '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s          */
ST_INLINE size_t piece_gpt2(const uint8_t *s, size_t end, size_t i) {
    /* ` ?\p{L}++` for an ASCII word (an apostrophe first may be a contraction: the walk) */
    size_t w = i + (s[i] == ' '), e;
    if (w < end && (uint8_t)((s[w] | 0x20) - 'a') < 26 && (e = ascii_letters(s, end, w))) return e;
    ch c = char_at(s, end, i);
    if (c.cp == '\'') {
        size_t e = contraction(s, end, i, 0);
        if (e) return e;
    }
    /* ` ?X++` for X in L, N, O: an optional space, then a run. Possessive, so nothing to
     * backtrack into; a space followed by no X falls through to the whitespace branches. */
    size_t k = i;
    ch x = c;
    if (c.cp == ' ') {
        x = char_at(s, end, i + 1);
        k = i + 1;
        if (!(x.preds & (P_L | P_N | P_O))) { x = c; k = i; }
    }
    if (x.preds & P_L) return run_of(s, end, k + x.len, P_L);
    if (x.preds & P_N) return run_of(s, end, k + x.len, P_N);
    if (x.preds & P_O) return run_of(s, end, k + x.len, P_O);
    /* \s++$ | \s+(?!\S) | \s */
    ws_run r = scan_ws(s, end, i);
    return ws_tail(&r, i, end);
}

/* ---- cl100k ------------------------------------------------------------------------------
 * '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|
 * \s++$|\s*[\r\n]|\s+(?!\S)|\s                                                              */
ST_INLINE size_t piece_cl100k(const uint8_t *s, size_t end, size_t i) {
    /* [^\r\n\p{L}\p{N}]?+\p{L}++ for an ASCII word, at a letter or after a space (the common
     * prefix; other prefixes take the walk, which a gate on every one of them made slower on
     * source code). */
    size_t w = i + (s[i] == ' '), e;
    if (w < end && (uint8_t)((s[w] | 0x20) - 'a') < 26 && (e = ascii_letters(s, end, w))) return e;
    ch c = char_at(s, end, i);
    if (c.cp == '\'') {
        size_t e = contraction(s, end, i, 1);
        if (e) return e;
    }
    /* [^\r\n\p{L}\p{N}]?+\p{L}++ : the prefix is possessive, so if it is taken and no letter
     * follows, the alternative fails (and without the prefix c itself is no letter). */
    if ((c.preds & P_PRE) && !is_crlf(c.cp)) {
        ch n = char_at(s, end, i + c.len);
        if (n.preds & P_L) return run_of(s, end, i + c.len + n.len, P_L);
    } else if (c.preds & P_L) {
        return run_of(s, end, i + c.len, P_L);
    }
    /* \p{N}{1,3}+ */
    if (c.preds & P_N) return digits_1_3(s, end, i + c.len);
    /*  ?[^\s\p{L}\p{N}]++[\r\n]*+ */
    if (c.cp == ' ') {
        ch n = char_at(s, end, i + 1);
        if (n.preds & P_O) return run_crlf(s, end, run_of(s, end, i + 1 + n.len, P_O), 0);
    }
    if (c.preds & P_O) return run_crlf(s, end, run_of(s, end, i + c.len, P_O), 0);
    /* \s++$ | \s*[\r\n] (greedy \s* backs off to the last CR/LF of the run) | \s+(?!\S) | \s */
    ws_run r = scan_ws(s, end, i);
    if (r.j == end) return end;
    if (r.crlf_end) return r.crlf_end;
    return ws_tail(&r, i, end);
}

/* ---- o200k ---------------------------------------------------------------------------------
 * [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|...)?|
 * [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|...)?|
 * \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}]; nothing is possessive. */

/* U*W+ from k. U* grabs the maximal U run [k, a). If the character at a is in W (it is then
 * Ll, as it is not in U), W+ takes the maximal W run from a. Otherwise U* backs off to the
 * last W character t inside [k, a) (the characters after it are Lu/Lt, not in W), and W+
 * ends just after t. No W anywhere: fail (0). */
static size_t o200k_upper_lower(const uint8_t *s, size_t end, size_t k) {
    size_t a = k, last_w_end = 0;
    /* ASCII fast path (most of Latin-script text): A-Z are U and not W, a-z are W and not U, so
     * the U run over A-Z sets no last_w_end, and an a-z after it starts the W+ run. Anything else
     * continues in the general loop below exactly where this stopped. */
    while (a < end && (uint8_t)(s[a] - 'A') < 26) { ST_COUNT(1); a++; }
    if (a < end && (uint8_t)(s[a] - 'a') < 26) {
        do { ST_COUNT(1); a++; } while (a < end && (uint8_t)(s[a] - 'a') < 26);
        return run_of(s, end, a, P_W); /* the W run goes on past non-ASCII lower-case letters */
    }
    for (;;) {
        ch c = char_at(s, end, a);
        if (!(c.preds & P_U)) {
            if (c.preds & P_W) return run_of(s, end, a + c.len, P_W);
            return last_w_end;
        }
        a += c.len;
        if (c.preds & P_W) last_w_end = a;
    }
}

/* U+W* from k: the maximal U run then the maximal W run; fail (0) if no U at k. */
static size_t o200k_upper_then_lower(const uint8_t *s, size_t end, size_t k) {
    ch c = char_at(s, end, k);
    if (!(c.preds & P_U)) return 0;
    size_t a = run_of(s, end, k + c.len, P_U);
    return run_of(s, end, a, P_W);
}

ST_INLINE size_t with_contraction(const uint8_t *s, size_t end, size_t e) {
    size_t c = contraction(s, end, e, 1);
    return c ? c : e;
}

ST_INLINE size_t piece_o200k(const uint8_t *s, size_t end, size_t i) {
    /* An ASCII word: [A-Z]*[a-z]* after the optional prefix, not empty, and an ASCII byte (or
     * the end) after it. The four word alternatives below then all end there: U*W+ takes the
     * two runs when the lower one is not empty; else it fails (the upper run is followed by no
     * W, and no W lies inside it) and U+W* takes the upper run; the prefix is taken by the first
     * alternative that succeeds with it, and one that succeeds without it only follows one
     * that failed with it. An ASCII byte ends both runs (it is neither U nor W unless a letter,
     * and the runs are maximal). */
    size_t w = ascii_word_start(s, end, i), e;
    if (w != NO_WORD && (e = o200k_ascii_word(s, end, w))) return with_contraction(s, end, e);
    /* ` ?[^\s\p{L}\p{N}]+[\r\n/]*` for ASCII punctuation (an optional space first) followed by
     * an ASCII byte that is no letter, or by the end: no word alternative can match there (a
     * word needs a letter or mark at i, or after the one-character prefix) and no digit starts
     * the piece. */
    size_t o = i + (s[i] == ' ');
    if (o < end && s[o] < 0x80 && (preds_of_class[st_ucd_bmp_class[s[o]]] & P_O) &&
        (o + 1 == end || (s[o + 1] < 0x80 && (uint8_t)((s[o + 1] | 0x20) - 'a') >= 26)))
        return run_crlf(s, end, run_of(s, end, o + 1, P_O), 1);
    ch c = char_at(s, end, i);
    /* The two word alternatives, each tried with the optional prefix and then without it
     * (a mark can be both the prefix and the start of a word, so "without" can succeed
     * where "with" failed). Order: alt1+prefix, alt1, alt2+prefix, alt2. */
    int pre = (c.preds & P_PRE) && !is_crlf(c.cp);
    if (pre && (e = o200k_upper_lower(s, end, i + c.len))) return with_contraction(s, end, e);
    if ((e = o200k_upper_lower(s, end, i))) return with_contraction(s, end, e);
    if (pre && (e = o200k_upper_then_lower(s, end, i + c.len))) return with_contraction(s, end, e);
    if ((e = o200k_upper_then_lower(s, end, i))) return with_contraction(s, end, e);
    /* \p{N}{1,3} */
    if (c.preds & P_N) return digits_1_3(s, end, i + c.len);
    /*  ?[^\s\p{L}\p{N}]+[\r\n/]* */
    if (c.cp == ' ') {
        ch n = char_at(s, end, i + 1);
        if (n.preds & P_O) return run_crlf(s, end, run_of(s, end, i + 1 + n.len, P_O), 1);
    }
    if (c.preds & P_O) return run_crlf(s, end, run_of(s, end, i + c.len, P_O), 1);
    /* \s*[\r\n]+ (ends after the last CR/LF of the run) | \s+(?!\S) | \s+ */
    ws_run r = scan_ws(s, end, i);
    if (r.crlf_end) return r.crlf_end;
    return ws_tail(&r, i, end);
}

/* ---- script-specific variant (Faster Superword paper, Appendix A) --------------------------
 *  ?\p{L}\p{M}*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+              */
static size_t scan_single_letter(const uint8_t *s, size_t end, size_t i) {
    ch c = char_at(s, end, i);
    if (c.cp == ' ') {
        ch n = char_at(s, end, i + 1);
        if (n.preds & P_L) return run_of(s, end, i + 1 + n.len, P_M);
        if (n.preds & P_O) return run_crlf(s, end, run_of(s, end, i + 1 + n.len, P_O), 1);
    }
    if (c.preds & P_L) return run_of(s, end, i + c.len, P_M);
    if (c.preds & P_N) return digits_1_3(s, end, i + c.len);
    if (c.preds & P_O) return run_crlf(s, end, run_of(s, end, i + c.len, P_O), 1);
    ws_run r = scan_ws(s, end, i);
    if (r.crlf_end) return r.crlf_end;
    return ws_tail(&r, i, end);
}

/* ---- superbpe (SuperBPE's Stage 2: github.com/PythonNut/superbpe, extend_tokenizer.sh) -----
 * \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)   split "isolated" (HuggingFace
 * tokenizers' Split behaviour): the matches, found left to right as find_iter finds them, are
 * pieces, and so is each nonempty stretch of text between two of them. A piece starting at i
 * is the match at i if one starts there, else the stretch up to the next position where one
 * starts (or the end). No match is empty, so every piece is at least one character. */

/* The match at i (its end), or 0 when none starts at i. The alternatives in order:
 * - \p{N}{1,3}: up to three digits.
 * -  ?[^\s\p{L}\p{N}]{2,}[\r\n/]*: with the space first (? is greedy), then without it (the
 *   run would then start at the space, which is \s: no match). {2,} takes the maximal O run
 *   (an O run is at least two characters or the branch fails; [\r\n/]* may match nothing, so
 *   nothing backtracks into the run), then the run of CR, LF and '/' after it.
 * -  +(?!\S): the maximal run of spaces to j; (?!\S) holds at j when the text (or chunk) ends
 *   there or \s follows; else + backs off one space (the space at j - 1 is \s, so the lookahead
 *   holds before it) when that leaves at least one. */
ST_INLINE size_t superbpe_match(const uint8_t *s, size_t end, size_t i) {
    ch c = char_at(s, end, i);
    if (c.preds & P_N) return digits_1_3(s, end, i + c.len);
    size_t k = i;
    ch x = c;
    if (c.cp == ' ') { k = i + 1; x = char_at(s, end, k); }
    if (x.preds & P_O) {
        ch y = char_at(s, end, k + x.len);
        if (y.preds & P_O) return run_crlf(s, end, run_of(s, end, k + x.len + y.len, P_O), 1);
    }
    if (c.cp == ' ') {
        size_t j = i + 1;
        while (j < end && s[j] == ' ') { ST_COUNT(1); j++; }
        if (j == end || (char_at(s, end, j).preds & P_WS)) return j;
        if (j - i >= 2) return j - 1;
    }
    return 0;
}

/* Whether a match starts at i (i < end), from at most three characters (no run is walked): a
 * digit; two O characters, after an optional space; a space followed by another space (the run
 * then backs off to leave its last one), by other \s or by the end. */
ST_INLINE int superbpe_starts(const uint8_t *s, size_t end, size_t i) {
    ch c = char_at(s, end, i);
    if (c.preds & P_N) return 1;
    if (c.preds & P_O) return (char_at(s, end, i + c.len).preds & P_O) != 0;
    if (c.cp != ' ') return 0; /* a letter, or \s other than the space */
    ch n = char_at(s, end, i + 1);
    if (!n.len || (n.preds & P_WS)) return 1;
    return (n.preds & P_O) && (char_at(s, end, i + 1 + n.len).preds & P_O);
}

ST_INLINE size_t piece_superbpe(const uint8_t *s, size_t end, size_t i) {
    size_t e = superbpe_match(s, end, i);
    if (e) return e;
    /* The stretch to the next match: each position is tested once (a test reads at most three
     * characters), and ASCII letters, which start no match, are skipped eight bytes at a time. */
    size_t k = i + char_at(s, end, i).len;
    while (k < end) {
        uint8_t b = s[k];
        if ((uint8_t)((b | 0x20) - 'a') < 26) {
            k = ascii_run(s, end, k + 1, RUN_LETTER);
            continue;
        }
        if (superbpe_starts(s, end, k)) return k;
        k += b < 0x80 ? 1 : char_at(s, end, k).len;
    }
    return end;
}

/* ---- llama3 and qwen2 (HuggingFace tokenizers' Split, "isolated") -------------------------
 * llama3: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|
 *         \s*[\r\n]+|\s+(?!\S)|\s+
 * qwen2:  the same with \p{N} for \p{N}{1,3}.
 * Every character starts a match (a letter, a digit, [^\s\p{L}\p{N}] or \s), so the text between
 * matches is always empty and the pieces are the matches, as regex.findall gives them. Nothing
 * is possessive, but no alternative backtracks to a different end: the optional prefix taken with
 * no letter after it leaves a character that is no letter; the O run is maximal and [\r\n]* after
 * it may be empty; the whitespace alternatives are o200k's. */
ST_INLINE size_t piece_hf_words(const uint8_t *s, size_t end, size_t i, int three_digits) {
    /* [^\r\n\p{L}\p{N}]?\p{L}+ for an ASCII word at i or after a space (as cl100k) */
    size_t w = i + (s[i] == ' '), e;
    if (w < end && (uint8_t)((s[w] | 0x20) - 'a') < 26 && (e = ascii_letters(s, end, w))) return e;
    ch c = char_at(s, end, i);
    if (c.cp == '\'' && (e = contraction(s, end, i, 1))) return e;
    if ((c.preds & P_PRE) && !is_crlf(c.cp)) {
        ch n = char_at(s, end, i + c.len);
        if (n.preds & P_L) return run_of(s, end, i + c.len + n.len, P_L);
    } else if (c.preds & P_L) {
        return run_of(s, end, i + c.len, P_L);
    }
    /* \p{N}{1,3} (llama3) or \p{N} (qwen2) */
    if (c.preds & P_N) return three_digits ? digits_1_3(s, end, i + c.len) : i + c.len;
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    if (c.cp == ' ') {
        ch n = char_at(s, end, i + 1);
        if (n.preds & P_O) return run_crlf(s, end, run_of(s, end, i + 1 + n.len, P_O), 0);
    }
    if (c.preds & P_O) return run_crlf(s, end, run_of(s, end, i + c.len, P_O), 0);
    /* \s*[\r\n]+ (ends after the last CR/LF of the run) | \s+(?!\S) | \s+ */
    ws_run r = scan_ws(s, end, i);
    if (r.crlf_end) return r.crlf_end;
    return ws_tail(&r, i, end);
}

ST_INLINE size_t piece_llama3(const uint8_t *s, size_t end, size_t i) { return piece_hf_words(s, end, i, 1); }
ST_INLINE size_t piece_qwen2(const uint8_t *s, size_t end, size_t i) { return piece_hf_words(s, end, i, 0); }

/* ---- o200k, cl100k, llama3 and qwen2 over ASCII, 64 bytes at a time -------------------------
 * Most of English, code and other Latin-script text is ASCII, and there these patterns' pieces
 * follow from a few byte classes: one bit a byte per class (A-Z, a-z, digits, \s, CR/LF, space,
 * apostrophe, '/') over a block of up to 64 bytes gives every piece start of the block with
 * whole-word operations, and the loop over pieces becomes a bit scan (the one-piece scanners'
 * per-piece branches were a quarter of encoding English). The rules, for ASCII text (U = A-Z,
 * W = a-z, O = any other byte that is no digit or \s; positions are bits, bit 0 the block's first
 * byte, which is a piece start; the patterns have no look-behind, so the pieces from there are
 * those of the text from there):
 * - letters: a run of letters is one word; o200k cuts it before each upper-case letter that
 *   follows a lower-case one (U*W+ then U+W*). The run's first piece starts one byte early when
 *   the byte before is a prefix ([^\r\n\p{L}\p{N}]) that starts a piece of its own: \s other than
 *   CR/LF, or an O alone between no O and no space (a space before it would take it: ` ?O+`);
 * - digits: a run is cut every three from its start (\p{N}{1,3}), qwen2 at every digit (\p{N});
 * - O: a run starts a piece, one byte early after a space; CR and LF right after it join it
 *   ([\r\n]*; o200k's [\r\n/]* takes '/' too), and those bytes are no longer \s for the rules
 *   below;
 * - \s: a run (what CR/LF an O run took aside) starts a piece; so does the byte after its last
 *   CR/LF (\s*[\r\n]+ ends there), and, when two or more bytes follow that CR/LF (or the run
 *   has none) and the text goes on, its last byte (\s+(?!\S) leaves it to the next piece);
 *   cl100k takes a run that ends the text whole (\s++$ comes first);
 * - a contraction ('s, 't, 're, 've, 'm, 'll, 'd in any case): o200k's is the end of the word it
 *   follows; the others' is a piece of its own where an apostrophe starts a piece (their first
 *   alternative). contraction(), the scalar rule, decides each apostrophe.
 * A block ends at its first non-ASCII byte or at 64 bytes; what follows it is known when it is
 * an ASCII byte or the text's end, else unknown. Starts whose piece the rest of the text could
 * change are dropped (those inside a \s run that reaches an unknown next byte), the pieces up to
 * the last start kept are written, and the next block starts there: the same ends as the
 * pattern's one-piece scanner, which takes any place where no block gives an end (a run longer
 * than the block, non-ASCII text). core_c/tests/test_core.c compares both on random text, for
 * each pattern and classifier. */
typedef struct ascii_classes {
    uint64_t up, lo, dg, ws, nl, sp, ap, sl, hi;
} ascii_classes;

enum { AFTER_END, AFTER_NOT_WS, AFTER_WS_OR_UNKNOWN };

/* The classes of p[0..64), a byte at a time: the reference, and the kernel where no SIMD one is. */
static void classify_portable(const uint8_t *p, ascii_classes *c) {
    st__memset(c, 0, sizeof *c);
    for (unsigned k = 0; k < 64; k++) {
        uint8_t b = p[k];
        uint64_t bit = 1ull << k;
        if (b >= 0x80) { c->hi |= bit; continue; }
        if ((uint8_t)(b - 'A') < 26) c->up |= bit;
        if ((uint8_t)(b - 'a') < 26) c->lo |= bit;
        if ((uint8_t)(b - '0') < 10) c->dg |= bit;
        if ((uint8_t)(b - 9) < 5 || b == ' ') c->ws |= bit;
        if (b == '\n' || b == '\r') c->nl |= bit;
        if (b == ' ') c->sp |= bit;
        if (b == '\'') c->ap |= bit;
        if (b == '/') c->sl |= bit;
    }
}

#ifdef ST_SSE2
/* The same with SSE2, 16 bytes a step (signed compares: a byte >= 0x80 is negative, in no range). */
ST_INLINE uint64_t sse2_bits(__m128i m) { return (uint64_t)(uint32_t)_mm_movemask_epi8(m); }
ST_INLINE __m128i sse2_in(__m128i v, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))), _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1))));
}
static void classify_sse2(const uint8_t *p, ascii_classes *c) {
    *c = (ascii_classes){0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (unsigned k = 0; k < 64; k += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + k));
        __m128i sp = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
        __m128i nl = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')));
        c->hi |= sse2_bits(v) << k;
        c->up |= sse2_bits(sse2_in(v, 'A', 'Z')) << k;
        c->lo |= sse2_bits(sse2_in(v, 'a', 'z')) << k;
        c->dg |= sse2_bits(sse2_in(v, '0', '9')) << k;
        c->ws |= sse2_bits(_mm_or_si128(sse2_in(v, 9, 13), sp)) << k;
        c->nl |= sse2_bits(nl) << k;
        c->sp |= sse2_bits(sp) << k;
        c->ap |= sse2_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << k;
        c->sl |= sse2_bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('/'))) << k;
    }
}
#define classify_fast classify_sse2
#define BLOCKS_CLASSIFY classify_sse2
#else
/* a byte at a time the blocks cost more than they save (1.1-1.3x the time on English, German
 * and code): builds without a SIMD kernel keep the one-piece scanners alone */
#define classify_fast classify_portable
#define BLOCKS_CLASSIFY NULL
#endif

/* What sets the patterns apart inside a block. */
enum {
    WB_CASE_CUTS = 1,      /* o200k: a word is cut before an upper-case letter after a lower-case one */
    WB_WORD_CONTRACTION = 2, /* o200k: a contraction ends the word before it (else its own piece) */
    WB_SLASH = 4,          /* o200k: '/' joins the CR/LF after an O run */
    WB_DIGIT_EACH = 8,     /* qwen2: \p{N}, a piece a digit (else \p{N}{1,3}) */
    WB_END_WS_WHOLE = 16   /* cl100k: \s++$, a run that ends the text is one piece */
};

/* The ends of the pieces of the block s[i..i+len) (ASCII, classes c; after: what follows it) under
 * the pattern's rules (WB_* flags), up to cap of them, in ends; their number (0: the block gives
 * no end it can vouch for). */
ST_INLINE size_t words_block(const uint8_t *s, size_t end, size_t i, const ascii_classes *c, unsigned len, int after,
                             unsigned flags, size_t *ends, size_t cap) {
    uint64_t valid = len >= 64 ? ~0ull : (1ull << len) - 1;
    uint64_t up = c->up & valid, lo = c->lo & valid, dg = c->dg & valid, ws = c->ws & valid, nl = c->nl & valid;
    uint64_t sp = c->sp & valid, le = up | lo, o = valid & ~(le | dg | ws);
    uint64_t t = nl | ((flags & WB_SLASH) ? c->sl & valid : 0);
    /* the CR/LF (and '/') runs O runs take: from each CR or LF right after an O byte */
    uint64_t taken = 0;
    for (uint64_t from = nl & (o << 1); from;) {
        unsigned k = st__lowest_bit(from);
        uint64_t rest = ~t >> k;
        unsigned n = rest ? st__lowest_bit(rest) : 64 - k;
        uint64_t run = (n >= 64 ? ~0ull : (1ull << n) - 1) << k;
        taken |= run;
        from &= ~run;
    }
    uint64_t op = o & ~taken, wsp = ws & ~taken;
    /* letters: run starts, case cuts, and the prefix a run's first piece takes */
    uint64_t run_start = le & ~(le << 1);
    uint64_t lone_o = op & ~(op << 1) & ~(sp << 1);
    uint64_t prefixed = run_start & (((wsp & ~nl) | lone_o) << 1);
    uint64_t starts = (run_start & ~prefixed) | (prefixed >> 1);
    if (flags & WB_CASE_CUTS) starts |= up & (lo << 1);
    /* digits: every third from a run's start, or every one */
    uint64_t digits = dg;
    if (!(flags & WB_DIGIT_EACH)) {
        uint64_t four = dg & (dg << 1) & (dg << 2) & (dg << 3);
        digits = dg & ~(dg << 1);
        for (uint64_t g = digits; (g = (g << 3) & four) != 0;) digits |= g;
    }
    /* O runs, a space before one taking it */
    uint64_t o_start = op & ~(op << 1), spaced = o_start & (sp << 1);
    starts |= digits | (o_start & ~spaced) | (spaced >> 1);
    /* \s runs: `crlf` marks each byte at or before a CR/LF of its run (a suffix OR within the
     * runs, doubling its reach each step); the rest of a run follows its last CR/LF */
    uint64_t crlf = wsp & nl, reach = wsp;
    crlf |= reach & (crlf >> 1); reach &= reach >> 1;
    crlf |= reach & (crlf >> 2); reach &= reach >> 2;
    crlf |= reach & (crlf >> 4); reach &= reach >> 4;
    crlf |= reach & (crlf >> 8); reach &= reach >> 8;
    crlf |= reach & (crlf >> 16); reach &= reach >> 16;
    crlf |= reach & (crlf >> 32);
    uint64_t rest = wsp & ~crlf, ws_start = wsp & ~(wsp << 1);
    uint64_t ws_next = (wsp >> 1) | (after != AFTER_NOT_WS ? 1ull << (len - 1) : 0);
    starts |= ws_start | (rest & (crlf << 1)) | (rest & (rest << 1) & ~ws_next);
    /* contractions */
    if (flags & WB_WORD_CONTRACTION) {
        /* each apostrophe after a letter that is no contraction's own */
        unsigned last = 0;
        for (uint64_t a = c->ap & valid & (le << 1); a; a &= a - 1) {
            unsigned k = st__lowest_bit(a);
            if (k == last) continue; /* the letter before is the previous contraction's */
            size_t e = contraction(s, end, i + k, 1);
            if (!e) continue;
            size_t stop = e - i;
            starts &= stop >= 64 ? (1ull << k) - 1 : ~(((1ull << stop) - 1) & ~((1ull << k) - 1));
            if (stop < len) starts |= 1ull << stop;
            last = stop < 64 ? (unsigned)stop : 64;
        }
    } else {
        /* each apostrophe that starts a piece (its O run's first byte, no space before) */
        for (uint64_t a = c->ap & valid & o_start & ~spaced; a; a &= a - 1) {
            unsigned k = st__lowest_bit(a);
            size_t e = contraction(s, end, i + k, 1);
            if (!e) continue;
            size_t stop = e - i;
            starts &= stop >= 64 ? (2ull << k) - 1 : ~(((1ull << stop) - 1) & ~((2ull << k) - 1));
            if (stop < len) starts |= 1ull << stop;
        }
    }
    /* a \s run that may go on past the block (or, for cl100k, ends the text): only its start is
     * sure (is its piece) */
    if ((after == AFTER_WS_OR_UNKNOWN || (after == AFTER_END && (flags & WB_END_WS_WHOLE))) &&
        ((wsp >> (len - 1)) & 1)) {
        unsigned a = st__highest_bit(ws_start);
        starts &= a >= 63 ? ~0ull : (2ull << a) - 1;
    }
    size_t n = 0;
    uint64_t x = starts & valid & ~1ull;
    for (; x && n < cap; x &= x - 1) ends[n++] = i + st__lowest_bit(x);
    if (!x && after == AFTER_END && n < cap) ends[n++] = i + len; /* the last piece ends with the text */
    return n;
}

/* The block at i (up to 64 ASCII bytes, fewer at a non-ASCII byte or the text's end) through
 * `classify`; the number of ends written, 0 when it gives none (the caller then takes one piece
 * with the one-piece scanner). A block is tried only where the next WB_MIN bytes are ASCII (two
 * word loads tell): in non-ASCII text a piece at a time is cheaper. */
#define WB_MIN 16
ST_INLINE size_t words_block_at(const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap, unsigned flags,
                                void (*classify)(const uint8_t *, ascii_classes *)) {
    ascii_classes c;
    size_t left = end - i;
    if (left < WB_MIN || ((load8(s + i) | load8(s + i + 8)) & ST_BYTES(0x80))) return 0;
    unsigned len;
    int after;
    if (left > 64) {
        classify(s + i, &c);
        len = c.hi ? st__lowest_bit(c.hi) : 64;
        after = len < 64 || s[i + 64] >= 0x80                       ? AFTER_WS_OR_UNKNOWN
              : (uint8_t)(s[i + 64] - 9) < 5 || s[i + 64] == ' ' ? AFTER_WS_OR_UNKNOWN
                                                                    : AFTER_NOT_WS;
    } else {
        uint8_t pad[64];
        st__memcpy(pad, s + i, left);
        st__memset(pad + left, 0, 64 - left);
        classify(pad, &c);
        len = c.hi ? st__lowest_bit(c.hi) : (unsigned)left;
        after = len == left ? AFTER_END : AFTER_WS_OR_UNKNOWN;
    }
    return words_block(s, end, i, &c, len, after, flags, ends, cap);
}

#define WB_O200K (WB_CASE_CUTS | WB_WORD_CONTRACTION | WB_SLASH)
#define WB_CL100K WB_END_WS_WHOLE
#define WB_LLAMA3 0
#define WB_QWEN2 WB_DIGIT_EACH

/* A pattern's batch scanner: blocks where the text is ASCII (with a classifier), the one-piece
 * scanner elsewhere. */
#define WORDS_FILL(name, FLAGS)                                                                    \
    ST_INLINE size_t fill_##name##_with(const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap, \
                                        void (*classify)(const uint8_t *, ascii_classes *)) {      \
        size_t n = 0;                                                                              \
        while (n < cap && i < end) {                                                               \
            size_t k = classify ? words_block_at(s, end, i, ends + n, cap - n, FLAGS, classify) : 0; \
            if (k) {                                                                               \
                n += k;                                                                            \
                i = ends[n - 1];                                                                   \
            } else {                                                                               \
                ends[n++] = i = piece_##name(s, end, i);                                           \
            }                                                                                      \
        }                                                                                          \
        return n;                                                                                  \
    }
WORDS_FILL(o200k, WB_O200K)
WORDS_FILL(cl100k, WB_CL100K)
WORDS_FILL(llama3, WB_LLAMA3)
WORDS_FILL(qwen2, WB_QWEN2)
#undef WORDS_FILL

size_t st__fill_blocks_kernel(int pattern, const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap,
                              int kernel) {
    void (*classify)(const uint8_t *, ascii_classes *) =
        kernel == ST_BLOCKS_PORTABLE ? classify_portable : kernel == ST_BLOCKS ? classify_fast : NULL;
    switch (pattern) {
    case ST_PATTERN_CL100K: return fill_cl100k_with(s, end, i, ends, cap, classify);
    case ST_PATTERN_LLAMA3: return fill_llama3_with(s, end, i, ends, cap, classify);
    case ST_PATTERN_QWEN2: return fill_qwen2_with(s, end, i, ends, cap, classify);
    default: return fill_o200k_with(s, end, i, ends, cap, classify);
    }
}

/* ---- deepseek_v3 (HuggingFace tokenizers' Sequence of three Splits, each "isolated") -------
 * (a) \p{N}{1,3}; (b) [\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+ on each piece of (a);
 * (c) on each piece of (b):
 *   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 *    ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 * (a) cuts the text into groups of 1-3 digits (from the start of each run of \p{N}) and the
 * stretches between; (b) cuts a stretch into runs of the CJK ranges and the stretches between.
 * So a piece lies inside one segment: a digit group, a CJK run, or a run of characters that are
 * neither (a digit or a CJK character ends it). No alternative of (c) matches a digit (\p{N} is
 * none of L, M, P, S, \s), so a digit group is one piece. Inside the other segments (c) is a
 * split like superbpe's: the match at i if one starts there, else the stretch to the next
 * position where one starts. The segment's end is never searched for: every character read is
 * tested for its segment (ds_at), and one of another segment reads as the end of the text, so
 * a piece costs its own length and a character or two after it. */
ST_INLINE int cjk_cp(uint32_t cp) { return (cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x3040 && cp <= 0x30FF); }

enum { DS_DIGITS, DS_CJK, DS_OTHER };

ST_INLINE int ds_segment(const ch *c) { return (c->preds & P_N) ? DS_DIGITS : cjk_cp(c->cp) ? DS_CJK : DS_OTHER; }

/* The character at k, or none (len 0, no predicate) at the end or past the segment seg. */
ST_INLINE ch ds_at(const uint8_t *s, size_t end, size_t k, int seg) {
    ch c = char_at(s, end, k);
    if (c.len && ds_segment(&c) != seg) { c.cp = 0; c.len = 0; c.preds = 0; }
    return c;
}

/* End of the run of characters of segment seg having any of mask, from k. */
ST_INLINE size_t ds_run(const uint8_t *s, size_t end, size_t k, uint32_t mask, int seg) {
    for (;;) {
        ch c = ds_at(s, end, k, seg);
        if (!(c.preds & mask)) return k;
        k += c.len;
    }
}

/* The match of (c) at i, whose character is c (of segment seg, not a digit), or 0. */
ST_INLINE size_t ds_match(const uint8_t *s, size_t end, size_t i, ch c, int seg) {
    size_t k = i + c.len;
    /* [ASCII punctuation][A-Za-z]+: the 32 ASCII characters of P or S, then ASCII letters
     * (ASCII letters are of c's segment) */
    if (c.cp < 0x80 && (c.preds & P_PS) && k < end && (uint8_t)((s[k] | 0x20) - 'a') < 26)
        return ascii_run(s, end, k + 1, RUN_LETTER);
    ch n = ds_at(s, end, k, seg);
    /* [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+: with the prefix when c may be one and L or M
     * follows (the run then is maximal); else without it, when c is L or M */
    if (!(c.preds & (P_L | P_PS)) && !is_crlf(c.cp) && (n.preds & (P_L | P_M)))
        return ds_run(s, end, k + n.len, P_L | P_M, seg);
    if (c.preds & (P_L | P_M)) return ds_run(s, end, k, P_L | P_M, seg);
    /*  ?[\p{P}\p{S}]+[\r\n]*: CR and LF are of the other segment, so a CJK run takes none */
    if ((c.cp == ' ' && (n.preds & P_PS)) || (c.preds & P_PS)) {
        size_t e = ds_run(s, end, c.cp == ' ' ? k + n.len : k, P_PS, seg);
        return seg == DS_OTHER ? run_crlf(s, end, e, 0) : e;
    }
    /* \s*[\r\n]+ | \s+(?!\S) | \s+: as o200k's, the segment's end read as the text's (\s is of
     * the other segment, so the run stops at a digit or CJK character, which ends the segment) */
    if (c.preds & P_WS) {
        ws_run r = scan_ws(s, end, i);
        if (r.crlf_end) return r.crlf_end;
        return ws_tail(&r, i, ds_at(s, end, r.j, seg).len ? end : r.j);
    }
    return 0;
}

/* Whether a match of (c) starts at k, whose character x is of segment seg: at L, M, P, S and
 * \s always (the ASCII punctuation of the first alternative is P or S); at any other character
 * (which may be the prefix: CR and LF are \s) when L or M follows. */
ST_INLINE int ds_starts(const uint8_t *s, size_t end, size_t k, ch x, int seg) {
    if (x.preds & (P_L | P_M | P_PS | P_WS)) return 1;
    return (ds_at(s, end, k + x.len, seg).preds & (P_L | P_M)) != 0;
}

ST_INLINE size_t piece_deepseek_v3(const uint8_t *s, size_t end, size_t i) {
    /* [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+ for an ASCII word at i or after a space, an ASCII
     * byte or the end after it (ASCII has no M; a space is no P or S) */
    size_t w = i + (s[i] == ' '), e;
    if (w < end && (uint8_t)((s[w] | 0x20) - 'a') < 26 && (e = ascii_letters(s, end, w))) return e;
    ch c = char_at(s, end, i);
    int seg = ds_segment(&c);
    if (seg == DS_DIGITS) return digits_1_3(s, end, i + c.len); /* (a)'s group, whole */
    if ((e = ds_match(s, end, i, c, seg))) return e;
    /* the text up to the next match or the segment's end: each position tested once, from at
     * most two characters */
    size_t k = i + c.len;
    for (;;) {
        ch x = ds_at(s, end, k, seg);
        if (!x.len || ds_starts(s, end, k, x, seg)) return k;
        k += x.len;
    }
}

/* Each pattern's scanner as a function (for the iterator's pointer), and its loop writing
 * piece ends in batches with the scanner inlined: the encoder's loop over the pieces of a
 * text spent about 40 instructions a piece on the calls (an indirect call per piece, the
 * scanner's prologue and epilogue), a sixth of all it did on English. */
#define SCANNER(name)                                                                              \
    static size_t scan_##name(const uint8_t *s, size_t end, size_t i) { return piece_##name(s, end, i); } \
    static size_t fill_##name(const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap) {      \
        size_t n = 0;                                                                              \
        while (n < cap && i < end) ends[n++] = i = piece_##name(s, end, i);                        \
        return n;                                                                                  \
    }
/* the patterns with ASCII blocks: their one-piece scanners, and batch scanners with blocks */
#define BLOCK_SCANNER(name)                                                                        \
    static size_t scan_##name(const uint8_t *s, size_t end, size_t i) { return piece_##name(s, end, i); } \
    static size_t fill_##name(const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap) {      \
        return fill_##name##_with(s, end, i, ends, cap, BLOCKS_CLASSIFY);                          \
    }
SCANNER(gpt2)
BLOCK_SCANNER(cl100k)
BLOCK_SCANNER(o200k)
SCANNER(superbpe)
BLOCK_SCANNER(llama3)
BLOCK_SCANNER(qwen2)
SCANNER(deepseek_v3)
#undef BLOCK_SCANNER
#undef SCANNER

typedef st__scan_fn scan_fn;

/* ---- the handle --------------------------------------------------------------------------- */

static const char *const default_scripts = "Han,Hiragana,Katakana,Thai,Myanmar,Khmer,Lao";

/* A script name as the caller wrote it, quoted: its own characters when it is short, valid UTF-8
 * with no control character, quote or backslash (so "Xé" reads as "Xé"); else escaped. */
static void append_name(st_error *err, const uint8_t *p, size_t len) {
    int plain = len <= 64 && st_utf8_validate((const char *)p, len, NULL) == ST_OK;
    for (size_t k = 0; plain && k < len; k++)
        if (p[k] < 0x20 || p[k] == 0x7F || p[k] == '"' || p[k] == '\\') plain = 0;
    if (!plain) {
        st__error_append_quoted(err, p, len);
        return;
    }
    st__error_append_bytes(err, "\"", 1);
    st__error_append_bytes(err, (const char *)p, len);
    st__error_append_bytes(err, "\"", 1);
}

static st_status parse_scripts(st_pretokenizer *pt, const char *list, size_t len, st_error *err) {
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && list[j] != ',') j++;
        size_t a = i, b = j; /* trim spaces around the name */
        while (a < b && list[a] == ' ') a++;
        while (b > a && list[b - 1] == ' ') b--;
        if (b > a) {
            int id = st_script_from_name(list + a, b - a);
            if (id < 0) {
                st__error_set(err, ST_ERR_UNKNOWN_SCRIPT, ST_UNIT_BYTE, a, "unknown script ");
                st__error_kind(err, ST_KIND_NONE, (uint32_t)(b - a));
                append_name(err, (const uint8_t *)list + a, b - a);
                return ST_ERR_UNKNOWN_SCRIPT;
            }
            pt->single_letter_scripts[id >> 5] |= 1u << (id & 31);
        }
        i = j + 1;
    }
    return ST_OK;
}

static size_t cstr_len(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

/* ---- tiktoken's pat_str strings --------------------------------------------------------------
 * Copied from tiktoken 0.14's pat_str values, as stored in py/supertok/vocab/<name>.json
 * (r50k_base and p50k_base share one). Each scanner implements exactly one of them; the core
 * has no regex engine, so any other string is refused rather than split some other way. */
static const struct { const char *regex; int pattern; } known_patterns[] = {
    /* r50k_base, p50k_base */
    {"'(?:[sdmt]|ll|ve|re)| ?\\p{L}++| ?\\p{N}++| ?[^\\s\\p{L}\\p{N}]++|\\s++$|\\s+(?!\\S)|\\s",
     ST_PATTERN_GPT2},
    /* cl100k_base */
    {"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s",
     ST_PATTERN_CL100K},
    /* o200k_base */
    {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     ST_PATTERN_O200K},
    /* SuperBPE's Stage 2 (split "isolated": the text between matches is a piece too) */
    {"\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]{2,}[\\r\\n/]*| +(?!\\S)", ST_PATTERN_SUPERBPE},
    /* Llama 3's and Qwen 2's (HuggingFace's Split, isolated; the regexes match every character) */
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     ST_PATTERN_LLAMA3},
    {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
     ST_PATTERN_QWEN2},
    /* DeepSeek V3's: three Splits in sequence, named by the last one's regex (as its tokenizer.json
     * holds it: CR and LF are the characters themselves inside its classes); the two before it,
     * \p{N}{1,3} and the CJK ranges, are fixed (the tokenizer.json export writes all three). */
    {"[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
     ST_PATTERN_DEEPSEEK_V3},
};

st_status st_pattern_from_regex(const char *pat, size_t len, int *pattern, st_error *err) {
    st__error_clear(err);
    if ((!pat && len) || !pattern) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    for (size_t k = 0; k < sizeof known_patterns / sizeof known_patterns[0]; k++) {
        const char *r = known_patterns[k].regex;
        size_t n = cstr_len(r);
        if (n == len && (len == 0 || st__memcmp(r, pat, len) == 0)) {
            *pattern = known_patterns[k].pattern;
            return ST_OK;
        }
    }
    return st__error_set(err, ST_ERR_UNSUPPORTED_PATTERN, ST_UNIT_NONE, 0,
                         "not one of tiktoken's r50k/p50k, cl100k or o200k patterns, SuperBPE's Stage-2 pattern or Llama 3's, Qwen 2's or DeepSeek V3's");
}

const char *st__pattern_regex(int pattern) {
    for (size_t k = 0; k < sizeof known_patterns / sizeof known_patterns[0]; k++)
        if (known_patterns[k].pattern == pattern) return known_patterns[k].regex;
    return NULL;
}

st_status st__pretokenizer_init(struct st_pretokenizer *pt, int pattern, uint32_t flags, const char *scripts,
                                size_t scripts_len, st_error *err) {
    if (pattern < ST_PATTERN_GPT2 || pattern > ST_PATTERN_DEEPSEEK_V3) {
        st__error_set(err, ST_ERR_UNKNOWN_PATTERN, ST_UNIT_NONE, 0, "pattern ");
        st__error_append_u64(err, (uint32_t)pattern);
        return ST_ERR_UNKNOWN_PATTERN;
    }
    if (flags & ~ST_PRETOK_SCRIPT_AWARE) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags");
    pt->pattern = pattern;
    pt->flags = flags;
    st__memset(pt->single_letter_scripts, 0, sizeof pt->single_letter_scripts);
    return scripts ? parse_scripts(pt, scripts, scripts_len, err)
                   : parse_scripts(pt, default_scripts, cstr_len(default_scripts), err);
}

st_status st_pretokenizer_new(int pattern, uint32_t flags, const char *scripts, size_t scripts_len,
                              const st_allocator *alloc, st_pretokenizer **out, st_error *err) {
    st__error_clear(err);
    if (!out) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_pretokenizer *pt = (st_pretokenizer *)st__alloc(&a, sizeof *pt);
    if (!pt) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(pt, 0, sizeof *pt);
    pt->alloc = a;
    st_status st = st__pretokenizer_init(pt, pattern, flags, scripts, scripts_len, err);
    if (st != ST_OK) {
        st__free(&a, pt, sizeof *pt);
        return st;
    }
    *out = pt;
    return ST_OK;
}

void st_pretokenizer_free(st_pretokenizer *pt) {
    if (!pt) return;
    st_allocator a = pt->alloc;
    st__free(&a, pt, sizeof *pt);
}

static scan_fn base_scanner(int pattern) {
    switch (pattern) {
    case ST_PATTERN_GPT2: return scan_gpt2;
    case ST_PATTERN_CL100K: return scan_cl100k;
    case ST_PATTERN_SUPERBPE: return scan_superbpe;
    case ST_PATTERN_LLAMA3: return scan_llama3;
    case ST_PATTERN_QWEN2: return scan_qwen2;
    case ST_PATTERN_DEEPSEEK_V3: return scan_deepseek_v3;
    default: return scan_o200k;
    }
}

/* ---- script chunking (docs/design.md §5) -------------------------------------------------
 * A chunk ends only where a character of a different real script begins. A run of Common
 * (Unknown counts as Common) characters between two characters of the same script stays in
 * the chunk; before a new script it starts the new chunk. Inherited characters join the
 * preceding character (a Common run, if one is open). Leading Common/Inherited belong to the
 * first real script; trailing Common to the last chunk; no real script: one chunk.
 * Returns the end of the chunk starting at i and its script (Common if it has none). */
static size_t next_chunk(const uint8_t *s, size_t end, size_t i, int *script) {
    int cur = -1;
    size_t common_start = 0;
    int in_common = 0;
    size_t k = i;
    while (k < end) {
        uint32_t cp;
        size_t len;
        if (s[k] < 0x80) { cp = s[k]; len = 1; }
        else len = st__utf8_decode(s + k, &cp);
        int sc = st_ucd_script(cp);
        ST_COUNT(1);
        if (sc == ST_SCRIPT_UNKNOWN || sc == ST_SCRIPT_COMMON) {
            if (!in_common) { in_common = 1; common_start = k; }
        } else if (sc == ST_SCRIPT_INHERITED) {
            /* stays with the preceding character: nothing changes */
        } else if (cur < 0) {
            cur = sc;
            in_common = 0;
        } else if (sc == cur) {
            in_common = 0;
        } else {
            *script = cur;
            return in_common ? common_start : k;
        }
        k += len;
    }
    *script = cur < 0 ? ST_SCRIPT_COMMON : cur;
    return end;
}

void st__pieces_init(st__piece_iter *it, const struct st_pretokenizer *pt, const uint8_t *s, size_t len) {
    it->pt = pt;
    it->s = s;
    it->len = len;
    it->i = 0;
    it->chunk_end = 0;
    it->scan = base_scanner(pt->pattern);
    if (!(pt->flags & ST_PRETOK_SCRIPT_AWARE)) it->chunk_end = len; /* one chunk: the text */
}

size_t st__pieces_next(st__piece_iter *it) {
    if (it->i >= it->chunk_end) { /* script-aware: the next chunk and its scanner */
        int script;
        it->chunk_end = next_chunk(it->s, it->len, it->i, &script);
        int single = (it->pt->single_letter_scripts[script >> 5] >> (script & 31)) & 1;
        it->scan = single ? scan_single_letter : base_scanner(it->pt->pattern);
    }
    size_t e = it->scan(it->s, it->chunk_end, it->i);
    it->i = e;
    return e;
}

size_t st__pieces_fill(st__piece_iter *it, size_t *ends, size_t cap) {
    size_t n = 0;
    if (it->pt->flags & ST_PRETOK_SCRIPT_AWARE) {
        while (n < cap && it->i < it->len) ends[n++] = st__pieces_next(it);
        return n;
    }
    switch (it->pt->pattern) {
    case ST_PATTERN_GPT2: n = fill_gpt2(it->s, it->len, it->i, ends, cap); break;
    case ST_PATTERN_CL100K: n = fill_cl100k(it->s, it->len, it->i, ends, cap); break;
    case ST_PATTERN_SUPERBPE: n = fill_superbpe(it->s, it->len, it->i, ends, cap); break;
    case ST_PATTERN_LLAMA3: n = fill_llama3(it->s, it->len, it->i, ends, cap); break;
    case ST_PATTERN_QWEN2: n = fill_qwen2(it->s, it->len, it->i, ends, cap); break;
    case ST_PATTERN_DEEPSEEK_V3: n = fill_deepseek_v3(it->s, it->len, it->i, ends, cap); break;
    default: n = fill_o200k(it->s, it->len, it->i, ends, cap); break;
    }
    if (n) it->i = ends[n - 1];
    return n;
}

/* Write piece ends to ends[0..cap) and count them all. */
static size_t scan_all(const st_pretokenizer *pt, const uint8_t *s, size_t len, size_t *ends, size_t cap) {
    st__piece_iter it;
    st__pieces_init(&it, pt, s, len);
    size_t n = 0;
    while (it.i < len) {
        size_t e = st__pieces_next(&it);
        if (n < cap) ends[n] = e;
        n++;
    }
    return n;
}

/* Rewrite byte ends as code point ends: one pass counting the bytes that start a character. */
static void ends_to_codepoints(const uint8_t *s, size_t *ends, size_t n) {
    size_t pos = 0, cps = 0;
    for (size_t k = 0; k < n; k++) {
        size_t e = ends[k];
        for (; pos < e; pos++) cps += (s[pos] & 0xC0) != 0x80;
        ends[k] = cps;
    }
}

st_status st_pretokenize(const st_pretokenizer *pt, const char *text, size_t len, uint32_t flags,
                         size_t *ends, size_t cap, size_t *n_pieces, st_error *err) {
    st__error_clear(err);
    if (!pt || !n_pieces || (!text && len) || (!ends && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    if (flags & ~ST_OFFSETS_CODEPOINTS) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags");
    *n_pieces = 0;
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    size_t n = scan_all(pt, (const uint8_t *)text, len, ends, cap);
    *n_pieces = n;
    if (n > cap) return st__error_status(err, ST_ERR_BUFFER_TOO_SMALL);
    if (flags & ST_OFFSETS_CODEPOINTS) ends_to_codepoints((const uint8_t *)text, ends, n);
    return ST_OK;
}

st_status st_pretokenize_count(const st_pretokenizer *pt, const char *text, size_t len,
                               size_t *n_pieces, st_error *err) {
    st__error_clear(err);
    if (!pt || !n_pieces || (!text && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_pieces = 0;
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    *n_pieces = scan_all(pt, (const uint8_t *)text, len, NULL, 0);
    return ST_OK;
}

st_status st_pretokenize_join(const st_pretokenizer *pt, const char *text, size_t len, uint8_t sep, uint8_t *out,
                              size_t cap, size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!pt || !out_len || (!text && len) || (!out && cap) || sep >= 0x80)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out_len = 0;
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    const uint8_t *s = (const uint8_t *)text;
    st__piece_iter it;
    st__pieces_init(&it, pt, s, len);
    size_t n = 0, start = 0;
    while (it.i < len) {
        size_t e = st__pieces_next(&it);
        if (n + (e - start) + 1 <= cap) {
            st__memcpy(out + n, s + start, e - start);
            out[n + (e - start)] = sep;
        }
        n += e - start + 1;
        start = e;
    }
    *out_len = n;
    return st__error_status(err, n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}
