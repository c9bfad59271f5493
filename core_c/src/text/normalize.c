/* Unicode NFC normalization with an offset map (docs/design.md §4).
 *
 * NFC = canonical decomposition, canonical reordering of each run of non-starters (a stable
 * sort by combining class), then canonical composition (UAX #15). The reference is HuggingFace
 * tokenizers 0.23.3's `NFC` normalizer (Unicode 9.0 data, no stream-safe limit: a run of 100,000
 * marks after one base is sorted and composed whole), and this gives its output exactly.
 *
 * Without scratch memory and in linear time. The decomposed text is never stored: an item of it
 * is addressed by (input offset, index in that character's decomposition) and recomputed from
 * the tables when visited. The text is cut into units: a starter (class 0) and everything after
 * it up to the next starter that does not compose into it (the first unit may lack a starter).
 * A unit is walked twice: the first walk finds the starter's final composite, the second writes
 * it and then the marks that did not compose, in canonical order. A run of marks already in
 * order (nearly every run in real text) is walked in place; an unordered run is walked once per
 * distinct class in it, in increasing class order, which is a stable counting sort of at most as
 * many passes as Unicode has nonzero classes (54 in 9.0): O(len) with a bounded factor, however
 * long the run. */
#include "normalize.h"
#include "../base/work_counter.h"
#include "nfc_tables.h"
#include "utf8.h"

static uint32_t nfc_ccc(uint32_t cp) {
    if (cp < 0x300 || cp >= ST_NFC_LIMIT) return 0;
    return st_nfc_ccc_blocks[((size_t)st_nfc_ccc_index[cp >> ST_NFC_CCC_SHIFT] << ST_NFC_CCC_SHIFT) |
                             (cp & ((1u << ST_NFC_CCC_SHIFT) - 1))];
}

/* The full canonical decomposition of cp into d[0..4); returns its length (1: cp itself).
 * Hangul syllables stay whole: NFC would compose them back. */
static size_t nfc_decompose(uint32_t cp, uint32_t d[4]) {
    if (cp >= 0xC0 && cp < ST_NFC_LIMIT) {
        uint16_t v = st_nfc_dec_blocks[((size_t)st_nfc_dec_index[cp >> ST_NFC_DEC_SHIFT] << ST_NFC_DEC_SHIFT) |
                                       (cp & ((1u << ST_NFC_DEC_SHIFT) - 1))];
        if (v) {
            size_t n = (size_t)(v & 3) + 1;
            const uint32_t *p = st_nfc_dec_pool + (v >> 2);
            for (size_t k = 0; k < n; k++) d[k] = p[k];
            return n;
        }
    }
    d[0] = cp;
    return 1;
}

/* 1 if cp has a canonical decomposition other than itself (nfc_decompose would give more than cp). */
ST_INLINE int nfc_decomposes(uint32_t cp) {
    return cp >= 0xC0 && cp < ST_NFC_LIMIT &&
           st_nfc_dec_blocks[((size_t)st_nfc_dec_index[cp >> ST_NFC_DEC_SHIFT] << ST_NFC_DEC_SHIFT) |
                             (cp & ((1u << ST_NFC_DEC_SHIFT) - 1))] != 0;
}

/* The starters (class 0) that are the second of a primary composite (st_nfc_comp_second's entries
 * of class 0: vowel and length marks of Indic scripts, Myanmar, Balinese and some historic
 * scripts), sorted; core_c/tests/test_core.c checks the list against the tables. The Hangul
 * jamo V and T compose by formula and are tested apart. */
static const uint32_t nfc_starter_seconds[] = {
    0x09BE, 0x09D7, 0x0B3E, 0x0B56, 0x0B57, 0x0BBE, 0x0BD7, 0x0CC2, 0x0CD5, 0x0CD6, 0x0D3E, 0x0D57,
    0x0DCF, 0x0DDF, 0x102E, 0x1B35, 0x11127, 0x1133E, 0x11357, 0x114B0, 0x114BA, 0x114BD, 0x115AF};

int st__nfc_starter_second(uint32_t cp) {
    switch (cp >> 7) { /* the 128-character ranges that hold one: most text's characters (Devanagari's
                          among them) are in none */
    case 0x13: case 0x16: case 0x17: case 0x19: case 0x1A: case 0x1B: case 0x20: case 0x36: case 0x222:
    case 0x226: case 0x229: case 0x22B: break;
    default: return 0;
    }
    for (size_t k = 0; k < sizeof nfc_starter_seconds / sizeof *nfc_starter_seconds; k++)
        if (nfc_starter_seconds[k] == cp) return 1;
    return 0;
}

