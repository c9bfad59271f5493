/* supertok: the one public header of the portable tokenizer core.
 *
 * Conventions (DESIGN §3):
 *  - every public name starts with st_; handles are opaque;
 *  - every call that can fail returns an st_status (numbers are pinned: they never change
 *    meaning) and, where it applies, writes the byte offset of the failure to *err_offset;
 *  - output goes to caller buffers with a size query (pass cap 0 to learn the size);
 *  - no global mutable state: a handle, once made, is immutable and may be shared by threads;
 *  - allocation goes through st_allocator hooks, per handle (NULL = the platform default).
 *
 * The same sources build natively and as a freestanding wasm32 module with no imports. */
#ifndef SUPERTOK_H
#define SUPERTOK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Public functions are declared with ST_API (symbol visibility; the build helper defines it;
 * this fallback keeps the header usable on its own). */
#ifndef ST_API
#define ST_API
#endif

#define ST_VERSION_MAJOR 0
#define ST_VERSION_MINOR 1
#define ST_VERSION_PATCH 0

/* Status codes. Pinned: a number keeps its meaning forever; new codes are appended. */
typedef enum st_status {
    ST_OK = 0,
    ST_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer or an out-of-range value */
    ST_ERR_OUT_OF_MEMORY = 2,
    ST_ERR_INVALID_UTF8 = 3,     /* *err_offset = byte offset where the bad sequence starts */
    ST_ERR_BUFFER_TOO_SMALL = 4, /* the size needed is reported; nothing past cap was written */
    ST_ERR_UNKNOWN_PATTERN = 5,
    ST_ERR_UNKNOWN_SCRIPT = 6,   /* *err_offset = byte offset of the name in the script list */
    ST_ERR_MALFORMED_MODEL = 7,  /* *err_offset = byte offset of the bad line or field */
    ST_ERR_INVALID_TOKEN = 8,    /* *err_offset = index of the bad id in the input array */
    ST_ERR_NOT_ENCODABLE = 9     /* a byte has no token in this vocabulary; *err_offset = its offset */
} st_status;

/* What an error's offset counts. Pinned numbers. */
typedef enum st_unit {
    ST_UNIT_NONE = 0,      /* no position applies */
    ST_UNIT_BYTE = 1,      /* byte offset in the input text or file */
    ST_UNIT_CODEPOINT = 2, /* code point offset in the input text */
    ST_UNIT_UTF16 = 3,     /* UTF-16 code unit offset in the input text */
    ST_UNIT_INDEX = 4      /* index into the input array (ids, symbols, rules, allowed ids, texts) */
} st_unit;

/* One error report for every fallible call (last parameter, may be NULL). Fixed-width fields:
 * the same layout natively and in wasm32, so hosts read it from memory. */
typedef struct st_error {
    uint32_t status;   /* the st_status the call returned */
    uint32_t unit;     /* st_unit of offset */
    uint64_t offset;   /* where it went wrong, in unit */
    uint64_t line;     /* 1-based line in a text input (model file, rank file), 0 if none */
    uint32_t token;    /* the token id concerned (e.g. a disallowed special), 0xFFFFFFFF if none */
    uint32_t input;    /* which input of the call: 0 the main one, 1 the special tokens, ... */
    char message[120]; /* NUL-terminated detail naming what was wrong (field, token, value);
                          "" when the status says it all */
} st_error;

/* A short English message for a status; never NULL ("unknown status" for other numbers). */
const char *st_status_str(int status);

/* (major << 16) | (minor << 8) | patch, and the same as text, e.g. "0.1.0". */
uint32_t st_version(void);
const char *st_version_str(void);
/* The Unicode version the property tables were generated from, e.g. "16.0". */
const char *st_unicode_version(void);

/* Allocator hooks. free receives the size that was asked of alloc. */
typedef struct st_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} st_allocator;

/* The platform allocator, for hosts that must place data in the core's memory (wasm hosts
 * write their input through these). st_malloc(0) returns a valid unique pointer or NULL. */
void *st_malloc(size_t size);
void st_free(void *ptr);

/* ---- Scripts --------------------------------------------------------------------------- */

/* The Unicode Script property value of a code point, as our id (0 Unknown, 1 Common,
 * 2 Inherited, then real scripts); -1 for a value above U+10FFFF. */
int st_script_of(uint32_t cp);
/* The name of a script id, or NULL if out of range: the longest alias the regex module knows
 * for the value, title-cased, without separators ("Han", "Latin", "Olditalic" for Old_Italic);
 * st_script_from_name accepts it and every other alias. */
