/* supertok: the one public header of the portable tokenizer core.
 *
 * Conventions (docs/design.md §3):
 *  - every public name starts with st_; handles are opaque;
 *  - every call that can fail returns an st_status (numbers are pinned: they never change
 *    meaning) and, as its last parameter, takes an st_error * (may be NULL) that it clears at
 *    entry and fills on failure: the status, where it went wrong and in which unit, the line
 *    of a text input, the token concerned, and a message naming what was wrong;
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

#define ST_VERSION_MAJOR 0
#define ST_VERSION_MINOR 1
#define ST_VERSION_PATCH 0

/* ST_API marks every public function (and nothing else): the native builds compile with
 * -fvisibility=hidden, so a shared library exports exactly these names. On Windows define
 * ST_BUILDING_DLL when building supertok as a DLL and ST_USING_DLL when linking against one;
 * a static library needs neither. The wasm build exports by an explicit list (core_c/wasm_exports.txt)
 * and gets an empty ST_API. core_c/tools/apply_st_api.py adds it to new declarations. */
#ifndef ST_API
#if defined(__wasm__)
#define ST_API
#elif defined(_WIN32) || defined(__CYGWIN__)
#if defined(ST_BUILDING_DLL)
#define ST_API __declspec(dllexport)
#elif defined(ST_USING_DLL)
#define ST_API __declspec(dllimport)
#else
#define ST_API
#endif
#elif defined(__GNUC__) || defined(__clang__)
#define ST_API __attribute__((visibility("default")))
#else
#define ST_API
#endif
#endif

/* Status codes. Pinned: a number keeps its meaning forever; new codes are appended. Where the
 * failure has a position, st_error says where and in which unit (below). */
typedef enum st_status {
    ST_OK = 0,
    ST_ERR_INVALID_ARGUMENT = 1, /* a NULL pointer or an out-of-range value */
    ST_ERR_OUT_OF_MEMORY = 2,
    ST_ERR_INVALID_UTF8 = 3,     /* offset = byte offset where the bad sequence starts */
    ST_ERR_BUFFER_TOO_SMALL = 4, /* the size needed is reported; nothing past cap was written */
    ST_ERR_UNKNOWN_PATTERN = 5,
    ST_ERR_UNKNOWN_SCRIPT = 6,   /* offset = byte offset of the name in the script list, length
                                    = its bytes */
    ST_ERR_MALFORMED_MODEL = 7,  /* offset = byte offset of the bad line (line = its number) or
                                    field, or index of the bad rule */
    ST_ERR_INVALID_TOKEN = 8,    /* offset = index of the bad id in the input array */
    ST_ERR_NOT_ENCODABLE = 9,    /* a byte has no token in this vocabulary; offset = its offset */
    ST_ERR_DISALLOWED_SPECIAL = 10, /* the text holds a disallowed special token: offset = its
                                       byte offset, length = its bytes, token = its id, kind
                                       ST_KIND_DISALLOWED_SPECIAL, message = its text */
    ST_ERR_UNSUPPORTED_PATTERN = 11 /* a regex that no scanner implements */
} st_status;

/* What an error's offset counts. Pinned numbers. */
typedef enum st_unit {
    ST_UNIT_NONE = 0,      /* no position applies */
    ST_UNIT_BYTE = 1,      /* byte offset in the input text or file */
    ST_UNIT_CODEPOINT = 2, /* code point offset in the input text */
    ST_UNIT_UTF16 = 3,     /* UTF-16 code unit offset in the input text */
    ST_UNIT_INDEX = 4      /* index into the input array (ids, symbols, rules, allowed ids, texts) */
} st_unit;

/* What was wrong, beyond the status: the cases a host words in its own terms (its argument
 * names, tiktoken's messages), so that it reads a field instead of the message. Pinned numbers,
 * appended to; ST_KIND_NONE where the status and the message say it all. */
typedef enum st_error_kind {
    ST_KIND_NONE = 0,
    ST_KIND_DISALLOWED_SPECIAL = 1, /* the text holds a disallowed special string: offset and
                                       length its bytes in the text, token its id */
    ST_KIND_ID_REPEATED = 2,        /* a line of a rank file or specials text gives an id that an
                                       earlier line of the same input gives too: token = the id */
    ST_KIND_ID_TAKEN = 3,           /* a special token has an ordinary token's id: token = the id */
    ST_KIND_EMPTY_TOKEN = 4,        /* a line of a rank file or specials text has no token before
                                       its space */
    ST_KIND_ID_TOO_LARGE = 5,       /* a rank or id above 2^31 - 1 */
    ST_KIND_OUT_OF_ORDER = 6,       /* a training call its handle's state does not take now: a
                                       setter after the first step, candidates before phase 1
                                       ended or after the pass over the texts was closed, a
                                       candidates counter given back or fed after it was given
                                       back (st_trainer_stat ST_TRAINER_STATE says what the
                                       trainer waits for) */
    /* st_encoding_export: why the format cannot express the encoding (status
       ST_ERR_INVALID_ARGUMENT), checked in this order */
    ST_KIND_EXPORT_UBE = 7,          /* a UBE encoding: its tokens are symbols, the formats byte-level */
    ST_KIND_EXPORT_SUPERMERGES = 8,  /* supermerges: the formats merge inside each pretoken only */
    ST_KIND_EXPORT_SCRIPT_AWARE = 9, /* a script-aware pre-tokenizer: no regular expression expresses it */
    ST_KIND_EXPORT_NO_RULES = 10     /* ST_EXPORT_HF_JSON of a rank vocabulary (a tiktoken file):
                                        a HuggingFace BPE model needs merge rules */
} st_error_kind;

/* The one error report of every fallible call (its last parameter, may be NULL). Cleared at
 * entry (status ST_OK, token 0xFFFFFFFF, the rest zero), filled on failure: status always, the
 * rest where known. Fixed-width fields: the same layout natively and in wasm32 (byte offsets
 * 0 status, 4 unit, 8 offset, 16 line, 24 token, 28 input, 32 kind, 36 length, 40 message;
 * 160 bytes), so hosts read it from memory. A host builds its own message from the fields
 * (status, kind, token, offset, length, line, input) and never parses message, which is for
 * people. */
typedef struct st_error {
    uint32_t status;   /* the st_status the call returned */
    uint32_t unit;     /* st_unit of offset */
    uint64_t offset;   /* where it went wrong, in unit */
    uint64_t line;     /* 1-based line in a text input (model file, rank file), 0 if none */
    uint32_t token;    /* the token id concerned (e.g. a disallowed special), 0xFFFFFFFF if none */
    uint32_t input;    /* which input of the call: 0 the main one, 1 the special tokens, ... */
    uint32_t kind;     /* st_error_kind: what was wrong, ST_KIND_NONE if the status says it */
    uint32_t length;   /* the length in unit of what starts at offset (a disallowed special's
                          bytes, an unknown script's name), 0 if not known */
    char message[120]; /* NUL-terminated detail naming what was wrong (field, token, value);
                          "" when the status says it all */
} st_error;

/* A short English message for a status; never NULL ("unknown status" for other numbers). */
ST_API const char *st_status_str(int status);
/* The status's name as in this header ("ST_ERR_INVALID_UTF8"), so hosts map names, never
 * numbers; NULL for a number that is no status. */
ST_API const char *st_status_name(int status);
/* The kind's name as in this header ("ST_KIND_ID_REPEATED"); NULL for a number that is no kind. */
ST_API const char *st_error_kind_name(int kind);

/* (major << 16) | (minor << 8) | patch, and the same as text, e.g. "0.1.0". */
ST_API uint32_t st_version(void);
ST_API const char *st_version_str(void);
/* The Unicode version the property tables were generated from, e.g. "16.0". */
ST_API const char *st_unicode_version(void);

/* Allocator hooks, set per handle (NULL = the platform allocator). The contract:
 *  - thread safety: the core calls the hooks from whichever thread is using a handle made with
 *    them, and a shared handle is used by many threads at once, so alloc and free may be called
 *    concurrently, from any thread: they must be thread-safe;
 *  - ctx is passed through untouched as the first argument of every call;
 *  - alloc returns memory aligned for any object type (as malloc does) or NULL on failure
 *    (the call then fails with ST_ERR_OUT_OF_MEMORY);
 *  - free receives a pointer alloc returned, with the size that was asked of alloc;
 *  - the struct is copied when a handle is made; the functions and ctx must stay valid while a
 *    handle made with them lives, and the core never calls them after the st_*_free of that
 *    handle returns. Both hooks or neither: a struct with a NULL hook means the platform's. */
typedef struct st_allocator {
    void *(*alloc)(void *ctx, size_t size);
    void (*free)(void *ctx, void *ptr, size_t size);
    void *ctx;
} st_allocator;

/* The platform allocator, for hosts that must place data in the core's memory (wasm hosts
 * write their input through these). st_malloc(0) returns a valid unique pointer or NULL. */
ST_API void *st_malloc(size_t size);
ST_API void st_free(void *ptr);

/* ---- Scripts --------------------------------------------------------------------------- */

/* The Unicode Script property value of a code point, as our id (0 Unknown, 1 Common,
 * 2 Inherited, then real scripts); -1 for a value above U+10FFFF. */
ST_API int st_script_of(uint32_t cp);
/* The name of a script id, or NULL if out of range: the longest alias the regex module knows
 * for the value, title-cased, without separators ("Han", "Latin", "Olditalic" for Old_Italic);
 * st_script_from_name accepts it and every other alias. */
ST_API const char *st_script_name(int script);
/* Number of script ids. */
ST_API int st_script_count(void);
/* The id for a name or alias ("Han", "Hani", "han", "Old_Italic"), ignoring case, '_', '-'
 * and ' '; -1 if unknown. */
ST_API int st_script_from_name(const char *name, size_t len);

/* ---- Pre-tokenizers -------------------------------------------------------------------- */

/* The pattern families: the splits of tiktoken 0.14's pat_str for each encoding, SuperBPE's
 * Stage-2 pre-tokenizer (HuggingFace's Split of its regex, behaviour "isolated": the matches and
 * the text between them are the pieces), and the pre-tokenizers of Llama 3, Qwen 2/3 and
 * DeepSeek V3 as HuggingFace tokenizers 0.23.3 splits text with them (docs/design.md §5). */