/* 0 if the starter cp composes with no character before it: neither a Hangul vowel or trailing
 * consonant jamo nor one of the starters above (a character of class 0 that nfc_compose takes as
 * a second is one of them). */
ST_INLINE int nfc_starter_may_compose(uint32_t cp) {
    return cp >= 0x300 && (cp - 0x1161u < 21 || cp - 0x11A8u < 27 || st__nfc_starter_second(cp));
}

/* The row of st_nfc_comp_second holding b (the second of some primary composite from the
 * tables), or st_nfc_comp_second_count if none. */
static size_t nfc_second_row(uint32_t b) {
    size_t lo = 0, hi = st_nfc_comp_second_count;
    if (b < st_nfc_comp_second[0]) return st_nfc_comp_second_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (st_nfc_comp_second[mid] < b) lo = mid + 1;
        else hi = mid;
    }
    return lo < st_nfc_comp_second_count && st_nfc_comp_second[lo] == b ? lo : st_nfc_comp_second_count;
}

/* The primary composite of a + b, or 0. */
static uint32_t nfc_compose(uint32_t a, uint32_t b) {
    if (a - 0x1100u < 19 && b - 0x1161u < 21) return 0xAC00 + ((a - 0x1100) * 21 + (b - 0x1161)) * 28;
    if (a - 0xAC00u < 11172 && (a - 0xAC00) % 28 == 0 && b - 0x11A8u < 27) return a + (b - 0x11A7);
    size_t lo = nfc_second_row(b);
    if (lo == st_nfc_comp_second_count) return 0;
    size_t i = st_nfc_comp_start[lo], j = st_nfc_comp_start[lo + 1];
    while (i < j) {
        size_t mid = i + (j - i) / 2;
        if (st_nfc_comp_first[mid] < a) i = mid + 1;
        else j = mid;
    }
    return i < st_nfc_comp_start[lo + 1] && st_nfc_comp_first[i] == a ? st_nfc_comp_result[i] : 0;
}

/* The first item of cp's canonical decomposition (cp itself when it has none). */
ST_INLINE uint32_t nfc_first_item(uint32_t cp) {
    uint32_t d[4];
    nfc_decompose(cp, d);
    return d[0];
}

/* 1 if NFC gives cp back when it stands alone (no mark after it, nothing before composing with
 * it): a starter with no decomposition, or one whose decomposition starts with a starter and
 * composes back into cp item by item (a precomposed letter that is no composition exclusion:
 * Greek with tonos, Vietnamese, Cyrillic й). */
ST_INLINE int nfc_stable_alone(uint32_t cp) {
    if (nfc_ccc(cp) != 0) return 0;
    if (!nfc_decomposes(cp)) return 1;
    uint32_t d[4], x;
    size_t n = nfc_decompose(cp, d);
    if (nfc_ccc(d[0]) != 0) return 0;
    x = d[0];
    for (size_t k = 1; k < n; k++)
        if (!(x = nfc_compose(x, d[k]))) return 0;
    return x == cp;
}

/* A position in the decomposed text: the input character at pos, item sub of its decomposition. */
typedef struct nfc_pos {
    size_t pos;
    size_t sub;
} nfc_pos;

typedef struct nfc_ctx {
    const uint8_t *s;
    size_t len;
    uint8_t *out;
    size_t *map;
    size_t cap, n;
} nfc_ctx;

/* The item at p (p.pos < len): its code point, its class (returned) and the position after it. */
static uint32_t nfc_item(const nfc_ctx *c, nfc_pos p, uint32_t *cp, nfc_pos *next) {
    uint32_t ch, d[4];
    ST_COUNT(1);
    size_t l = st__utf8_decode(c->s + p.pos, &ch);
    size_t n = nfc_decompose(ch, d);
    *cp = d[p.sub];
    if (p.sub + 1 < n) {
        next->pos = p.pos;
        next->sub = p.sub + 1;
    } else {
        next->pos = p.pos + l;
        next->sub = 0;
    }
    return nfc_ccc(*cp);
}

static void nfc_put(nfc_ctx *c, uint32_t cp, size_t src) {
    uint8_t b[4];
    size_t l = st__utf8_encode(cp, b);
    for (size_t k = 0; k < l; k++, c->n++)
        if (c->n < c->cap) {
            c->out[c->n] = b[k];
            if (c->map) c->map[c->n] = src;
        }
}

