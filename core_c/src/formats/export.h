/* Exports of a vocabulary to other libraries' formats (export.c): a tiktoken rank file and a
 * HuggingFace tokenizers tokenizer.json. They read the token store and the rules (vocab.h); the
 * public calls (st_encoding_export, st_encoding_duplicate_tokens) unpack the encoding handle in
 * encode/encoding.c and hand its parts here. */
#ifndef ST_EXPORT_H
#define ST_EXPORT_H

#include "vocab.h"

/* What an export needs of an encoding: its token store, its rules (NULL for a rank vocabulary),
 * how many supermerges it has, and its pre-tokenizer's pattern and flags. */
typedef struct st__export_source {
    const st_vocab *vocab;
    const st_rules *rules; /* NULL: a rank vocabulary (merged by rank, no rules) */
    uint32_t n_supers;
    int pattern;
    uint32_t pt_flags;
    const st_allocator *alloc; /* the encoding's, for the scratch arrays of one call */
} st__export_source;

st_status st__export_write(const st__export_source *src, int format, char *out, size_t cap, size_t *out_len,
                           st_error *err);
st_status st__export_duplicates(const st__export_source *src, uint32_t *pairs, size_t cap, size_t *n, st_error *err);

/* Sort a[0..n) ascending in place (heapsort: no allocation, O(n log n) for any input). Callers
 * pack (key << 32 | index) to sort indices by key, ties in index order. */
void st__sort_u64(uint64_t *a, size_t n);

#endif