typedef enum st_pattern {
    ST_PATTERN_GPT2 = 1,    /* r50k_base, p50k_base */
    ST_PATTERN_CL100K = 2,  /* cl100k_base */
    ST_PATTERN_O200K = 3,   /* o200k_base */
    ST_PATTERN_SUPERBPE = 4, /* \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S), isolated */
    ST_PATTERN_LLAMA3 = 5,   /* Llama 3's Split: cl100k's family, \s*[\r\n]+, no \s++$, isolated */
    ST_PATTERN_QWEN2 = 6,    /* Qwen 2/3's Split: llama3's with \p{N} for \p{N}{1,3}, isolated */
    ST_PATTERN_DEEPSEEK_V3 = 7 /* DeepSeek V3's Sequence of three Splits, each isolated */
} st_pattern;

/* The st_pattern whose scanner implements pat[0..len), which must be one of tiktoken 0.14's
 * pat_str strings exactly (r50k_base and p50k_base share one) or SuperBPE's Stage-2 regex
 * (ST_PATTERN_SUPERBPE, whose split also keeps the text between matches) or Llama 3's or Qwen 2's
 * Split regex as their tokenizer.json files hold them (ST_PATTERN_LLAMA3, ST_PATTERN_QWEN2), or
 * the last of DeepSeek V3's three (ST_PATTERN_DEEPSEEK_V3, whose first two are fixed); any other
 * regex is
 * ST_ERR_UNSUPPORTED_PATTERN (no regex engine in the core: a regex it does not know would be
 * split some other way, silently). */
ST_API st_status st_pattern_from_regex(const char *pat, size_t len, int *pattern, st_error *err);

/* Pre-tokenizer flags. */
#define ST_PRETOK_SCRIPT_AWARE 1u /* split into single-script chunks first (docs/design.md §5) */

/* Output flags for st_pretokenize and st_encode: the unit of the offsets they report. */
#define ST_OFFSETS_BYTES 0u      /* UTF-8 bytes (the default) */
#define ST_OFFSETS_CODEPOINTS 1u /* code points (Python's str indexes) */
#define ST_OFFSETS_UTF16 2u      /* UTF-16 code units (JavaScript's string indexes; st_encode only) */

typedef struct st_pretokenizer st_pretokenizer;

/* Make a pre-tokenizer. scripts: a comma-separated list of script names that use the
 * script-specific split in script-aware mode; NULL means the default set (Han, Hiragana,
 * Katakana, Thai, Myanmar, Khmer, Lao); "" means none. An unknown name gives
 * ST_ERR_UNKNOWN_SCRIPT with offset (bytes) at the name. alloc may be NULL. */
ST_API st_status st_pretokenizer_new(int pattern, uint32_t flags, const char *scripts,
                                     size_t scripts_len, const st_allocator *alloc,
                                     st_pretokenizer **out, st_error *err);
ST_API void st_pretokenizer_free(st_pretokenizer *pt);

/* Split UTF-8 text into pieces; writes the end offset of each piece (bytes, or code points
 * with ST_OFFSETS_CODEPOINTS) to ends[0..], and the number of pieces to *n_pieces. Piece i
 * spans [ends[i-1], ends[i]) with ends[-1] = 0. At most one piece per code point, so
 * cap >= len always suffices. If cap is too small, returns ST_ERR_BUFFER_TOO_SMALL with the
 * full count in *n_pieces; ends[0..cap) then hold byte offsets whatever the flags say, and
 * are meant to be discarded. Invalid UTF-8 gives ST_ERR_INVALID_UTF8 at its byte offset. */
ST_API st_status st_pretokenize(const st_pretokenizer *pt, const char *text, size_t len,
                                uint32_t flags, size_t *ends, size_t cap, size_t *n_pieces,
                                st_error *err);

/* The text with the byte sep (ASCII, which the caller has made sure the text lacks) written
 * after every piece: a host splits it back into pieces in one call (Python's str.split)
 * instead of slicing once per piece. cap >= 2 * len always suffices; size query with cap 0. */
ST_API st_status st_pretokenize_join(const st_pretokenizer *pt, const char *text, size_t len,
                                     uint8_t sep, uint8_t *out, size_t cap, size_t *out_len,
                                     st_error *err);

/* The number of pieces alone: no output buffer (the scanner's own speed). */
ST_API st_status st_pretokenize_count(const st_pretokenizer *pt, const char *text, size_t len,
                                      size_t *n_pieces, st_error *err);

/* ---- Encodings (vocabulary + pre-tokenizer + merge rule) --------------------------------- */

typedef struct st_encoding st_encoding;

/* Load a tiktoken rank file: lines "base64(token bytes) rank", rank = id, merged by rank
 * (a pair merges when its concatenated bytes are a token, lowest rank first: tiktoken's
 * rule). specials: the special tokens in the same line format (may be empty); an id given on
 * several lines is one special token with several strings (tiktoken's o200k_harmony), the first
 * line's string being the one decoding gives. pt: the
 * pre-tokenizer (its pattern, flags and scripts are copied; it may be freed after the call;
 * NULL is ST_ERR_INVALID_ARGUMENT). On a malformed line: ST_ERR_MALFORMED_MODEL with the
 * line's byte offset and 1-based number, input 0 (the rank file) or 1 (the specials text),
 * and a message naming what was wrong. The texts are not kept. */
ST_API st_status st_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials,
                                          size_t specials_len, const st_pretokenizer *pt,
                                          const st_allocator *alloc, st_encoding **out, st_error *err);

/* The base alphabet of an encoding's tokens. */
#define ST_ALPHABET_BYTES 0 /* ids 0-255 are the bytes of the UTF-8 text (tiktoken files too) */
#define ST_ALPHABET_UBE 1   /* ids 0-511 are UBE symbols (st_ube_encode_symbols) */

/* A model of merge rules, the project's own trained models (docs/design.md §7): ids 0..A-1 are the
 * base symbols (A = 256 for ST_ALPHABET_BYTES, 512 for ST_ALPHABET_UBE); id A + i is rule i,
 * which joins the tokens merges[2i] and merges[2i + 1] (both below A + i). Each piece of the
 * pre-tokenized text becomes base symbols (UBE: routed per character), and a pair of adjacent
 * parts merges only when it is a rule: the lowest rule first, the leftmost among equal pairs.
 * A piece that spells a token is not taken whole: the rules decide (rules a b, c d, ab c,
 * abc d give [ab, cd] for "abcd", where ranks would give [abcd]). specials: as for
 * st_encoding_new_tiktoken, with ids at or above A + n_merges, one string an id, except that
 * in a bytes model a special may have a symbol's or rule's id when its text is exactly that
 * token's bytes (it shares the token: docs/formats/model-format.md, Specials). At most 2^21 - 1 ids. A bad
 * rule (a part not below its own id, the same pair twice): ST_ERR_MALFORMED_MODEL with
 * offset = the rule's index (ST_UNIT_INDEX); a bad special: its line, input 1. The tokens the
 * rules spell are stored whole, and a few rules can spell huge ones (30 rules that each join
 * the last token to itself spell a gigabyte), so their bytes are bounded in proportion to the
 * rules: see ST_RULES_TOKEN_BYTES_BASE. */
/* The limit on a rules model's tokens (docs/formats/model-format.md, Limits), the same on every host:
 * the tokens its n rules make (merges and supermerges; the base symbols not counted) may hold at
 * most ST_RULES_TOKEN_BYTES_BASE + ST_RULES_TOKEN_BYTES_PER_RULE * n bytes, a UBE symbol counting
 * 2. Trained models use a few bytes a rule (o200k's tokens: 7), so the limit only refuses files
 * whose memory would not be proportional to their size: ST_ERR_MALFORMED_MODEL at the rule
 * whose token crosses it, before anything is allocated for the tokens. The trainer stops before
 * a merge that would make its model cross it. */
#define ST_RULES_TOKEN_BYTES_BASE 16777216u /* 16 MiB */
#define ST_RULES_TOKEN_BYTES_PER_RULE 256u

ST_API st_status st_encoding_new_merges(int alphabet, const uint32_t *merges, size_t n_merges,
                                        const char *specials, size_t specials_len,
                                        const st_pretokenizer *pt, const st_allocator *alloc,
                                        st_encoding **out, st_error *err);
ST_API void st_encoding_free(st_encoding *enc);

/* ST_ALPHABET_BYTES or ST_ALPHABET_UBE. */
ST_API int st_encoding_alphabet(const st_encoding *enc);

/* Build now the tables that st_encode otherwise builds once the pieces that want them have
 * cost as much merge work as the build (the backtracking encoder's, for a rank file: about
 * 200 ms of CPU and 13 MB for o200k_base), for a caller that wants that cost at start-up
 * rather than spread over its first requests. ST_OK when they are
 * ready (or being built by another thread); ST_ERR_INVALID_ARGUMENT for an encoding that never
 * builds them (an image, a merge-rules model), which encodes with the merge loop; a build that
 * ran out of memory is ST_ERR_OUT_OF_MEMORY (the encoding still works, without them). */
ST_API st_status st_encoding_prepare(const st_encoding *enc);