/* The composition state of a unit's walk. */
typedef struct nfc_unit {
    uint32_t s;       /* the starter, composed so far */
    int has_s;        /* a starter opens the unit */
    int adj;          /* nothing uncomposed since the starter */
    uint32_t last_cc; /* the class of the last uncomposed mark */
    int emit;         /* second walk: write the marks that stay */
} nfc_unit;

static void nfc_mark(nfc_ctx *c, nfc_unit *u, uint32_t cp, uint32_t cc, size_t src) {
    uint32_t comp;
    if (u->has_s && (u->adj || u->last_cc < cc) && (comp = nfc_compose(u->s, cp)) != 0) {
        u->s = comp;
        return;
    }
    u->adj = 0;
    u->last_cc = cc;
    if (u->emit) nfc_put(c, cp, src);
}

/* Walk the run of marks [p, r) (r: the first starter or the end) in canonical order. */
static nfc_pos nfc_run(nfc_ctx *c, nfc_unit *u, nfc_pos p) {
    nfc_pos q = p, nx, r;
    uint32_t cp, cc, prev = 0, minc = 256;
    int sorted = 1;
    while (q.pos < c->len && (cc = nfc_item(c, q, &cp, &nx)) != 0) {
        if (cc < prev) sorted = 0;
        if (cc < minc) minc = cc;
        prev = cc;
        q = nx;
    }
    r = q;
    if (sorted) {
        for (q = p; q.pos != r.pos || q.sub != r.sub; q = nx) {
            cc = nfc_item(c, q, &cp, &nx);
            nfc_mark(c, u, cp, cc, q.pos);
        }
        return r;
    }
    /* One pass per class k present, increasing. A mark's map offset is the smallest of its own
     * and those of the marks of higher classes (they all follow it in the output). */
    for (uint32_t k = minc; k < 256;) {
        uint32_t next_k = 256;
        size_t m = (size_t)-1;
        for (q = p; q.pos != r.pos || q.sub != r.sub; q = nx) {
            cc = nfc_item(c, q, &cp, &nx);
            if (cc > k) {
                if (cc < next_k) next_k = cc;
                if (q.pos < m) m = q.pos;
            }
        }
        for (q = p; q.pos != r.pos || q.sub != r.sub; q = nx) {
            cc = nfc_item(c, q, &cp, &nx);
            if (cc == k) nfc_mark(c, u, cp, cc, q.pos < m ? q.pos : m);
        }
        k = next_k;
    }
    return r;
}

/* Walk the unit at p; returns where the next one starts. */
static nfc_pos nfc_walk(nfc_ctx *c, nfc_unit *u, nfc_pos p) {
    uint32_t cp, cc, comp;
    nfc_pos nx;
    while (p.pos < c->len) {
        cc = nfc_item(c, p, &cp, &nx);
        if (cc == 0) {
            if (!(u->has_s && u->adj && (comp = nfc_compose(u->s, cp)) != 0)) return p;
            u->s = comp;
            p = nx;
        } else {
            p = nfc_run(c, u, p);
        }
    }
    return p;
}

/* 1 if NFC leaves the mark m (class not 0) as it is after the starter s, which has no
 * decomposition, in a run of marks in canonical order: m has no decomposition and composes with
 * no starter or not with s (Devanagari's virama, most marks of most scripts; the nukta after
 * most letters; not the acute after a vowel). Each mark of the run passing, none composes and s
 * stays the run's starter. */
ST_INLINE int nfc_mark_inert(uint32_t s, uint32_t m) {
    return !nfc_decomposes(m) && (nfc_second_row(m) == st_nfc_comp_second_count || nfc_compose(s, m) == 0);
}

/* The end of the character at s[i] when NFC gives it back as it is, told from the bytes (i is
 * where a unit may start: nothing before composes with this character); 0 when only the walk can
 * tell. Either a character below U+0300 followed by another below it (or the end), or a
 * character NFC gives back alone followed by one whose first item is a starter that composes
 * with nothing before it (a test or two: nfc_compose's binary search was most of the time of
 * normalizing Cyrillic); or a starter with no decomposition followed by marks it leaves as they
 * are (nfc_mark_inert) in canonical order (nondecreasing classes) and then the end or such a
 * starter: the end of the marks (the conjuncts of Hindi, whose virama otherwise sent every word
 * to the walk). */
