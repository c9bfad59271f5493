/* Model files (docs/formats/model-format.md): the parser, the canonical writer, and what the encoding
 * builder (encode/model_encoding.c) takes from a parsed model. No libc: numbers and messages
 * are done here. */
#include "model.h"
#include "vocab.h"
#include "base64.h"
#include "export.h"

/* ---- small helpers ---------------------------------------------------------------------- */

static size_t cstr_len(const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    return n;
}

static int bytes_eq(const uint8_t *a, size_t an, const char *b) {
    size_t bn = cstr_len(b);
    return an == bn && (bn == 0 || st__memcmp(a, b, bn) == 0);
}

/* A decimal number: digits only, no sign, no leading zero (but "0"). 1 ok, 0 malformed,
 * -1 above max. */
static int parse_u64(const uint8_t *s, size_t n, uint64_t max, uint64_t *v) {
    if (n == 0 || (s[0] == '0' && n > 1)) return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    if (n > 20) return -1;
    uint64_t x = 0;
    int over = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) over = 1;
        else x = x * 10 + d;
    }
    if (over || x > max) return -1;
    *v = x;
    return 1;
}

/* ---- error reports ----------------------------------------------------------------------- */

static void msg_add(st_error *e, const char *s, size_t n) {
    size_t at = cstr_len(e->message);
    for (size_t i = 0; i < n && at + 1 < sizeof e->message; i++) e->message[at++] = s[i];
    e->message[at] = 0;
}
static void ms(st_error *e, const char *s) { msg_add(e, s, cstr_len(s)); }
static void mu(st_error *e, uint64_t v) {
    char b[20];
    msg_add(e, b, st__u64_decimal(v, b));
}
/* A quoted excerpt of file bytes (at most 24, non-printable as '?'). */
static void mq(st_error *e, const uint8_t *s, size_t n) {
    char b[32];
    size_t k = 0;
    b[k++] = '\'';
    for (size_t i = 0; i < n && i < 24; i++) b[k++] = s[i] >= 0x20 && s[i] < 0x7F ? (char)s[i] : '?';
    if (n > 24) { b[k++] = '.'; b[k++] = '.'; b[k++] = '.'; }
    b[k++] = '\'';
    msg_add(e, b, k);
}

static void err_clear(st_error *e) {
    if (!e) return;
    st__memset(e, 0, sizeof *e);
    e->token = 0xFFFFFFFFu;
}

/* Start a malformed-model report at a line and byte offset; the caller appends the message. */
static st_error *begin(st_error *e, uint64_t line, size_t offset) {
    err_clear(e);
    e->status = ST_ERR_MALFORMED_MODEL;
    e->unit = ST_UNIT_BYTE;
    e->offset = offset;
    e->line = line;
    return e;
}

/* ---- the parser -------------------------------------------------------------------------- */

typedef struct parser {
    const uint8_t *s;
    size_t n, pos;
    uint64_t line;  /* lines read so far (the current line's number) */
    size_t ls, ll;  /* the current line: start and length (without its newline) */
    st_error *e;    /* never NULL inside the parser */
    st_model *m;
    uint64_t version; /* the file's format version (1 or 2) */
} parser;

/* Read the next line. 1: a line; 0: the end of the file (nothing left). On a malformed line
 * (a control byte, no final newline) returns -1 with the report made. */