/* The caches (docs/design.md §7). Every encoding keeps, across calls:
 * - the piece cache: the tokens of the pieces it has encoded (pretoken bytes -> ids, for pieces
 *   of up to 240 bytes that are not one token), so a word seen before costs a lookup instead of
 *   a merge;
 * - the span cache (rank vocabularies: tiktoken files and images): the ids of whole spans of text
 *   it has encoded (a few hundred bytes each, cut where the pattern proves the pieces on each side
 *   do not depend on the other: the places st_encoding_cut finds), so text encoded again (a
 *   chat's history re-sent each turn, a document tokenized twice) costs a hash and a compare a
 *   span instead of pre-tokenizing it.
 * Both are exact (a hit gives the ids encoding gives, offsets and superwords included: an entry
 * holds its bytes and is compared whole), bounded (fixed tables: input of all-distinct pieces or
 * spans replaces entries, it never grows them), and safe to share: a handle keeps one set of
 * tables per concurrently running call, up to 4, each owned by one call at a time (claimed with
 * one atomic compare-and-swap per call, no lock), so threads never wait.
 *
 * st_encoding_set_cache_size: at most `bytes` of memory for the handle's caches, split between its
 * (up to 4) sets: half for the set a call takes when no other is running, a quarter for the
 * second, an eighth for each of the others. In each set, half is the piece cache's: two thirds
 * of that for a table of 64-byte lines (pieces up to 56 bytes: one line, or two for a piece of
 * many tokens) and one third for one of 512-byte entries (longer pieces: made only when such a
 * piece first comes), each a power of two lines or entries; the other half is the span cache's
 * log (entries appended, the oldest overwritten) and its index, at least 64 KiB or none. 0, or
 * too little for one entry, turns a cache off (every piece merged, as the caller asked). Default
 * ST_CACHE_DEFAULT_BYTES (a call at a time then holds up to 4 MiB of piece tables, growing with
 * the text it has seen, and 2 MiB more once a piece over 56 bytes came, and a span log of four
 * times the text it has seen, up to 4 MiB, with its index and buffers within 6 MiB). Safe to call while other threads encode with the
 * handle: tables no call is using are freed at once (the next call makes them at the new size),
 * ones in use when their call ends (until then the old size holds). Changing the size empties
 * the tables. A call beyond the fourth at once runs without the caches, or, for a text of 8 KiB
 * or more, with piece tables of its own for that call only. Returns ST_OK, or
 * ST_ERR_INVALID_ARGUMENT for a NULL enc. */
#define ST_CACHE_DEFAULT_BYTES ((size_t)24 << 20)
ST_API st_status st_encoding_set_cache_size(const st_encoding *enc, size_t bytes);

/* What st_encoding_cache_info reports. hits and misses count the pieces looked up in the piece
 * cache since the handle was made (a piece that is one token is found in the vocabulary first and
 * is not looked up; neither is a piece longer than max_piece, nor one in a span found in the span
 * cache); span_hits and span_misses the spans looked up in the span cache; each call adds its
 * own when it ends. bytes: the memory the tables hold now (at most limit once the calls running
 * when the limit was set have ended, plus the tables of calls beyond the fourth while they run). */
typedef struct st_cache_info {
    uint64_t limit;       /* the bound set (st_encoding_set_cache_size), bytes; 0 = off */
    uint64_t bytes;       /* memory held by the caches now */
    uint64_t hits;        /* pieces found */
    uint64_t misses;      /* pieces looked up and not found (then merged and remembered) */
    uint64_t max_piece;   /* the longest piece the cache holds, bytes (240) */
    uint64_t span_hits;   /* spans found */
    uint64_t span_misses; /* spans looked up and not found (then encoded and remembered) */
} st_cache_info;
/* Fill *info. Returns ST_OK, or ST_ERR_INVALID_ARGUMENT for a NULL enc or info. */
ST_API st_status st_encoding_cache_info(const st_encoding *enc, st_cache_info *info);

/* A binary image of a loaded encoding: position-independent, loadable with no parsing. Size
 * query with cap 0 (ST_ERR_BUFFER_TOO_SMALL, *size set). Images hold tiktoken vocabularies;
 * a merge-rules model gives ST_ERR_INVALID_ARGUMENT (it loads from its rules directly). An
 * image keeps the pattern only, so an encoding with a script-aware pre-tokenizer gives
 * ST_ERR_INVALID_ARGUMENT too (saving it would silently change its splits). */
ST_API st_status st_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size,
                                        st_error *err);
/* An encoding over an image in place: the image is borrowed, not copied, and must stay alive
 * (and unchanged) until st_encoding_free; it must be 8-byte aligned. Only the header and the
 * section bounds are checked at load (nothing makes a pass over the contents: on an
 * interpreter that would cost seconds); every id and offset read from the image is
 * bounds-checked where it is used, so a damaged image gives wrong ids, never a crash. A bad
 * header: ST_ERR_MALFORMED_MODEL with the byte offset of the bad field. */
ST_API st_status st_encoding_from_image(const void *image, size_t len, const st_allocator *alloc,
                                        st_encoding **out, st_error *err);

/* The compact image of a rank vocabulary, for downloads (the web's vocabularies): the ordinary
 * tokens' byte lengths (LEB128, id order; 0 for an id that is no ordinary token) and their
 * bytes, nothing derived (no table, no index, no base64), so it gzips to about 60% of the rank
 * file. The special tokens and the pre-tokenizer are not in it: they are given at load, as to
 * st_encoding_new_tiktoken. Size query with cap 0 (ST_ERR_BUFFER_TOO_SMALL, *size set); a
 * merge-rules or UBE model gives ST_ERR_INVALID_ARGUMENT. */
ST_API st_status st_encoding_save_compact(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size,
                                          st_error *err);
/* An encoding from a compact image, with specials and pt as for st_encoding_new_tiktoken: the
 * tables are built at load (the same ones, the same ids, as from the rank file it was saved
 * from); the image is not kept. A damaged image: ST_ERR_MALFORMED_MODEL with the byte offset of
 * what is wrong (unit ST_UNIT_BYTE, input 0); a bad specials line: its line, input 1. */
ST_API st_status st_encoding_new_compact(const uint8_t *image, size_t len, const char *specials,
                                         size_t specials_len, const st_pretokenizer *pt,
                                         const st_allocator *alloc, st_encoding **out, st_error *err);

/* max id + 1 (ordinary and special ids). */
ST_API uint32_t st_encoding_n_vocab(const st_encoding *enc);
/* The number of special tokens, and the id of the i-th (sorted by id). */
ST_API uint32_t st_encoding_n_special(const st_encoding *enc);
ST_API uint32_t st_encoding_special_id(const st_encoding *enc, uint32_t i);
/* 1 when id is an ordinary token, 0 when it is not (a special, a gap, past the end). In a model
 * of merge rules a special whose text is a token's bytes shares that token's id
 * (docs/formats/model-format.md, Specials; hf training makes such specials): that id is both a
 * special and an ordinary token, and is 1 here; the policy of an encode call says which of the
 * two an occurrence of its text is. */
ST_API int st_token_is_ordinary(const st_encoding *enc, uint32_t id);
/* The special strings, numbered: 0 .. n_special - 1 the first string of each special id, in
 * the order of st_encoding_special_id (the string st_token_bytes and decoding give), then the
 * further strings of ids given several, in the order the specials text gave them.
 * st_encoding_n_special_strings: their number. st_encoding_special_string: string k's id and
 * text (*ptr into the encoding, valid while it lives); ST_ERR_INVALID_ARGUMENT for k out of
 * range or a NULL pointer. */
ST_API uint32_t st_encoding_n_special_strings(const st_encoding *enc);
ST_API st_status st_encoding_special_string(const st_encoding *enc, uint32_t k, uint32_t *id, const uint8_t **ptr,
                                            size_t *len, st_error *err);

/* The bytes of one token (ordinary or special): *ptr points into the encoding, valid while it
 * lives. ST_ERR_INVALID_TOKEN for an id that is no token. In a UBE encoding an ordinary
 * token's bytes are its symbols, two little-endian bytes each (st_token_symbols); a special
 * token's are its UTF-8 text, as everywhere. */
ST_API st_status st_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len,
                                st_error *err);

/* The id of the token whose bytes are exactly bytes[0..len), as st_token_bytes gives them:
 * any bytes, UTF-8 or not (b"\xe5" is 161 in o200k_base), ordinary or special (a special
 * token's text). ST_ERR_INVALID_TOKEN if no token has them. */
ST_API st_status st_token_id(const st_encoding *enc, const uint8_t *bytes, size_t len, uint32_t *id,
                             st_error *err);

/* The base symbols of an ordinary token into out[0..cap), their number in *n (size query with
 * cap 0: ST_ERR_BUFFER_TOO_SMALL). ST_ERR_INVALID_TOKEN for a special token (it has text, not
 * symbols) or an id that is no token. */
ST_API st_status st_token_symbols(const st_encoding *enc, uint32_t id, uint16_t *out, size_t cap, size_t *n,
                                  st_error *err);

/* Which special strings an encode call recognises and which it refuses (tiktoken's
 * allowed_special / disallowed_special). The policy is over strings, as tiktoken's: a special
 * id may have several (o200k_harmony's 200018 is both <|endofprompt|> and <|reserved_200018|>),
 * and each string is allowed, disallowed or neither on its own. NULL policy = none recognised,
 * none refused (tiktoken's encode_ordinary). The sets are given in one of three forms:
 *  - ST_SPECIAL_BY_TEXT (what a host passing tiktoken's arguments uses): the strings
 *    themselves, strings[ends[i-1] .. ends[i]) for string i (ends[-1] = 0), the first n_allowed
 *    the allowed ones, the next n_disallowed the disallowed ones (allowed and disallowed must be
 *    NULL). The core resolves them against the encoding's special strings: an allowed string
 *    that is no special token is ignored; a disallowed one that is none is still refused where
 *    the text holds it (tiktoken searches the text for every disallowed string; an empty one is
 *    found at offset 0), reported with token = 0xFFFFFFFF.
 *  - ids (no form flag): each standing for every string of its id (for an id of one string,
 *    that string);
 *  - ST_SPECIAL_BY_STRING: special-string numbers (st_encoding_special_string).
 * In the two numbered forms every entry must name a special token of the encoding
 * (ST_ERR_INVALID_ARGUMENT, offset = its index in allowed, input 1, or in disallowed, input 2).
 * "all" is a flag: ST_SPECIAL_ALLOW_ALL for allowed, ST_SPECIAL_DISALLOW_REST for tiktoken's
 * default disallowed "all" (every special string not allowed). If the text holds a disallowed
 * string anywhere (the raw text, whatever is allowed, itself included), the call fails with
 * ST_ERR_DISALLOWED_SPECIAL, kind ST_KIND_DISALLOWED_SPECIAL, before any output: offset = the
 * byte offset of the first (the earliest; at one position the longest), length = its length
 * in bytes, token = its id (0xFFFFFFFF for a string that is no special token), message =
 * the string found. Allowed strings are matched in the text, on character boundaries, the
 * longest at a position winning, and each gives its id; the text between them (a string
 * neither allowed nor disallowed included) is encoded as ordinary text. */
