/* The JSON reader (json.h). */
#include "json.h"
#include "../text/utf8.h"

size_t st__json_ws(const st__json *j, size_t i) {
    while (i < j->n && (j->s[i] == ' ' || j->s[i] == '\n' || j->s[i] == '\r' || j->s[i] == '\t')) i++;
    return i;
}

st_status st__json_error(const st__json *j, size_t at, const char *what) {
    return st__error_set(j->err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, at, what);
}

uint8_t st__json_peek(const st__json *j, size_t *i) {
    *i = st__json_ws(j, *i);
    return *i < j->n ? j->s[*i] : 0;
}

static int hex4(const uint8_t *p, uint32_t *out) {
    uint32_t x = 0;
    for (int k = 0; k < 4; k++) {
        uint8_t c = p[k];
        uint32_t d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
        if (d == 16) return 0;
        x = x << 4 | d;
    }
    *out = x;
    return 1;
}

st_status st__json_string(const st__json *j, size_t *i, uint8_t *out, size_t cap, size_t *len) {
    size_t p = st__json_ws(j, *i), n = j->n, w = 0;
    const uint8_t *s = j->s;
    if (p >= n || s[p] != '"') return st__json_error(j, p, "expected a string");
    p++;
    for (;;) {
        /* a run of plain bytes first (validated as UTF-8 in one call) */
        size_t a = p;
        while (p < n && s[p] != '"' && s[p] != '\\' && s[p] >= 0x20) p++;
        if (p > a) {
            st_error ue;
            if (st_utf8_validate((const char *)s + a, p - a, &ue) != ST_OK)
                return st__json_error(j, a + ue.offset, "invalid UTF-8 in a string");
            size_t k = p - a;
            if (w < cap) st__memcpy(out + w, s + a, k <= cap - w ? k : cap - w);
            w += k;
        }
        if (p >= n) return st__json_error(j, p, "the file ends inside a string");
        uint8_t c = s[p];
        if (c == '"') break;
        if (c < 0x20) return st__json_error(j, p, "a control character inside a string (escape it)");
        /* an escape */
        if (p + 1 >= n) return st__json_error(j, p, "the file ends inside an escape");
        uint8_t e = s[p + 1], b[4];
        size_t k = 1;
        switch (e) {
        case '"': b[0] = '"'; break;
        case '\\': b[0] = '\\'; break;
        case '/': b[0] = '/'; break;
        case 'b': b[0] = 8; break;
        case 'f': b[0] = 12; break;
        case 'n': b[0] = 10; break;
        case 'r': b[0] = 13; break;
        case 't': b[0] = 9; break;
        case 'u': {
            uint32_t cp;
            if (p + 6 > n || !hex4(s + p + 2, &cp)) return st__json_error(j, p, "a \\u escape needs four hex digits");
            if (cp >= 0xDC00 && cp <= 0xDFFF) return st__json_error(j, p, "a lone low surrogate escape");
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                uint32_t lo;
                if (p + 12 > n || s[p + 6] != '\\' || s[p + 7] != 'u' || !hex4(s + p + 8, &lo) || lo < 0xDC00 ||
                    lo > 0xDFFF)
                    return st__json_error(j, p, "a lone high surrogate escape");
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                p += 6;
            }
            k = st__utf8_encode(cp, b);
            p += 4;
            break;
        }
        default: return st__json_error(j, p, "an unknown escape");
        }
        p += 2;
        for (size_t x = 0; x < k; x++, w++)
            if (w < cap) out[w] = b[x];
    }
    *i = p + 1;
    *len = w;
    return ST_OK;
}

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* The number at p: its end, or 0 if none is there (RFC 8259's grammar). */
static size_t number_end(const uint8_t *s, size_t n, size_t p) {
    if (p < n && s[p] == '-') p++;
    if (p >= n || !is_digit(s[p])) return 0;
    if (s[p] == '0') p++;
    else while (p < n && is_digit(s[p])) p++;
    if (p < n && s[p] == '.') {
        p++;
        if (p >= n || !is_digit(s[p])) return 0;
        while (p < n && is_digit(s[p])) p++;
    }
    if (p < n && (s[p] == 'e' || s[p] == 'E')) {
        p++;
        if (p < n && (s[p] == '+' || s[p] == '-')) p++;
        if (p >= n || !is_digit(s[p])) return 0;
        while (p < n && is_digit(s[p])) p++;
    }
    return p;
}

st_status st__json_u32(const st__json *j, size_t *i, uint32_t *out) {
    size_t p = st__json_ws(j, *i), e = number_end(j->s, j->n, p);
    if (!e) return st__json_error(j, p, "expected a number");
    uint64_t x = 0;
    for (size_t k = p; k < e; k++) {
        if (!is_digit(j->s[k]) || (k == p && j->s[k] == '0' && e > p + 1))
            return st__json_error(j, p, "expected a whole number from 0 to 4294967295");
        x = x * 10 + (uint64_t)(j->s[k] - '0');
        if (x > 0xFFFFFFFFull) return st__json_error(j, p, "a number above 4294967295");
    }
    *out = (uint32_t)x;
    *i = e;
    return ST_OK;
}

static int word_at(const st__json *j, size_t p, const char *w, size_t len) {
    return p + len <= j->n && st__memcmp(j->s + p, w, len) == 0;
}

st_status st__json_bool(const st__json *j, size_t *i, int *out) {
    size_t p = st__json_ws(j, *i);
    if (word_at(j, p, "true", 4)) { *out = 1; *i = p + 4; return ST_OK; }
    if (word_at(j, p, "false", 5)) { *out = 0; *i = p + 5; return ST_OK; }
    return st__json_error(j, p, "expected true or false");
}

int st__json_null(const st__json *j, size_t *i) {
    size_t p = st__json_ws(j, *i);
    if (!word_at(j, p, "null", 4)) return 0;
    *i = p + 4;
    return 1;
}

st_status st__json_open(const st__json *j, size_t *i, uint8_t open) {
    size_t p = st__json_ws(j, *i);
    if (p >= j->n || j->s[p] != open) return st__json_error(j, p, open == '{' ? "expected an object" : "expected an array");
    *i = p + 1;
    return ST_OK;
}

st_status st__json_next(const st__json *j, size_t *i, uint8_t close, int first, int *more) {
    size_t p = st__json_ws(j, *i);
    if (p < j->n && j->s[p] == close) { *i = p + 1; *more = 0; return ST_OK; }
    if (!first) {
        if (p >= j->n || j->s[p] != ',')
            return st__json_error(j, p, p >= j->n ? "the file ends inside an array or object" : "expected ',' or a closing bracket");
        p = st__json_ws(j, p + 1);
    }
    if (p >= j->n) return st__json_error(j, p, "the file ends inside an array or object");
    *i = p;
    *more = 1;
    return ST_OK;
}

st_status st__json_colon(const st__json *j, size_t *i) {
    size_t p = st__json_ws(j, *i);
    if (p >= j->n || j->s[p] != ':') return st__json_error(j, p, "expected ':' after a key");
    *i = p + 1;
    return ST_OK;
}

/* Skip one value with no recursion: the open brackets are counted (their kinds kept as bits of
 * a stack, ST_JSON_MAX_DEPTH deep), and each element checked as it is passed. */
st_status st__json_skip(const st__json *j, size_t *i) {
    uint64_t kinds[ST_JSON_MAX_DEPTH / 64]; /* bit set: an object */
    size_t depth = 0, p = *i;
    int want_value = 1; /* a value is due (else: ',' or a close) */
    int want_key = 0;   /* in an object, a key is due before the value */
    for (;;) {
        p = st__json_ws(j, p);
        if (p >= j->n) return st__json_error(j, p, "the file ends inside a value");
        uint8_t c = j->s[p];
        if (want_value) {
            if (want_key) {
                size_t len;
                st_status st = st__json_string(j, &p, NULL, 0, &len);
                if (st != ST_OK) return st;
                if ((st = st__json_colon(j, &p)) != ST_OK) return st;
                want_key = 0;
                continue;
            }
            if (c == '{' || c == '[') {
                if (depth >= ST_JSON_MAX_DEPTH) return st__json_error(j, p, "nested too deep");
                if (c == '{') kinds[depth / 64] |= 1ull << (depth % 64);
                else kinds[depth / 64] &= ~(1ull << (depth % 64));
                depth++;
                p++;
                size_t q = st__json_ws(j, p);
                if (q < j->n && j->s[q] == (c == '{' ? '}' : ']')) { /* empty */
                    depth--;
                    p = q + 1;
                    want_value = 0;
                } else {
                    want_key = c == '{';
                }
            } else if (c == '"') {
                size_t len;
                st_status st = st__json_string(j, &p, NULL, 0, &len);
                if (st != ST_OK) return st;
                want_value = 0;
            } else if (word_at(j, p, "true", 4)) { p += 4; want_value = 0; }
            else if (word_at(j, p, "false", 5)) { p += 5; want_value = 0; }
            else if (word_at(j, p, "null", 4)) { p += 4; want_value = 0; }
            else {
                size_t e = number_end(j->s, j->n, p);
                if (!e) return st__json_error(j, p, "expected a value");
                p = e;
                want_value = 0;
            }
            if (!want_value && !depth) break;
            continue;
        }
        /* after a value inside depth */
        int obj = (int)((kinds[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1);
        if (c == ',') { p++; want_value = 1; want_key = obj; continue; }
        if (c == (obj ? '}' : ']')) {
            p++;
            if (!--depth) break;
            continue;
        }
        return st__json_error(j, p, "expected ',' or a closing bracket");
    }
    *i = p;
    return ST_OK;
}
