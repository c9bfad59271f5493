/* Vocabulary loading (tiktoken rank files) and the bytes -> id table. */
#include "vocab.h"
#include "base64.h"
#include "../text/unicode.h"
#include "../text/utf8.h"

/* ---- the rank-file format ----------------------------------------------------------------- */

/* One "base64 rank" line. Empty lines are skipped (as tiktoken's loader does); a trailing '\r'
 * is allowed. */
typedef struct line {
    size_t start, b64_len;
    uint32_t id;
    long bytes_len;
} line;

/* Parse the line starting at *pos; advances *pos past it. Returns 1 for a line, 0 at the end,
 * -1 if malformed (*pos is then the start of the bad line, and *why and *kind, if given, say
 * what was wrong with it). */
static int next_line(const uint8_t *s, size_t n, size_t *pos, line *ln, int validate, const char **why,
                     st_error_kind *kind) {
    size_t i = *pos;
    while (i < n && (s[i] == '\n' || s[i] == '\r')) i++;
    if (i >= n) { *pos = n; return 0; }
    size_t start = i;
    while (i < n && s[i] != ' ' && s[i] != '\n') i++;
    size_t b64_end = i;
    if (i >= n || s[i] != ' ' || b64_end == start) {
        if (why) *why = b64_end == start ? "no token before the space" : "no space between token and rank";
        if (kind && b64_end == start) *kind = ST_KIND_EMPTY_TOKEN;
        *pos = start;
        return -1;
    }
    i++;
    uint64_t id = 0;
    size_t digits = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        id = id * 10 + (uint64_t)(s[i] - '0');
        if (id > 0x7FFFFFFFu) {
            if (why) *why = "rank above 2^31 - 1";
            if (kind) *kind = ST_KIND_ID_TOO_LARGE;
            *pos = start;
            return -1;
        }
        i++;
        digits++;
    }
    if (i < n && s[i] == '\r') i++;
    if (!digits || (i < n && s[i] != '\n')) {
        if (why) *why = digits ? "text after the rank" : "the rank is not a decimal number";
        *pos = start;
        return -1;
    }
    long blen = validate ? st__base64_decode(s + start, b64_end - start, NULL) : st__base64_decoded_length(s + start, b64_end - start);
    if (blen <= 0) { if (why) *why = "the token is not padded base64 of at least one byte"; *pos = start; return -1; }
    ln->start = start;
    ln->b64_len = b64_end - start;
    ln->id = (uint32_t)id;
    ln->bytes_len = blen;
    *pos = i;
    return 1;
}

typedef struct scan_totals {
    size_t count;
    uint64_t bytes;
    uint32_t max_id;
    size_t max_id_line; /* offset of the line holding max_id */
} scan_totals;

/* ST_ERR_MALFORMED_MODEL at the line starting at byte pos of s (input 0: the rank file, 1: the
 * specials text), with its 1-based number (counted only now: errors are rare, loads are not). */
static st_status line_error(st_error *err, const uint8_t *s, size_t pos, uint32_t input, const char *msg) {
    uint64_t line = 1;
    for (size_t k = 0; k < pos; k++) line += s[k] == '\n';
    st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, pos, msg);
    st__error_line(err, line, input);
    return ST_ERR_MALFORMED_MODEL;
}

/* ST_ERR_MALFORMED_MODEL of a kind about an id (ST_KIND_ID_REPEATED, ST_KIND_ID_TAKEN) at the
 * line starting at byte pos: token = the id, and a message calling it a rank in the rank file
 * (input 0) and an id in the specials text. */
static st_status id_error(st_error *err, const uint8_t *s, size_t pos, uint32_t input, st_error_kind kind,
                          uint32_t id) {
    line_error(err, s, pos, input, input ? "id " : "rank ");
    st__error_append_u64(err, id);
    st__error_append(err, kind == ST_KIND_ID_TAKEN ? " is taken by an ordinary token" : " is given to an earlier line too");
    st__error_token(err, id);
    st__error_kind(err, kind, 0);
    return ST_ERR_MALFORMED_MODEL;
}