typedef struct st_special_policy {
    const uint32_t *allowed;
    size_t n_allowed;
    const uint32_t *disallowed;
    size_t n_disallowed;
    uint32_t flags;       /* ST_SPECIAL_* */
    const char *strings;  /* ST_SPECIAL_BY_TEXT: the allowed then the disallowed strings */
    const size_t *ends;   /* ST_SPECIAL_BY_TEXT: n_allowed + n_disallowed ends in strings */
} st_special_policy;

#define ST_SPECIAL_ALLOW_ALL 1u     /* every special token is allowed (the allowed set is ignored) */
#define ST_SPECIAL_DISALLOW_REST 2u /* every special string not allowed is disallowed
                                       (tiktoken's default disallowed_special="all") */
#define ST_SPECIAL_BY_STRING 4u     /* allowed and disallowed hold special-string numbers
                                       (st_encoding_special_string), not ids */
#define ST_SPECIAL_BY_TEXT 8u       /* the sets are strings (strings, ends), not numbers */

/* Encode UTF-8 text with the special-token policy specials (may be NULL). Writes
 * ids[0..cap) and the count to *n_ids (at most one id per byte, so cap >= len suffices; if
 * cap is too small, ST_ERR_BUFFER_TOO_SMALL with the full count). starts, if not NULL (cap
 * entries), receives for each token the offset where it starts, in the unit flags names
 * (ST_OFFSETS_BYTES, _CODEPOINTS or _UTF16); a token starting inside a character gets the
 * offset of that character (tiktoken's decode_with_offsets rule), in every unit. */
ST_API st_status st_encode(const st_encoding *enc, const char *text, size_t len,
                           const st_special_policy *specials, uint32_t flags, uint32_t *ids,
                           size_t *starts, size_t cap, size_t *n_ids, st_error *err);

/* Encode n_texts texts in one call: text k is texts[offsets[k] .. offsets[k+1]); their ids are
 * written one after another to ids[0..cap) and counts[k] = how many belong to text k (cap >=
 * offsets[n_texts] - offsets[0] suffices). One call for a batch keeps a host's per-call cost
 * (and, in Python, the GIL) out of the loop. Errors as st_encode, for the first text that
 * fails; a byte offset counts from texts (not from the failing text's start). */
ST_API st_status st_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets,
                                size_t n_texts, const st_special_policy *specials, uint32_t *ids,
                                size_t cap, size_t *counts, size_t *n_ids, st_error *err);

/* Encode bytes[0..len) as one piece: no pre-tokenizer split and no special token, any bytes
 * (UTF-8 or not; a UBE model takes valid UTF-8 only, ST_ERR_INVALID_UTF8 otherwise), merged by
 * the encoding's own rule by the merge loops st_encode runs on pieces (tiktoken's
 * _encode_single_piece; O(n log n) in len, never quadratic). A superword model's
 * supermerges do not apply: they join pretokens, and this is one. Writes ids[0..cap) and the
 * count to *n_ids (cap >= len suffices; ST_ERR_BUFFER_TOO_SMALL with the full count). A byte
 * that is no token of a rank vocabulary: ST_ERR_NOT_ENCODABLE with its offset. */
ST_API st_status st_encode_piece(const st_encoding *enc, const uint8_t *bytes, size_t len, uint32_t *ids,
                                 size_t cap, size_t *n_ids, st_error *err);

/* tiktoken's encode_with_unstable: the stable tokens of a text (a prefix of its encoding that
 * more text cannot change) and the completions, each a token sequence that, appended to them,
 * decodes to bytes starting with the whole text (the ways its last, unstable, bytes could be
 * tokenized once more text follows). The unstable bytes are the tokens of the last
 * pre-tokenizer piece after the last special token, with the whitespace tokens before it when
 * that piece starts with one (tiktoken's whitespace fix). The completions are: each single
 * token whose bytes start with the unstable bytes; for each token starting with their bytes
 * from offset i > 0 on, the encoding of unstable[0..i) + that token (as ordinary text when it
 * is valid UTF-8, else merged as one piece as by st_encode_piece), cut after the first token
 * that reaches the end of the unstable bytes; and, when the unstable bytes end with one
 * whitespace character after other bytes, the two parts each merged as one piece.
 *
 * A long unstable tail has tens of thousands of completions, so they come from a handle, a
 * batch per st_unstable_next call, never all held at once. st_unstable_new makes the handle for
 * an encoding: an index of its tokens by their first two bytes (one pass over the vocabulary,
 * about 1 MB for o200k_base), so a handle kept for many texts pays for it once. Only byte-level
 * encodings without supermerges qualify (ST_ERR_INVALID_ARGUMENT otherwise: a UBE model has no
 * byte tokens, and more text can change every supermerge of the last run of words). enc must
 * outlive the handle; alloc may be NULL (the encoding's). A handle is used by one thread at a
 * time. st_unstable_encode starts a text: it encodes text[0..len) with the special-token policy
 * as st_encode (its errors; after one, the handle holds no text), and the calls below then give
 * that text's stable ids and completions. */
typedef struct st_unstable st_unstable;
ST_API st_status st_unstable_new(const st_encoding *enc, const st_allocator *alloc, st_unstable **out,
                                 st_error *err);
ST_API void st_unstable_free(st_unstable *u);
ST_API st_status st_unstable_encode(st_unstable *u, const char *text, size_t len,
                                    const st_special_policy *specials, st_error *err);
/* The stable ids into ids[0..cap), their number in *n_ids (size query with cap 0:
 * ST_ERR_BUFFER_TOO_SMALL). */
ST_API st_status st_unstable_stable(const st_unstable *u, uint32_t *ids, size_t cap, size_t *n_ids,
                                    st_error *err);
/* The number of unstable bytes (0: no completions). A completion has at most that many ids. */
ST_API size_t st_unstable_length(const st_unstable *u);
/* The next completions: their ids one after another into ids[0..cap), the number of ids of
 * each into lengths[0..max_completions), *n_ids and *n_completions their totals; as many whole
 * completions as fit, *n_completions 0 once they are all given. A completion may come more
 * than once (tiktoken's completions are a set: a host collects them in one); their order is
 * the core's and not part of the contract. If not even the next one fits:
 * ST_ERR_BUFFER_TOO_SMALL with its size in *n_ids, and the next call gives it
 * (cap >= st_unstable_length always suffices). */
ST_API st_status st_unstable_next(st_unstable *u, uint32_t *ids, size_t cap, uint32_t *lengths,
                                  size_t max_completions, size_t *n_ids, size_t *n_completions,
                                  st_error *err);

/* The number of tokens st_encode would give, with no output buffer. */
ST_API st_status st_encode_count(const st_encoding *enc, const char *text, size_t len,
                                 const st_special_policy *specials, size_t *n_tokens, st_error *err);

/* Where a long text may be cut to encode its parts separately (on several threads, say) and
 * join their ids: *at = the first offset p with max(from, 1) <= p < len at which the ids of
 * text[0..p) followed by those of text[p..len) equal the ids of the whole text, for every
 * special-token policy; len if no such place is found. Found from a few characters around p
 * (docs/design.md §7 gives the rules for each pattern, the script-aware mode and superword
 * models), never by encoding: places the rules cannot prove are skipped, so a text may have
 * none. No special token of the encoding occurs across or next to a cut (a disallowed string
 * of a ST_SPECIAL_BY_TEXT policy that is no special token may: encode such a text whole, or
 * its parts would miss it). The text is not
 * validated (bytes that are no valid UTF-8 are simply no cut). ST_ERR_INVALID_ARGUMENT for a
 * NULL enc or at, or a NULL text with len > 0. */
ST_API st_status st_encoding_cut(const st_encoding *enc, const char *text, size_t len, size_t from, size_t *at,
                                 st_error *err);

/* The bytes of ids[0..n) concatenated into out[0..cap); *out_len = total (size query with
 * cap 0: ST_ERR_BUFFER_TOO_SMALL). ST_ERR_INVALID_TOKEN with offset = index of a bad id,
 * token = the id. A UBE encoding's tokens are symbols, not text bytes:
 * ST_ERR_INVALID_ARGUMENT, use st_decode_text. */
ST_API st_status st_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                           size_t *out_len, st_error *err);

/* ids[0..n) decoded to UTF-8 text in out[0..cap), *out_len = its length (size query with cap
 * 0). The tokens' base symbols go through the UBE decoder (docs/design.md §6; a byte alphabet is one
 * UTF-8 run): each same-alphabet run decodes as CPython's "replace" decoder; a special token
 * flushes the run and adds its own text. flags: ST_UBE_STRICT makes malformed text
 * ST_ERR_INVALID_UTF8 with offset = the index of the id where the malformed run starts.
 * An id that is no token: ST_ERR_INVALID_TOKEN at its index. */
ST_API st_status st_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags,
                                uint8_t *out, size_t cap, size_t *out_len, st_error *err);

/* ---- Streaming decoding and decode_with_offsets (decoder.c) -------------------------------- */

/* Errors of the calls below: *err (may be NULL) is cleared at entry (all zero, status ST_OK)
 * and filled on failure: status, unit and offset, token (the id concerned, 0xFFFFFFFF if
 * none) and a message. */

/* A streaming decoder of ids to UTF-8 text: the text st_decode_text gives for the whole
 * stream, emitted as it completes, for any split of the stream into calls. Byte-level
 * encodings: the tokens' bytes go through one UTF-8 run decoder (CPython's incremental
 * "replace" decoder); UBE encodings: the tokens' base symbols through the UBE stream decoder
 * (docs/design.md §6). A special token flushes what is pending, then adds its own text. The state is
 * bounded: the active alphabet, the bytes of one incomplete character and at most one byte held
 * back (below), and a small fixed table mapping symbols to ids for errors. enc is borrowed and
 * must outlive the decoder; a decoder is not shared between threads without a lock (one per
 * stream). flags: 0 (malformed text becomes U+FFFD) or ST_UBE_STRICT. alloc may be NULL. */
