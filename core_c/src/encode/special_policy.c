/* The special-token policy (docs/design.md §7): what a caller's policy (allowed and disallowed
 * specials, by id, by string number or by text; allow all; disallow the rest) means for an
 * encoding, the refusal of a text holding a disallowed special anywhere, as tiktoken's search of
 * the raw text refuses it, and the match of an allowed special where the pipeline cuts the text.
 * Apart from the pipeline because it is tiktoken's rule, checked once a call over the text and
 * never per piece, and unstable.c asks it too (st__special_string_number). */
#include "special_policy.h"
#include "../text/utf8.h"
#include "../formats/tokenizer_json.h"
#include "../base/work_counter.h"

/* The index of special id in the sorted special_ids, or -1. */
static long special_index(const st_vocab *v, uint32_t id) {
    size_t lo = 0, hi = v->n_special;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (v->special_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->n_special && v->special_ids[lo] == id ? (long)lo : -1;
}

ST_INLINE int bit_get(const uint64_t *bits, uint32_t k) { return (int)((bits[k >> 6] >> (k & 63)) & 1); }
ST_INLINE void bit_put(uint64_t *bits, uint32_t k, int on) {
    if (on) bits[k >> 6] |= 1ull << (k & 63);
    else bits[k >> 6] &= ~(1ull << (k & 63));
}

/* ---- the special strings in the order of their bytes ------------------------------------
 * Trying every special string at a place costs the number of specials at each byte that may
 * start one: o200k_harmony has 1,100, all starting with '<', and a text of '<' took 265 times
 * as long as plain text (tiktoken's search is an automaton). Sorted by their bytes, the strings
 * that begin with the text's next d bytes are one run of the order, narrowed a byte at a time
 * by two binary searches; a string that ends there is the run's first (a prefix sorts before
 * what extends it). The longest match at a place costs its length times log2 of the number of
 * specials. Strings with equal bytes (only an untrusted image has them) keep their numbers'
 * order, so the first of them in a set wins, as it did when every string was tried. */
struct st__special_entry {
    uint32_t k, start, len; /* the string's number and its span in the store's bytes */
};
typedef struct st__special_entry special_entry;

/* a before b: by bytes, a prefix first, then by number */
static int entry_before(const uint8_t *bytes, const special_entry *a, const special_entry *b) {
    uint32_t n = a->len < b->len ? a->len : b->len;
    int c = st__memcmp(bytes + a->start, bytes + b->start, n);
    if (c) return c < 0;
    if (a->len != b->len) return a->len < b->len;
    return a->k < b->k;
}

st_status st__special_order_build(st_encoding *enc, st_error *err) {
    const st_vocab *v = &enc->vocab;
    uint32_t n_str = st__vocab_n_strings(v), n = 0;
    enc->special_order = NULL;
    enc->n_special_order = enc->special_first_bytes = 0;
    if (!n_str) return ST_OK;
    size_t max_n = SIZE_MAX / sizeof(special_entry); /* wasm32: a hostile image's count may not fit */
    if ((size_t)n_str > max_n) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    size_t size = (size_t)n_str * sizeof(special_entry);
    special_entry *e = (special_entry *)st__alloc(&enc->alloc, size);
    special_entry *tmp = (special_entry *)st__alloc(&enc->alloc, size);
    if (!e || !tmp) {
        st__free(&enc->alloc, e, size);
        st__free(&enc->alloc, tmp, size);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    for (uint32_t k = 0; k < n_str; k++) { /* a string with a bad span is never matched */
        uint32_t id, a, tl;
        if (st__vocab_special_string(v, k, &id, &a, &tl)) {
            e[n].k = k;
            e[n].start = a;
            e[n].len = tl;
            n++;
        }
    }
    /* bottom-up merge sort: no libc qsort in the freestanding core */
    special_entry *from = e, *to = tmp;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, a = lo, b = mid, o = lo;
            /* halves already in order (tiktoken's numbered specials mostly are): one compare */
            if (mid == hi || !entry_before(v->bytes, &from[mid], &from[mid - 1])) {
                for (size_t x = lo; x < hi; x++) to[x] = from[x]; /* not memcpy: pywasm's is a call */
                continue;
            }
            while (a < mid && b < hi) to[o++] = entry_before(v->bytes, &from[b], &from[a]) ? from[b++] : from[a++];
            while (a < mid) to[o++] = from[a++];
            while (b < hi) to[o++] = from[b++];
        }
        special_entry *t = from;
        from = to;
        to = t;
    }
    if (from != e) st__memcpy(e, from, (size_t)n * sizeof *e);
    st__free(&enc->alloc, tmp, size);
    enc->special_order = e;
    enc->n_special_order = n;
    for (uint32_t j = 0; j < n; j++) /* the runs of one first byte */
        enc->special_first_bytes += j == 0 || v->bytes[e[j].start] != v->bytes[e[j - 1].start];
    return ST_OK;
}