const char *st_script_name(int script);
/* Number of script ids. */
int st_script_count(void);
/* The id for a name or alias ("Han", "Hani", "han", "Old_Italic"), ignoring case, '_', '-'
 * and ' '; -1 if unknown. */
int st_script_from_name(const char *name, size_t len);

/* ---- Pre-tokenizers -------------------------------------------------------------------- */

/* The pattern families: the splits of tiktoken 0.14's pat_str for each encoding. */
typedef enum st_pattern {
    ST_PATTERN_GPT2 = 1,   /* r50k_base, p50k_base */
    ST_PATTERN_CL100K = 2, /* cl100k_base */
    ST_PATTERN_O200K = 3   /* o200k_base */
} st_pattern;

/* Pre-tokenizer flags. */
#define ST_PRETOK_SCRIPT_AWARE 1u /* split into single-script chunks first (DESIGN §5) */

/* Output flags for st_pretokenize. */
#define ST_OFFSETS_CODEPOINTS 1u /* report ends in code points instead of bytes */

typedef struct st_pretokenizer st_pretokenizer;

/* Make a pre-tokenizer. scripts: a comma-separated list of script names that use the
 * script-specific split in script-aware mode; NULL means the default set (Han, Hiragana,
 * Katakana, Thai, Myanmar, Khmer, Lao); "" means none. An unknown name gives
 * ST_ERR_UNKNOWN_SCRIPT with *err_offset at the name. alloc may be NULL. */
st_status st_pretokenizer_new(int pattern, uint32_t flags, const char *scripts,
                              size_t scripts_len, const st_allocator *alloc,
                              st_pretokenizer **out, size_t *err_offset);
void st_pretokenizer_free(st_pretokenizer *pt);

/* Split UTF-8 text into pieces; writes the end offset of each piece (bytes, or code points
 * with ST_OFFSETS_CODEPOINTS) to ends[0..], and the number of pieces to *n_pieces. Piece i
 * spans [ends[i-1], ends[i]) with ends[-1] = 0. At most one piece per code point, so
 * cap >= len always suffices. If cap is too small, returns ST_ERR_BUFFER_TOO_SMALL with the
 * full count in *n_pieces; ends[0..cap) then hold byte offsets whatever the flags say, and
 * are meant to be discarded. Invalid UTF-8 gives ST_ERR_INVALID_UTF8 with *err_offset. */
st_status st_pretokenize(const st_pretokenizer *pt, const char *text, size_t len,
                         uint32_t flags, size_t *ends, size_t cap, size_t *n_pieces,
                         size_t *err_offset);

/* The text with the byte sep (ASCII, which the caller has made sure the text lacks) written
 * after every piece: a host splits it back into pieces in one call (Python's str.split)
 * instead of slicing once per piece. cap >= 2 * len always suffices; size query with cap 0. */
st_status st_pretokenize_join(const st_pretokenizer *pt, const char *text, size_t len, uint8_t sep,
                              uint8_t *out, size_t cap, size_t *out_len, size_t *err_offset);

/* The number of pieces alone: no output buffer (the scanner's own speed). */
st_status st_pretokenize_count(const st_pretokenizer *pt, const char *text, size_t len,
                               size_t *n_pieces, size_t *err_offset);

/* ---- Encodings (vocabulary + pre-tokenizer + merge rule) --------------------------------- */

typedef struct st_encoding st_encoding;

/* Load a tiktoken rank file: lines "base64(token bytes) rank", rank = id, merged by rank
 * (a pair merges when its concatenated bytes are a token, lowest rank first: tiktoken's
 * rule). specials: the special tokens in the same line format (may be empty). pattern: an
 * st_pattern. On a malformed line: ST_ERR_MALFORMED_MODEL with *err_offset at the line
 * (in the specials text if *err_in_specials is set). The text is not kept. */
st_status st_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials,
                                   size_t specials_len, int pattern, const st_allocator *alloc,
                                   st_encoding **out, size_t *err_offset, int *err_in_specials);

/* The base alphabet of an encoding's tokens. */
#define ST_ALPHABET_BYTES 0 /* ids 0-255 are the bytes of the UTF-8 text (tiktoken files too) */
#define ST_ALPHABET_UBE 1   /* ids 0-511 are UBE symbols (st_ube_encode_symbols) */