typedef struct st_decoder st_decoder;

ST_API st_status st_decoder_new(const st_encoding *enc, uint32_t flags, const st_allocator *alloc,
                                st_decoder **out, st_error *err);

/* Feed ids[0..n); the text completed so far goes to out[0..cap), its length to *out_len.
 * flags: ST_UBE_FINAL marks the end of the stream (what is pending is flushed: U+FFFD, or in
 * strict mode an error); the decoder may be fed on afterwards (ids still counted from new or
 * reset). Each ordinary id yields at most 3 bytes per base symbol of its token, a special its
 * text plus 3 bytes, the end 3 more; or retry with the size reported. A byte-level decoder
 * returns, call by call, what CPython's incremental UTF-8 decoder returns for the calls' bytes:
 * like it, it keeps a truncated surrogate (ED A0-BF) that ends a call until the next call or
 * the end. Errors, with the state left as it was before the call (nothing consumed, so a host
 * can retry):
 *  - ST_ERR_BUFFER_TOO_SMALL: *out_len = the size needed (nothing past cap was written);
 *  - ST_ERR_INVALID_TOKEN: an id that is no token; err: unit ST_UNIT_INDEX, token = the id;
 *  - ST_ERR_INVALID_UTF8 (ST_UBE_STRICT only): malformed text; err: unit ST_UNIT_INDEX, token =
 *    the id where the malformed run starts.
 * Error offsets count ids in the stream, from st_decoder_new or the last reset (so the id where
 * a malformed run starts may be one fed by an earlier call): subtract the ids fed before this
 * call for an index into ids. The first error in stream order is reported. */
ST_API st_status st_decoder_feed(st_decoder *d, const uint32_t *ids, size_t n, uint32_t flags, uint8_t *out,
                                 size_t cap, size_t *out_len, st_error *err);

/* Back to a fresh stream (pending bytes dropped, ids counted from 0 again). */
ST_API void st_decoder_reset(st_decoder *d);
ST_API void st_decoder_free(st_decoder *d);

/* tiktoken's decode_with_offsets for a byte-level encoding: out[0..cap) = the text, the
 * concatenated bytes of ids[0..n) (size query with cap 0: ST_ERR_BUFFER_TOO_SMALL, *out_len =
 * the size), which must be valid UTF-8; offsets[i] (n entries, may be NULL) = where token i
 * starts in the text, in unit (ST_UNIT_CODEPOINT or ST_UNIT_UTF16, where a character above
 * U+FFFF counts 2). A token starting inside a character (with a continuation byte) gets the
 * offset of that character. offsets are written whenever the status is ST_OK or
 * ST_ERR_BUFFER_TOO_SMALL. Errors, in tiktoken's order:
 *  - ST_ERR_INVALID_TOKEN: the first id that is no token (specials are tokens); err: unit
 *    ST_UNIT_INDEX, token = the id;
 *  - ST_ERR_INVALID_UTF8: the bytes are not valid UTF-8; err: unit ST_UNIT_INDEX, offset = the
 *    index of the id holding the first byte of the first malformed sequence, its byte offset in
 *    the text in the message ("... at byte N ...").
 * A UBE encoding gives ST_ERR_INVALID_ARGUMENT: its tokens are symbols and its text is the UBE
 * decoder's, which is not a concatenation of per-token pieces (use st_decoder_feed one id at a
 * time to learn where each token's text starts). */
ST_API st_status st_decode_with_offsets(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t unit,
                                        uint8_t *out, size_t cap, size_t *out_len, size_t *offsets,
                                        st_error *err);

/* ---- Model files (docs/formats/model-format.md) ----------------------------------------------------- */

/* A model file is text: "supertok-model 1", header lines (name, kind, alphabet, pattern,
 * script-aware, scripts), counted sections (merges or tokens, supermerges, specials) and a
 * final "end" line; docs/formats/model-format.md is the specification. The core parses it from bytes,
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
#define ST_MODEL_RULES 1 /* merge rules: rule i joins two earlier ids into id A + i (docs/design.md §7) */
#define ST_MODEL_RANKS 2 /* a tiktoken vocabulary: token bytes + rank, merged by rank */

/* Parse and validate a model file (bytes[0..len), not kept: the model copies what it needs).
 * Everything st_encoding_from_model needs is checked here except what only building the
 * encoding finds (two rank tokens with the same bytes). Format versions 1 and 2 are read (2
 * adds the optional "training" header line: algorithm and parameters). */
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
/* The entries of the "merges" or "supermerges" section of a rules model: pairs[2i], pairs[2i + 1]
 * the left and right ids of entry i, counts[i] its training count (*counts NULL when the
 * section has no counts). Pointers into the model, valid until it is freed. Returns the number of
 * entries (0, with NULL pointers, for another section name or a ranks model). */
ST_API size_t st_model_pairs(const st_model *model, const char *section, const uint32_t **pairs,
                             const uint64_t **counts);

/* An encoding from a parsed model (the model is not borrowed: free it whenever). A model with
 * supermerges encodes superwords (docs/design.md §7): regular merges inside each pretoken, then
 * over each maximal run of two or more adjacent pretokens that each became one eligible token
 * (it contains a letter), the lowest supermerge present, repeatedly. */
ST_API st_status st_encoding_from_model(const st_model *model, const st_allocator *alloc, st_encoding **out,
                                        st_error *err);
/* st_model_parse + st_encoding_from_model + st_model_free in one call. */
ST_API st_status st_encoding_new_model(const char *bytes, size_t len, const st_allocator *alloc,
                                       st_encoding **out, st_error *err);

/* An encoding from a HuggingFace tokenizer.json's bytes: a byte-level BPE model (its vocabulary,
 * its merges applied lowest first, ignore_merges), its added tokens, the NFC normalizer, and the
 * pre-tokenizers of GPT-2 (ByteLevel), Llama 3, Qwen 2/3 and DeepSeek V3 (recognised by their
 * regexes' exact text). Anything else is refused with ST_ERR_MALFORMED_MODEL, the report naming
 * the field and its byte offset (docs/formats/tokenizer-json.md). The added tokens marked
 * special are the encoding's special tokens, under the caller's policy as any other's; the
 * others are always matched (tokenizers' encode matches every added token): st_encode with
 * ST_SPECIAL_ALLOW_ALL gives tokenizers' encode(text, add_special_tokens=False). */
ST_API st_status st_encoding_new_tokenizer_json(const char *json, size_t len, const st_allocator *alloc,
                                                st_encoding **out, st_error *err);

/* The flags of token id as an added token (a tokenizer.json's added_tokens): ST_ADDED_SPECIAL for
 * one marked special (the encoding's special tokens; in other encodings every special token),
 * ST_ADDED_NORMALIZED for one tokenizers matches in the normalized text, ST_ADDED_ALWAYS for one
 * matched whatever the special-token policy (not special); 0 for any other id. */
#define ST_ADDED_SPECIAL 1u
#define ST_ADDED_NORMALIZED 2u
#define ST_ADDED_ALWAYS 4u
ST_API uint32_t st_encoding_added_flags(const st_encoding *enc, uint32_t id);
/* The pattern (st_pattern) of the encoding's pre-tokenizer. */
ST_API int st_encoding_pattern(const st_encoding *enc);

/* A model file of merge rules from its fields, in canonical text (what st_model_write writes for
 * the model it parses to): kind rules, format version 1, not script-aware, the lines
 * "comment <comment i>" after the name, the merges (merges[2i], merges[2i + 1] the left and right
 * ids of rule i, without counts) and the specials sorted by id (stably: equal ids keep their
 * order), their texts escaped as the format escapes them. Special i is
 * specials[special_ends[i-1] .. special_ends[i]) with id special_ids[i]; comment i is
 * comments[comment_ends[i-1] .. comment_ends[i]) (ends[-1] = 0). Hosts converting a model from
 * another form (the JSON models) write it with this call and load it with st_model_parse, which
 * checks what the rules and specials mean (a part not below its rule's id, an empty special) and
 * names the entry. Refused here (ST_ERR_INVALID_ARGUMENT, err->input naming the field), as lines
 * they would break: a name that is not 1 to 128 printable ASCII characters without spaces (input
 * 1; offset = the bad byte's, or ST_UNIT_NONE for the length), ends that go backwards (input 2
 * for the specials, 4 for the comments; offset = the index), more than 2^21 - 1 merges (a
 * model's ids; input 3), a comment that is empty, holds a control byte or is not valid UTF-8
 * (input 4; offset = its index, ST_UNIT_INDEX); input 0: a NULL pointer or a bad alphabet.
 * alphabet: ST_ALPHABET_*; pattern: an st_pattern (ST_ERR_UNKNOWN_PATTERN otherwise).
 * out[0..cap), *out_len = its length (size query with cap 0: ST_ERR_BUFFER_TOO_SMALL). */
ST_API st_status st_model_write_rules(const char *name, size_t name_len, int alphabet, int pattern,
                                      const uint32_t *merges, size_t n_merges, const char *specials,
                                      const size_t *special_ends, const uint32_t *special_ids, size_t n_specials,
                                      const char *comments, const size_t *comment_ends, size_t n_comments,
                                      char *out, size_t cap, size_t *out_len, st_error *err);

/* ---- Exports to other libraries' formats (docs/formats/export.md) --------------------------- */

/* Formats of st_encoding_export. */
#define ST_EXPORT_TIKTOKEN 1 /* a tiktoken rank file: for each token written, in id order, the
                                base64 of its bytes, a space, its id (the rank) and a newline */
#define ST_EXPORT_HF_JSON 2  /* a HuggingFace tokenizers tokenizer.json: a BPE model (vocab and
                                merges as GPT-2 byte-level strings), the pattern as a Split
                                pre-tokenizer then ByteLevel, the ByteLevel decoder, and the
                                special strings as added tokens (by id); the text Python's
                                json.dumps(obj, ensure_ascii=False, indent=1) writes, and a
                                newline */