static st_status scan_file(const uint8_t *s, size_t n, scan_totals *t, uint32_t input, st_error *err) {
    size_t pos = 0;
    line ln;
    int r;
    const char *why = "malformed line";
    st_error_kind kind = ST_KIND_NONE;
    while ((r = next_line(s, n, &pos, &ln, 1, &why, &kind)) > 0) {
        t->count++;
        t->bytes += (uint64_t)ln.bytes_len;
        if (ln.id > t->max_id) { t->max_id = ln.id; t->max_id_line = ln.start; }
    }
    if (r < 0) {
        if (kind == ST_KIND_ID_TOO_LARGE && input) why = "id above 2^31 - 1"; /* the specials have ids */
        line_error(err, s, pos, input, why);
        st__error_kind(err, kind, 0);
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

/* Second pass: record each id's length in offsets[id + 1]; a repeated id is an error. */
static st_status fill_lengths(const uint8_t *s, size_t n, uint32_t *offsets, uint32_t input, st_error *err) {
    size_t pos = 0;
    line ln;
    while (next_line(s, n, &pos, &ln, 0, NULL, NULL) > 0) {
        if (offsets[ln.id + 1]) return id_error(err, s, ln.start, input, ST_KIND_ID_REPEATED, ln.id);
        offsets[ln.id + 1] = (uint32_t)ln.bytes_len;
    }
    return ST_OK;
}

static void fill_bytes(const uint8_t *s, size_t n, const uint32_t *offsets, uint8_t *bytes) {
    size_t pos = 0;
    line ln;
    while (next_line(s, n, &pos, &ln, 0, NULL, NULL) > 0) st__base64_decode(s + ln.start, ln.b64_len, bytes + offsets[ln.id]);
}

static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

/* The distinct ids of the specials text, sorted, and their number. Heapsort: a hostile model
 * may give many specials in any order, and the sort needs no memory of its own. */
static void ids_sift_down(uint32_t *h, size_t at, size_t n) {
    uint32_t x = h[at];
    for (size_t c; (c = 2 * at + 1) < n; at = c) {
        if (c + 1 < n && h[c + 1] > h[c]) c++;
        if (h[c] <= x) break;
        h[at] = h[c];
    }
    h[at] = x;
}

static uint32_t sorted_special_ids(const uint8_t *ss, size_t len, uint32_t *special_ids) {
    size_t pos = 0, k = 0;
    line ln;
    while (next_line(ss, len, &pos, &ln, 0, NULL, NULL) > 0) special_ids[k++] = ln.id;
    for (size_t i = k / 2; i-- > 0;) ids_sift_down(special_ids, i, k);
    for (size_t end = k; end > 1; end--) {
        uint32_t top = special_ids[0];
        special_ids[0] = special_ids[end - 1];
        special_ids[end - 1] = top;
        ids_sift_down(special_ids, 0, end - 1);
    }
    size_t n = 0; /* an id given several strings is one special token */
    for (size_t x = 0; x < k; x++)
        if (!n || special_ids[n - 1] != special_ids[x]) special_ids[n++] = special_ids[x];
    return (uint32_t)n;
}

/* The specials' lengths, as fill_lengths, but an id given on an earlier line of the specials
 * text too is a further string of that special (tiktoken's o200k_harmony gives 200018 two): it
 * goes to extra (id, line start, length; the start becomes a byte offset in fill_specials) and
 * its count to *n_extra. An id of the rank file is still an error. seen: n_ids bits, zeroed. */
static st_status fill_special_lengths(const uint8_t *s, size_t n, uint32_t *offsets, uint64_t *seen,
                                      uint32_t *extra, uint32_t *n_extra, st_error *err) {
    size_t pos = 0;
    line ln;
    *n_extra = 0;
    while (next_line(s, n, &pos, &ln, 0, NULL, NULL) > 0) {
        int again = (int)((seen[ln.id >> 6] >> (ln.id & 63)) & 1);
        if (again) {
            uint32_t *x = extra + 3 * (size_t)(*n_extra)++;
            x[0] = ln.id;
            x[1] = (uint32_t)ln.start;
            x[2] = (uint32_t)ln.bytes_len;
            continue;
        }
        if (offsets[ln.id + 1]) return id_error(err, s, ln.start, 1, ST_KIND_ID_TAKEN, ln.id);
        seen[ln.id >> 6] |= 1ull << (ln.id & 63);
        offsets[ln.id + 1] = (uint32_t)ln.bytes_len;
    }
    return ST_OK;
}

/* fill_lengths for the specials of a rules model: an id below n_ord shares an ordinary token
 * (check_shared compares the bytes) and keeps that token's length. */
static st_status fill_lengths_from(const uint8_t *s, size_t n, uint32_t *offsets, uint32_t n_ord, st_error *err) {
    size_t pos = 0;
    line ln;
    while (next_line(s, n, &pos, &ln, 0, NULL, NULL) > 0) {
        if (ln.id < n_ord) continue;
        if (offsets[ln.id + 1]) return id_error(err, s, ln.start, 1, ST_KIND_ID_REPEATED, ln.id);
        offsets[ln.id + 1] = (uint32_t)ln.bytes_len;
    }
    return ST_OK;
}

/* ST_ERR_MALFORMED_MODEL at the first line of the specials text giving an id that an earlier
 * line gives too (the caller knows one does: fewer distinct ids than lines); one pass with a bit
 * for each of the n_ids ids. */
static st_status repeated_special_id(const uint8_t *s, size_t n, uint32_t n_ids, const st_allocator *a, st_error *err) {
    size_t seen_size = (((size_t)n_ids + 63) / 64) * 8;
    uint64_t *seen = (uint64_t *)st__alloc(a, seen_size);
    if (!seen) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(seen, 0, seen_size);
    size_t pos = 0;
    line ln;
    while (next_line(s, n, &pos, &ln, 0, NULL, NULL) > 0) {
        if ((seen[ln.id >> 6] >> (ln.id & 63)) & 1) {
            id_error(err, s, ln.start, 1, ST_KIND_ID_REPEATED, ln.id);
            break;
        }
        seen[ln.id >> 6] |= 1ull << (ln.id & 63);
    }
    st__free(a, seen, seen_size);
    return ST_ERR_MALFORMED_MODEL;
}

/* A special with an ordinary token's id (below n_ord) must spell exactly that token's bytes:
 * decoded into scratch (room for every special's bytes) and compared. */
static st_status check_shared(const uint8_t *ss, size_t len, const uint32_t *offsets, uint32_t n_ord,
                              const uint8_t *bytes, uint8_t *scratch, st_error *err) {
    size_t pos = 0;
    line ln;
    while (next_line(ss, len, &pos, &ln, 0, NULL, NULL) > 0) {
        if (ln.id >= n_ord) continue;
        st__base64_decode(ss + ln.start, ln.b64_len, scratch);
        uint32_t tl = offsets[ln.id + 1] - offsets[ln.id];
        if (tl == ln.bytes_len && st__memcmp(bytes + offsets[ln.id], scratch, tl) == 0) {
            /* a special is text found in text, shared or not (fill_specials) */
            if (st_utf8_validate((const char *)scratch, tl, NULL) == ST_OK) continue;
            line_error(err, ss, ln.start, 1, "special token ");
            st__error_append_quoted(err, scratch, ln.bytes_len);
            st__error_append(err, " is not valid UTF-8");
            return ST_ERR_MALFORMED_MODEL;
        }
        line_error(err, ss, ln.start, 1, "special token ");
        st__error_append_quoted(err, scratch, ln.bytes_len);
        st__error_append(err, " has the id of an ordinary token, ");
        st__error_append_u64(err, ln.id);
        st__error_append(err, ", but not its bytes");
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

/* Write the specials' bytes at their offsets. A special token is text found in text: its
 * bytes must be valid UTF-8, or a match could start or end inside a character;
 * ST_ERR_MALFORMED_MODEL at the first line that is not. */
static st_status fill_specials(const uint8_t *ss, size_t len, const uint32_t *offsets, uint32_t n_ids,
                               uint8_t *bytes, uint32_t *extra, uint32_t n_extra, uint32_t shared_below, st_error *err) {
    size_t pos = 0;
    line ln;
    uint32_t k = 0, at = offsets[n_ids]; /* the further strings go after every id's */
    while (next_line(ss, len, &pos, &ln, 0, NULL, NULL) > 0) {
        if (ln.id < shared_below) continue; /* a token's id: its bytes are the token's (check_shared) */
        uint8_t *p;
        size_t n;
        if (k < n_extra && extra[3 * k + 1] == (uint32_t)ln.start) { /* a further string of its id */
            extra[3 * k + 1] = at;
            p = bytes + at;
            n = ln.bytes_len;
            at += (uint32_t)n;
            k++;
        } else {
            p = bytes + offsets[ln.id];
            n = offsets[ln.id + 1] - offsets[ln.id];
        }
        st__base64_decode(ss + ln.start, ln.b64_len, p);
        if (st_utf8_validate((const char *)p, n, NULL) != ST_OK) {
            line_error(err, ss, ln.start, 1, "special token ");
            st__error_append_quoted(err, p, n);
            st__error_append(err, " is not valid UTF-8");
            return ST_ERR_MALFORMED_MODEL;
        }
    }
    return ST_OK;
}

/* The arrays of a rank vocabulary, in one allocation (both loaders, the rank file's and the
 * compact image's, fill the same layout). */
typedef struct vocab_block {
    uint8_t *block;
    size_t total;
    uint32_t *offsets, *special_ids, *extra, *pair_ids;
    uint64_t *table;
    uint8_t *bytes;
    uint32_t cap; /* table slots, a power of two */
} vocab_block;

/* n_ids ids, n_ordinary of them in the table, up to n_special_lines special strings, bytes in
 * all; zeroed, pair_ids all ST_NO_TOKEN. */
static st_status vocab_alloc(vocab_block *b, const st_allocator *a, uint32_t n_ids, size_t n_ordinary,
                             size_t n_special_lines, uint64_t bytes, st_error *err) {
    uint32_t cap = 1;
    while (cap < 2 * n_ordinary) cap <<= 1; /* about half full */
    size_t off_size = align8(((size_t)n_ids + 1) * 4);
    size_t tab_size = (size_t)cap * 8;
    size_t spec_size = align8(n_special_lines * 4);
    size_t extra_size = align8(n_special_lines * 12); /* room for every special line to be a further string */
    size_t pair_size = 65536 * 4;
    size_t bytes_size = align8((size_t)bytes) + 8; /* + 8: see st__vocab_lookup_short */
    size_t total = off_size + tab_size + spec_size + extra_size + pair_size + bytes_size;
    uint8_t *block = (uint8_t *)st__alloc(a, total);
    if (!block) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(block, 0, total);
    b->block = block;
    b->total = total;
    b->cap = cap;
    b->offsets = (uint32_t *)(void *)block;
    b->table = (uint64_t *)(void *)(block + off_size);
    b->special_ids = (uint32_t *)(void *)(block + off_size + tab_size);
    b->extra = (uint32_t *)(void *)(block + off_size + tab_size + spec_size);
    b->pair_ids = (uint32_t *)(void *)(block + off_size + tab_size + spec_size + extra_size);
    b->bytes = block + off_size + tab_size + spec_size + extra_size + pair_size;
    st__memset(b->pair_ids, 0xFF, pair_size);
    return ST_OK;
}

/* The specials' lengths into b->offsets (fill_special_lengths, with its scratch bit set). */
static st_status special_lengths(vocab_block *b, const st_allocator *a, const uint8_t *ss, size_t specials_len,
                                 uint32_t n_ids, uint32_t *n_extra, st_error *err) {
    *n_extra = 0;
    if (!specials_len) return ST_OK;
    size_t seen_size = (((size_t)n_ids + 63) / 64) * 8;
    uint64_t *seen = (uint64_t *)st__alloc(a, seen_size);
    if (!seen) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(seen, 0, seen_size);
    st_status st = fill_special_lengths(ss, specials_len, b->offsets, seen, b->extra, n_extra, err);
    st__free(a, seen, seen_size);
    return st;
}

/* Hand the filled block to v (the table is filled after, by index_token). */
static void vocab_adopt(st_vocab *v, const vocab_block *b, uint32_t n_ids, uint32_t n_ordinary, uint32_t n_special,
                        uint32_t n_extra, uint64_t bytes) {
    v->n_ids = n_ids;
    v->n_ordinary = n_ordinary;
    v->n_special = n_special;
    v->n_extra = n_extra;
    v->extra = b->extra;
    v->table_mask = b->cap - 1;
    v->bytes_len = bytes;
    v->offsets = b->offsets;
    v->bytes = b->bytes;
    v->table = b->table;
    v->special_ids = b->special_ids;
    v->pair_ids = b->pair_ids;
    v->owned = b->block;
    v->owned_size = b->total;
}

/* Put ordinary token id into the table (and pair_ids if it is two bytes): ST_NO_TOKEN, or the
 * id of an earlier token with the same bytes (then nothing is inserted). */
static uint32_t index_token(st_vocab *v, const vocab_block *b, uint32_t id) {
    const uint8_t *p = b->bytes + b->offsets[id];
    size_t len = b->offsets[id + 1] - b->offsets[id];
    uint32_t earlier = st__vocab_lookup(v, p, len);
    if (earlier != ST_NO_TOKEN) return earlier;
    if (len == 2) b->pair_ids[((uint32_t)p[0] << 8) | p[1]] = id;
    uint64_t h = st__hash_bytes(p, len);
    uint32_t i = (uint32_t)h & (b->cap - 1);
    while (b->table[i]) i = (i + 1) & (b->cap - 1);
    b->table[i] = (h & 0xFFFFFFFF00000000ull) | ((uint64_t)id + 1);
    return ST_NO_TOKEN;
}

static void fill_byte_ids(st_vocab *v) {
    for (int b = 0; b < 256; b++) {
        uint8_t c = (uint8_t)b;
        v->byte_ids[b] = st__vocab_lookup(v, &c, 1);
    }
}

st_status st__vocab_parse_tiktoken(st_vocab *v, const st_allocator *a, const char *ranks, size_t ranks_len,
                                   const char *specials, size_t specials_len, st_error *err) {
    const uint8_t *rs = (const uint8_t *)ranks, *ss = (const uint8_t *)specials;
    scan_totals tr = {0, 0, 0, 0}, ts = {0, 0, 0, 0};
    st__memset(v, 0, sizeof *v);
    st_status st = scan_file(rs, ranks_len, &tr, 0, err);
    if (st != ST_OK) return st;
    if (!tr.count) return line_error(err, rs, 0, 0, "the rank file holds no token");
    if (specials_len) {
        st = scan_file(ss, specials_len, &ts, 1, err);
        if (st != ST_OK) return st;
    }
    uint32_t max_id = tr.max_id > ts.max_id ? tr.max_id : ts.max_id;
    size_t entries = tr.count + ts.count;
    /* ids must be dense enough that the id index is not mostly holes: a rank of 2^31 in a
     * 10-line file is a malformed file, not a request for 8 GB */
    if ((uint64_t)max_id + 1 > 2 * (uint64_t)entries + 65536) { /* name the line with the rank */
        int in_spec = ts.count && ts.max_id > tr.max_id;
        line_error(err, in_spec ? ss : rs, in_spec ? ts.max_id_line : tr.max_id_line, (uint32_t)in_spec, "rank ");
        st__error_append_u64(err, max_id);
        st__error_append(err, " leaves most ids below it unused");
        return ST_ERR_MALFORMED_MODEL;
    }
    if (tr.bytes + ts.bytes > 0xFFFFFFFFull) return line_error(err, rs, 0, 0, "the tokens hold 4 GB or more");
    uint32_t n_ids = max_id + 1;
    vocab_block b;
    st = vocab_alloc(&b, a, n_ids, tr.count, ts.count, tr.bytes + ts.bytes, err);
    if (st != ST_OK) return st;

    uint32_t n_special = 0, n_extra = 0;
    st = fill_lengths(rs, ranks_len, b.offsets, 0, err);
    if (st == ST_OK) st = special_lengths(&b, a, ss, specials_len, n_ids, &n_extra, err);
    if (st != ST_OK) { st__free(a, b.block, b.total); return st; }
    if (specials_len) n_special = sorted_special_ids(ss, specials_len, b.special_ids);
    for (uint32_t i = 0; i < n_ids; i++) b.offsets[i + 1] += b.offsets[i];
    fill_bytes(rs, ranks_len, b.offsets, b.bytes);
    if (specials_len) {
        if ((st = fill_specials(ss, specials_len, b.offsets, n_ids, b.bytes, b.extra, n_extra, 0, err)) != ST_OK) {
            st__free(a, b.block, b.total);
            return st;
        }
    }
    vocab_adopt(v, &b, n_ids, (uint32_t)tr.count, n_special, n_extra, tr.bytes + ts.bytes);

    /* the table holds ordinary tokens only; specials are matched by the special-token scan */
    size_t pos = 0;
    line ln;
    while (next_line(rs, ranks_len, &pos, &ln, 0, NULL, NULL) > 0) {
        uint32_t earlier = index_token(v, &b, ln.id);
        if (earlier != ST_NO_TOKEN) { /* the same bytes twice */
            line_error(err, rs, ln.start, 0, "token ");
            st__error_append_quoted(err, b.bytes + b.offsets[ln.id], b.offsets[ln.id + 1] - b.offsets[ln.id]);
            st__error_append(err, " has rank ");
            st__error_append_u64(err, earlier);
            st__error_append(err, " on an earlier line");
            st__free(a, b.block, b.total);
            st__memset(v, 0, sizeof *v);
            return ST_ERR_MALFORMED_MODEL;
        }
    }
    fill_byte_ids(v);
    return ST_OK;
}

/* ---- merge-rules models ------------------------------------------------------------------ */

/* Whether the text of a token holds a letter (\p{L}: Lu, Ll, Lt, Lm, Lo), the text being its
 * bytes (byte-level) or what its UBE symbols spell: a byte symbol is a UTF-8 byte, two symbols
 * of the second alphabet a UTF-16 unit, low byte first (docs/design.md §6). Text that is not
 * valid gives 0: such a token is never the whole of a pretoken, which is all the superword
 * pass asks about. */
static int token_has_letter(const uint8_t *p, size_t n, uint32_t unit) {
    int letter = 0;
    if (unit == 1) {
        if (st_utf8_validate((const char *)p, n, NULL) != ST_OK) return 0;
        for (size_t i = 0; i < n && !letter;) {
            uint32_t cp;
            i += st__utf8_decode(p + i, &cp);
            uint8_t c = st_ucd_class(cp) & ST_UCD_CLASS_MASK;
            letter = c >= ST_UCD_LU && c <= ST_UCD_LO;
        }
        return letter;
    }
    size_t count = n / 2;
#define SYM(k) ((uint32_t)p[2 * (k)] | ((uint32_t)p[2 * (k) + 1] << 8))
    for (size_t k = 0; k < count;) {
        uint32_t s = SYM(k), cp;
        if (s < 256) { /* a UTF-8 sequence of byte symbols */
            size_t l = s < 0x80 ? 1 : (s & 0xE0) == 0xC0 ? 2 : (s & 0xF0) == 0xE0 ? 3 : (s & 0xF8) == 0xF0 ? 4 : 0;
            uint8_t b[4];
            if (!l || k + l > count) return 0;
            for (size_t j = 0; j < l; j++) {
                uint32_t t = SYM(k + j);
                if (t >= 256) return 0;
                b[j] = (uint8_t)t;
            }
            if (st_utf8_validate((const char *)b, l, NULL) != ST_OK) return 0;
            st__utf8_decode(b, &cp);
            k += l;
        } else { /* a UTF-16 unit, or a surrogate pair */
            if (k + 2 > count || SYM(k + 1) < 256) return 0;
            uint32_t u = (s - 256) | ((SYM(k + 1) - 256) << 8);
            k += 2;
            if (u >= 0xDC00 && u <= 0xDFFF) return 0;
            if (u >= 0xD800 && u <= 0xDBFF) {
                if (k + 2 > count || SYM(k) < 256 || SYM(k + 1) < 256) return 0;
                uint32_t lo = (SYM(k) - 256) | ((SYM(k + 1) - 256) << 8);
                if (lo < 0xDC00 || lo > 0xDFFF) return 0;
                k += 2;
                cp = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else {
                cp = u;
            }
        }
        uint8_t c = st_ucd_class(cp) & ST_UCD_CLASS_MASK;
        if (c >= ST_UCD_LU && c <= ST_UCD_LO) letter = 1;
    }
#undef SYM
    return letter;
}

/* Part ids of rule i of a section whose rule 0 makes id first: both below the rule's own id. */
static st_status check_parts(const uint32_t *pairs, size_t n, uint32_t first, uint32_t input, st_error *err) {
    for (size_t i = 0; i < n; i++)
        if (pairs[2 * i] >= first + i || pairs[2 * i + 1] >= first + i) {
            st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, i, input == 2 ? "supermerge " : "rule ");
            st__error_append_u64(err, i);
            st__error_append(err, ": part ");
            st__error_append_u64(err, pairs[2 * i] >= first + i ? pairs[2 * i] : pairs[2 * i + 1]);
            st__error_append(err, " is not below the rule's own id ");
            st__error_append_u64(err, first + i);
            st__error_line(err, 0, input);
            return ST_ERR_MALFORMED_MODEL;
        }
    return ST_OK;
}

/* Insert the n rules of pairs (rule i makes id first + i) into the table slots[0..mask]; a pair
 * already there (from this section, or found in `other`) is ST_ERR_MALFORMED_MODEL naming both. */
/* sup: NULL for the regular rules (slot st__mix64(key) & mask); the supermerges' st_supers
 * (self's slots are sup's) for theirs, whose slot and filter bit come from st__supers_hash
 * (vocab.h) and whose filter (sup->filter, writable here as filter) gets each key's bit. */
static st_status insert_rules(uint64_t *slots, uint32_t mask, const st_rules *self, const st_rules *other,
                              const uint32_t *pairs, size_t n, uint32_t first, uint32_t input, const st_supers *sup,
                              uint64_t *filter, st_error *err) {
    for (size_t i = 0; i < n; i++) {
        uint32_t l = pairs[2 * i], r = pairs[2 * i + 1];
        uint32_t earlier = sup ? st__supers_find(sup, l, r) : st__rule_find(self, l, r), from = first;
        const char *what = input == 2 ? " repeats supermerge " : " repeats rule ";
        if (earlier == ST_NO_TOKEN && other && other->slots) {
            earlier = st__rule_find(other, l, r);
            from = other->base;
            what = " repeats rule ";
        }
        if (earlier != ST_NO_TOKEN) { /* the same pair twice */
            st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, i, input == 2 ? "supermerge " : "rule ");
            st__error_append_u64(err, i);
            st__error_append(err, what);
            st__error_append_u64(err, earlier - from);
            st__error_line(err, 0, input);
            return ST_ERR_MALFORMED_MODEL;
        }
        uint64_t key = ((uint64_t)l << 21) | r;
        uint32_t k = (uint32_t)st__mix64(key) & mask;
        if (sup) {
            uint64_t h = st__supers_hash(key), bit = h >> (sup->shift - 2);
            filter[bit >> 6] |= 1ull << (bit & 63);
            k = (uint32_t)(h >> sup->shift);
        }
        while (slots[k]) k = (k + 1) & mask;
        slots[k] = (key << 21) | (first + (uint32_t)i);
    }
    return ST_OK;
}

st_status st__rules_token_lengths(int alphabet, const uint32_t *merges, size_t n_merges, const uint32_t *supers,
                                  size_t n_super, uint32_t *len, uint64_t *bytes, st_error *err) {
    uint32_t base = alphabet == ST_ALPHABET_UBE ? 512 : 256, unit = alphabet == ST_ALPHABET_UBE ? 2 : 1;
    uint64_t n_rules = (uint64_t)n_merges + n_super, limit = st__rules_token_bytes_limit(n_rules), made = 0;
    for (uint32_t id = 0; id < base; id++) len[id] = 1;
    for (size_t i = 0; i < n_merges + n_super; i++) {
        const uint32_t *pr = i < n_merges ? merges + 2 * i : supers + 2 * (i - n_merges);
        uint64_t l = (uint64_t)len[pr[0]] + len[pr[1]]; /* each part is at most the limit: no overflow */
        made += l * unit;
        if (made > limit) { /* the running total only grows: this rule is the one that crosses it */
            int sup = i >= n_merges;
            st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, sup ? i - n_merges : i,
                          "the tokens reach ");
            st__error_append_u64(err, made);
            st__error_append(err, " bytes here, over the limit ");
            st__error_append_u64(err, limit);
            st__error_append(err, " (16 MiB + 256 bytes a rule)");
            st__error_line(err, 0, sup ? 2 : 0);
            return ST_ERR_MALFORMED_MODEL;
        }
        len[base + i] = (uint32_t)l;
    }
    *bytes = (uint64_t)base * unit + made;
    return ST_OK;
}

st_status st__vocab_from_merges(st_vocab *v, st_rules *rs, st_supers *sup, const st_allocator *a, int alphabet,
                                const uint32_t *merges, size_t n_merges, const uint32_t *supers, size_t n_super,
                                const char *specials, size_t specials_len, st_error *err) {
    const uint8_t *ss = (const uint8_t *)specials;
    st__memset(v, 0, sizeof *v);
    st__memset(rs, 0, sizeof *rs);
    st__memset(sup, 0, sizeof *sup);
    if (alphabet != ST_ALPHABET_BYTES && alphabet != ST_ALPHABET_UBE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown alphabet");
    uint32_t base = alphabet == ST_ALPHABET_UBE ? 512 : 256, unit = alphabet == ST_ALPHABET_UBE ? 2 : 1;
    if (n_merges >= ST_RULES_MAX_IDS - base)
        return st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, n_merges, "more rules than 2^21 ids hold");
    if (n_super >= ST_RULES_MAX_IDS - base - n_merges) {
        st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, n_super, "more rules than 2^21 ids hold");
        st__error_line(err, 0, 2);
        return ST_ERR_MALFORMED_MODEL;
    }
    uint32_t n_reg = base + (uint32_t)n_merges, n_ord = n_reg + (uint32_t)n_super;
    /* every rule joins two earlier tokens; token lengths (in symbols) add up */
    st_status cst = check_parts(merges, n_merges, base, 0, err);
    if (cst == ST_OK) cst = check_parts(supers, n_super, n_reg, 2, err);
    if (cst != ST_OK) return cst;
    scan_totals ts = {0, 0, 0, 0};
    if (specials_len) {
        st_status st = scan_file(ss, specials_len, &ts, 1, err);
        if (st != ST_OK) return st;
        size_t pos = 0;
        line ln;
        /* a special may have a byte token's or a rule's id only to share that token (its text is
         * the token's bytes, checked below): a UBE token is symbols, never text */
        while (next_line(ss, specials_len, &pos, &ln, 0, NULL, NULL) > 0)
            if ((ln.id < n_ord && unit == 2) || ln.id >= ST_RULES_MAX_IDS) {
                line_error(err, ss, ln.start, 1, "special token id ");
                st__error_append_u64(err, ln.id);
                st__error_append(err, ln.id < n_ord ? " is a symbol's or rule's id" : " is above 2^21 - 1");
                return ST_ERR_MALFORMED_MODEL;
            }
    }
    uint32_t n_ids = ts.count && ts.max_id >= n_ord ? ts.max_id + 1 : n_ord;
    if ((uint64_t)n_ids > (uint64_t)n_ord + 2 * ts.count + 65536) {
        line_error(err, ss, ts.max_id_line, 1, "special token id ");
        st__error_append_u64(err, ts.max_id);
        st__error_append(err, " leaves most ids below it unused");
        return ST_ERR_MALFORMED_MODEL;
    }
    uint32_t cap = 1, rcap = 1, scap = 1;
    while (cap < 2 * n_ord) cap <<= 1;
    while (rcap < 2 * n_merges + 2) rcap <<= 1;
    while (scap < 2 * n_super + 2) scap <<= 1;
    size_t off_size = align8(((size_t)n_ids + 1) * 4);
    size_t tab_size = (size_t)cap * 8;
    size_t spec_size = align8(ts.count * 4);
    size_t rules_size = (size_t)rcap * 8;
    /* supermerges: their rule table and the eligible bits of the regular ids */
    uint32_t sbits = 0;
    while ((1u << sbits) < scap) sbits++;
    size_t filter_size = scap / 2 < 8 ? 8 : scap / 2; /* 4 bits per slot, whole words */
    size_t elig_size = ((size_t)n_ord + 63) / 64 * 8, parts_size = ((size_t)n_ord + 31) / 32 * 8;
    size_t sup_size = n_super ? (size_t)scap * 8 + filter_size + elig_size + parts_size : 0;
    /* the token lengths come from the rules, so their total is known only after a pass, and
     * checked against the limit before the tokens get any memory */
    uint32_t *len = (uint32_t *)st__alloc(a, (size_t)n_ord * 4);
    if (!len) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    uint64_t ord_bytes = 0;
    cst = st__rules_token_lengths(alphabet, merges, n_merges, supers, n_super, len, &ord_bytes, err);
    if (cst != ST_OK) {
        st__free(a, len, (size_t)n_ord * 4);
        return cst;
    }
    if (ord_bytes + ts.bytes > 0xFFFFFFF0ull) {
        st__free(a, len, (size_t)n_ord * 4);
        return st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_INDEX, n_merges, "the tokens hold 4 GB or more");
    }
    size_t bytes_size = align8((size_t)(ord_bytes + ts.bytes)) + 8;
    /* no 2-byte pair table: rules merge by rule, never by joined bytes (pair_ids stays NULL) */
    size_t total = off_size + tab_size + spec_size + rules_size + sup_size + bytes_size;
    uint8_t *block = (uint8_t *)st__alloc(a, total);
    if (!block) {
        st__free(a, len, (size_t)n_ord * 4);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    st__memset(block, 0, total);
    uint32_t *offsets = (uint32_t *)(void *)block;
    uint64_t *table = (uint64_t *)(void *)(block + off_size);
    uint32_t *special_ids = (uint32_t *)(void *)(block + off_size + tab_size);
    uint64_t *rules = (uint64_t *)(void *)(block + off_size + tab_size + spec_size);
    uint64_t *super_slots = (uint64_t *)(void *)(block + off_size + tab_size + spec_size + rules_size);
    uint64_t *filter = super_slots + scap;
    uint64_t *elig = (uint64_t *)(void *)((uint8_t *)filter + filter_size);
    uint64_t *parts = (uint64_t *)(void *)((uint8_t *)elig + elig_size);
    uint8_t *bytes = block + off_size + tab_size + spec_size + rules_size + sup_size;
    for (uint32_t id = 0; id < n_ord; id++) offsets[id + 1] = len[id] * unit;
    st__free(a, len, (size_t)n_ord * 4);
    st_status st = ST_OK;
    if (specials_len) {
        st = fill_lengths_from(ss, specials_len, offsets, n_ord, err); /* a shared id keeps its token's length */
        if (st == ST_OK && sorted_special_ids(ss, specials_len, special_ids) != ts.count)
            st = repeated_special_id(ss, specials_len, n_ids, a, err);
        if (st != ST_OK) { st__free(a, block, total); return st; }
    }
    for (uint32_t i = 0; i < n_ids; i++) offsets[i + 1] += offsets[i];
    for (uint32_t id = 0; id < base; id++) { /* the symbols themselves */
        bytes[offsets[id]] = (uint8_t)id;
        if (unit == 2) bytes[offsets[id] + 1] = (uint8_t)(id >> 8);
    }
    for (size_t i = 0; i < n_merges + n_super; i++) { /* each rule: its two parts, already written */
        const uint32_t *pr = i < n_merges ? merges + 2 * i : supers + 2 * (i - n_merges);
        uint32_t l = pr[0], r = pr[1], at = offsets[base + i];
        uint32_t ll = offsets[l + 1] - offsets[l], rl = offsets[r + 1] - offsets[r];
        st__memcpy(bytes + at, bytes + offsets[l], ll);
        st__memcpy(bytes + at + ll, bytes + offsets[r], rl);
    }
    if (specials_len) {
        if ((st = fill_specials(ss, specials_len, offsets, n_ids, bytes, NULL, 0, n_ord, err)) != ST_OK ||
            (st = check_shared(ss, specials_len, offsets, n_ord, bytes, bytes + offsets[n_ids], err)) != ST_OK) {
            st__free(a, block, total);
            return st;
        }
    }
    v->n_ids = n_ids;
    v->n_ordinary = n_ord;
    v->n_special = (uint32_t)ts.count;
    v->table_mask = cap - 1;
    v->bytes_len = ord_bytes + ts.bytes;
    v->offsets = offsets;
    v->bytes = bytes;
    v->table = table;
    v->special_ids = special_ids;
    v->pair_ids = NULL;
    v->owned = block;
    v->owned_size = total;
    v->alphabet = (uint32_t)alphabet;
    rs->slots = rules;
    rs->mask = rcap - 1;
    rs->base = base;
    /* bytes -> id: the first token with given bytes (two rules may spell the same bytes) */
    for (uint32_t id = 0; id < n_ord; id++) {
        const uint8_t *p = bytes + offsets[id];
        size_t n = offsets[id + 1] - offsets[id];
        if (st__vocab_lookup(v, p, n) != ST_NO_TOKEN) continue;
        uint64_t h = st__hash_bytes(p, n);
        uint32_t i = (uint32_t)h & (cap - 1);
        while (table[i]) i = (i + 1) & (cap - 1);
        table[i] = (h & 0xFFFFFFFF00000000ull) | ((uint64_t)id + 1);
    }
    st = insert_rules(rules, rcap - 1, rs, NULL, merges, n_merges, base, 0, NULL, NULL, err);
    if (st == ST_OK && n_super) {
        sup->rules.slots = super_slots;
        sup->rules.mask = scap - 1;
        sup->rules.base = n_reg;
        sup->n = (uint32_t)n_super;
        sup->shift = 64 - sbits;
        sup->filter = filter;
        sup->eligible = elig;
        sup->parts = parts;
        /* a supermerge's pair may be no rule either: one pair, one token */
        st = insert_rules(super_slots, scap - 1, &sup->rules, rs, supers, n_super, n_reg, 2, sup, filter, err);
        for (uint32_t id = 0; id < n_reg && st == ST_OK; id++)
            if (token_has_letter(bytes + offsets[id], offsets[id + 1] - offsets[id], unit))
                elig[id >> 6] |= 1ull << (id & 63);
        for (size_t j = 0; j < n_super; j++) {
            uint32_t l = supers[2 * j], r = supers[2 * j + 1];
            parts[l >> 5] |= (uint64_t)ST_SUPER_LEFT << (2 * (l & 31));
            parts[r >> 5] |= (uint64_t)ST_SUPER_RIGHT << (2 * (r & 31));
        }
    }
    if (st != ST_OK) {
        st__free(a, block, total);
        st__memset(v, 0, sizeof *v);
        st__memset(rs, 0, sizeof *rs);
        st__memset(sup, 0, sizeof *sup);
        return st;
    }
    for (int b = 0; b < 256; b++) v->byte_ids[b] = (uint32_t)b; /* symbol b is id b */
    return st;
}

void st__vocab_free(st_vocab *v, const st_allocator *a) {
    if (v->owned) st__free(a, v->owned, v->owned_size);
    st__memset(v, 0, sizeof *v);
}

/* ---- the binary image ------------------------------------------------------------------------
 * Little-endian, every section 8-byte aligned:
 *   0  "STVOCAB1"          8  u32 format (1)      12 u32 pattern       16 u32 n_ids
 *   20 u32 n_ordinary      24 u32 n_special       28 u32 table_mask    32 u32 bytes_len
 *   36 u32 merge mode (0 = ranks)                 40 u32 section offsets: byte_ids, offsets,
 *   table, special_ids, pair_ids, bytes (6 x u32)  64 end of header
 * Sections: byte_ids[256] u32, offsets[n_ids + 1] u32, table[table_mask + 1] u64,
 * special_ids[n_special] u32, pair_ids[65536] u32, bytes[bytes_len + 8].
 * Format 2 (written only when a special id has further strings, so the other images stay
 * format 1) adds after those: u32 n_extra, u32 0, then the extra triples (st_vocab.extra). */
#define IMG_HEADER 64
#define IMG_FORMAT 1
#define IMG_FORMAT_EXTRA 2

static void put32(uint8_t *p, uint32_t x) {
    p[0] = (uint8_t)x; p[1] = (uint8_t)(x >> 8); p[2] = (uint8_t)(x >> 16); p[3] = (uint8_t)(x >> 24);
}
static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Offsets in 64 bits: on wasm32 a damaged header's counts would wrap a 32-bit size_t. */
typedef struct img_layout {
    uint64_t byte_ids, offsets, table, special, pairs, bytes, total;
} img_layout;

static uint64_t align8_64(uint64_t x) { return (x + 7) & ~(uint64_t)7; }

static img_layout layout(uint32_t n_ids, uint32_t table_mask, uint32_t n_special, uint64_t bytes_len) {
    img_layout l;
    l.byte_ids = IMG_HEADER;
    l.offsets = l.byte_ids + 256 * 4;
    l.table = l.offsets + align8_64(((uint64_t)n_ids + 1) * 4);
    l.special = l.table + ((uint64_t)table_mask + 1) * 8;
    l.pairs = l.special + align8_64((uint64_t)n_special * 4);
    l.bytes = l.pairs + 65536 * 4;
    l.total = l.bytes + align8_64(bytes_len) + 8;
    return l;
}

static uint64_t extra_size(uint32_t n_extra) { return n_extra ? 8 + align8_64((uint64_t)n_extra * 12) : 0; }

size_t st__vocab_image_size(const st_vocab *v) {
    return (size_t)(layout(v->n_ids, v->table_mask, v->n_special, v->bytes_len).total + extra_size(v->n_extra));
}

/* Host byte order is little-endian on every target we build (x86, ARM, wasm32); the arrays are
 * copied as they are, and the reader checks nothing but bounds. */
void st__vocab_image_write(const st_vocab *v, uint32_t pattern, uint8_t *out) {
    img_layout l = layout(v->n_ids, v->table_mask, v->n_special, v->bytes_len);
    st__memset(out, 0, (size_t)(l.total + extra_size(v->n_extra)));
    st__memcpy(out, "STVOCAB1", 8);
    uint32_t head[7] = {v->n_extra ? IMG_FORMAT_EXTRA : IMG_FORMAT, pattern, v->n_ids, v->n_ordinary, v->n_special, v->table_mask,
                        (uint32_t)v->bytes_len};
    for (int k = 0; k < 7; k++) put32(out + 8 + 4 * k, head[k]);
    put32(out + 36, 0);
    uint64_t secs[6] = {l.byte_ids, l.offsets, l.table, l.special, l.pairs, l.bytes};
    for (int k = 0; k < 6; k++) put32(out + 40 + 4 * k, (uint32_t)secs[k]);
    st__memcpy(out + l.byte_ids, v->byte_ids, 256 * 4);
    st__memcpy(out + l.offsets, v->offsets, ((size_t)v->n_ids + 1) * 4);
    st__memcpy(out + l.table, v->table, ((size_t)v->table_mask + 1) * 8);
    st__memcpy(out + l.special, v->special_ids, (size_t)v->n_special * 4);
    st__memcpy(out + l.pairs, v->pair_ids, 65536 * 4);
    st__memcpy(out + l.bytes, v->bytes, (size_t)v->bytes_len);
    if (v->n_extra) {
        put32(out + l.total, v->n_extra);
        st__memcpy(out + l.total + 8, v->extra, (size_t)v->n_extra * 12);
    }
}

/* ST_ERR_MALFORMED_MODEL at byte offset `at` of the image header, naming the field. */
static st_status image_error(st_error *err, uint64_t at, const char *field) {
    st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "image: ");
    st__error_append(err, field);
    return ST_ERR_MALFORMED_MODEL;
}

