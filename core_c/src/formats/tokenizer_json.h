/* HuggingFace tokenizer.json files of byte-level BPE models, read into a plain description
 * (st__hf_model) that the encoding constructor (encode/hf_encoding.c) and the compact writer
 * take: the tokens' bytes by id, the merges, the added tokens, and the pre-tokenizer, normalizer
 * and model flags recognised among those the core implements (docs/formats/tokenizer-json.md).
 * Anything else is refused with ST_ERR_MALFORMED_MODEL naming the field and its byte offset. */
#ifndef ST_TOKENIZER_JSON_H
#define ST_TOKENIZER_JSON_H

#include "../base/internal.h"

/* Added-token flags (tokenizers' AddedToken fields). */
#define ST__ADDED_SPECIAL 1u
#define ST__ADDED_NORMALIZED 2u
#define ST__ADDED_LSTRIP 4u
#define ST__ADDED_RSTRIP 8u
#define ST__ADDED_SINGLE_WORD 16u

#define ST__HF_MAX_IDS ((1u << 21) - 1) /* ids and merges: the rule table packs ids in 21 bits */

/* Model flags. */
#define ST__HF_IGNORE_MERGES 1u /* a piece that is a token is that token (merges not applied) */
#define ST__HF_NFC 2u           /* the NFC normalizer */

/* What an id is (st__hf_model.id_kind). */
enum { ST__HF_GAP = 0, ST__HF_TOKEN = 1, ST__HF_ADDED = 2 };

typedef struct st__hf_added {
    uint32_t id, off, len; /* its content: text[off .. off + len) */
    uint32_t flags;        /* ST__ADDED_* */
} st__hf_added;

typedef struct st__hf_model {
    uint32_t n_ids;      /* 1 + the largest id */
    uint32_t *offsets;   /* n_ids + 1: the bytes of id k are bytes[offsets[k] .. offsets[k + 1]) */
    uint8_t *bytes;      /* vocabulary tokens: their byte-level text decoded to bytes */
    uint8_t *id_kind;    /* n_ids: ST__HF_* */
    uint32_t n_merges;
    uint32_t *merges;    /* 3 per merge, in rank order: left id, right id, the id it makes */
    uint32_t n_added;
    st__hf_added *added; /* in the file's order */
    uint8_t *text;       /* the added tokens' contents */
    uint32_t pattern;    /* ST_PATTERN_* */
    uint32_t flags;      /* ST__HF_* */
    void *block;         /* the one allocation behind the arrays */
    size_t block_size;
} st__hf_model;

/* Parse tokenizer.json bytes. On success *m is filled (free it with st__hf_model_free). */
st_status st__hf_model_parse(const uint8_t *s, size_t n, const st_allocator *a, st__hf_model *m, st_error *err);
void st__hf_model_free(st__hf_model *m, const st_allocator *a);
/* Allocate m's one block, zeroed, for n_ids ids, bytes_len bytes of tokens, n_merges merges,
 * n_added added tokens and text_len bytes of their contents, and point m's arrays into it (the
 * counts are set too): the layout both readers (the JSON, the compact image) fill. 0 when out of
 * memory (m unchanged). */
int st__hf_model_alloc(st__hf_model *m, const st_allocator *a, uint32_t n_ids, size_t bytes_len, uint32_t n_merges,
                       uint32_t n_added, size_t text_len);

/* The compact image (hf_compact.c): whether s holds one; the image of m into dst[0..cap) (its
 * whole size returned; known: n_ids bytes of scratch); a model from an image (free it with
 * st__hf_model_free), every field checked. */
/* The most bytes the tokens a compact image's merges make (not spelled in it) may hold, per byte of
 * the image, beyond 64 KiB: the open models' images derive 1.2 a byte at most (Qwen 3: 0.98 MB of
 * merged tokens from a 0.81 MB image); a chain of merges each a byte longer than the last would
 * derive quadratically many. Each derived byte costs about 8 in the model and the encoding's
 * tables (core_c/tests/fuzz_tokenizer_json.c measures it). */
#define ST__HF_COMPACT_DERIVED_PER_BYTE 8
int st__hf_compact_is(const uint8_t *s, size_t n);
size_t st__hf_compact_write(const st__hf_model *m, uint8_t *dst, size_t cap, uint8_t *known);
st_status st__hf_compact_read(const uint8_t *s, size_t n, const st_allocator *a, st__hf_model *m, st_error *err);

/* GPT-2's byte-level alphabet: the character standing for byte b (a code point below 324). */
uint32_t st__byte_level_char(uint8_t b);

#endif