/* The encoding in another library's format into out[0..cap), *out_len = its length (size query
 * with cap 0: ST_ERR_BUFFER_TOO_SMALL). Both formats hold the ordinary tokens (a special that
 * shares an ordinary token's id is that token too; gaps have none), each byte string once: a
 * token whose bytes a lower id has is left out (st_encoding_duplicate_tokens lists them). Only a
 * byte-level encoding without supermerges and without a script-aware pre-tokenizer can go, and to
 * ST_EXPORT_HF_JSON only a model of merge rules: otherwise ST_ERR_INVALID_ARGUMENT with kind
 * ST_KIND_EXPORT_UBE, _SUPERMERGES, _SCRIPT_AWARE or _NO_RULES (the first that applies), nothing
 * written. An unknown format: ST_ERR_INVALID_ARGUMENT, kind ST_KIND_NONE. What comes back from
 * the other library may still differ: tiktoken merges by rank, and HuggingFace runs its own regex
 * engine (docs/formats/export.md); hosts check an export by loading it there. */
ST_API st_status st_encoding_export(const st_encoding *enc, int format, char *out, size_t cap, size_t *out_len,
                                    st_error *err);

/* The ordinary tokens whose bytes a lower id has (two merge rules can make the same bytes), which
 * exports leave out: pairs[2k] the id, pairs[2k + 1] the lowest id with its bytes, in id order.
 * pairs has room for cap pairs; *n = their number (size query with cap 0:
 * ST_ERR_BUFFER_TOO_SMALL when there are any). */
ST_API st_status st_encoding_duplicate_tokens(const st_encoding *enc, uint32_t *pairs, size_t cap, size_t *n,
                                              st_error *err);

/* ---- Training (docs/design.md §8) ------------------------------------------------------- */

/* A counter aggregates the pretokens of documents by count (64-bit). It owns its
 * pre-tokenizer (pattern, flags, scripts as st_pretokenizer_new takes them), so counts made
 * with different splitters are never mixed: merging or loading those is ST_ERR_INVALID_ARGUMENT.
 * The core makes no threads: a host gives each thread its own counter and merges them; counts,
 * and so every model trained from them, are the same for any split of the work. A counter is
 * not thread-safe (one thread at a time); distinct counters are independent. */
typedef struct st_counter st_counter;

ST_API st_status st_counter_new(int pattern, uint32_t flags, const char *scripts, size_t scripts_len,
                                const st_allocator *alloc, st_counter **out, st_error *err);
ST_API void st_counter_free(st_counter *counter);

/* Flags of st_counter_add. */
#define ST_COUNT_LINES 1u /* every line of text is one document: it ends after its '\n' (kept,
                             as HuggingFace's trainer reads files); a last line without '\n' is
                             a document too */

/* Count the pretokens of text[0..len): one document, or one per line with ST_COUNT_LINES.
 * Invalid UTF-8 gives ST_ERR_INVALID_UTF8 with err->offset the byte offset in text and
 * err->line the 1-based line (ST_COUNT_LINES); nothing of the call is counted then (the
 * counter is as before the call). */
ST_API st_status st_counter_add(st_counter *counter, const char *text, size_t len, uint32_t flags,
                                st_error *err);
/* Count n documents at once: document i is texts[ends[i-1] .. ends[i]) (ends[-1] = 0). Errors as
 * st_counter_add, with err->input = the index of the bad document and err->offset the byte
 * offset inside it; nothing of the call is counted then. */
ST_API st_status st_counter_add_documents(st_counter *counter, const char *texts, const size_t *ends,
                                          size_t n_documents, st_error *err);
/* Add count occurrences of one pretoken (its bytes, not split again): hosts with pretokens of
 * their own, and tests. The bytes must be valid UTF-8 and non-empty. */
ST_API st_status st_counter_add_pretoken(st_counter *counter, const char *bytes, size_t len,
                                         uint64_t count, st_error *err);
/* into += from (from is unchanged). Different pre-tokenizers: ST_ERR_INVALID_ARGUMENT. */
ST_API st_status st_counter_merge(st_counter *into, const st_counter *from, st_error *err);
/* Drop every pretoken counted fewer than min_count times (0 and 1 keep all): the UBE paper's
 * per-shard filter (Appendix B.1). PRETOKENS and UNIQUE shrink by what was dropped; DOCUMENTS and
 * BYTES stay (the text was read). Filtering shards and adding them is not filtering their sum: a
 * documented departure from whole-corpus BPE (docs/design.md §13). A candidates counter:
 * ST_ERR_INVALID_ARGUMENT. Out of memory: the counter is as it was. */
ST_API st_status st_counter_prune(st_counter *counter, uint64_t min_count, st_error *err);

/* How often each token of enc occurs in the counted text: every distinct pretoken encoded as one
 * piece (st_encode_piece) and its ids counted as often as it occurs; counts[0..n) (n at least
 * st_encoding_n_vocab, else ST_ERR_BUFFER_TOO_SMALL) is zeroed first. Special tokens never occur.
 * A superword model (its supermerges join pretokens) or a candidates counter:
 * ST_ERR_INVALID_ARGUMENT; a piece the encoding cannot encode: its error. */
ST_API st_status st_counter_token_counts(const st_counter *counter, const st_encoding *enc, uint64_t *counts,
                                         size_t n, st_error *err);

/* Statistics (ST_COUNTER_*). */
#define ST_COUNTER_DOCUMENTS 0 /* documents counted */
#define ST_COUNTER_BYTES 1     /* bytes of text counted */
#define ST_COUNTER_PRETOKENS 2 /* pretokens counted (with multiplicity) */
#define ST_COUNTER_UNIQUE 3    /* distinct pretokens */
#define ST_COUNTER_KIND 4      /* ST_COUNTER_KIND_PRETOKENS or ST_COUNTER_KIND_CANDIDATES */
#define ST_COUNTER_KIND_PRETOKENS 0
#define ST_COUNTER_KIND_CANDIDATES 1 /* made by st_trainer_candidates_new or st_candidates_new:
                                        DOCUMENTS and BYTES as above, PRETOKENS = candidates
                                        counted (with multiplicity), UNIQUE = distinct candidates */
ST_API uint64_t st_counter_stat(const st_counter *counter, int what);

/* The counts as bytes (a versioned binary format, docs/formats/train-format.md): the pre-tokenizer,
 * the statistics and every distinct pretoken with its count, sorted by bytes, so equal counts
 * give equal files. Size query with cap 0 (ST_ERR_BUFFER_TOO_SMALL, *out_len the size). */
ST_API st_status st_counter_save(const st_counter *counter, uint8_t *out, size_t cap, size_t *out_len,
                                 st_error *err);
/* Add saved counts into counter (same pre-tokenizer, or ST_ERR_INVALID_ARGUMENT). A malformed
 * or truncated file is ST_ERR_MALFORMED_MODEL with err->offset its byte offset and a message;
 * nothing is added then. */
ST_API st_status st_counter_load(st_counter *counter, const uint8_t *bytes, size_t len, st_error *err);

/* Training modes. */
#define ST_TRAIN_PAPER 0 /* the paper's reference: alphabet = the reachable base symbols (243
                            bytes, or the UBE symbols valid text can produce), identical adjacent
                            pairs counted without overlap, ties to the smallest
                            (left symbols, right symbols) */
#define ST_TRAIN_HF 1    /* HuggingFace tokenizers' BpeTrainer over ByteLevel.alphabet(): 256
                            bytes, overlapping pair counts, ties to the smallest pair of HF's ids
                            (bytes ordered by their byte-level character, merges in creation
                            order); bytes alphabet only */

/* A phase-1 BPE trainer over the counts of counter (copied: free the counter whenever).
 * vocab_size counts every id that can occur: the alphabet that can occur (st_trainer_stat
 * ST_TRAINER_ALPHABET), the merges and the n_specials special tokens; the trainer makes up to
 * vocab_size - alphabet - n_specials merges (ST_ERR_INVALID_ARGUMENT, with a message, if that
 * is negative). Training stops early when no pair is left or the best count is below
 * min_frequency. Merge i makes id A + i (A = 256 bytes, 512 UBE) as in a rules model. */
typedef struct st_trainer st_trainer;
ST_API st_status st_trainer_new(const st_counter *counter, int mode, int alphabet, uint64_t vocab_size,
                                uint64_t min_frequency, size_t n_specials, const st_allocator *alloc,
                                st_trainer **out, st_error *err);
ST_API void st_trainer_free(st_trainer *trainer);

/* The special tokens' texts (n must be the trainer's n_specials; text i = specials[ends[i-1] ..
 * ends[i]), non-empty, valid UTF-8), once, before the first step. They never change counting.
 * In ST_TRAIN_HF mode they matter, as in HuggingFace's trainer, whose vocabulary holds one id per
 * string with the specials first: a special whose text is a byte-level character (e.g. "a") or
 * the byte-level string of a merged token (e.g. "the") gives that token the special's id (which
 * orders ties) and does not grow the vocabulary, so one more merge fits in vocab_size. Without
 * this call an hf trainer assumes no special collides. In ST_TRAIN_PAPER mode only checked. */
ST_API st_status st_trainer_set_specials(st_trainer *trainer, const char *specials, const size_t *ends, size_t n,
                                         st_error *err);

/* One step of training, by the trainer's state (st_trainer_stat ST_TRAINER_STATE):
 *  - ST_TRAINING_MERGES (phase 1) and ST_TRAINING_SUPERMERGES (phase 2, superwords): make up to
 *    max_merges more merges (phase 2: steps, see st_trainer_set_superwords), *made of them;
 *    *made < max_merges when the phase ended, and the state moved on;
 *  - ST_TRAINING_CANDIDATES (superwords, phase 1 done): close the pass over the texts (the
 *    candidates given back by st_trainer_candidates_add, none at all being an empty pass),
 *    split them into n-grams when ST_SUPERWORDS_NGRAM_SPLIT was set (Appendix B: c_min
 *    = ST_TRAINER_NGRAM_CMIN, n-grams of at most 30 pretokens), and start phase 2; *made is 0.
 *    This step takes the time of the split: a host says so before it;
 *  - ST_TRAINING_DONE: nothing (*made 0).
 * Hosts loop: step until ST_TRAINING_DONE, feeding the texts again when the state is
 * ST_TRAINING_CANDIDATES; so they show progress and cancel (stop calling, free): no callbacks. */