st_status st__vocab_image_borrow(st_vocab *v, const uint8_t *img, size_t len, uint32_t *pattern, st_error *err) {
    st__memset(v, 0, sizeof *v);
    if (((uintptr_t)img & 7) != 0) /* arrays are read in place */
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the image is not 8-byte aligned");
    if (len < IMG_HEADER || st__memcmp(img, "STVOCAB1", 8) != 0) return image_error(err, 0, "no STVOCAB1 header");
    uint32_t format = get32(img + 8);
    if (format != IMG_FORMAT && format != IMG_FORMAT_EXTRA) return image_error(err, 8, "unknown format version");
    if (get32(img + 36) != 0) return image_error(err, 36, "merge mode is not ranks");
    uint32_t n_ids = get32(img + 16), n_ord = get32(img + 20), n_spec = get32(img + 24);
    uint32_t mask = get32(img + 28), bytes_len = get32(img + 32);
    if (n_ids == 0 || n_ids > 0x40000000u || n_spec > n_ids || n_ord > n_ids) return image_error(err, 16, "token counts");
    if (mask > 0x3FFFFFFFu || (mask & (mask + 1)) != 0) return image_error(err, 28, "table size");
    img_layout l = layout(n_ids, mask, n_spec, bytes_len);
    if (l.total > (uint64_t)len) return image_error(err, len, "truncated");
    uint64_t secs[6] = {l.byte_ids, l.offsets, l.table, l.special, l.pairs, l.bytes};
    for (int k = 0; k < 6; k++)
        if (get32(img + 40 + 4 * k) != secs[k]) return image_error(err, 40 + 4 * (uint64_t)k, "section offset");
    v->n_ids = n_ids;
    v->n_ordinary = n_ord;
    v->n_special = n_spec;
    v->table_mask = mask;
    v->bytes_len = bytes_len;
    st__memcpy(v->byte_ids, img + l.byte_ids, 256 * 4);
    v->offsets = (const uint32_t *)(const void *)(img + l.offsets);
    v->table = (const uint64_t *)(const void *)(img + l.table);
    v->special_ids = (const uint32_t *)(const void *)(img + l.special);
    v->pair_ids = (const uint32_t *)(const void *)(img + l.pairs);
    v->bytes = img + l.bytes;
    if (format == IMG_FORMAT_EXTRA) { /* the triples are checked where used (st__vocab_special_string) */
        if (l.total + 8 > (uint64_t)len) return image_error(err, len, "truncated");
        uint32_t n_extra = get32(img + l.total);
        if ((uint64_t)n_extra > (uint64_t)n_spec + 65536 || l.total + extra_size(n_extra) > (uint64_t)len)
            return image_error(err, l.total, "extra special strings");
        v->n_extra = n_extra;
        v->extra = (const uint32_t *)(const void *)(img + l.total + 8);
    }
    *pattern = get32(img + 12);
    return ST_OK;
}