void st__special_order_free(st_encoding *enc) {
    if (enc->special_order)
        st__free(&enc->alloc, (void *)enc->special_order, (size_t)st__vocab_n_strings(&enc->vocab) * sizeof(special_entry));
    enc->special_order = NULL;
    enc->n_special_order = 0;
}

/* The longest string of `set` at s[i..len): its entry, or NULL. */
static const special_entry *longest_at(const st_encoding *enc, const uint64_t *set, const uint8_t *s, size_t i,
                                       size_t len) {
    const special_entry *o = enc->special_order, *best = NULL;
    const uint8_t *b = enc->vocab.bytes;
    size_t lo = 0, hi = enc->n_special_order;
    for (size_t d = 0; lo < hi && d < len - i; d++) {
        /* [lo, hi): the strings beginning with s[i..i+d); those of d bytes were looked at */
        while (lo < hi && o[lo].len == d) lo++, ST_COUNT(1);
        uint8_t c = s[i + d];
        size_t a = lo, z = hi;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            ST_COUNT(1);
            if (b[o[m].start + d] < c) a = m + 1;
            else z = m;
        }
        lo = a;
        z = hi;
        while (a < z) {
            size_t m = a + (z - a) / 2;
            ST_COUNT(1);
            if (b[o[m].start + d] <= c) a = m + 1;
            else z = m;
        }
        hi = a;
        for (size_t j = lo; j < hi && o[j].len == d + 1; j++, ST_COUNT(1))
            if (bit_get(set, o[j].k)) {
                best = o + j;
                break;
            }
    }
    return best;
}

/* The entry whose bytes are p[0..n) (the first by number if several), or NULL. */
static const special_entry *entry_of(const st_encoding *enc, const uint8_t *p, size_t n) {
    const special_entry *o = enc->special_order;
    size_t lo = 0, hi = enc->n_special_order;
    while (lo < hi) { /* the first entry not before p */
        size_t m = lo + (hi - lo) / 2, l = o[m].len < n ? o[m].len : n;
        int c = st__memcmp(enc->vocab.bytes + o[m].start, p, l);
        if (c < 0 || (c == 0 && o[m].len < n)) lo = m + 1;
        else hi = m;
    }
    if (lo < enc->n_special_order && o[lo].len == n && st__memcmp(enc->vocab.bytes + o[lo].start, p, n) == 0)
        return o + lo;
    return NULL;
}

/* Set (on) or clear in bits the strings list[0..n) names: string numbers with
 * ST_SPECIAL_BY_STRING, else ids, each standing for every string of its id. Every entry must
 * name a special string (with bytes: an image's are checked where used). */