ST_API st_status st_trainer_step(st_trainer *trainer, size_t max_merges, size_t *made, st_error *err);

#define ST_TRAINER_ALPHABET 0 /* symbols of the alphabet that can occur (243 / 256 / UBE's) */
#define ST_TRAINER_TARGET 1   /* merges wanted (hf: new vocabulary entries wanted; a merge whose
                                 string exists already, see st_trainer_set_specials, adds none) */
#define ST_TRAINER_MERGES 2   /* merges made so far */
#define ST_TRAINER_DONE 3     /* 1 when finished (ST_TRAINER_STATE is ST_TRAINING_DONE) */
#define ST_TRAINER_WORDS 4    /* distinct pretokens trained on */
ST_API uint64_t st_trainer_stat(const st_trainer *trainer, int what);

/* The merges so far: pairs[2i], pairs[2i + 1] the left and right ids of merge i, counts[i] its
 * count (the pair's count when it was chosen). Valid until the next step or free. Returns the
 * number of merges. */
ST_API size_t st_trainer_merges(const st_trainer *trainer, const uint32_t **pairs,
                                const uint64_t **counts);

/* Change the vocabulary size of a phase-1 BPE trainer (no superwords set), before or between
 * steps: a vocabulary sweep trains once, writing the model at each size in increasing order.
 * Greedy merges do not depend on the size asked for, so the model written after stepping to
 * vocab_size is the model a trainer made for vocab_size writes, byte for byte (the comment's size
 * and stop reason included). A trainer done at its size goes on; one stopped for another reason
 * stays done. A size below what is made: ST_ERR_INVALID_ARGUMENT; after superwords were set:
 * ST_ERR_INVALID_ARGUMENT, kind ST_KIND_OUT_OF_ORDER. */
ST_API st_status st_trainer_set_vocab_size(st_trainer *trainer, uint64_t vocab_size, st_error *err);

/* The trained model as a model file (docs/formats/model-format.md, kind rules, merges with counts, the
 * counter's pre-tokenizer; after phase 2 the kept regular merges, the supermerges with counts
 * and the "training" line with the algorithm and its parameters) into out[0..cap): name (1-128 printable ASCII, no space) and the
 * special tokens, text i = specials[ends[i-1] .. ends[i]), which take the ids after the merges
 * (ST_TRAIN_HF: a special that HuggingFace's vocabulary puts at a token's id, see
 * st_trainer_set_specials, and whose text is that token's bytes takes that token's id instead);
 * n_specials must be the trainer's. Size query with cap 0. */
ST_API st_status st_trainer_write_model(const st_trainer *trainer, const char *name, size_t name_len,
                                        const char *specials, const size_t *special_ends,
                                        size_t n_specials, char *out, size_t cap, size_t *out_len,
                                        st_error *err);

/* ---- Superwords: phase 2 of training (docs/design.md §8, Faster Superword paper §2-§3) ------ */

/* Algorithms (st_trainer_set_superwords). */
#define ST_ALGORITHM_BPE 0       /* phase 1 only (no candidates, no phase 2) */
#define ST_ALGORITHM_BOUNDLESS 1 /* BoundlessBPE, Algorithm 1: the phase-1 merges replayed in order;
                                    at each step the best supermerge is taken instead when its count
                                    is strictly greater than the next regular merge's; a supermerge
                                    whose parts are not yet made (a regular merge not yet replayed)
                                    waits until they are; stops at the vocabulary size */
#define ST_ALGORITHM_SUPERBPE 2  /* SuperBPE(r, s): the first r = min(merges made, target - s)
                                    phase-1 merges, then exactly s supermerges (fewer only when no
                                    candidate pair is left, or none reaches max(min_frequency, 1));
                                    s above the target is ST_ERR_INVALID_ARGUMENT */

/* Flags of st_trainer_set_superwords. */
#define ST_SUPERWORDS_NGRAM_SPLIT 1u /* split the candidates by Appendix B's Apriori n-grams before
                                        phase 2 (st_trainer_step, ST_TRAINING_CANDIDATES) */

/* The algorithm, once, before the first step (a trainer is ST_ALGORITHM_BPE until then):
 * supermerges is SuperBPE's s (0 with the others), flags ST_SUPERWORDS_*. Paper mode only (hf
 * mode: ST_ERR_INVALID_ARGUMENT, HuggingFace has no superwords to match); s above
 * ST_TRAINER_TARGET, supermerges with BOUNDLESS or the n-gram split with BPE is
 * ST_ERR_INVALID_ARGUMENT; after the first step ST_ERR_INVALID_ARGUMENT, kind
 * ST_KIND_OUT_OF_ORDER. With BOUNDLESS or SUPERBPE, the end of phase 1 is the state
 * ST_TRAINING_CANDIDATES: the trainer needs the texts again (below), then steps make phase-2
 * steps, one vocabulary entry each (BOUNDLESS: a replayed regular merge or a supermerge;
 * SUPERBPE: a supermerge), until ST_TRAINING_DONE. Pairs of candidates are counted and ordered
 * as the mode's regular pairs (paper: identical adjacent pairs without overlap, ties to the
 * smallest (left symbols, right symbols)). st_trainer_merges then gives the regular merges kept
 * so far, st_trainer_supermerges the supermerges, and st_trainer_write_model the superword
 * model. */
ST_API st_status st_trainer_set_superwords(st_trainer *trainer, int algorithm, uint64_t supermerges, uint32_t flags,
                                           st_error *err);

/* The pass over the texts (state ST_TRAINING_CANDIDATES). A candidates counter is an st_counter
 * (st_counter_add, _add_documents, _merge, _save, _load, _stat, _free apply;
 * st_counter_add_pretoken is refused) whose entries are supermerge candidates: the maximal runs
 * of two or more adjacent eligible pretokens of one document, each run counted once per
 * occurrence. A pretoken is eligible when it contains a letter (\p{L}) and its bytes are a token
 * of the trainer's vocabulary (membership: the base symbols and the merges the algorithm keeps:
 * all phase-1 merges made for BOUNDLESS, the first r for SUPERBPE). The host takes one counter
 * per thread (st_trainer_candidates_new: it copies what it needs, and is used by one thread at
 * a time), feeds it every text of the first pass, each text once over all the counters, and
 * gives each back (st_trainer_candidates_add: its counts move to the trainer's, and it is left
 * empty, statistics 0, so that the counts are never held twice; the host still frees it). Counts
 * add, so the model is the same for any split of the texts. The next
 * st_trainer_step closes the pass. A counter has the trainer's pre-tokenizer and a fingerprint
 * of the eligible vocabulary: merging or loading candidates of another vocabulary, or merging
 * with a pretoken counter, is ST_ERR_INVALID_ARGUMENT. Out of order (another state, a counter
 * given back twice, documents for a counter already given back): ST_ERR_INVALID_ARGUMENT, kind
 * ST_KIND_OUT_OF_ORDER. */
ST_API st_status st_trainer_candidates_new(const st_trainer *trainer, const st_allocator *alloc, st_counter **out,
                                           st_error *err);
ST_API st_status st_trainer_candidates_add(st_trainer *trainer, st_counter *candidates, st_error *err);

/* The pass over the texts in other processes or machines (a cluster's workers): the trainer
 * saves what a candidates counter needs as bytes, its spec (a versioned binary format,
 * docs/formats/train-format.md: the pre-tokenizer, the algorithm and SuperBPE's s, the alphabet,
 * the kept regular merges and the eligible vocabulary's fingerprint; 84 + 8 bytes a kept merge),
 * in state ST_TRAINING_CANDIDATES (else ST_ERR_INVALID_ARGUMENT, kind ST_KIND_OUT_OF_ORDER);
 * size query with cap 0 (ST_ERR_BUFFER_TOO_SMALL, *out_len the size). st_candidates_new makes a
 * candidates counter from a spec, with no trainer: the counter st_trainer_candidates_new gives
 * (same pre-tokenizer, eligible vocabulary and fingerprint), so its counts, merged or saved
 * (st_counter_save) and loaded (st_counter_load) into a counter of st_trainer_candidates_new, go
 * back to the trainer; given back directly (st_trainer_candidates_add) it is accepted too. A
 * malformed or truncated spec (a merge of an id not made before it, tokens past a model's limit
 * on token bytes, a fingerprint that is not the merges') is ST_ERR_MALFORMED_MODEL with
 * err->offset its byte offset and a message; nothing is made then. */
ST_API st_status st_trainer_candidates_spec(const st_trainer *trainer, uint8_t *out, size_t cap, size_t *out_len,
                                            st_error *err);
ST_API st_status st_candidates_new(const uint8_t *spec, size_t len, const st_allocator *alloc, st_counter **out,
                                   st_error *err);

/* Statistics of phase 2 (st_trainer_stat, beside ST_TRAINER_*). */
#define ST_TRAINER_PHASE 5        /* 1, or 2 once phase 2 has started */
#define ST_TRAINER_SUPERMERGES 6  /* supermerges made so far */
#define ST_TRAINER_REGULAR 7      /* regular merges kept so far (phase 2; = MERGES in phase 1) */
#define ST_TRAINER_CANDIDATES 8   /* distinct candidates: given back so far (ST_TRAINING_CANDIDATES),
                                     trained on, after the n-gram split if any (phase 2) */
#define ST_TRAINER_NGRAM_CMIN 9   /* max(count of the last phase-1 merge, 15) (0 before any merge:
                                     then 15) */
#define ST_TRAINER_STEPS 10       /* phase-2 steps wanted (BOUNDLESS: the target; SUPERBPE: s) */
#define ST_TRAINER_STOP 11        /* why the current phase ended: an ST_STOP_* (ST_STOP_RUNNING
                                     before ST_TRAINER_DONE; phase 2 starts it afresh) */