/* ---- the compact image (the web's download) -------------------------------------------------
 * The ordinary tokens of a rank vocabulary and nothing derived from them: what a browser
 * fetches instead of the rank file (no base64, no rank digits: 2/3 of the gzipped size) or the
 * binary image (which carries its hash table and index: several times larger). Little-endian:
 *   0 "STVC"   4 u32 format (1)   8 u32 n_ids   12 u32 bytes_len
 *   16 n_ids lengths, LEB128 (id i's byte count; 0: id i is no ordinary token)
 *   then the tokens' bytes, id order, bytes_len in all; nothing after.
 * The tables are built at load, as from the rank file (the same ids: the same vocabulary). */
#define CVC_HEADER 16
#define CVC_FORMAT 1

static st_status compact_error(st_error *err, uint64_t at, const char *what) {
    st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, "compact vocabulary: ");
    st__error_append(err, what);
    return ST_ERR_MALFORMED_MODEL;
}

/* One LEB128 length at *pos (at most 5 bytes, below 2^32); 0 past the end or if malformed. */
static int read_leb(const uint8_t *s, size_t n, size_t *pos, uint32_t *out) {
    uint64_t x = 0;
    for (int k = 0; k < 5; k++) {
        if (*pos >= n) return 0;
        uint8_t c = s[(*pos)++];
        x |= (uint64_t)(c & 0x7F) << (7 * k);
        if (!(c & 0x80)) {
            if (x > 0xFFFFFFFFull) return 0;
            *out = (uint32_t)x;
            return 1;
        }
    }
    return 0;
}