/* A model of merge rules, the project's own trained models (DESIGN §7): ids 0..A-1 are the
 * base symbols (A = 256 for ST_ALPHABET_BYTES, 512 for ST_ALPHABET_UBE); id A + i is rule i,
 * which joins the tokens merges[2i] and merges[2i + 1] (both below A + i). Each piece of the
 * pre-tokenized text becomes base symbols (UBE: routed per character), and a pair of adjacent
 * parts merges only when it is a rule: the lowest rule first, the leftmost among equal pairs.
 * A piece that spells a token is not taken whole: the rules decide (rules a b, c d, ab c,
 * abc d give [ab, cd] for "abcd", where ranks would give [abcd]). specials: as for
 * st_encoding_new_tiktoken, with ids at or above A + n_merges. At most 2^21 - 1 ids. A bad
 * rule (a part not below its own id, the same pair twice): ST_ERR_MALFORMED_MODEL with
 * *err_offset = the rule's index; a bad special: its line, with *err_in_specials set. */
st_status st_encoding_new_merges(int alphabet, const uint32_t *merges, size_t n_merges, const char *specials,
                                 size_t specials_len, int pattern, const st_allocator *alloc,
                                 st_encoding **out, size_t *err_offset, int *err_in_specials);
void st_encoding_free(st_encoding *enc);

/* ST_ALPHABET_BYTES or ST_ALPHABET_UBE. */
int st_encoding_alphabet(const st_encoding *enc);

/* Build now the tables that st_encode otherwise builds on the first piece that needs them
 * (the backtracking encoder's, for a rank file: about 100 ms and 16 MB for o200k_base), for a
 * caller that wants that cost at start-up rather than on a first request. ST_OK when they are
 * ready (or being built by another thread); ST_ERR_INVALID_ARGUMENT for an encoding that never
 * builds them (an image, a merge-rules model), which encodes with the merge loop; a build that
 * ran out of memory is ST_ERR_OUT_OF_MEMORY (the encoding still works, without them). */
st_status st_encoding_prepare(const st_encoding *enc);

/* A binary image of a loaded encoding: position-independent, loadable with no parsing. Size
 * query with cap 0 (ST_ERR_BUFFER_TOO_SMALL, *size set). Images hold tiktoken vocabularies;
 * a merge-rules model gives ST_ERR_INVALID_ARGUMENT (it loads from its rules directly). */
st_status st_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size);
/* An encoding over an image in place: the image is borrowed, not copied, and must stay alive
 * (and unchanged) until st_encoding_free; it must be 8-byte aligned. Only the header and the
 * section bounds are checked at load (nothing makes a pass over the contents: on an
 * interpreter that would cost seconds); every id and offset read from the image is
 * bounds-checked where it is used, so a damaged image gives wrong ids, never a crash. */
st_status st_encoding_from_image(const void *image, size_t len, const st_allocator *alloc,
                                 st_encoding **out, size_t *err_offset);

/* max id + 1 (ordinary and special ids). */
uint32_t st_encoding_n_vocab(const st_encoding *enc);
/* The number of special tokens, and the id of the i-th (sorted by id). */
uint32_t st_encoding_n_special(const st_encoding *enc);
uint32_t st_encoding_special_id(const st_encoding *enc, uint32_t i);

/* The bytes of one token (ordinary or special): *ptr points into the encoding, valid while it
 * lives. ST_ERR_INVALID_TOKEN for an id that is no token. In a UBE encoding an ordinary
 * token's bytes are its symbols, two little-endian bytes each (st_token_symbols); a special
 * token's are its UTF-8 text, as everywhere. */
st_status st_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len);

/* The base symbols of an ordinary token into out[0..cap), their number in *n (size query with
 * cap 0: ST_ERR_BUFFER_TOO_SMALL). ST_ERR_INVALID_TOKEN for a special token (it has text, not
 * symbols) or an id that is no token. */
st_status st_token_symbols(const st_encoding *enc, uint32_t id, uint16_t *out, size_t cap, size_t *n);

/* Encode UTF-8 text. allowed_special: ids of the special tokens to recognise in the text (the
 * rest is ordinary text; a caller wanting tiktoken's "disallowed" check does it first). Writes
 * ids[0..cap) and the count to *n_ids (at most one id per byte, so cap >= len suffices; if
 * cap is too small, ST_ERR_BUFFER_TOO_SMALL with the full count). char_starts, if not NULL
 * (cap entries), receives for each token the code point offset where it starts (for a token
 * starting inside a character, the offset of that character: tiktoken's decode_with_offsets
 * rule). Where two allowed specials match at one position, the longer wins. */