static st_status mark(const st_vocab *v, const uint32_t *list, size_t n, int by_string, uint64_t *bits, int on,
                      uint32_t input, st_error *err) {
    uint32_t n_str = st__vocab_n_strings(v);
    for (size_t k = 0; k < n; k++) {
        uint32_t id, a, tl;
        int ok;
        if (by_string) {
            ok = list[k] < n_str && st__vocab_special_string(v, list[k], &id, &a, &tl);
            if (ok && bits) bit_put(bits, list[k], on);
        } else {
            long i = special_index(v, list[k]);
            ok = i >= 0 && st__vocab_span(v, list[k], &a, &tl);
            if (ok && bits) {
                bit_put(bits, (uint32_t)i, on);
                for (uint32_t x = 0; x < v->n_extra; x++) /* its further strings */
                    if (v->extra[3 * (size_t)x] == list[k]) bit_put(bits, v->n_special + x, on);
            }
        }
        if (!ok) {
            st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k, input == 1 ? "allowed" : "disallowed");
            st__error_append(err, by_string ? " special string " : " id ");
            st__error_append_u64(err, list[k]);
            st__error_append(err, " is not a special token of the encoding");
            st__error_line(err, 0, input);
            if (!by_string) st__error_token(err, list[k]);
            return ST_ERR_INVALID_ARGUMENT;
        }
    }
    return ST_OK;
}

/* String k of a ST_SPECIAL_BY_TEXT policy: strings[ends[k-1] .. ends[k]). */
ST_INLINE const uint8_t *text_string(const st_special_policy *sp, size_t k, size_t *len) {
    size_t a = k ? sp->ends[k - 1] : 0;
    *len = sp->ends[k] - a;
    return (const uint8_t *)sp->strings + a;
}

long st__special_string_number(const st_encoding *enc, const uint8_t *p, size_t n) {
    const special_entry *e = entry_of(enc, p, n);
    return e ? (long)e->k : -1;
}

/* Set in bits the special strings among the ST_SPECIAL_BY_TEXT strings [from, to) of sp; the
 * others are no special token. Returns how many of them are none. */
static size_t mark_text(const st_encoding *enc, const st_special_policy *sp, size_t from, size_t to, uint64_t *bits) {
    size_t unknown = 0;
    for (size_t k = from; k < to; k++) {
        size_t n;
        const uint8_t *p = text_string(sp, k, &n);
        long i = st__special_string_number(enc, p, n);
        if (i < 0) unknown++;
        else if (bits) bit_put(bits, (uint32_t)i, 1);
    }
    return unknown;
}

/* A ST_SPECIAL_BY_TEXT policy's strings and ends are well formed: ends never decrease, and
 * point into strings. */
static int text_form_ok(const st_special_policy *sp) {
    size_t n = sp->n_allowed + sp->n_disallowed;
    if (n < sp->n_allowed || sp->allowed || sp->disallowed || (sp->flags & ST_SPECIAL_BY_STRING)) return 0;
    if (!n) return 1;
    if (!sp->ends) return 0;
    for (size_t k = 1; k < n; k++)
        if (sp->ends[k] < sp->ends[k - 1]) return 0;
    return sp->strings || sp->ends[n - 1] == 0;
}

void st__policy_free(st__policy *pl, const st_allocator *a) {
    if (pl->bits_size) {
        st__free(a, pl->allowed, pl->bits_size);
        st__free(a, pl->disallowed, pl->bits_size);
        st__free(a, pl->match, pl->bits_size);
        st__free(a, pl->normalized, pl->bits_size);
    }
    pl->allowed = pl->disallowed = pl->match = pl->normalized = NULL;
    pl->bits_size = 0;
}

static int any_bit(const uint64_t *bits, size_t words) {
    for (size_t w = 0; w < words; w++)
        if (bits[w]) return 1;
    return 0;
}