/* The ordinary ids: 0 .. *n_ids - 1 (the last ordinary id + 1) and their bytes in all. */
static void compact_extent(const st_vocab *v, uint32_t *n_ids, uint64_t *bytes) {
    *n_ids = 0;
    *bytes = 0;
    for (uint32_t id = 0; id < v->n_ids; id++) {
        uint32_t s, l;
        if (st__vocab_is_special(v, id) || !st__vocab_span(v, id, &s, &l)) continue;
        *n_ids = id + 1;
        *bytes += l;
    }
}

size_t st__vocab_compact_size(const st_vocab *v) {
    uint32_t n_ids;
    uint64_t bytes, size = CVC_HEADER;
    compact_extent(v, &n_ids, &bytes);
    for (uint32_t id = 0; id < n_ids; id++) {
        uint32_t s, l = 0;
        if (!st__vocab_is_special(v, id)) (void)st__vocab_span(v, id, &s, &l);
        do { size++; l >>= 7; } while (l);
    }
    return (size_t)(size + bytes);
}

void st__vocab_compact_write(const st_vocab *v, uint8_t *out) {
    uint32_t n_ids;
    uint64_t bytes;
    compact_extent(v, &n_ids, &bytes);
    st__memcpy(out, "STVC", 4);
    put32(out + 4, CVC_FORMAT);
    put32(out + 8, n_ids);
    put32(out + 12, (uint32_t)bytes);
    size_t o = CVC_HEADER;
    for (uint32_t id = 0; id < n_ids; id++) {
        uint32_t s, l = 0;
        if (!st__vocab_is_special(v, id)) (void)st__vocab_span(v, id, &s, &l);
        do {
            out[o++] = (uint8_t)((l & 0x7F) | (l > 0x7F ? 0x80 : 0));
            l >>= 7;
        } while (l);
    }
    for (uint32_t id = 0; id < n_ids; id++) {
        uint32_t s, l;
        if (st__vocab_is_special(v, id) || !st__vocab_span(v, id, &s, &l)) continue;
        st__memcpy(out + o, v->bytes + s, l);
        o += l;
    }
}