st_status st_encode(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed_special,
                    size_t n_allowed, uint32_t *ids, size_t *char_starts, size_t cap, size_t *n_ids,
                    size_t *err_offset);

/* Encode n_texts texts in one call: text k is texts[offsets[k] .. offsets[k+1]); their ids are
 * written one after another to ids[0..cap) and counts[k] = how many belong to text k (cap >=
 * offsets[n_texts] - offsets[0] suffices). One call for a batch keeps a host's per-call cost
 * (and, in Python, the GIL) out of the loop. Errors as st_encode, *err_offset into texts. */
st_status st_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets, size_t n_texts,
                         const uint32_t *allowed_special, size_t n_allowed, uint32_t *ids, size_t cap,
                         size_t *counts, size_t *n_ids, size_t *err_offset);

/* The number of tokens st_encode would give, with no output buffer. */
st_status st_encode_count(const st_encoding *enc, const char *text, size_t len,
                          const uint32_t *allowed_special, size_t n_allowed, size_t *n_tokens,
                          size_t *err_offset);

/* The bytes of ids[0..n) concatenated into out[0..cap); *out_len = total (size query with
 * cap 0: ST_ERR_BUFFER_TOO_SMALL). ST_ERR_INVALID_TOKEN with *err_offset = index of a bad id.
 * A UBE encoding's tokens are symbols, not text bytes: ST_ERR_INVALID_ARGUMENT, use
 * st_decode_text. */
st_status st_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                    size_t *out_len, size_t *err_offset);

/* ids[0..n) decoded to UTF-8 text in out[0..cap), *out_len = its length (size query with cap
 * 0). The tokens' base symbols go through the UBE decoder (DESIGN §6; a byte alphabet is one
 * UTF-8 run): each same-alphabet run decodes as CPython's "replace" decoder; a special token
 * flushes the run and adds its own text. flags: ST_UBE_STRICT makes malformed text
 * ST_ERR_INVALID_UTF8 with *err_offset = the index of the id where the malformed run starts.
 * An id that is no token: ST_ERR_INVALID_TOKEN at its index. */
st_status st_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags, uint8_t *out,
                         size_t cap, size_t *out_len, size_t *err_offset);

/* ---- Model files (docs/model-format.md) ----------------------------------------------------- */

/* A model file is text: "supertok-model 1", header lines (name, kind, alphabet, pattern,
 * script-aware, scripts), counted sections (merges or tokens, supermerges, specials) and a
 * final "end" line; docs/model-format.md is the specification. The core parses it from bytes,
 * so every host (wasm, JavaScript, C) loads a model with nothing else.
 *
 * Errors: a malformed or truncated file gives ST_ERR_MALFORMED_MODEL with err->line (1-based
 * line of the file), err->offset (ST_UNIT_BYTE: byte offset in the file of the bad line or
 * field) and err->message naming the field and what is wrong, e.g. "merges[3]: right id 900
 * is not below the rule's own id 515". err (may be NULL) is cleared at entry and left with
 * status ST_OK on success. The parser never trusts a count for allocation before the lines it
 * counts are seen: memory stays proportional to the file. */

typedef struct st_model st_model;

/* Model kinds (the "kind" header line). */
#define ST_MODEL_RULES 1 /* merge rules: rule i joins two earlier ids into id A + i (DESIGN §7) */
#define ST_MODEL_RANKS 2 /* a tiktoken vocabulary: token bytes + rank, merged by rank */

/* Parse and validate a model file (bytes[0..len), not kept: the model copies what it needs).
 * Everything st_encoding_from_model needs is checked here except what only building the
 * encoding finds (two rank tokens with the same bytes). A model with supermerges parses (the
 * section is stored and written back) but st_encoding_from_model refuses it for now. */
ST_API st_status st_model_parse(const char *bytes, size_t len, const st_allocator *alloc, st_model **out,
                                st_error *err);
ST_API void st_model_free(st_model *model);

/* The model in canonical text into out[0..cap), *out_len = its length (size query with cap 0:
 * ST_ERR_BUFFER_TOO_SMALL). Parsing the output gives the same model; a file already in
 * canonical form is written back byte for byte (a tool normalises a file with parse + write). */
ST_API st_status st_model_write(const st_model *model, char *out, size_t cap, size_t *out_len);