static st_status resolve_caller(const st_encoding *enc, const st_special_policy *sp, st__policy *pl, st_error *err) {
    const st_vocab *v = &enc->vocab;
    pl->allowed = NULL;
    pl->disallowed = NULL;
    pl->match = pl->normalized = NULL;
    pl->any_match = pl->any_normalized = 0;
    pl->bits_size = 0;
    pl->any_allowed = pl->any_disallowed = 0;
    pl->strings = NULL;
    pl->ends = NULL;
    pl->first_disallowed = pl->end_disallowed = pl->n_unknown = 0;
    pl->empty_unknown = 0;
    if (!sp) return ST_OK;
    int by_text = (sp->flags & ST_SPECIAL_BY_TEXT) != 0;
    if ((sp->flags & ~(ST_SPECIAL_ALLOW_ALL | ST_SPECIAL_DISALLOW_REST | ST_SPECIAL_BY_STRING | ST_SPECIAL_BY_TEXT)) ||
        (by_text ? !text_form_ok(sp)
                 : (!sp->allowed && sp->n_allowed) || (!sp->disallowed && sp->n_disallowed)))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "special-token policy");
    int allow_all = (sp->flags & ST_SPECIAL_ALLOW_ALL) != 0, by_string = (sp->flags & ST_SPECIAL_BY_STRING) != 0;
    st_status st = ST_OK;
    if (by_text) { /* the disallowed strings that are no special token are searched for on their own */
        pl->strings = sp->strings;
        pl->ends = sp->ends;
        pl->first_disallowed = sp->n_allowed;
        pl->end_disallowed = sp->n_allowed + sp->n_disallowed;
        pl->n_unknown = mark_text(enc, sp, pl->first_disallowed, pl->end_disallowed, NULL);
        for (size_t k = pl->first_disallowed; k < pl->end_disallowed && !pl->empty_unknown; k++)
            pl->empty_unknown = sp->ends[k] == (k ? sp->ends[k - 1] : 0); /* no special is empty */
        pl->any_disallowed = pl->n_unknown > 0;
    } else { /* the lists are checked first, whatever the flags make of them */
        st = allow_all ? ST_OK : mark(v, sp->allowed, sp->n_allowed, by_string, NULL, 1, 1, err);
        if (st == ST_OK) st = mark(v, sp->disallowed, sp->n_disallowed, by_string, NULL, 1, 2, err);
        if (st != ST_OK) return st;
    }
    uint32_t n_str = st__vocab_n_strings(v);
    size_t words = ((size_t)n_str + 63) / 64;
    if (!words) return ST_OK; /* no specials: nothing to match, only unknown strings to refuse */
    if (n_str <= ST_POLICY_STACK_BITS) {
        pl->allowed = pl->stack_bits[0];
        pl->disallowed = pl->stack_bits[1];
        pl->match = pl->stack_bits[2];
        pl->normalized = pl->stack_bits[3];
    } else {
        pl->bits_size = words * 8;
        pl->allowed = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        pl->disallowed = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        pl->match = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        pl->normalized = (uint64_t *)st__alloc(&enc->alloc, pl->bits_size);
        if (!pl->allowed || !pl->disallowed || !pl->match || !pl->normalized) {
            if (pl->allowed) st__free(&enc->alloc, pl->allowed, pl->bits_size);
            if (pl->disallowed) st__free(&enc->alloc, pl->disallowed, pl->bits_size);
            if (pl->match) st__free(&enc->alloc, pl->match, pl->bits_size);
            if (pl->normalized) st__free(&enc->alloc, pl->normalized, pl->bits_size);
            pl->allowed = pl->disallowed = pl->match = pl->normalized = NULL;
            pl->bits_size = 0;
            return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
    }
    int rest = (sp->flags & ST_SPECIAL_DISALLOW_REST) && !allow_all;
    st__memset(pl->allowed, allow_all ? 0xFF : 0, words * 8);
    if (allow_all && (n_str & 63)) pl->allowed[words - 1] = (1ull << (n_str & 63)) - 1;
    if (allow_all) {
    } else if (by_text) {
        mark_text(enc, sp, 0, sp->n_allowed, pl->allowed);
    } else {
        mark(v, sp->allowed, sp->n_allowed, by_string, pl->allowed, 1, 1, NULL);
    }
    /* rest: every string not allowed; and the listed ones (a string both allowed and listed as
     * disallowed is refused, as tiktoken's search for the disallowed ones finds it) */
    for (size_t w = 0; w < words; w++) pl->disallowed[w] = rest ? ~pl->allowed[w] : 0;
    if (rest && (n_str & 63)) pl->disallowed[words - 1] &= (1ull << (n_str & 63)) - 1;
    if (by_text) mark_text(enc, sp, pl->first_disallowed, pl->end_disallowed, pl->disallowed);
    else mark(v, sp->disallowed, sp->n_disallowed, by_string, pl->disallowed, 1, 2, NULL);
    st__memcpy(pl->match, pl->allowed, words * 8); /* the first pass matches the allowed strings */
    /* an empty set skips its scan below */
    pl->any_allowed = any_bit(pl->allowed, words);
    pl->any_match = pl->any_allowed;
    pl->any_disallowed = pl->n_unknown > 0 || any_bit(pl->disallowed, words);
    return ST_OK;
}