#define ST_TRAINER_STOP_PHASE1 12 /* why phase 1 ended (kept once phase 2 has started) */
/* Whether each phase made what was asked, and how much, so a host can say so without a rule of
 * its own (read once ST_TRAINER_DONE is 1; the model's "comment stopped" lines follow the same
 * rule). Phase 1 is short when the model keeps fewer regular merges than it needs: without
 * superwords, whenever it stopped for another reason than ST_STOP_VOCAB_SIZE; SUPERBPE, when it
 * made fewer than TARGET - s (the regular merges SuperBPE keeps); BOUNDLESS, only when phase 2
 * is short too (phase 2 fills the rest of the vocabulary with supermerges otherwise). */
#define ST_TRAINER_PHASE1_SHORT 13  /* 1 when phase 1 made fewer merges than the model needs */
#define ST_TRAINER_PHASE1_WANTED 14 /* regular merges phase 1 aimed for: TARGET (SUPERBPE, once
                                       phase 2 has started: TARGET - s) */
#define ST_TRAINER_PHASE1_MADE 15   /* merges phase 1 made (kept once phase 2 has started) */
#define ST_TRAINER_PHASE2_SHORT 16  /* 1 when phase 2 ended short of ST_TRAINER_STEPS */
#define ST_TRAINER_PHASE2_MADE 17   /* phase-2 steps made, counted as ST_TRAINER_STEPS counts them
                                       (BOUNDLESS: regular merges kept + supermerges) */
#define ST_TRAINER_STATE 18          /* what st_trainer_step does next: an ST_TRAINING_* */
#define ST_TRAINER_PASS_DOCUMENTS 19 /* documents of the candidates given back (the second pass) */
#define ST_TRAINER_PASS_BYTES 20     /* bytes of text of the candidates given back */

/* The trainer's states (st_trainer_stat ST_TRAINER_STATE), in order. */
#define ST_TRAINING_MERGES 1      /* phase 1: steps make regular merges */
#define ST_TRAINING_CANDIDATES 2  /* superwords, phase 1 done: the trainer needs the texts again,
                                     through st_trainer_candidates_new / _add; the next step
                                     closes that pass */
#define ST_TRAINING_SUPERMERGES 3 /* phase 2: steps make supermerges (and, BOUNDLESS, replay
                                     regular merges) */
#define ST_TRAINING_DONE 4        /* finished: st_trainer_write_model */

/* Why a phase of training ended (st_trainer_stat ST_TRAINER_STOP, ST_TRAINER_STOP_PHASE1). Only
 * ST_STOP_VOCAB_SIZE means it made all it was asked for; hosts say the others (the model's
 * comment does: st_trainer_write_model adds a "comment stopped ..." line). */
#define ST_STOP_RUNNING 0       /* not finished */
#define ST_STOP_VOCAB_SIZE 1    /* made what was asked: phase 1 the target merges; phase 2
                                   BOUNDLESS regular + supermerges = the target, SUPERBPE s */
#define ST_STOP_NO_PAIR 2       /* phase 1: no pair left (every pretoken is a single token) */
#define ST_STOP_MIN_FREQUENCY 3 /* the best pair left occurs fewer than max(min_frequency, 1)
                                   (phase 2: at least 1) times */
#define ST_STOP_NO_CANDIDATE 4  /* phase 2: no supermerge candidate pair left (BOUNDLESS: and no
                                   regular merge left to replay) */
#define ST_STOP_LIMIT 5         /* a size limit of the model format (2^21 - 1 ids; both modes) */
#define ST_STOP_TOKEN_BYTES 6   /* the next merge's token would take the model past the limit on a
                                   rules model's token bytes (ST_RULES_TOKEN_BYTES_BASE) */
#define ST_STOP_CONSTRAINTS 7   /* an extension (st_trainer_set_seed_merges): every pair left makes
                                   a token its constraints rule out (more than max_words words, or
                                   ': ') */

/* The supermerges so far, as st_trainer_merges gives merges: supermerge i makes id
 * A + (regular merges kept) + i in the written model; its parts are given in those final ids. */
ST_API size_t st_trainer_supermerges(const st_trainer *trainer, const uint32_t **pairs,
                                     const uint64_t **counts);

/* ---- Extending a trained tokenizer: SuperBPE's Stage 2 (docs/design.md §8) ---------------- */

/* An extended model's training line says algorithm=extend (st_trainer_set_seed_merges); it is not
 * an argument of st_trainer_set_superwords. */
#define ST_ALGORITHM_EXTEND 3

/* Flags of st_trainer_set_seed_merges. */
#define ST_EXTEND_COLON_SPACE 1u /* no new token holds ':' followed by ' ' (SuperBPE's colon-space
                                    block) */

/* Seed merges, once, before the first step, on a paper-mode BPE trainer (no superwords): the first
 * n merges are pairs[2i], pairs[2i + 1] replayed in order (ids as in a rules model: base symbols
 * 0..A-1, seed merge i makes A + i, so each part is below A + i), each applied to every word
 * whatever its count (a seed absent from the counted text is kept, with count 0, so the extended
 * model starts with every seed merge); then merges go on greedily as phase 1's do, except that a
 * pair whose new token would hold more than max_words words (maximal runs of symbols other than
 * the space ' ', counted over the token's base symbols; 0: no cap) or, with
 * ST_EXTEND_COLON_SPACE, a ':' symbol followed by a ' ' symbol is never chosen. The counter is
 * normally of the "superbpe" pattern and pruned per shard (st_counter_prune); min_count is that
 * pruning's threshold, written in the model's training line with base_name (the base model's
 * name, 1-128 printable ASCII without spaces), n, max_words and the flags; the trainer does not
 * prune. n above ST_TRAINER_TARGET, a part not yet made, hf mode, superwords, a second call or a
 * call after a step: ST_ERR_INVALID_ARGUMENT (the last two of kind ST_KIND_OUT_OF_ORDER). */
ST_API st_status st_trainer_set_seed_merges(st_trainer *trainer, const uint32_t *pairs, size_t n,
                                            const char *base_name, size_t base_name_len, uint32_t max_words,
                                            uint32_t flags, uint64_t min_count, st_error *err);
#define ST_TRAINER_SEED_MERGES 21 /* seed merges set (st_trainer_stat) */
#define ST_TRAINER_BLOCKED 22     /* pairs an extension's constraints have ruled out so far */

/* ---- Unicode normalization (normalize.c) ---------------------------------------------------- */

/* NFC output is at most this many times its input in UTF-8 bytes: cap >= ST_NFC_MAX_EXPANSION * len
 * always suffices. */
#define ST_NFC_MAX_EXPANSION 3

/* Unicode NFC (canonical composition) of text, exactly HuggingFace tokenizers' `NFC` normalizer
 * (its Unicode 9.0 data: later characters pass unchanged). Writes out[0..cap) and *out_len; when
 * map is not NULL (cap entries), map[k] is the byte offset in text of the start of the character
 * output byte k came from: it never decreases (inside a combining sequence whose marks were
 * reordered, a mark maps to the smallest offset among itself and the marks after it), so a range
 * of the output maps back to a range of text. Text with no code point at or above U+0300 comes
 * back unchanged. Linear time on any input. If cap is too small: ST_ERR_BUFFER_TOO_SMALL with
 * the full length in *out_len (size query: cap 0, out and map NULL), nothing past cap written.
 * Invalid UTF-8: ST_ERR_INVALID_UTF8 at its byte offset. */
ST_API st_status st_normalize_nfc(const char *text, size_t len, char *out, size_t *map, size_t cap,
                                  size_t *out_len, st_error *err);

/* ---- UBE: the UTF-8 / UTF-16 routed alphabet ---------------------------------------------- */

/* Base symbols 0-255 are UTF-8 bytes (code points below U+0800), 256-511 UTF-16LE bytes
 * (U+0800 and above; a surrogate pair above U+FFFF). Routing is per character. Writes
 * symbols[0..cap) and the count (at most one symbol per input byte, so cap >= len suffices;
 * ST_ERR_BUFFER_TOO_SMALL with the full count otherwise). Invalid UTF-8: ST_ERR_INVALID_UTF8. */
ST_API st_status st_ube_encode_symbols(const char *text, size_t len, uint16_t *symbols, size_t cap,
                                       size_t *n_symbols, st_error *err);

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

ST_API size_t st_ube_stream_size(void);
ST_API void st_ube_stream_init(st_ube_stream *s);

/* Feed symbols; writes the UTF-8 text completed so far to out[0..cap) (each symbol yields at
 * most 3 bytes, a flush at most 3 more: cap >= 3 * n + 3 suffices). Each same-alphabet run
 * decodes as CPython's bytes.decode("utf-8" or "utf-16-le", "replace"); a change of alphabet
 * flushes the run. With ST_UBE_FINAL the end flushes too (a special token in a token stream is
 * a flush: feed nothing with ST_UBE_FINAL, then continue with the same state). A symbol above
 * 511 is ST_ERR_INVALID_TOKEN at its index. On any error (and ST_ERR_BUFFER_TOO_SMALL, which
 * reports the size needed) the state is left as it was before the call. A state that no feed
 * can leave (an alphabet other than 0 or 1, n_pending above 3, pending bytes that are no
 * incomplete character, run_start other than base - n_pending while bytes are pending) is
 * ST_ERR_INVALID_ARGUMENT, the state untouched: only st_ube_stream_init and this call write it. */
ST_API st_status st_ube_stream_feed(st_ube_stream *s, const uint16_t *symbols, size_t n, uint32_t flags,
                                    uint8_t *out, size_t cap, size_t *out_len, st_error *err);

/* One-shot: st_ube_stream_feed on a fresh state with ST_UBE_FINAL. */
ST_API st_status st_ube_decode_symbols(const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out,
                                       size_t cap, size_t *out_len, st_error *err);

/* ---- UTF-8 ----------------------------------------------------------------------------- */

/* ST_OK if text is valid UTF-8 (no overlongs, no surrogates, nothing above U+10FFFF);
 * otherwise ST_ERR_INVALID_UTF8 with the byte offset of the first bad sequence. */
ST_API st_status st_utf8_validate(const char *text, size_t len, st_error *err);

#ifdef __cplusplus
}
#endif
#endif