/* Header fields of a parsed model. kind: ST_MODEL_RULES or ST_MODEL_RANKS; alphabet:
 * ST_ALPHABET_*; pattern: an st_pattern; flags: ST_PRETOK_SCRIPT_AWARE or 0. name: *len bytes
 * (not NUL-terminated, never NULL). scripts: the script list as written ("Han,Thai"), "" for
 * none, or NULL (*len 0) for the default set (also when the model is not script-aware). */
ST_API int st_model_kind(const st_model *model);
ST_API int st_model_alphabet(const st_model *model);
ST_API int st_model_pattern(const st_model *model);
ST_API uint32_t st_model_pretokenizer_flags(const st_model *model);
ST_API const char *st_model_name(const st_model *model, size_t *len);
ST_API const char *st_model_scripts(const st_model *model, size_t *len);
/* The number of entries in a section: "merges", "tokens", "supermerges", "specials" (0 for a
 * section the model does not have or an unknown name). */
ST_API uint64_t st_model_count(const st_model *model, const char *section);

/* An encoding from a parsed model (the model is not borrowed: free it whenever). A model with
 * supermerges, or a script-aware one while the constructors take only a pattern, gives
 * ST_ERR_MALFORMED_MODEL naming the line and "not supported yet". */
ST_API st_status st_encoding_from_model(const st_model *model, const st_allocator *alloc, st_encoding **out,
                                        st_error *err);
/* st_model_parse + st_encoding_from_model + st_model_free in one call. */
ST_API st_status st_encoding_new_model(const char *bytes, size_t len, const st_allocator *alloc,
                                       st_encoding **out, st_error *err);

/* ---- UBE: the UTF-8 / UTF-16 routed alphabet ---------------------------------------------- */

/* Base symbols 0-255 are UTF-8 bytes (code points below U+0800), 256-511 UTF-16LE bytes
 * (U+0800 and above; a surrogate pair above U+FFFF). Routing is per character. Writes
 * symbols[0..cap) and the count (at most one symbol per input byte, so cap >= len suffices;
 * ST_ERR_BUFFER_TOO_SMALL with the full count otherwise). Invalid UTF-8: ST_ERR_INVALID_UTF8. */
st_status st_ube_encode_symbols(const char *text, size_t len, uint16_t *symbols, size_t cap,
                                size_t *n_symbols, size_t *err_offset);

#define ST_UBE_FINAL 1u  /* the end of the stream: flush what is pending */
#define ST_UBE_STRICT 2u /* malformed input is ST_ERR_INVALID_UTF8 (at the symbol index where
                            the malformed run starts) instead of U+FFFD */

/* Streaming decoder state, caller-allocated (st_ube_stream_size() bytes; wasm hosts use it).
 * It holds the active alphabet and only the bytes of the one character not yet complete. */
typedef struct st_ube_stream {
    uint8_t alphabet; /* 0: UTF-8, 1: UTF-16 */
    uint8_t n_pending;
    uint8_t pending[4];
    size_t run_start; /* symbol index where the pending bytes began */
    size_t base;      /* symbols fed so far */
} st_ube_stream;

size_t st_ube_stream_size(void);
void st_ube_stream_init(st_ube_stream *s);

/* Feed symbols; writes the UTF-8 text completed so far to out[0..cap) (each symbol yields at
 * most 3 bytes, a flush at most 3 more: cap >= 3 * n + 3 suffices). Each same-alphabet run
 * decodes as CPython's bytes.decode("utf-8" or "utf-16-le", "replace"); a change of alphabet
 * flushes the run. With ST_UBE_FINAL the end flushes too (a special token in a token stream is
 * a flush: feed nothing with ST_UBE_FINAL, then continue with the same state). A symbol above
 * 511 is ST_ERR_INVALID_TOKEN at its index. On any error (and ST_ERR_BUFFER_TOO_SMALL, which
 * reports the size needed) the state is left as it was before the call. */
st_status st_ube_stream_feed(st_ube_stream *s, const uint16_t *symbols, size_t n, uint32_t flags,
                             uint8_t *out, size_t cap, size_t *out_len, size_t *err_offset);

/* One-shot: st_ube_stream_feed on a fresh state with ST_UBE_FINAL. */
st_status st_ube_decode_symbols(const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out,
                                size_t cap, size_t *out_len, size_t *err_offset);

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* ST_OK if text is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF);
 * otherwise ST_ERR_INVALID_UTF8 with the offset of the first bad sequence. */
st_status st_utf8_validate(const char *text, size_t len, size_t *err_offset);

#ifdef __cplusplus
}
#endif
#endif
