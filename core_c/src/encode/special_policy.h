/* The special-token policy as the pipeline uses it (special_policy.c): resolved against an
 * encoding once a call, then asked to refuse the text or to find the allowed specials in it. */
#ifndef ST_SPECIAL_POLICY_H
#define ST_SPECIAL_POLICY_H

#include "encoding.h"

/* The policy resolved against the encoding: which special strings (by number, st_vocab.extra:
 * tiktoken's policy names strings, and an id may have several) are allowed and which disallowed. */
#define ST_POLICY_STACK_BITS 4096
typedef struct st__policy {
    uint64_t *allowed;    /* n_strings bits, or NULL when none is allowed */
    uint64_t *disallowed; /* n_strings bits, or NULL when none is disallowed */
    /* The strings the first pass over the text matches (its earliest match, the longest at one
     * place, cuts the text; an allowed one gives its id, another stays text): the allowed ones,
     * but for a HuggingFace model every added token not `normalized` (tokenizers matches all its
     * added tokens and leaves a special one as text when asked to). `normalized`: a HuggingFace
     * model's added tokens matched by a second pass over the text between (tokenizers matches
     * them in the normalized text). NULL when unused. */
    uint64_t *match, *normalized;
    uint64_t stack_bits[4][ST_POLICY_STACK_BITS / 64];
    size_t bits_size;     /* bytes allocated for each of allowed, disallowed, match and normalized,
                             0 when on the stack */
    int any_allowed, any_disallowed, any_match, any_normalized;
    /* ST_SPECIAL_BY_TEXT: the disallowed strings that are no special string of the encoding
     * (tiktoken refuses them in the text too): strings[ends[k-1] .. ends[k]) for the k in
     * [first_unknown, end_unknown) with is_unknown set; n_unknown of them, one empty if
     * empty_unknown */
    const char *strings;
    const size_t *ends;
    size_t first_disallowed, end_disallowed, n_unknown;
    int empty_unknown;
} st__policy;

/* The caller's policy sp resolved against enc into pl (sp NULL: no special is matched or
 * refused); an invalid policy is refused with the entry named. pl is freed by st__policy_free. */
st_status st__policy_resolve(const st_encoding *enc, const st_special_policy *sp, st__policy *pl, st_error *err);
void st__policy_free(st__policy *pl, const st_allocator *a);

/* If the text s[0..len) holds a disallowed string anywhere: ST_ERR_DISALLOWED_SPECIAL for the
 * first (the earliest; at one position the longest), else ST_OK. */
st_status st__check_disallowed(const st_encoding *enc, const st__policy *pl, const uint8_t *s, size_t len, st_error *err);

/* first[c] = 1 for each first byte c of a special string in the set (pl->allowed,
 * pl->disallowed or pl->normalized; NULL: none), else 0; returns how many are 1. */
int st__special_first_bytes(const st_encoding *enc, const uint64_t *set, uint8_t first[256]);
/* The one first byte of first[] when distinct (st__special_first_bytes's count) is 1 ('<' for
 * nearly every model's specials: the text is then searched for it a word at a time), else -1. */
ST_INLINE int st__special_only_byte(const uint8_t first[256], int distinct) {
    if (distinct != 1) return -1;
    for (int c = 0; c < 256; c++)
        if (first[c]) return c;
    return -1;
}
/* The allowed special string matching at s[i..], longest first: its id, ST_NO_TOKEN if none;
 * *match_len its length, *string (if not NULL) its number. */
uint32_t st__special_at(const st_encoding *enc, const uint64_t *allowed, const uint8_t *s, size_t i, size_t len,
                        size_t *match_len, uint32_t *string);
/* Whether special string k is allowed by the policy. */
ST_INLINE int st__special_allowed(const st__policy *pl, uint32_t k) {
    return pl->allowed && (int)((pl->allowed[k >> 6] >> (k & 63)) & 1);
}

/* The number of the special string whose bytes are p[0..n) (the first if several), or -1. */
long st__special_string_number(const st_encoding *enc, const uint8_t *p, size_t n);

#endif