st_status st__vocab_parse_compact(st_vocab *v, const st_allocator *a, const uint8_t *img, size_t len,
                                  const char *specials, size_t specials_len, st_error *err) {
    const uint8_t *ss = (const uint8_t *)specials;
    st__memset(v, 0, sizeof *v);
    if (len < CVC_HEADER || st__memcmp(img, "STVC", 4) != 0) return compact_error(err, 0, "no STVC header");
    if (get32(img + 4) != CVC_FORMAT) return compact_error(err, 4, "unknown format version");
    uint32_t n_lens = get32(img + 8), bytes_len = get32(img + 12);
    /* every id takes at least one byte of lengths: a count beyond the data is a damaged header */
    if (n_lens == 0 || n_lens > len - CVC_HEADER) return compact_error(err, 8, "token count");
    size_t pos = CVC_HEADER;
    uint64_t sum = 0;
    size_t count = 0;
    uint32_t max_ord = 0;
    for (uint32_t id = 0; id < n_lens; id++) {
        size_t at = pos;
        uint32_t l;
        if (!read_leb(img, len, &pos, &l)) return compact_error(err, at, "bad length");
        sum += l;
        if (l) { count++; max_ord = id; }
    }
    if (!count) return compact_error(err, CVC_HEADER, "it holds no token");
    if (max_ord != n_lens - 1) return compact_error(err, 8, "the last id has no token"); /* as the writer */
    if (sum != bytes_len) return compact_error(err, 12, "the lengths do not add up to bytes_len");
    if ((uint64_t)(len - pos) != sum) return compact_error(err, len, "the size is not the header's");
    scan_totals ts = {0, 0, 0, 0};
    if (specials_len) {
        st_status st = scan_file(ss, specials_len, &ts, 1, err);
        if (st != ST_OK) return st;
    }
    uint32_t max_id = max_ord > ts.max_id ? max_ord : ts.max_id;
    if ((uint64_t)max_id + 1 > 2 * (uint64_t)(count + ts.count) + 65536) { /* as for a rank file */
        if (ts.count && ts.max_id > max_ord) {
            line_error(err, ss, ts.max_id_line, 1, "rank ");
            st__error_append_u64(err, max_id);
            st__error_append(err, " leaves most ids below it unused");
            return ST_ERR_MALFORMED_MODEL;
        }
        return compact_error(err, 8, "most ids are unused");
    }
    if (sum + ts.bytes > 0xFFFFFFFFull) return compact_error(err, 12, "the tokens hold 4 GB or more");
    uint32_t n_ids = max_id + 1;
    vocab_block b;
    st_status st = vocab_alloc(&b, a, n_ids, count, ts.count, sum + ts.bytes, err);
    if (st != ST_OK) return st;
    pos = CVC_HEADER;
    for (uint32_t id = 0; id < n_lens; id++) (void)read_leb(img, len, &pos, &b.offsets[id + 1]);
    uint32_t n_special = 0, n_extra = 0;
    st = special_lengths(&b, a, ss, specials_len, n_ids, &n_extra, err);
    if (st != ST_OK) { st__free(a, b.block, b.total); return st; }
    if (specials_len) n_special = sorted_special_ids(ss, specials_len, b.special_ids);
    for (uint32_t i = 0; i < n_ids; i++) b.offsets[i + 1] += b.offsets[i];
    if (specials_len) {
        if ((st = fill_specials(ss, specials_len, b.offsets, n_ids, b.bytes, b.extra, n_extra, 0, err)) != ST_OK) {
            st__free(a, b.block, b.total);
            return st;
        }
    }
    vocab_adopt(v, &b, n_ids, (uint32_t)count, n_special, n_extra, sum + ts.bytes);
    /* the ordinary tokens' bytes, in id order, each put in the table as it comes (the lengths
     * are read again: a special id among the ordinary ones has length 0 here) */
    size_t lp = CVC_HEADER, bp = pos;
    for (uint32_t id = 0; id < n_lens; id++) {
        uint32_t l = 0;
        (void)read_leb(img, len, &lp, &l);
        if (!l) continue;
        st__memcpy(b.bytes + b.offsets[id], img + bp, l);
        uint32_t earlier = index_token(v, &b, id);
        if (earlier != ST_NO_TOKEN) { /* the same bytes twice */
            compact_error(err, bp, "token ");
            st__error_append_quoted(err, img + bp, l);
            st__error_append(err, " of id ");
            st__error_append_u64(err, id);
            st__error_append(err, " is id ");
            st__error_append_u64(err, earlier);
            st__error_append(err, " too");
            st__free(a, b.block, b.total);
            st__memset(v, 0, sizeof *v);
            return ST_ERR_MALFORMED_MODEL;
        }
        bp += l;
    }
    fill_byte_ids(v);
    return ST_OK;
}