/* A HuggingFace model's added tokens: those not special are always matched, whatever the
 * caller's policy (tokenizers' encode matches every added token; only the special ones are the
 * policy's to allow or refuse), and the `normalized` ones are matched in a pass of their own. */
st_status st__policy_resolve(const st_encoding *enc, const st_special_policy *sp, st__policy *pl, st_error *err) {
    static const st_special_policy none = {NULL, 0, NULL, 0, 0, NULL, NULL};
    int hf = enc->kind == ST__KIND_HF && enc->hf.string_flags;
    st_status st = resolve_caller(enc, hf && !sp ? &none : sp, pl, err);
    if (st != ST_OK || !hf || !pl->allowed) return st;
    uint32_t n_str = st__vocab_n_strings(&enc->vocab);
    size_t words = ((size_t)n_str + 63) / 64;
    st__memset(pl->normalized, 0, words * 8);
    st__memset(pl->match, 0, words * 8);
    for (uint32_t k = 0; k < n_str && k < enc->vocab.n_special; k++) {
        uint8_t f = enc->hf.string_flags[k];
        if (!(f & ST__ADDED_SPECIAL)) { bit_put(pl->allowed, k, 1); bit_put(pl->disallowed, k, 0); }
        bit_put(f & ST__ADDED_NORMALIZED ? pl->normalized : pl->match, k, 1);
    }
    pl->any_allowed = any_bit(pl->allowed, words);
    pl->any_match = any_bit(pl->match, words);
    pl->any_normalized = any_bit(pl->normalized, words);
    pl->any_disallowed = pl->n_unknown > 0 || any_bit(pl->disallowed, words);
    return ST_OK;
}

/* The longest disallowed string at s[i..] (special strings first, so that one of them wins
 * over an equal unknown string): 1 and its bytes, length and id (0xFFFFFFFF for a string that
 * is no special token), or 0. */
static int disallowed_at(const st_encoding *enc, const st__policy *pl, const uint8_t *s, size_t i, size_t len,
                         const uint8_t **found, uint32_t *found_len, uint32_t *found_id) {
    int any = 0;
    const special_entry *e = pl->disallowed ? longest_at(enc, pl->disallowed, s, i, len) : NULL;
    uint32_t a, tl;
    if (e && st__vocab_special_string(&enc->vocab, e->k, found_id, &a, &tl)) {
        any = 1;
        *found = enc->vocab.bytes + a;
        *found_len = tl;
    }
    for (size_t k = pl->first_disallowed; pl->n_unknown && k < pl->end_disallowed; k++) {
        size_t a = k ? pl->ends[k - 1] : 0, tl = pl->ends[k] - a;
        const uint8_t *p = (const uint8_t *)pl->strings + a;
        /* a special string of that length here was found above, with its id */
        if ((!any || tl > *found_len) && tl <= len - i && tl <= UINT32_MAX &&
            (tl == 0 || st__memcmp(s + i, p, tl) == 0) && !entry_of(enc, p, tl)) {
            any = 1;
            *found = p;
            *found_len = (uint32_t)tl;
            *found_id = ST__NO_TOKEN_ID;
        }
    }
    return any;
}