ST_INLINE size_t nfc_as_is(const uint8_t *s, size_t len, size_t i) {
    size_t l = s[i] < 0x80 ? 1 : s[i] < 0xE0 ? 2 : s[i] < 0xF0 ? 3 : 4;
    if (s[i] < 0xCC && (i + l >= len || s[i + l] < 0xCC)) return i + l;
    uint32_t cp, cp2;
    size_t j = i + st__utf8_decode(s + i, &cp);
    if (!nfc_stable_alone(cp)) return 0;
    if (j < len) {
        size_t l2 = st__utf8_decode(s + j, &cp2);
        uint32_t first = nfc_first_item(cp2), last = 0;
        if (nfc_ccc(first) != 0) { /* marks: only after a starter with no decomposition */
            if (nfc_decomposes(cp)) return 0;
            for (uint32_t c; (c = nfc_ccc(cp2)) != 0;) {
                if (c < last || !nfc_mark_inert(cp, cp2)) return 0;
                last = c;
                j += l2;
                if (j >= len) return j;
                l2 = st__utf8_decode(s + j, &cp2);
            }
            first = nfc_first_item(cp2);
            if (nfc_ccc(first) != 0) return 0;
        }
        if (nfc_starter_may_compose(first)) return 0;
    }
    return j;
}

int st__nfc_unchanged(const uint8_t *s, size_t len) {
    for (size_t i = 0; i < len;) {
        /* characters below U+0300 (ASCII a word at a time), each as it is: but the last one when
         * a character at or above U+0300 follows, which it may compose with */
        size_t j = st__ascii_end(s, i, len);
        while (j < len && s[j] < 0xCC) j++;
        if (j == len) return 1;
        if (j > i) {
            i = j;
            while ((s[--i] & 0xC0) == 0x80) {}
        }
        ST_COUNT(1);
        j = nfc_as_is(s, len, i);
        if (!j) return 0;
        i = j;
    }
    return 1;
}

size_t st__nfc(const uint8_t *s, size_t len, uint8_t *out, size_t *map, size_t cap) {
    nfc_ctx c = {s, len, out, map, cap, 0};
    nfc_pos p = {0, 0};
    while (p.pos < len) {
        /* The fast paths: a character NFC gives back as it is, told from the bytes (nfc_as_is),
         * then a starter that is its own decomposition followed by the end or by a starter it
         * does not compose with, told from the items. */
        size_t i = p.pos, j;
        ST_COUNT(1);
        if (p.sub == 0 && (j = nfc_as_is(s, len, i)) != 0) {
            for (size_t k = i, at = i; k < j; k++, c.n++) {
                if ((s[k] & 0xC0) != 0x80) at = k; /* each character's bytes map to its start */
                if (c.n < cap) {
                    out[c.n] = s[k];
                    if (map) map[c.n] = at;
                }
            }
            p.pos = j;
            continue;
        }
        if (p.sub == 0) {
            nfc_pos q = p, nx;
            uint32_t cp, cp2, d[4];
            if (nfc_item(&c, q, &cp, &nx) == 0 && nfc_decompose(cp, d) == 1 &&
                (nx.pos >= len || (nfc_item(&c, nx, &cp2, &q) == 0 &&
                                   (!nfc_starter_may_compose(cp2) || nfc_compose(cp, cp2) == 0)))) {
                nfc_put(&c, cp, i);
                p = nx;
                continue;
            }
        }
        /* A unit: it starts at a starter (which may be any item of a decomposition: U+0CCB is
         * three), or at the text's first mark. */
        nfc_pos q = p, nx;
        nfc_unit u = {0, 0, 1, 0, 0};
        uint32_t cp;
        if (nfc_item(&c, q, &cp, &nx) == 0) {
            u.s = cp;
            u.has_s = 1;
            q = nx;
        }
        nfc_unit first = u;
        nfc_pos end = nfc_walk(&c, &u, q); /* the starter's final composite: u.s */
        if (first.has_s) nfc_put(&c, u.s, i);
        first.emit = 1;
        nfc_walk(&c, &first, q);
        p = end;
    }
    return c.n;
}

st_status st_normalize_nfc(const char *text, size_t len, char *out, size_t *map, size_t cap, size_t *out_len,
                           st_error *err) {
    st__error_clear(err);
    if (!out_len || (!text && len) || (!out && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out_len = 0;
    if (len > (size_t)-1 / ST__NFC_MAX_EXPANSION)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "text too long");
    st_status st = st_utf8_validate(text, len, err);
    if (st != ST_OK) return st;
    size_t n = st__nfc((const uint8_t *)text, len, (uint8_t *)out, map, cap);
    *out_len = n;
    return st__error_status(err, n > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}
