/* Cut points for encoding one long text in parts (docs/design.md §7, "Caches and parallelism").
 *
 * A host that encodes parts of a text on several threads and joins the ids gets the serial ids
 * only if every cut is where the encoding itself must put a boundary and where the pieces on
 * each side come out the same when that side is encoded alone. st_encoding_cut finds such
 * places from a few characters around each candidate; the rules and why each holds are in
 * docs/design.md §7 (one paragraph per rule, per pattern), and tests/test_cut.py checks them
 * against regex.findall. A rule only ever refuses a place it cannot prove, so a text with no
 * provable place is simply encoded whole.
 *
 * The text need not have been validated: characters are decoded here with bounds and validity
 * checks, and any byte that does not decode refuses the candidate (the encode of the parts then
 * reports the invalid byte as the whole text's encode would). */
#include "encoding.h"
#include "../text/unicode.h"
#include "../text/utf8.h"

/* How many characters the script-aware newline rule looks back for the line's last real-script
 * character: beyond that the candidate is refused (bounds the work per candidate). */
#define CUT_LOOKBACK 32

/* The valid UTF-8 character starting at s[i] (i < len): its length (1-4), or 0 if the bytes there
 * are no valid character (the rules of st_utf8_validate). */
static size_t dec_fwd(const uint8_t *s, size_t len, size_t i, uint32_t *cp) {
    uint8_t b = s[i];
    if (b < 0x80) { *cp = b; return 1; }
    size_t need;
    uint32_t lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) need = 1;
    else if (b >= 0xE0 && b <= 0xEF) {
        need = 2;
        if (b == 0xE0) lo = 0xA0;
        else if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 3;
        if (b == 0xF0) lo = 0x90;
        else if (b == 0xF4) hi = 0x8F;
    } else return 0;
    if (len - i <= need || s[i + 1] < lo || s[i + 1] > hi) return 0;
    for (size_t k = 2; k <= need; k++)
        if ((s[i + k] & 0xC0) != 0x80) return 0;
    return st__utf8_decode(s + i, cp);
}

/* The valid character ending just before s[i] (i > 0): its length, or 0. */
static size_t dec_back(const uint8_t *s, size_t len, size_t i, uint32_t *cp) {
    size_t k = i - 1, n = 1;
    while (n < 4 && k > 0 && (s[k] & 0xC0) == 0x80) { k--; n++; }
    size_t l = dec_fwd(s, len, k, cp);
    return l == i - k ? l : 0;
}

ST_INLINE int is_letter(uint32_t cp) {
    uint8_t c = st_ucd_class(cp) & ST_UCD_CLASS_MASK;
    return c >= ST_UCD_LU && c <= ST_UCD_LO;
}
ST_INLINE int is_ws(uint32_t cp) { return (st_ucd_class(cp) & ST_UCD_WHITE_SPACE) != 0; }
/* A real script: neither Common, Inherited nor Unknown (which chunking counts as Common). */
ST_INLINE int real_script(int sc) {
    return sc != ST_SCRIPT_UNKNOWN && sc != ST_SCRIPT_COMMON && sc != ST_SCRIPT_INHERITED;
}

typedef struct cut_ctx {
    const st_encoding *enc;
    const uint8_t *s;
    size_t len;
    int script_aware;
    int superwords; /* a superword model: only places where a run of pretokens must end */
    int crlf;       /* "\r\n" before a letter is a boundary too (not for gpt2's \s+(?!\S)) */
} cut_ctx;

ST_INLINE int variant_script(const cut_ctx *c, int sc) {
    return (c->enc->pt.single_letter_scripts[sc >> 5] >> (sc & 31)) & 1;
}

/* Rule "letter | space": s[p] is ' ' (checked by the caller) and the character before is a
 * letter; script-aware, the character after the space is a letter of that letter's real script. */
static int rule_letter_space(const cut_ctx *c, size_t p, size_t *lo, size_t *hi) {
    uint32_t a, b;
    size_t la = dec_back(c->s, c->len, p, &a);
    if (!la || !is_letter(a)) return 0;
    *lo = p - la;
    *hi = p + 1;
    if (c->script_aware) {
        if (p + 1 >= c->len) return 0;
        size_t lb = dec_fwd(c->s, c->len, p + 1, &b);
        if (!lb || !is_letter(b)) return 0;
        int sa = st_ucd_script(a);
        if (!real_script(sa) || st_ucd_script(b) != sa) return 0;
        *hi = p + 1 + lb;
    }
    return 1;
}