/* If the text holds a disallowed string anywhere: ST_ERR_DISALLOWED_SPECIAL for the first (the
 * earliest; at one position the longest), as tiktoken's regex search over the raw text finds
 * it, whatever the allowed specials around it. The strings are the disallowed special strings
 * and the disallowed strings of a ST_SPECIAL_BY_TEXT policy that are no special token. */
st_status st__check_disallowed(const st_encoding *enc, const st__policy *pl, const uint8_t *s, size_t len,
                               st_error *err) {
    if (!pl->any_disallowed) return ST_OK;
    uint8_t first[256];
    int distinct = st__special_first_bytes(enc, pl->disallowed, first);
    uint8_t only = (uint8_t)st__special_only_byte(first, distinct);
    for (size_t k = pl->first_disallowed; pl->n_unknown && k < pl->end_disallowed; k++) {
        size_t a = k ? pl->ends[k - 1] : 0;
        uint8_t c = (uint8_t)pl->strings[a];
        if (pl->ends[k] > a && !first[c]) { first[c] = 1; distinct++; only = c; }
    }
    const uint8_t *found = NULL;
    uint32_t found_len = 0, found_id = ST__NO_TOKEN_ID;
    size_t at = 0;
    /* an empty string is found at once, at offset 0, unless a longer one starts there */
    int any = pl->empty_unknown && disallowed_at(enc, pl, s, 0, len, &found, &found_len, &found_id);
    for (size_t i = 0; !any && distinct && i < len; i++) {
        if (distinct == 1) { /* every tiktoken special starts with '<': the whole text is searched
                                for it eight bytes a step (a byte loop cost 5-10% on English) */
            i = st__find_byte(s, i, len, only);
            if (i >= len) break;
        } else if (!first[s[i]]) {
            continue;
        }
        any = disallowed_at(enc, pl, s, i, len, &found, &found_len, &found_id);
        at = i;
    }
    if (!any) return ST_OK;
    st__error_set(err, ST_ERR_DISALLOWED_SPECIAL, ST_UNIT_BYTE, at, NULL);
    st__error_token(err, found_id);
    st__error_kind(err, ST_KIND_DISALLOWED_SPECIAL, found_len);
    if (err) { /* its text (the string found: an id may have several), cut on a character
                  boundary if it does not fit */
        size_t n = found_len < sizeof err->message - 1 ? found_len : sizeof err->message - 1;
        while (n < found_len && n > 0 && (found[n] & 0xC0) == 0x80) n--;
        st__error_append_bytes(err, (const char *)found, n);
    }
    return ST_ERR_DISALLOWED_SPECIAL;
}

uint32_t st__special_at(const st_encoding *enc, const uint64_t *allowed, const uint8_t *s, size_t i, size_t len,
                        size_t *match_len, uint32_t *string) {
    const special_entry *e = longest_at(enc, allowed, s, i, len);
    uint32_t id = ST_NO_TOKEN, a, tl;
    if (e) st__vocab_special_string(&enc->vocab, e->k, &id, &a, &tl); /* the order holds good spans only */
    *match_len = e ? e->len : 0;
    if (string) *string = e ? e->k : 0;
    return id;
}

/* The set's strings by their numbers' order, until every first byte of the order is seen: the
 * one first byte of tiktoken's specials is seen at once, whatever the size of the set. */
int st__special_first_bytes(const st_encoding *enc, const uint64_t *set, uint8_t first[256]) {
    int distinct = 0, groups = set ? (int)enc->special_first_bytes : 0;
    st__memset(first, 0, 256);
    uint32_t n_str = st__vocab_n_strings(&enc->vocab);
    for (uint32_t w = 0; w < (n_str + 63) / 64 && distinct < groups; w++) {
        for (uint64_t m = set[w]; m && distinct < groups; m &= m - 1) { /* the set bits of the word */
            uint32_t k = w * 64 + (uint32_t)__builtin_ctzll(m), id, a, tl;
            if (st__vocab_special_string(&enc->vocab, k, &id, &a, &tl) && !first[enc->vocab.bytes[a]]) {
                first[enc->vocab.bytes[a]] = 1;
                distinct++;
            }
        }
    }
    return distinct;
}
