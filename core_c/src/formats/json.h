/* A small strict JSON reader (RFC 8259) for the model files other libraries write (HuggingFace
 * tokenizer.json, formats/tokenizer_json.c): no tree, no recursion; the caller walks the text
 * with a position, reading the values it wants and skipping the rest. Strings are decoded as
 * serde_json decodes them (what tokenizers reads the file with): escapes, surrogate pairs, and a
 * lone surrogate escape, a raw control character or invalid UTF-8 refused. Every error names its
 * byte offset (ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE). */
#ifndef ST_JSON_H
#define ST_JSON_H

#include "../base/internal.h"

/* Nesting deeper than this is refused (a hostile file of a million '[' must not cost more than a
 * counter; no file these readers take nests past a dozen). */
#define ST_JSON_MAX_DEPTH 512

typedef struct st__json {
    const uint8_t *s;
    size_t n;
    st_error *err;
} st__json;

/* The offset of the first byte at or after i that is not JSON whitespace. */
size_t st__json_ws(const st__json *j, size_t i);

/* An error at byte offset `at`: ST_ERR_MALFORMED_MODEL with `what` as the message (more may be
 * appended), returned. */
st_status st__json_error(const st__json *j, size_t at, const char *what);

/* The value at *i (after whitespace) is skipped: *i is then just past it. */
st_status st__json_skip(const st__json *j, size_t *i);

/* Walking an array or object: st__json_open checks the value at *i is `open` ('[' or '{') and
 * steps inside; then each st__json_next steps to the next element (past a ',' after the first)
 * and sets *more, or past the closing `close` and clears it. For an object, the element is a
 * member: read its key with st__json_string, then st__json_colon. */
st_status st__json_open(const st__json *j, size_t *i, uint8_t open);
st_status st__json_next(const st__json *j, size_t *i, uint8_t close, int first, int *more);
st_status st__json_colon(const st__json *j, size_t *i);

/* The string at *i decoded to UTF-8 into out[0..cap) (out may be NULL with cap 0); *len is its
 * whole decoded length even when larger than cap (then only cap bytes are written). */
st_status st__json_string(const st__json *j, size_t *i, uint8_t *out, size_t cap, size_t *len);

/* A non-negative integer below 2^32 at *i (no sign, fraction or exponent). */
st_status st__json_u32(const st__json *j, size_t *i, uint32_t *out);
/* true or false at *i. */
st_status st__json_bool(const st__json *j, size_t *i, int *out);
/* 1 if the value at *i is null (then skipped), else 0 (nothing read). */
int st__json_null(const st__json *j, size_t *i);
/* The first byte of the value at *i (after whitespace; *i moved there), 0 at the end. */
uint8_t st__json_peek(const st__json *j, size_t *i);

#endif