/* Rule "newline | letter": s[p - 1] is '\n' (checked by the caller; "\r\n" where c->crlf), a
 * letter follows, and the character before the line break is no whitespace (or there is none);
 * script-aware, the last real-script character before the break is of the letter's real script. */
static int rule_newline(const cut_ctx *c, size_t p, size_t *lo, size_t *hi) {
    uint32_t a, b;
    size_t lb = dec_fwd(c->s, c->len, p, &b);
    if (!lb || !is_letter(b)) return 0;
    size_t q = p - 1; /* where the line break starts */
    if (c->crlf && q > 0 && c->s[q - 1] == '\r') q--;
    *lo = q;
    *hi = p + lb;
    if (q > 0) {
        size_t la = dec_back(c->s, c->len, q, &a);
        if (!la || is_ws(a)) return 0;
        *lo = q - la;
    }
    if (c->script_aware) {
        int sb = st_ucd_script(b);
        if (!real_script(sb)) return 0;
        size_t k = q;
        for (int n = 0; n < CUT_LOOKBACK && k > 0; n++) {
            size_t la = dec_back(c->s, c->len, k, &a);
            if (!la) return 0;
            k -= la;
            int sa = st_ucd_script(a);
            if (real_script(sa)) {
                *lo = k;
                return sa == sb;
            }
        }
        return 0; /* no real script close enough before the break */
    }
    return 1;
}

/* Rule "script | script" (script-aware only): the characters on both sides have real scripts,
 * and either the scripts differ (a chunk boundary) or their chunk uses the single-letter
 * variant, the left one is no whitespace and the right one a letter. */
static int rule_scripts(const cut_ctx *c, size_t p, size_t *lo, size_t *hi) {
    uint32_t a, b;
    size_t la = dec_back(c->s, c->len, p, &a);
    if (!la) return 0;
    size_t lb = dec_fwd(c->s, c->len, p, &b);
    if (!lb) return 0;
    int sa = st_ucd_script(a), sb = st_ucd_script(b);
    if (!real_script(sa) || !real_script(sb)) return 0;
    if (sa == sb && !(variant_script(c, sa) && !is_ws(a) && is_letter(b))) return 0;
    *lo = p - la;
    *hi = p + lb;
    return 1;
}

/* 1 if no special token of the encoding (allowed or not: the cut does not depend on the
 * policy) occurs in the text overlapping s[lo..hi), the characters the rule looked at. Then no
 * special spans the cut, every part finds the same specials the whole text holds, and the rule's
 * characters lie inside one stretch of ordinary text. */
static int specials_clear(const cut_ctx *c, size_t lo, size_t hi) {
    const st_vocab *v = &c->enc->vocab;
    for (uint32_t k = 0; k < st__vocab_n_strings(v); k++) { /* every string of every special */
        uint32_t id, a, tl;
        if (!st__vocab_special_string(v, k, &id, &a, &tl)) continue;
        const uint8_t *t = v->bytes + a;
        size_t x = lo >= tl ? lo - tl + 1 : 0;
        for (; x < hi && tl <= c->len - x; x++)
            if (c->s[x] == t[0] && st__memcmp(c->s + x, t, tl) == 0) return 0;
    }
    return 1;
}

/* 1 if a rule holds at p (0 < p < len, on a character boundary), [*lo, *hi) the characters it
 * looked at. */
static int rule_at(const cut_ctx *c, size_t p, size_t *lo, size_t *hi) {
    const uint8_t *s = c->s;
    int ok = 0;
    if (s[p - 1] == '\n') ok = rule_newline(c, p, lo, hi);
    if (!ok && !c->superwords) {
        if (s[p] == ' ') ok = rule_letter_space(c, p, lo, hi);
        else if (c->script_aware) ok = rule_scripts(c, p, lo, hi);
    }
    return ok;
}

/* 1 if p (0 < p < len, on a character boundary) is a cut. */
static int cut_at(const cut_ctx *c, size_t p) {
    size_t lo = 0, hi = 0;
    return rule_at(c, p, &lo, &hi) && specials_clear(c, lo, hi);
}

