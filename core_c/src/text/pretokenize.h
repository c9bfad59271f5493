/* Internal interface of the pre-tokenizers: the handle's layout and a piece iterator the
 * encoder walks without building an array of boundaries. */
#ifndef ST_PRETOKENIZE_H
#define ST_PRETOKENIZE_H

#include "../base/internal.h"

#define ST_SCRIPT_WORDS 8 /* 256 bits: script ids fit in a byte */

struct st_pretokenizer {
    st_allocator alloc;
    int pattern;
    uint32_t flags;
    uint32_t single_letter_scripts[ST_SCRIPT_WORDS]; /* bitset of script ids */
};

typedef size_t (*st__scan_fn)(const uint8_t *s, size_t end, size_t i);

/* Walks the pieces of validated UTF-8 text: while (it.i < it.len) e = st__pieces_next(&it); */
typedef struct st__piece_iter {
    const struct st_pretokenizer *pt;
    const uint8_t *s;
    size_t len, i, chunk_end;
    st__scan_fn scan;
} st__piece_iter;

void st__pieces_init(st__piece_iter *it, const struct st_pretokenizer *pt, const uint8_t *s, size_t len);
size_t st__pieces_next(st__piece_iter *it);
/* The ends of up to cap next pieces (cap >= 1), in ends[0..); their number (0 only at the end
 * of the text). The same pieces as st__pieces_next gives, with no call per piece. */
size_t st__pieces_fill(st__piece_iter *it, size_t *ends, size_t cap);

/* The batch scanner of a pattern with ASCII blocks (o200k, cl100k, llama3, qwen2) with a chosen
 * kernel, for the tests: the one-piece scanner alone, or 64-byte ASCII blocks classified a byte at
 * a time or with the build's SIMD kernel (the same as the portable one where the build has none). */
enum { ST_BLOCKS_NONE, ST_BLOCKS_PORTABLE, ST_BLOCKS };
size_t st__fill_blocks_kernel(int pattern, const uint8_t *s, size_t end, size_t i, size_t *ends, size_t cap,
                              int kernel);

/* Fill a pre-tokenizer in place (no allocation): used by handles that embed one. */
st_status st__pretokenizer_init(struct st_pretokenizer *pt, int pattern, uint32_t flags, const char *scripts,
                                size_t scripts_len, st_error *err);

/* The regex that names pattern's scanner (NUL-terminated): tiktoken 0.14's pat_str (r50k_base
 * and p50k_base share ST_PATTERN_GPT2's), SuperBPE's, Llama 3's or Qwen 2's Split regex, or
 * the last of DeepSeek V3's three; NULL for no pattern. */
const char *st__pattern_regex(int pattern);

#endif
