/* Model files (docs/formats/model-format.md): the parsed form, shared by the parser and the writer in
 * model.c, the encoding builder (encode/model_encoding.c), and the C tests (which compare two
 * parsed models). */
#ifndef ST_MODEL_H
#define ST_MODEL_H

#include "../base/internal.h"

#define ST_MODEL_VERSION 1u   /* the format without a training line */
#define ST_MODEL_VERSION_2 2u /* version 1 + the optional "training" header line */

/* Scripts of a script-aware model. */
enum { ST__SCRIPTS_DEFAULT = 0, ST__SCRIPTS_LIST = 1 };

typedef struct st__model_special {
    uint32_t id;
    size_t off, len; /* its text (UTF-8, unescaped) in st_model.special_text */
} st__model_special;

/* A counted section of (left, right[, count]) lines: merges or supermerges. */
typedef struct st__model_pairs {
    uint32_t *pairs;   /* 2n ids: left, right of entry i at 2i, 2i + 1 */
    uint64_t *counts;  /* n counts, or NULL when the section has none */
    size_t n, cap;     /* entries, and the allocated capacity (for free) */
    int present;       /* the section line was in the file (supermerges may be absent) */
    uint64_t line;     /* line of the section's own line ("merges N"); entry i is on line + 1 + i */
} st__model_pairs;

struct st_model {
    st_allocator alloc;
    uint8_t *src; /* a copy of the file: name, comments, scripts and tokens are slices of it */
    size_t src_len;
    size_t name_off, name_len;
    size_t comments_off, comments_len; /* the "comment ..." lines, verbatim, newlines included */
    int kind;                          /* ST_MODEL_RULES or ST_MODEL_RANKS */
    int alphabet;                      /* ST_ALPHABET_BYTES or ST_ALPHABET_UBE */
    int pattern;                       /* an st_pattern */
    uint32_t flags;                    /* ST_PRETOK_SCRIPT_AWARE or 0 */
    int scripts_kind;                  /* ST__SCRIPTS_DEFAULT or ST__SCRIPTS_LIST */
    size_t scripts_off, scripts_len;   /* the list ("none": length 0) */
    uint64_t script_aware_line;
    /* the "training" line (format version 2): how the model was trained */
    int has_training;
    int tr_algorithm;               /* ST_ALGORITHM_* */
    int tr_mode;                    /* ST_TRAIN_PAPER or ST_TRAIN_HF */
    uint64_t tr_vocab_size, tr_min_frequency;
    uint64_t tr_supermerges;        /* superbpe only */
    int tr_ngram;                   /* ngram_split=yes */
    uint64_t tr_c_min, tr_max_len;  /* with ngram_split=yes */
    /* algorithm=extend: the base model's name (a slice of src), the seed merges replayed, the
     * constraints on the merges after them and the per-shard pruning of the counts */
    size_t tr_base_off, tr_base_len;
    uint64_t tr_seed_merges, tr_max_words, tr_min_count;
    int tr_colon_space;
    uint64_t training_line;
    st__model_pairs merges, supermerges;
    /* ranks: the token lines, verbatim ("base64 rank\n" each: a tiktoken rank file) */
    size_t tokens_off, tokens_len;
    uint64_t n_tokens, tokens_line;
    uint32_t *ranks; /* the n_tokens ranks, increasing (for the specials' collision check) */
    size_t ranks_cap;
    st__model_special *specials; /* by increasing id */
    size_t n_specials, specials_cap;
    uint64_t specials_line;
    uint8_t *special_text;
    size_t special_text_cap;
};

/* 1 if the two models have the same content (what the writer writes; lines ignored). */
int st__model_equal(const st_model *a, const st_model *b);

/* The model's specials as the encoding constructors take them: tiktoken lines ("base64 id\n"),
 * in *text (*len bytes of an allocation of *size bytes from a, which the caller frees). */
st_status st__model_specials_ranks(const st_model *m, const st_allocator *a, uint8_t **text, size_t *len, size_t *size);
/* e = the report of an encoding constructor's ST_ERR_MALFORMED_MODEL (ce: offset = the byte
 * offset in the rank text, or in the specials text of st__model_specials_ranks (input 1), or
 * the index of the rule) as a report on the model file: the line, and the entry it names. */
void st__model_encoding_error(const st_model *m, const uint8_t *specials, size_t specials_len, const st_error *ce,
                              st_error *e);

#endif