/* 1 if the encoding's pattern has proven rules, else 0 (then no place is a cut). */
static int has_rules(const st_encoding *enc) {
    /* superbpe: letters, single spaces, single punctuation and line breaks all stay inside one
     * piece (the text between the regex's matches), so neither rule proves a boundary: no cut,
     * the text is encoded whole */
    if (enc->pt.pattern == ST_PATTERN_SUPERBPE) return 0;
    /* llama3, qwen2, deepseek_v3: the rules below are proved for the tiktoken patterns only
     * (llama3's \s*[\r\n]+ and deepseek_v3's punctuation-before-letters and sequence of splits
     * move boundaries they rely on); no proof is made for them, so no cut either */
    if (enc->pt.pattern >= ST_PATTERN_LLAMA3) return 0;
    return 1;
}

/* 1 if the rules hold within ordinary text of the encoding (between its special tokens and past
 * its normalization: what st__cut_within is given): those of has_rules, and llama3's, qwen2's and
 * deepseek_v3's. llama3's and qwen2's alternatives for letters, spaces and line breaks are
 * cl100k's (a word is a maximal run of letters after an optional prefix that is no CR or LF; a
 * contraction piece ends within the letters; an O run takes the CR/LF after it) with o200k's \s
 * alternatives (\s*[\r\n]+|\s+(?!\S)|\s+), so "letter | space" and "newline | letter" hold as
 * they do for cl100k and o200k, and qwen2's single digits touch neither. deepseek_v3's digit
 * groups and CJK runs never hold a space or a line break, so neither rule's place is inside one;
 * in the rest its letter alternatives end at the first character that is no letter (or mark),
 * the prefix before letters is never CR or LF, and its line breaks end the piece that holds them
 * (docs/design.md §7). Across a whole text a HuggingFace model's added tokens (stripping,
 * matched after normalization) would need their own proof: st_encoding_cut keeps has_rules. */
static int has_rules_within(const st_encoding *enc) {
    return has_rules(enc) || enc->pt.pattern == ST_PATTERN_LLAMA3 || enc->pt.pattern == ST_PATTERN_QWEN2 ||
           enc->pt.pattern == ST_PATTERN_DEEPSEEK_V3;
}

/* The rules' context for the text s[0..len) of enc; 0 when the encoding's pattern has no proven
 * rule (then no place is a cut). */
static int ctx_init(cut_ctx *c, const st_encoding *enc, const uint8_t *s, size_t len, int within) {
    c->enc = enc;
    c->s = s;
    c->len = len;
    c->script_aware = (enc->pt.flags & ST_PRETOK_SCRIPT_AWARE) != 0;
    c->superwords = enc->kind == ST__KIND_RULES && enc->supers.n > 0;
    c->crlf = enc->pt.pattern != ST_PATTERN_GPT2;
    return within ? has_rules_within(enc) : has_rules(enc);
}

st_status st_encoding_cut(const st_encoding *enc, const char *text, size_t len, size_t from, size_t *at,
                          st_error *err) {
    st__error_clear(err);
    if (!enc || !at || (!text && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *at = len;
    cut_ctx c;
    if (!ctx_init(&c, enc, (const uint8_t *)text, len, 0)) return ST_OK;
    for (size_t p = from > 0 ? from : 1; p < len; p++) {
        if ((c.s[p] & 0xC0) == 0x80) continue; /* inside a character */
        if (cut_at(&c, p)) {
            *at = p;
            break;
        }
    }
    return ST_OK;
}

int st__cut_supported(const st_encoding *enc) { return has_rules_within(enc); }

size_t st__cut_within(const st_encoding *enc, const uint8_t *s, size_t len, size_t from, size_t to) {
    cut_ctx c;
    if (!ctx_init(&c, enc, s, len, 1)) return 0;
    if (to > len) to = len;
    size_t p = from > 0 ? from : 1, lo, hi;
    if (p >= to) return 0;
    if (c.script_aware) { /* a script's change is a rule's place too: every character */
        for (; p < to; p++)
            if ((s[p] & 0xC0) != 0x80 && rule_at(&c, p, &lo, &hi)) return p;
        return 0;
    }
    /* only the places a rule starts from: after a line feed, or at a space; found a word at a
     * time (Chinese or Japanese text goes hundreds of bytes without either) */
    for (size_t q = p - 1; (q = st__find_either(s, q, to, '\n', ' ')) < to; q++) {
        size_t at = s[q] == '\n' ? q + 1 : q;
        if (at >= p && at < to && (s[at] & 0xC0) != 0x80 && rule_at(&c, at, &lo, &hi)) return at;
    }
    return 0;
}