static int next_line(parser *p) {
    if (p->pos >= p->n) return 0;
    size_t i = p->pos;
    p->line++;
    while (i < p->n && p->s[i] != '\n') {
        uint8_t c = p->s[i];
        if (c < 0x20 || c == 0x7F) {
            ms(begin(p->e, p->line, i), "control byte 0x");
            char h[2] = {"0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15]};
            msg_add(p->e, h, 2);
            ms(p->e, c == '\r' ? " (CR: lines end with LF only)" : " (escape it in a special's text)");
            return -1;
        }
        i++;
    }
    if (i >= p->n) {
        ms(begin(p->e, p->line, p->pos), "the file ends inside this line (no final newline: truncated?)");
        return -1;
    }
    p->ls = p->pos;
    p->ll = i - p->pos;
    p->pos = i + 1;
    return 1;
}

static const char *const header_keys[] = {"name", "comment", "training", "kind", "alphabet", "pattern", "script-aware",
                                          "scripts", "merges", "tokens", "supermerges", "specials", "end"};

static int known_key(const uint8_t *k, size_t n) {
    for (size_t i = 0; i < sizeof header_keys / sizeof *header_keys; i++)
        if (bytes_eq(k, n, header_keys[i])) return 1;
    return 0;
}

/* The key of the current line (up to its first space) and the value (after it). */
static void split_kv(const parser *p, const uint8_t **k, size_t *kn, const uint8_t **v, size_t *vn, int *has_v) {
    const uint8_t *s = p->s + p->ls;
    size_t i = 0;
    while (i < p->ll && s[i] != ' ') i++;
    *k = s;
    *kn = i;
    *has_v = i < p->ll;
    *v = *has_v ? s + i + 1 : s + p->ll;
    *vn = *has_v ? p->ll - i - 1 : 0;
}

/* Read the line that must be `key value` (value non-empty when want_value). */
static st_status expect(parser *p, const char *key, int want_value, const uint8_t **v, size_t *vn) {
    int r = next_line(p);
    if (r < 0) return ST_ERR_MALFORMED_MODEL;
    if (r == 0) {
        ms(begin(p->e, p->line + 1, p->n), "the file ends where the '");
        ms(p->e, key);
        ms(p->e, "' line was expected (truncated?)");
        return ST_ERR_MALFORMED_MODEL;
    }
    const uint8_t *k;
    size_t kn;
    int has_v;
    split_kv(p, &k, &kn, v, vn, &has_v);
    if (!bytes_eq(k, kn, key)) {
        st_error *e = begin(p->e, p->line, p->ls);
        if (kn == 0) {
            ms(e, "an empty line (or a leading space) where '");
            ms(e, key);
            ms(e, "' was expected");
        } else if (k[0] >= '0' && k[0] <= '9') {
            ms(e, "a data line where '");
            ms(e, key);
            ms(e, "' was expected (is a section's count too small?)");
        } else if (known_key(k, kn)) {
            mq(e, k, kn);
            ms(e, " is out of place: expected '");
            ms(e, key);
            ms(e, "' here (fixed order)");
        } else {
            ms(e, "unknown key ");
            mq(e, k, kn);
            ms(e, " where '");
            ms(e, key);
            ms(e, "' was expected (not in format version ");
            mu(e, p->version);
            ms(e, ")");
        }
        return ST_ERR_MALFORMED_MODEL;
    }
    if (want_value && (!has_v || *vn == 0)) {
        ms(begin(p->e, p->line, p->ls), key);
        ms(p->e, ": missing value (write '");
        ms(p->e, key);
        ms(p->e, " <value>')");
        return ST_ERR_MALFORMED_MODEL;
    }
    if (!want_value && has_v) {
        ms(begin(p->e, p->line, p->ls + kn), key);
        ms(p->e, ": this line takes no value");
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

/* 1 if the next line's key is `key` (the line is not consumed). */
static int peek_key(const parser *p, const char *key) {
    size_t i = p->pos, kn = cstr_len(key);
    if (p->n - i < kn + 1) return 0;
    return st__memcmp(p->s + i, key, kn) == 0 && (p->s[i + kn] == ' ' || p->s[i + kn] == '\n');
}

/* One value out of a fixed set; its index, or -1 with the report made. */
static int pick(parser *p, const char *key, const uint8_t *v, size_t vn, const char *const *names, size_t count) {
    for (size_t i = 0; i < count; i++)
        if (bytes_eq(v, vn, names[i])) return (int)i;
    st_error *e = begin(p->e, p->line, (size_t)(v - p->s));
    ms(e, key);
    ms(e, ": ");
    mq(e, v, vn);
    ms(e, " is not one of ");
    for (size_t i = 0; i < count; i++) {
        if (i) ms(e, ", ");
        ms(e, names[i]);
    }
    return -1;
}

static void *alloc_array(st_model *m, size_t count, size_t size) {
    if (count == 0) count = 1;
    if (count > SIZE_MAX / size) return NULL;
    return st__alloc(&m->alloc, count * size);
}

static st_status oom(parser *p) {
    err_clear(p->e);
    p->e->status = ST_ERR_OUT_OF_MEMORY;
    ms(p->e, "out of memory reading the model");
    return ST_ERR_OUT_OF_MEMORY;
}

/* Split the current line into fields separated by single spaces; up to max fields. Returns
 * the count, or -1 (report made) for an empty field or more than max. */
static int fields(parser *p, const char *what, uint64_t index, const uint8_t **f, size_t *fl, int max) {
    const uint8_t *s = p->s + p->ls;
    int k = 0;
    size_t start = 0;
    for (size_t i = 0; i <= p->ll; i++) {
        if (i < p->ll && s[i] != ' ') continue;
        if (i == start || k == max) {
            st_error *e = begin(p->e, p->line, p->ls + start);
            ms(e, what);
            ms(e, "[");
            mu(e, index);
            ms(e, i == start ? "]: empty field (fields are separated by one space)" : "]: too many fields");
            return -1;
        }
        f[k] = s + start;
        fl[k] = i - start;
        k++;
        start = i + 1;
    }
    return k;
}

/* "<section> N" or "<section> N counts": the count and whether lines carry counts. */
static st_status section_line(parser *p, const char *key, int allow_counts, uint64_t max, uint64_t *count,
                              int *with_counts) {
    const uint8_t *v;
    size_t vn;
    st_status st = expect(p, key, 1, &v, &vn);
    if (st != ST_OK) return st;
    size_t i = 0;
    while (i < vn && v[i] != ' ') i++;
    *with_counts = 0;
    if (i < vn) {
        if (!allow_counts || !bytes_eq(v + i + 1, vn - i - 1, "counts")) {
            ms(begin(p->e, p->line, (size_t)(v - p->s) + i + 1), key);
            ms(p->e, allow_counts ? ": after the count only 'counts' may follow, not " : ": only a count may follow, not ");
            mq(p->e, v + i + 1, vn - i - 1);
            return ST_ERR_MALFORMED_MODEL;
        }
        *with_counts = 1;
    }
    int r = parse_u64(v, i, max, count);
    if (r <= 0) {
        ms(begin(p->e, p->line, (size_t)(v - p->s)), key);
        ms(p->e, ": ");
        mq(p->e, v, i);
        if (r == 0) ms(p->e, " is not a count (decimal digits, no leading zero)");
        else { ms(p->e, " is more than the "); mu(p->e, max); ms(p->e, " a model can hold"); }
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

static int known_key(const uint8_t *k, size_t n);

/* The next entry line of a counted section, or the report of a truncated section (or of a
 * section line counting more entries than it has, when a header key comes instead: only for
 * sections whose lines start with a digit, as a base64 token may spell a key). */
static st_status entry_line(parser *p, const char *what, uint64_t i, uint64_t count, int digits) {
    int r = next_line(p);
    if (r < 0) return ST_ERR_MALFORMED_MODEL;
    size_t kn = 0;
    while (r > 0 && kn < p->ll && p->s[p->ls + kn] != ' ') kn++;
    if (r == 0 || (digits && known_key(p->s + p->ls, kn))) {
        ms(begin(p->e, r ? p->line : p->line + 1, r ? p->ls : p->n), what);
        if (r) {
            ms(p->e, ": ");
            mq(p->e, p->s + p->ls, kn);
            ms(p->e, " after ");
        } else ms(p->e, ": the file ends after ");
        mu(p->e, i);
        ms(p->e, " of ");
        mu(p->e, count);
        ms(p->e, r ? " lines (is the count right?)" : " lines (truncated?)");
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

/* A capacity for `count` lines of at least min_line bytes each in what is left of the file:
 * the header's count is not trusted for allocation. */
static size_t line_cap(const parser *p, uint64_t count, size_t min_line) {
    uint64_t room = (p->n - p->pos) / min_line + 1;
    return (size_t)(count < room ? count : room);
}

/* The byte offset where line `line` (1-based) of text starts (len if past the end). */
static size_t line_start(const uint8_t *text, size_t len, uint64_t line) {
    size_t i = 0;
    for (uint64_t l = 1; l < line && i < len; i++)
        if (text[i] == '\n') l++;
    return i;
}

/* merges or supermerges: n lines "left right" (+ " count"); entry i is id first_id + i and
 * both its parts must be below it; no pair twice (within the section, and for supermerges
 * not a pair of the merges either: a pair is one rule). */
static st_status read_pairs(parser *p, const char *what, st__model_pairs *out, uint32_t first_id,
                            const st__model_pairs *before) {
    st_model *m = p->m;
    uint64_t count;
    int with_counts;
    uint64_t max = ST_RULES_MAX_IDS - 1 - (uint64_t)first_id;
    st_status st = section_line(p, what, 1, max, &count, &with_counts);
    if (st != ST_OK) return st;
    out->present = 1;
    out->line = p->line;
    size_t cap = line_cap(p, count, 4);
    out->cap = cap;
    out->pairs = (uint32_t *)alloc_array(m, 2 * cap, sizeof(uint32_t));
    if (!out->pairs) return oom(p);
    if (with_counts && !(out->counts = (uint64_t *)alloc_array(m, cap, sizeof(uint64_t)))) return oom(p);
    size_t before_n = before ? before->n : 0, tcap = 1;
    while (tcap < 2 * (cap + before_n) + 2) tcap <<= 1;
    uint64_t *table = (uint64_t *)alloc_array(m, tcap, sizeof(uint64_t));
    if (!table) return oom(p);
    st__memset(table, 0, tcap * sizeof(uint64_t));
    st = ST_OK;
    for (size_t k = 0; k < before_n && st == ST_OK; k++) { /* the merges' pairs first */
        uint64_t key = ((uint64_t)before->pairs[2 * k] << 32 | before->pairs[2 * k + 1]) + 1;
        size_t h = (size_t)st__mix64(key) & (tcap - 1);
        while (table[h] && table[h] != key) h = (h + 1) & (tcap - 1);
        table[h] = key;
    }
    for (uint64_t i = 0; i < count && st == ST_OK; i++) {
        if ((st = entry_line(p, what, i, count, 1)) != ST_OK) break;
        const uint8_t *f[3];
        size_t fl[3];
        int nf = fields(p, what, i, f, fl, 3);
        if (nf < 0) { st = ST_ERR_MALFORMED_MODEL; break; }
        if (nf != 2 + with_counts) {
            ms(begin(p->e, p->line, p->ls), what);
            ms(p->e, "[");
            mu(p->e, i);
            ms(p->e, with_counts ? "]: expected 'left right count'" : "]: expected 'left right' (the section line has no 'counts')");
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        uint32_t own = first_id + (uint32_t)i;
        uint64_t ids[2];
        for (int j = 0; j < 2 && st == ST_OK; j++) {
            int r = parse_u64(f[j], fl[j], UINT64_MAX, &ids[j]);
            if (r <= 0 || ids[j] >= own) {
                st_error *e = begin(p->e, p->line, (size_t)(f[j] - p->s));
                ms(e, what);
                ms(e, "[");
                mu(e, i);
                ms(e, j ? "]: right id " : "]: left id ");
                if (r <= 0) { mq(e, f[j], fl[j]); ms(e, r ? " is too large" : " is not a decimal id"); }
                else { mu(e, ids[j]); ms(e, " is not below the rule's own id "); mu(e, own); }
                st = ST_ERR_MALFORMED_MODEL;
            }
        }
        if (st != ST_OK) break;
        if (with_counts && parse_u64(f[2], fl[2], UINT64_MAX, &out->counts[i]) <= 0) {
            st_error *e = begin(p->e, p->line, (size_t)(f[2] - p->s));
            ms(e, what);
            ms(e, "[");
            mu(e, i);
            ms(e, "]: count ");
            mq(e, f[2], fl[2]);
            ms(e, " is not a decimal number below 2^64");
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        uint64_t key = (ids[0] << 32 | ids[1]) + 1;
        size_t h = (size_t)st__mix64(key) & (tcap - 1);
        while (table[h] && table[h] != key) h = (h + 1) & (tcap - 1);
        if (table[h]) {
            st_error *e = begin(p->e, p->line, p->ls);
            ms(e, what);
            ms(e, "[");
            mu(e, i);
            ms(e, "]: the pair ");
            mu(e, ids[0]);
            ms(e, " ");
            mu(e, ids[1]);
            ms(e, " is already a rule");
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        table[h] = key;
        out->pairs[2 * i] = (uint32_t)ids[0];
        out->pairs[2 * i + 1] = (uint32_t)ids[1];
        out->n = (size_t)i + 1;
    }
    st__free(&m->alloc, table, tcap * sizeof(uint64_t));
    return st;
}

/* tokens N, then N lines "base64 rank" (ranks increasing): a tiktoken rank file, kept verbatim. */
static st_status read_tokens(parser *p) {
    st_model *m = p->m;
    uint64_t count;
    int with_counts;
    st_status st = section_line(p, "tokens", 0, 0x7FFFFFFFu, &count, &with_counts);
    if (st != ST_OK) return st;
    m->tokens_line = p->line;
    if (count == 0) {
        ms(begin(p->e, p->line, p->ls), "tokens: a ranks model needs at least one token");
        return ST_ERR_MALFORMED_MODEL;
    }
    m->ranks_cap = line_cap(p, count, 7);
    if (!(m->ranks = (uint32_t *)alloc_array(m, m->ranks_cap, sizeof(uint32_t)))) return oom(p);
    m->tokens_off = p->pos;
    for (uint64_t i = 0; i < count; i++) {
        if ((st = entry_line(p, "tokens", i, count, 0)) != ST_OK) return st;
        const uint8_t *f[2];
        size_t fl[2];
        int nf = fields(p, "tokens", i, f, fl, 2);
        if (nf < 0) return ST_ERR_MALFORMED_MODEL;
        if (nf != 2) {
            ms(begin(p->e, p->line, p->ls), "tokens[");
            mu(p->e, i);
            ms(p->e, "]: expected 'base64 rank'");
            return ST_ERR_MALFORMED_MODEL;
        }
        if (!st__base64_canonical(f[0], fl[0])) {
            ms(begin(p->e, p->line, p->ls), "tokens[");
            mu(p->e, i);
            ms(p->e, "]: ");
            mq(p->e, f[0], fl[0]);
            ms(p->e, " is not canonical padded base64 of 1 or more bytes");
            return ST_ERR_MALFORMED_MODEL;
        }
        uint64_t rank;
        int r = parse_u64(f[1], fl[1], 0x7FFFFFFFu, &rank);
        if (r <= 0 || (i && rank <= m->ranks[i - 1])) {
            ms(begin(p->e, p->line, (size_t)(f[1] - p->s)), "tokens[");
            mu(p->e, i);
            ms(p->e, "]: rank ");
            mq(p->e, f[1], fl[1]);
            if (r <= 0) ms(p->e, r ? " is above 2147483647" : " is not a decimal number");
            else { ms(p->e, " is not above the previous rank "); mu(p->e, m->ranks[i - 1]); }
            return ST_ERR_MALFORMED_MODEL;
        }
        m->ranks[i] = (uint32_t)rank;
        m->n_tokens = i + 1;
    }
    m->tokens_len = p->pos - m->tokens_off;
    return ST_OK;
}

static int hexval(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* specials N, then N lines "id text" (ids increasing; text escaped, see the format). */
static st_status read_specials(parser *p) {
    st_model *m = p->m;
    uint64_t count;
    int with_counts;
    st_status st = section_line(p, "specials", 0, ST_RULES_MAX_IDS, &count, &with_counts);
    if (st != ST_OK) return st;
    m->specials_line = p->line;
    m->specials_cap = line_cap(p, count, 4);
    if (!(m->specials = (st__model_special *)alloc_array(m, m->specials_cap, sizeof(st__model_special))))
        return oom(p);
    m->special_text_cap = p->n - p->pos + 1;
    if (!(m->special_text = (uint8_t *)alloc_array(m, m->special_text_cap, 1))) return oom(p);
    size_t tcap = 1;
    while (tcap < 2 * m->specials_cap + 2) tcap <<= 1;
    uint32_t *table = (uint32_t *)alloc_array(m, tcap, sizeof(uint32_t)); /* special index + 1 by text */
    if (!table) return oom(p);
    st__memset(table, 0, tcap * sizeof(uint32_t));
    uint64_t n_ord = m->kind == ST_MODEL_RULES
                         ? (m->alphabet == ST_ALPHABET_UBE ? 512u : 256u) + (uint64_t)m->merges.n + m->supermerges.n
                         : 0;
    size_t used = 0;
    for (uint64_t i = 0; i < count && st == ST_OK; i++) {
        if ((st = entry_line(p, "specials", i, count, 1)) != ST_OK) break;
        const uint8_t *s = p->s + p->ls;
        size_t sp = 0;
        while (sp < p->ll && s[sp] != ' ') sp++;
        uint64_t id;
        int r = parse_u64(s, sp, 0xFFFFFFFFull, &id);
        st_error *e = p->e;
        if (r <= 0 || sp == p->ll) {
            ms(begin(e, p->line, p->ls), "specials[");
            mu(e, i);
            ms(e, "]: expected 'id text' with a decimal id, not ");
            mq(e, s, p->ll);
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        const char *why = NULL;
        if (i && id <= m->specials[i - 1].id) why = " is not above the previous special's id (ids increase)";
        else if (m->kind == ST_MODEL_RULES && id < n_ord && m->alphabet == ST_ALPHABET_UBE)
            why = " is an ordinary token's id (a UBE token is symbols, never a special's text)";
        else if (id >= ST_RULES_MAX_IDS && m->kind == ST_MODEL_RULES) why = " is above the 2097150 a rules model can hold";
        else if (m->kind == ST_MODEL_RANKS) {
            size_t lo = 0, hi = (size_t)m->n_tokens;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (m->ranks[mid] < id) lo = mid + 1;
                else hi = mid;
            }
            if (lo < m->n_tokens && m->ranks[lo] == id) why = " is the rank of a token";
            else if (id > 0x7FFFFFFFu) why = " is above 2147483647";
        }
        if (why) {
            ms(begin(e, p->line, p->ls), "specials[");
            mu(e, i);
            ms(e, "]: id ");
            mu(e, id);
            ms(e, why);
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        /* the text, unescaped */
        size_t start = used;
        for (size_t k = sp + 1; k < p->ll; k++) {
            uint8_t c = s[k];
            if (c == '\\') {
                int ok = 1;
                if (k + 1 >= p->ll) ok = 0;
                else if (s[k + 1] == '\\') { c = '\\'; k++; }
                else if (s[k + 1] == 'n') { c = '\n'; k++; }
                else if (s[k + 1] == 'r') { c = '\r'; k++; }
                else if (s[k + 1] == 't') { c = '\t'; k++; }
                else if (s[k + 1] == 'x' && k + 3 < p->ll && hexval(s[k + 2]) >= 0 && hexval(s[k + 3]) >= 0) {
                    c = (uint8_t)(hexval(s[k + 2]) * 16 + hexval(s[k + 3]));
                    k += 3;
                } else ok = 0;
                if (!ok) {
                    ms(begin(e, p->line, p->ls + k), "specials[");
                    mu(e, i);
                    ms(e, "]: bad escape (use \\\\, \\n, \\r, \\t or \\xHH)");
                    st = ST_ERR_MALFORMED_MODEL;
                    break;
                }
            }
            m->special_text[used++] = c;
        }
        if (st != ST_OK) break;
        size_t len = used - start;
        if (len == 0 || st_utf8_validate((const char *)m->special_text + start, len, NULL) != ST_OK) {
            ms(begin(e, p->line, p->ls + sp + 1), "specials[");
            mu(e, i);
            ms(e, len ? "]: the text is not valid UTF-8" : "]: the text is empty");
            st = ST_ERR_MALFORMED_MODEL;
            break;
        }
        uint64_t h64 = 0xCBF29CE484222325ull;
        for (size_t k = 0; k < len; k++) h64 = (h64 ^ m->special_text[start + k]) * 0x100000001B3ull;
        size_t h = (size_t)st__mix64(h64) & (tcap - 1);
        while (table[h]) {
            const st__model_special *o = &m->specials[table[h] - 1];
            if (o->len == len && st__memcmp(m->special_text + o->off, m->special_text + start, len) == 0) {
                ms(begin(e, p->line, p->ls + sp + 1), "specials[");
                mu(e, i);
                ms(e, "]: the same text as specials[");
                mu(e, table[h] - 1);
                ms(e, "]");
                st = ST_ERR_MALFORMED_MODEL;
                break;
            }
            h = (h + 1) & (tcap - 1);
        }
        if (st != ST_OK) break;
        table[h] = (uint32_t)i + 1;
        m->specials[i].id = (uint32_t)id;
        m->specials[i].off = start;
        m->specials[i].len = len;
        m->n_specials = (size_t)i + 1;
    }
    st__free(&m->alloc, table, tcap * sizeof(uint32_t));
    return st;
}

/* Ids dense enough for the id index, as the loaders require (no file asks for gigabytes): the
 * largest id may not exceed the ids a model has by more than 65536 plus the entries twice. */
static st_status check_id_range(parser *p) {
    st_model *m = p->m;
    uint64_t max_id, limit, line;
    const char *what;
    uint64_t index;
    if (m->kind == ST_MODEL_RULES) {
        if (!m->n_specials) return ST_OK;
        uint64_t n_ord = (m->alphabet == ST_ALPHABET_UBE ? 512u : 256u) + (uint64_t)m->merges.n + m->supermerges.n;
        max_id = m->specials[m->n_specials - 1].id;
        limit = n_ord + 2 * (uint64_t)m->n_specials + 65536;
        what = "specials[", index = m->n_specials - 1, line = m->specials_line + m->n_specials;
    } else {
        uint64_t last_rank = m->ranks[m->n_tokens - 1];
        limit = 2 * (m->n_tokens + m->n_specials) + 65536;
        if (m->n_specials && m->specials[m->n_specials - 1].id > last_rank) {
            max_id = m->specials[m->n_specials - 1].id;
            what = "specials[", index = m->n_specials - 1, line = m->specials_line + m->n_specials;
        } else {
            max_id = last_rank;
            what = "tokens[", index = m->n_tokens - 1, line = m->tokens_line + m->n_tokens;
        }
    }
    if (max_id + 1 <= limit) return ST_OK;
    st_error *e = begin(p->e, line, line_start(p->s, p->n, line));
    ms(e, what);
    mu(e, index);
    ms(e, "]: id ");
    mu(e, max_id);
    ms(e, " leaves too many unused ids (at most ");
    mu(e, limit);
    ms(e, " ids here)");
    return ST_ERR_MALFORMED_MODEL;
}

static const char *const kind_names[] = {"rules", "ranks"};
static const char *const alphabet_names[] = {"bytes", "ube"};
static const char *const pattern_names[] = {"gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3"};
static const char *const yes_no[] = {"no", "yes"};

static st_status check_scripts(parser *p, const uint8_t *v, size_t vn) {
    st_model *m = p->m;
    if (bytes_eq(v, vn, "default")) { m->scripts_kind = ST__SCRIPTS_DEFAULT; return ST_OK; }
    m->scripts_kind = ST__SCRIPTS_LIST;
    if (bytes_eq(v, vn, "none")) { m->scripts_off = (size_t)(v - p->s); m->scripts_len = 0; return ST_OK; }
    uint8_t seen[1024];
    st__memset(seen, 0, sizeof seen);
    size_t start = 0;
    for (size_t i = 0; i <= vn; i++) {
        if (i < vn && v[i] != ',') continue;
        const uint8_t *name = v + start;
        size_t len = i - start;
        int id = len ? st_script_from_name((const char *)name, len) : -1;
        const char *canon = id >= 0 ? st_script_name(id) : NULL;
        const char *why = NULL;
        if (id < 0) why = len ? " is not a script name" : "an empty name (names are separated by ',')";
        else if (!canon || !bytes_eq(name, len, canon)) why = " is not the canonical spelling: write ";
        else if (id < (int)sizeof seen && seen[id]) why = " is listed twice";
        if (why) {
            ms(begin(p->e, p->line, (size_t)(name - p->s)), "scripts: ");
            if (len) mq(p->e, name, len);
            ms(p->e, why);
            if (canon && id >= 0 && !bytes_eq(name, len, canon)) ms(p->e, canon);
            return ST_ERR_MALFORMED_MODEL;
        }
        if (id < (int)sizeof seen) seen[id] = 1;
        start = i + 1;
    }
    m->scripts_off = (size_t)(v - p->s);
    m->scripts_len = vn;
    return ST_OK;
}

/* The "training" line (format version 2): `training algorithm=A mode=M vocab_size=N
 * min_frequency=N [supermerges=N] [base=NAME seed_merges=N max_words=N colon_space=yes|no
 * min_count=N] ngram_split=yes|no [c_min=N max_len=N]`, keys in this order, supermerges exactly
 * for superbpe, base to min_count exactly for extend, c_min and max_len exactly with
 * ngram_split=yes. */
static st_status parse_training(parser *p) {
    static const char *const algorithms[] = {"bpe", "boundless", "superbpe", "extend"};
    static const char *const modes[] = {"paper", "hf"};
    st_model *m = p->m;
    m->has_training = 1;
    m->training_line = p->line;
    const uint8_t *s = p->s + p->ls;
    size_t i = 8; /* after "training" */
    if (i >= p->ll || s[i] != ' ') {
        ms(begin(p->e, p->line, p->ls), "training: missing value (write 'training algorithm=... mode=...')");
        return ST_ERR_MALFORMED_MODEL;
    }
    const char *want[16];
    int nwant = 0, have = 0;
    want[nwant++] = "algorithm";
    want[nwant++] = "mode";
    want[nwant++] = "vocab_size";
    want[nwant++] = "min_frequency";
    while (i < p->ll) {
        size_t f = ++i; /* the field starts after one space */
        while (i < p->ll && s[i] != ' ') i++;
        const uint8_t *fk = s + f, *fv = NULL;
        size_t fkn = 0, fvn = 0;
        while (f + fkn < i && s[f + fkn] != '=') fkn++;
        if (f + fkn < i) { fv = s + f + fkn + 1; fvn = i - f - fkn - 1; }
        const char *key = have < nwant ? want[have] : NULL;
        if (!key || !bytes_eq(fk, fkn, key) || !fv || !fvn) {
            st_error *e = begin(p->e, p->line, p->ls + f);
            ms(e, "training: ");
            if (f == i) ms(e, "an empty field (fields are separated by one space)");
            else if (!key) { ms(e, "unexpected field "); mq(e, fk, i - f); ms(e, " at the end"); }
            else { ms(e, "expected '"); ms(e, key); ms(e, "=<value>' here, not "); mq(e, fk, i - f); }
            return ST_ERR_MALFORMED_MODEL;
        }
        const size_t voff = (size_t)(fv - p->s);
        int r = -2;
        uint64_t num = 0;
        if (bytes_eq(fk, fkn, "algorithm")) {
            r = pick(p, "training: algorithm", fv, fvn, algorithms, 4);
            if (r < 0) return ST_ERR_MALFORMED_MODEL;
            m->tr_algorithm = r == 0   ? ST_ALGORITHM_BPE
                              : r == 1 ? ST_ALGORITHM_BOUNDLESS
                              : r == 2 ? ST_ALGORITHM_SUPERBPE
                                       : ST_ALGORITHM_EXTEND;
        } else if (bytes_eq(fk, fkn, "mode")) {
            r = pick(p, "training: mode", fv, fvn, modes, 2);
            if (r < 0) return ST_ERR_MALFORMED_MODEL;
            m->tr_mode = r == 0 ? ST_TRAIN_PAPER : ST_TRAIN_HF;
            if (m->tr_mode == ST_TRAIN_HF && m->tr_algorithm != ST_ALGORITHM_BPE) {
                ms(begin(p->e, p->line, voff), "training: mode hf trains no superwords (algorithm=bpe only)");
                return ST_ERR_MALFORMED_MODEL;
            }
        } else if (bytes_eq(fk, fkn, "base")) {
            if (fvn > 128) {
                ms(begin(p->e, p->line, voff), "training: base: a model name of 1 to 128 characters");
                return ST_ERR_MALFORMED_MODEL;
            }
            for (size_t k = 0; k < fvn; k++)
                if (fv[k] < 0x21 || fv[k] > 0x7E) {
                    ms(begin(p->e, p->line, voff + k), "training: base: printable ASCII without spaces only");
                    return ST_ERR_MALFORMED_MODEL;
                }
            m->tr_base_off = voff;
            m->tr_base_len = fvn;
        } else if (bytes_eq(fk, fkn, "colon_space")) {
            r = pick(p, "training: colon_space", fv, fvn, yes_no, 2);
            if (r < 0) return ST_ERR_MALFORMED_MODEL;
            m->tr_colon_space = r;
        } else if (bytes_eq(fk, fkn, "ngram_split")) {
            r = pick(p, "training: ngram_split", fv, fvn, yes_no, 2);
            if (r < 0) return ST_ERR_MALFORMED_MODEL;
            m->tr_ngram = r;
            if (r && (m->tr_algorithm == ST_ALGORITHM_BPE || m->tr_algorithm == ST_ALGORITHM_EXTEND)) {
                ms(begin(p->e, p->line, voff),
                   "training: ngram_split=yes splits supermerge candidates (not for algorithm=bpe or extend)");
                return ST_ERR_MALFORMED_MODEL;
            }
            if (r) { want[nwant++] = "c_min"; want[nwant++] = "max_len"; }
        } else {
            int pr = parse_u64(fv, fvn, UINT64_MAX, &num);
            if (pr <= 0) {
                st_error *e = begin(p->e, p->line, voff);
                ms(e, "training: ");
                ms(e, key);
                ms(e, ": ");
                mq(e, fv, fvn);
                ms(e, " is not a decimal number below 2^64");
                return ST_ERR_MALFORMED_MODEL;
            }
            if (bytes_eq(fk, fkn, "vocab_size")) m->tr_vocab_size = num;
            else if (bytes_eq(fk, fkn, "min_frequency")) {
                m->tr_min_frequency = num;
                if (m->tr_algorithm == ST_ALGORITHM_SUPERBPE) want[nwant++] = "supermerges";
                if (m->tr_algorithm == ST_ALGORITHM_EXTEND) {
                    want[nwant++] = "base";
                    want[nwant++] = "seed_merges";
                    want[nwant++] = "max_words";
                    want[nwant++] = "colon_space";
                    want[nwant++] = "min_count";
                }
                want[nwant++] = "ngram_split";
            } else if (bytes_eq(fk, fkn, "supermerges")) m->tr_supermerges = num;
            else if (bytes_eq(fk, fkn, "seed_merges")) m->tr_seed_merges = num;
            else if (bytes_eq(fk, fkn, "max_words")) m->tr_max_words = num;
            else if (bytes_eq(fk, fkn, "min_count")) m->tr_min_count = num;
            else if (bytes_eq(fk, fkn, "c_min")) m->tr_c_min = num;
            else m->tr_max_len = num;
        }
        have++;
    }
    if (have < nwant) {
        st_error *e = begin(p->e, p->line, p->ls + p->ll);
        ms(e, "training: the line ends where '");
        ms(e, want[have]);
        ms(e, "=<value>' was expected");
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

static st_status parse_model(parser *p) {
    st_model *m = p->m;
    const uint8_t *v;
    size_t vn;
    st_status st;
    int r = next_line(p);
    if (r < 0) return ST_ERR_MALFORMED_MODEL;
    static const char magic[] = "supertok-model ";
    if (r == 0 || p->ll < sizeof magic - 1 || st__memcmp(p->s + p->ls, magic, sizeof magic - 1) != 0) {
        ms(begin(p->e, 1, 0), "not a supertok model: the first line must be 'supertok-model 1'");
        return ST_ERR_MALFORMED_MODEL;
    }
    uint64_t version;
    if (parse_u64(p->s + p->ls + sizeof magic - 1, p->ll - (sizeof magic - 1), UINT64_MAX, &version) <= 0 ||
        (version != ST_MODEL_VERSION && version != ST_MODEL_VERSION_2)) {
        ms(begin(p->e, 1, sizeof magic - 1), "format version ");
        mq(p->e, p->s + p->ls + sizeof magic - 1, p->ll - (sizeof magic - 1));
        ms(p->e, " is not supported (this core reads versions 1 and 2)");
        return ST_ERR_MALFORMED_MODEL;
    }
    p->version = version;
    if ((st = expect(p, "name", 1, &v, &vn)) != ST_OK) return st;
    for (size_t i = 0; i < vn; i++)
        if (v[i] <= 0x20 || v[i] >= 0x7F || vn > 128) {
            ms(begin(p->e, p->line, (size_t)(v - p->s) + i), "name: ");
            mq(p->e, v, vn);
            ms(p->e, " must be 1 to 128 printable ASCII characters, no spaces");
            return ST_ERR_MALFORMED_MODEL;
        }
    m->name_off = (size_t)(v - p->s);
    m->name_len = vn;
    m->comments_off = p->pos;
    while (peek_key(p, "comment")) {
        if ((st = expect(p, "comment", 1, &v, &vn)) != ST_OK) return st;
        if (st_utf8_validate((const char *)v, vn, NULL) != ST_OK) {
            ms(begin(p->e, p->line, (size_t)(v - p->s)), "comment: not valid UTF-8");
            return ST_ERR_MALFORMED_MODEL;
        }
    }
    m->comments_len = p->pos - m->comments_off;
    if (peek_key(p, "training")) {
        next_line(p);
        if (p->version < ST_MODEL_VERSION_2) {
            ms(begin(p->e, p->line, p->ls), "training: this line needs format version 2 (first line 'supertok-model 2')");
            return ST_ERR_MALFORMED_MODEL;
        }
        if ((st = parse_training(p)) != ST_OK) return st;
    }
    int k;
    if ((st = expect(p, "kind", 1, &v, &vn)) != ST_OK) return st;
    if ((k = pick(p, "kind", v, vn, kind_names, 2)) < 0) return ST_ERR_MALFORMED_MODEL;
    m->kind = k == 0 ? ST_MODEL_RULES : ST_MODEL_RANKS;
    if ((st = expect(p, "alphabet", 1, &v, &vn)) != ST_OK) return st;
    if ((k = pick(p, "alphabet", v, vn, alphabet_names, 2)) < 0) return ST_ERR_MALFORMED_MODEL;
    m->alphabet = k == 0 ? ST_ALPHABET_BYTES : ST_ALPHABET_UBE;
    if (m->kind == ST_MODEL_RANKS && m->alphabet != ST_ALPHABET_BYTES) {
        ms(begin(p->e, p->line, (size_t)(v - p->s)), "alphabet: a ranks model's alphabet is 'bytes'");
        return ST_ERR_MALFORMED_MODEL;
    }
    if ((st = expect(p, "pattern", 1, &v, &vn)) != ST_OK) return st;
    if ((k = pick(p, "pattern", v, vn, pattern_names, 7)) < 0) return ST_ERR_MALFORMED_MODEL;
    m->pattern = ST_PATTERN_GPT2 + k; /* pattern_names is in st_pattern's order */
    if ((st = expect(p, "script-aware", 1, &v, &vn)) != ST_OK) return st;
    if ((k = pick(p, "script-aware", v, vn, yes_no, 2)) < 0) return ST_ERR_MALFORMED_MODEL;
    m->flags = k ? ST_PRETOK_SCRIPT_AWARE : 0;
    m->script_aware_line = p->line;
    if (k) {
        if ((st = expect(p, "scripts", 1, &v, &vn)) != ST_OK) return st;
        if ((st = check_scripts(p, v, vn)) != ST_OK) return st;
    } else if (peek_key(p, "scripts")) {
        next_line(p);
        ms(begin(p->e, p->line, p->ls), "scripts: only a script-aware model lists scripts ('script-aware yes')");
        return ST_ERR_MALFORMED_MODEL;
    }
    uint32_t base = m->alphabet == ST_ALPHABET_UBE ? 512u : 256u;
    if (m->kind == ST_MODEL_RULES) st = read_pairs(p, "merges", &m->merges, base, NULL);
    else st = read_tokens(p);
    if (st != ST_OK) return st;
    if (peek_key(p, "supermerges")) {
        if (m->kind != ST_MODEL_RULES) {
            next_line(p);
            ms(begin(p->e, p->line, p->ls), "supermerges: only a rules model has supermerges");
            return ST_ERR_MALFORMED_MODEL;
        }
        st = read_pairs(p, "supermerges", &m->supermerges, base + (uint32_t)m->merges.n, &m->merges);
        if (st != ST_OK) return st;
    }
    if ((st = read_specials(p)) != ST_OK) return st;
    if ((st = check_id_range(p)) != ST_OK) return st;
    if ((st = expect(p, "end", 0, &v, &vn)) != ST_OK) return st;
    if (p->pos < p->n) {
        ms(begin(p->e, p->line + 1, p->pos), "data after the 'end' line");
        return ST_ERR_MALFORMED_MODEL;
    }
    return ST_OK;
}

void st_model_free(st_model *m) {
    if (!m) return;
    st_allocator a = m->alloc;
    if (m->src) st__free(&a, m->src, m->src_len ? m->src_len : 1);
    st__model_pairs *ps[2] = {&m->merges, &m->supermerges};
    for (int i = 0; i < 2; i++) {
        /* the sizes read_pairs asked for (alloc_array: a count of 0 is 1) */
        size_t cap = ps[i]->cap, npairs = cap ? 2 * cap : 1;
        if (ps[i]->pairs) st__free(&a, ps[i]->pairs, npairs * sizeof(uint32_t));
        if (ps[i]->counts) st__free(&a, ps[i]->counts, (cap ? cap : 1) * sizeof(uint64_t));
    }
    if (m->ranks) st__free(&a, m->ranks, (m->ranks_cap ? m->ranks_cap : 1) * sizeof(uint32_t));
    if (m->specials) st__free(&a, m->specials, (m->specials_cap ? m->specials_cap : 1) * sizeof(st__model_special));
    if (m->special_text) st__free(&a, m->special_text, m->special_text_cap ? m->special_text_cap : 1);
    st__free(&a, m, sizeof *m);
}

/* e = the report of a rules model's rule, from ce (offset = the rule's index, input 2 for a
 * supermerge): its line and "merges[i]: " or "supermerges[i]: " before ce's message. */
static void rule_error(const st_model *m, st_error *e, const st_error *ce) {
    int sup = ce->input == 2;
    uint64_t line = (sup ? m->supermerges.line : m->merges.line) + 1 + ce->offset;
    ms(begin(e, line, line_start(m->src, m->src_len, line)), sup ? "supermerges[" : "merges[");
    mu(e, ce->offset);
    ms(e, "]: ");
    ms(e, ce->message[0] ? ce->message : "refused by the encoding constructor");
}

/* A rules model's special with an ordinary token's id shares that token (a HuggingFace-trained
 * model's special whose text is already a token): its text must be exactly the token's bytes.
 * Checked from the rules, walking the token's parts (a token of L bytes has 2L - 1 parts in all,
 * so the work is the specials' text); len: the tokens' lengths. */
static st_status check_shared_specials(const st_model *m, const uint32_t *len, size_t n_ord, st_error *e) {
    /* the stack holds at most a token's length of parts: the longest token walked (a special
     * whose length differs from its token's is refused without a walk) */
    size_t max_len = 0, shared = 0;
    for (size_t i = 0; i < m->n_specials; i++) {
        uint32_t id = m->specials[i].id;
        shared += id < n_ord;
        if (id < n_ord && len[id] == m->specials[i].len && len[id] > max_len) max_len = len[id];
    }
    if (!shared) return ST_OK;
    st_allocator a = m->alloc;
    /* token lengths are below 2^32, but on wasm32 four bytes each of so many would not fit */
    uint32_t *stack = max_len < SIZE_MAX / sizeof *stack ? (uint32_t *)st__alloc(&a, (max_len + 1) * sizeof *stack) : NULL;
    if (!stack) {
        e->status = ST_ERR_OUT_OF_MEMORY;
        return ST_ERR_OUT_OF_MEMORY;
    }
    st_status st = ST_OK;
    for (size_t i = 0; i < m->n_specials && st == ST_OK; i++) {
        uint32_t id = m->specials[i].id;
        if (id >= n_ord) break; /* ids increase */
        const uint8_t *text = m->special_text + m->specials[i].off;
        size_t n = m->specials[i].len, pos = 0, sp = 0;
        int same = len[id] == n;
        if (same) stack[sp++] = id;
        while (same && sp) { /* the token's bytes left to right: a part's right half waits on the stack */
            uint32_t x = stack[--sp];
            if (x < 256) {
                same = pos < n && text[pos++] == x;
                continue;
            }
            size_t r = x - 256;
            const uint32_t *pr = r < m->merges.n ? m->merges.pairs + 2 * r : m->supermerges.pairs + 2 * (r - m->merges.n);
            if (sp + 2 > max_len + 1) { same = 0; break; } /* cannot happen: the depth is below the length */
            stack[sp++] = pr[1];
            stack[sp++] = pr[0];
        }
        if (same && pos == n) continue;
        uint64_t line = m->specials_line + 1 + i;
        ms(begin(e, line, line_start(m->src, m->src_len, line)), "specials[");
        mu(e, i);
        ms(e, "]: id ");
        mu(e, id);
        ms(e, " is an ordinary token's, and the text is not its bytes");
        st = ST_ERR_MALFORMED_MODEL;
    }
    st__free(&a, stack, (max_len + 1) * sizeof *stack);
    return st;
}

/* The limit on the bytes the rules' tokens hold (ST_RULES_TOKEN_BYTES_BASE): checked from the
 * pairs, before any token exists, with one length a token (memory proportional to the file). */
static st_status check_token_bytes(const st_model *m, st_error *e) {
    if (m->kind != ST_MODEL_RULES) return ST_OK;
    st_allocator a = m->alloc;
    size_t n_ord = (m->alphabet == ST_ALPHABET_UBE ? 512 : 256) + m->merges.n + m->supermerges.n;
    uint32_t *len = (uint32_t *)st__alloc(&a, n_ord * sizeof *len);
    if (!len) {
        e->status = ST_ERR_OUT_OF_MEMORY;
        return ST_ERR_OUT_OF_MEMORY;
    }
    st_error ce;
    uint64_t bytes;
    st__error_clear(&ce);
    st_status st = st__rules_token_lengths(m->alphabet, m->merges.pairs, m->merges.n, m->supermerges.pairs,
                                           m->supermerges.n, len, &bytes, &ce);
    if (st != ST_OK) rule_error(m, e, &ce);
    else st = check_shared_specials(m, len, n_ord, e);
    st__free(&a, len, n_ord * sizeof *len);
    return st;
}

st_status st_model_parse(const char *bytes, size_t len, const st_allocator *alloc, st_model **out, st_error *err) {
    st_error local;
    st_error *e = err ? err : &local;
    err_clear(e);
    if (!out || (!bytes && len)) {
        e->status = ST_ERR_INVALID_ARGUMENT;
        return ST_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    st_allocator a;
    st__allocator_init(&a, alloc);
    st_model *m = (st_model *)st__alloc(&a, sizeof *m);
    if (!m) {
        e->status = ST_ERR_OUT_OF_MEMORY;
        return ST_ERR_OUT_OF_MEMORY;
    }
    st__memset(m, 0, sizeof *m);
    m->alloc = a;
    parser p;
    p.e = e;
    p.m = m;
    p.line = 0;
    p.pos = 0;
    p.ls = p.ll = 0;
    m->src = (uint8_t *)st__alloc(&a, len ? len : 1);
    st_status st;
    if (!m->src) st = oom(&p);
    else {
        m->src_len = len;
        if (len) st__memcpy(m->src, bytes, len);
        p.s = m->src;
        p.n = len;
        st = parse_model(&p);
        if (st == ST_OK) st = check_token_bytes(m, e);
    }
    if (st != ST_OK) {
        e->status = (uint32_t)st;
        st_model_free(m);
        return st;
    }
    *out = m;
    return ST_OK;
}

/* ---- the writer --------------------------------------------------------------------------- */

typedef struct writer {
    uint8_t *out;
    size_t cap;
    uint64_t n; /* the whole text's bytes, written or not: on wasm32 it may pass SIZE_MAX */
} writer;

static void put(writer *w, const void *data, size_t len) {
    if (w->n < w->cap) {
        size_t room = w->cap - (size_t)w->n;
        st__memcpy(w->out + w->n, data, len <= room ? len : room);
    }
    w->n += len;
}

/* The writers' end: the length, and whether it fitted (a text past SIZE_MAX bytes cannot). */
static st_status written(const writer *w, size_t *out_len) {
    if (w->n > (uint64_t)SIZE_MAX) {
        *out_len = 0;
        return ST_ERR_OUT_OF_MEMORY;
    }
    *out_len = (size_t)w->n;
    return w->n > w->cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK;
}
static void puts_(writer *w, const char *s) { put(w, s, cstr_len(s)); }
static void putu(writer *w, uint64_t v) {
    char b[20];
    put(w, b, st__u64_decimal(v, b));
}

/* A special's text as the format writes it: \\, \n, \r, \t, the other control bytes and a space
 * at either end as \xHH, everything else as it is. */
static void put_special_text(writer *w, const uint8_t *t, size_t len) {
    for (size_t k = 0; k < len; k++) {
        uint8_t c = t[k];
        if (c == '\\') puts_(w, "\\\\");
        else if (c == '\n') puts_(w, "\\n");
        else if (c == '\r') puts_(w, "\\r");
        else if (c == '\t') puts_(w, "\\t");
        else if (c < 0x20 || c == 0x7F || (c == ' ' && (k == 0 || k + 1 == len))) {
            char h[4] = {'\\', 'x', "0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15]};
            put(w, h, 4);
        } else put(w, &c, 1);
    }
}

static void write_pairs(writer *w, const char *what, const st__model_pairs *ps) {
    puts_(w, what);
    puts_(w, " ");
    putu(w, ps->n);
    puts_(w, ps->counts ? " counts\n" : "\n");
    for (size_t i = 0; i < ps->n; i++) {
        putu(w, ps->pairs[2 * i]);
        puts_(w, " ");
        putu(w, ps->pairs[2 * i + 1]);
        if (ps->counts) { puts_(w, " "); putu(w, ps->counts[i]); }
        puts_(w, "\n");
    }
}

st_status st_model_write(const st_model *m, char *out, size_t cap, size_t *out_len) {
    if (!m || !out_len || (!out && cap)) return ST_ERR_INVALID_ARGUMENT;
    writer w = {(uint8_t *)out, cap, 0};
    /* version 2 exactly when there is a training line, so version 1 files stay byte for byte */
    puts_(&w, m->has_training ? "supertok-model 2\nname " : "supertok-model 1\nname ");
    put(&w, m->src + m->name_off, m->name_len);
    puts_(&w, "\n");
    put(&w, m->src + m->comments_off, m->comments_len);
    if (m->has_training) {
        static const char *const algorithms[] = {"bpe", "boundless", "superbpe", "extend"};
        puts_(&w, "training algorithm=");
        puts_(&w, algorithms[m->tr_algorithm >= 0 && m->tr_algorithm <= 3 ? m->tr_algorithm : 0]);
        puts_(&w, m->tr_mode == ST_TRAIN_HF ? " mode=hf vocab_size=" : " mode=paper vocab_size=");
        putu(&w, m->tr_vocab_size);
        puts_(&w, " min_frequency=");
        putu(&w, m->tr_min_frequency);
        if (m->tr_algorithm == ST_ALGORITHM_SUPERBPE) {
            puts_(&w, " supermerges=");
            putu(&w, m->tr_supermerges);
        }
        if (m->tr_algorithm == ST_ALGORITHM_EXTEND) {
            puts_(&w, " base=");
            put(&w, m->src + m->tr_base_off, m->tr_base_len);
            puts_(&w, " seed_merges=");
            putu(&w, m->tr_seed_merges);
            puts_(&w, " max_words=");
            putu(&w, m->tr_max_words);
            puts_(&w, m->tr_colon_space ? " colon_space=yes min_count=" : " colon_space=no min_count=");
            putu(&w, m->tr_min_count);
        }
        if (m->tr_ngram) {
            puts_(&w, " ngram_split=yes c_min=");
            putu(&w, m->tr_c_min);
            puts_(&w, " max_len=");
            putu(&w, m->tr_max_len);
        } else puts_(&w, " ngram_split=no");
        puts_(&w, "\n");
    }
    puts_(&w, m->kind == ST_MODEL_RULES ? "kind rules\n" : "kind ranks\n");
    puts_(&w, m->alphabet == ST_ALPHABET_UBE ? "alphabet ube\n" : "alphabet bytes\n");
    puts_(&w, "pattern ");
    puts_(&w, pattern_names[m->pattern - ST_PATTERN_GPT2]);
    puts_(&w, m->flags & ST_PRETOK_SCRIPT_AWARE ? "\nscript-aware yes\nscripts " : "\nscript-aware no\n");
    if (m->flags & ST_PRETOK_SCRIPT_AWARE) {
        if (m->scripts_kind == ST__SCRIPTS_DEFAULT) puts_(&w, "default");
        else if (m->scripts_len == 0) puts_(&w, "none");
        else put(&w, m->src + m->scripts_off, m->scripts_len);
        puts_(&w, "\n");
    }
    if (m->kind == ST_MODEL_RULES) write_pairs(&w, "merges", &m->merges);
    else {
        puts_(&w, "tokens ");
        putu(&w, m->n_tokens);
        puts_(&w, "\n");
        put(&w, m->src + m->tokens_off, m->tokens_len);
    }
    if (m->supermerges.n) write_pairs(&w, "supermerges", &m->supermerges);
    puts_(&w, "specials ");
    putu(&w, m->n_specials);
    puts_(&w, "\n");
    for (size_t i = 0; i < m->n_specials; i++) {
        putu(&w, m->specials[i].id);
        puts_(&w, " ");
        put_special_text(&w, m->special_text + m->specials[i].off, m->specials[i].len);
        puts_(&w, "\n");
    }
    puts_(&w, "end\n");
    return written(&w, out_len);
}

/* ST_ERR_INVALID_ARGUMENT about input `input` of st_model_write_rules. */
static st_status bad_field(st_error *e, uint32_t input, st_unit unit, uint64_t offset, const char *why) {
    st__error_set(e, ST_ERR_INVALID_ARGUMENT, unit, offset, why);
    st__error_line(e, 0, input);
    return ST_ERR_INVALID_ARGUMENT;
}

/* Ends that never go backwards: the index of the first that does, or n. */
static size_t ends_backwards(const size_t *ends, size_t n) {
    for (size_t i = 1; i < n; i++)
        if (ends[i] < ends[i - 1]) return i;
    return n;
}

st_status st_model_write_rules(const char *name, size_t name_len, int alphabet, int pattern, const uint32_t *merges,
                               size_t n_merges, const char *specials, const size_t *special_ends,
                               const uint32_t *special_ids, size_t n_specials, const char *comments,
                               const size_t *comment_ends, size_t n_comments, char *out, size_t cap,
                               size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!out_len || (!out && cap) || (!name && name_len) || (!merges && n_merges) ||
        (n_specials && (!special_ends || !special_ids || (!specials && special_ends[n_specials - 1]))) ||
        (n_comments && (!comment_ends || (!comments && comment_ends[n_comments - 1]))) ||
        n_merges > SIZE_MAX / 2 || n_specials > UINT32_MAX)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    if (n_merges > ST_RULES_MAX_IDS)
        return bad_field(err, 3, ST_UNIT_NONE, 0, "merges: more rules than a model has ids (2^21 - 1)");
    *out_len = 0;
    if (alphabet != ST_ALPHABET_BYTES && alphabet != ST_ALPHABET_UBE)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "alphabet: not ST_ALPHABET_BYTES or _UBE");
    if (pattern < ST_PATTERN_GPT2 || pattern > ST_PATTERN_DEEPSEEK_V3)
        return st__error_set(err, ST_ERR_UNKNOWN_PATTERN, ST_UNIT_NONE, 0, "pattern: not an st_pattern");
    if (name_len == 0 || name_len > 128)
        return bad_field(err, 1, ST_UNIT_NONE, 0, "name: 1 to 128 printable ASCII characters, no spaces");
    for (size_t i = 0; i < name_len; i++)
        if ((uint8_t)name[i] <= 0x20 || (uint8_t)name[i] >= 0x7F)
            return bad_field(err, 1, ST_UNIT_BYTE, i, "name: 1 to 128 printable ASCII characters, no spaces");
    size_t k = ends_backwards(special_ends, n_specials);
    if (k < n_specials) return bad_field(err, 2, ST_UNIT_INDEX, k, "specials: the ends go backwards");
    if ((k = ends_backwards(comment_ends, n_comments)) < n_comments)
        return bad_field(err, 4, ST_UNIT_INDEX, k, "comments: the ends go backwards");
    for (size_t i = 0; i < n_comments; i++) {
        size_t a = i ? comment_ends[i - 1] : 0, b = comment_ends[i];
        int ok = b > a && st_utf8_validate(comments + a, b - a, NULL) == ST_OK;
        for (size_t j = a; ok && j < b; j++) ok = (uint8_t)comments[j] >= 0x20 && (uint8_t)comments[j] != 0x7F;
        if (!ok) return bad_field(err, 4, ST_UNIT_INDEX, i, "comment: one line of printable UTF-8 text");
    }
    /* the specials by id, equal ids in the order given */
    st_allocator a;
    st__allocator_init(&a, NULL);
    uint64_t *order = NULL;
    if (n_specials) {
        order = (uint64_t *)st__alloc(&a, n_specials * sizeof(uint64_t));
        if (!order) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        for (size_t i = 0; i < n_specials; i++) order[i] = ((uint64_t)special_ids[i] << 32) | i;
        st__sort_u64(order, n_specials);
    }
    writer w = {(uint8_t *)out, cap, 0};
    puts_(&w, "supertok-model 1\nname ");
    put(&w, name, name_len);
    puts_(&w, "\n");
    for (size_t i = 0; i < n_comments; i++) {
        size_t c0 = i ? comment_ends[i - 1] : 0;
        puts_(&w, "comment ");
        put(&w, comments + c0, comment_ends[i] - c0);
        puts_(&w, "\n");
    }
    puts_(&w, alphabet == ST_ALPHABET_UBE ? "kind rules\nalphabet ube\npattern " : "kind rules\nalphabet bytes\npattern ");
    puts_(&w, pattern_names[pattern - ST_PATTERN_GPT2]);
    puts_(&w, "\nscript-aware no\n");
    st__model_pairs ps = {(uint32_t *)(uintptr_t)merges, NULL, n_merges, 0, 1, 0};
    write_pairs(&w, "merges", &ps);
    puts_(&w, "specials ");
    putu(&w, n_specials);
    puts_(&w, "\n");
    for (size_t k2 = 0; k2 < n_specials; k2++) {
        size_t i = (size_t)(order[k2] & 0xFFFFFFFFu), s0 = i ? special_ends[i - 1] : 0;
        putu(&w, special_ids[i]);
        puts_(&w, " ");
        put_special_text(&w, (const uint8_t *)specials + s0, special_ends[i] - s0);
        puts_(&w, "\n");
    }
    puts_(&w, "end\n");
    if (order) st__free(&a, order, n_specials * sizeof(uint64_t));
    return st__error_status(err, written(&w, out_len));
}

static int pairs_equal(const st__model_pairs *a, const st__model_pairs *b) {
    if (a->n != b->n || !a->counts != !b->counts) return 0;
    if (a->n && st__memcmp(a->pairs, b->pairs, 2 * a->n * sizeof(uint32_t))) return 0;
    return !a->counts || !a->n || !st__memcmp(a->counts, b->counts, a->n * sizeof(uint64_t));
}

static int slice_eq(const st_model *a, size_t ao, size_t an, const st_model *b, size_t bo, size_t bn) {
    return an == bn && (an == 0 || st__memcmp(a->src + ao, b->src + bo, an) == 0);
}

int st__model_equal(const st_model *a, const st_model *b) {
    if (a->kind != b->kind || a->alphabet != b->alphabet || a->pattern != b->pattern || a->flags != b->flags)
        return 0;
    if (!slice_eq(a, a->name_off, a->name_len, b, b->name_off, b->name_len) ||
        !slice_eq(a, a->comments_off, a->comments_len, b, b->comments_off, b->comments_len))
        return 0;
    if ((a->flags & ST_PRETOK_SCRIPT_AWARE) &&
        (a->scripts_kind != b->scripts_kind ||
         (a->scripts_kind == ST__SCRIPTS_LIST && !slice_eq(a, a->scripts_off, a->scripts_len, b, b->scripts_off, b->scripts_len))))
        return 0;
    if (!pairs_equal(&a->merges, &b->merges) || !pairs_equal(&a->supermerges, &b->supermerges)) return 0;
    if (a->has_training != b->has_training ||
        (a->has_training &&
         (a->tr_algorithm != b->tr_algorithm || a->tr_mode != b->tr_mode || a->tr_vocab_size != b->tr_vocab_size ||
          a->tr_min_frequency != b->tr_min_frequency || a->tr_supermerges != b->tr_supermerges ||
          a->tr_ngram != b->tr_ngram || a->tr_c_min != b->tr_c_min || a->tr_max_len != b->tr_max_len ||
          a->tr_seed_merges != b->tr_seed_merges || a->tr_max_words != b->tr_max_words ||
          a->tr_min_count != b->tr_min_count || a->tr_colon_space != b->tr_colon_space ||
          (a->tr_algorithm == ST_ALGORITHM_EXTEND &&
           !slice_eq(a, a->tr_base_off, a->tr_base_len, b, b->tr_base_off, b->tr_base_len)))))
        return 0;
    if (a->n_tokens != b->n_tokens || !slice_eq(a, a->tokens_off, a->tokens_len, b, b->tokens_off, b->tokens_len))
        return 0;
    if (a->n_specials != b->n_specials) return 0;
    for (size_t i = 0; i < a->n_specials; i++) {
        const st__model_special *x = &a->specials[i], *y = &b->specials[i];
        if (x->id != y->id || x->len != y->len ||
            st__memcmp(a->special_text + x->off, b->special_text + y->off, x->len))
            return 0;
    }
    return 1;
}

/* ---- getters ------------------------------------------------------------------------------ */

int st_model_kind(const st_model *m) { return m ? m->kind : 0; }
int st_model_alphabet(const st_model *m) { return m ? m->alphabet : 0; }
int st_model_pattern(const st_model *m) { return m ? m->pattern : 0; }
uint32_t st_model_pretokenizer_flags(const st_model *m) { return m ? m->flags : 0; }

const char *st_model_name(const st_model *m, size_t *len) {
    if (len) *len = m ? m->name_len : 0;
    return m ? (const char *)m->src + m->name_off : "";
}

const char *st_model_scripts(const st_model *m, size_t *len) {
    if (len) *len = 0;
    if (!m || !(m->flags & ST_PRETOK_SCRIPT_AWARE) || m->scripts_kind == ST__SCRIPTS_DEFAULT) return NULL;
    if (len) *len = m->scripts_len;
    return m->scripts_len ? (const char *)m->src + m->scripts_off : "";
}

uint64_t st_model_count(const st_model *m, const char *section) {
    if (!m || !section) return 0;
    const uint8_t *s = (const uint8_t *)section;
    size_t n = cstr_len(section);
    if (bytes_eq(s, n, "merges")) return m->merges.n;
    if (bytes_eq(s, n, "supermerges")) return m->supermerges.n;
    if (bytes_eq(s, n, "tokens")) return m->n_tokens;
    if (bytes_eq(s, n, "specials")) return m->n_specials;
    return 0;
}

size_t st_model_pairs(const st_model *m, const char *section, const uint32_t **pairs, const uint64_t **counts) {
    if (pairs) *pairs = NULL;
    if (counts) *counts = NULL;
    if (!m || !section || m->kind != ST_MODEL_RULES) return 0;
    const uint8_t *s = (const uint8_t *)section;
    size_t n = cstr_len(section);
    const st__model_pairs *ps = bytes_eq(s, n, "merges") ? &m->merges : bytes_eq(s, n, "supermerges") ? &m->supermerges : NULL;
    if (!ps || !ps->n) return 0;
    if (pairs) *pairs = ps->pairs;
    if (counts) *counts = ps->counts;
    return ps->n;
}

/* ---- what the encoding builder takes from a model ------------------------------------------ */

st_status st__model_specials_ranks(const st_model *m, const st_allocator *a, uint8_t **text, size_t *len, size_t *size) {
    size_t slen = 0;
    for (size_t i = 0; i < m->n_specials; i++) slen += st__base64_encoded_len(m->specials[i].len) + 12;
    *size = slen ? slen : 1;
    uint8_t *spec = (uint8_t *)st__alloc(a, *size);
    *text = spec;
    *len = 0;
    if (!spec) return ST_ERR_OUT_OF_MEMORY;
    size_t used = 0;
    for (size_t i = 0; i < m->n_specials; i++) {
        st__base64_encode(m->special_text + m->specials[i].off, m->specials[i].len, spec + used);
        used += st__base64_encoded_len(m->specials[i].len);
        spec[used++] = ' ';
        used += st__u64_decimal(m->specials[i].id, (char *)spec + used);
        spec[used++] = '\n';
    }
    *len = used;
    return ST_OK;
}

/* The line number of byte offset off in text (its first line is `first`). */
static uint64_t line_in(const uint8_t *text, size_t len, size_t off, uint64_t first) {
    uint64_t line = first;
    for (size_t i = 0; i < off && i < len; i++) line += text[i] == '\n';
    return line;
}

void st__model_encoding_error(const st_model *m, const uint8_t *specials, size_t specials_len, const st_error *ce,
                              st_error *e) {
    size_t off = (size_t)ce->offset;
    uint64_t line;
    if (ce->input == 1) {
        uint64_t k = line_in(specials, specials_len, off, 0);
        line = m->specials_line + 1 + k;
        ms(begin(e, line, line_start(m->src, m->src_len, line)), "specials[");
        mu(e, k);
        ms(e, "]: ");
        ms(e, ce->message[0] ? ce->message : "refused by the encoding constructor");
    } else if (m->kind == ST_MODEL_RULES) {
        rule_error(m, e, ce); /* a supermerge's index, else a rule's */
    } else {
        line = line_in(m->src + m->tokens_off, m->tokens_len, off, m->tokens_line + 1);
        ms(begin(e, line, m->tokens_off + off), "tokens[");
        mu(e, line - m->tokens_line - 1);
        ms(e, "]: refused by the rank-file loader (the same bytes as another token?)");
    }
}
