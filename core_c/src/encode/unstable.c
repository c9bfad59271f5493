/* tiktoken's encode_with_unstable (docs/design.md §7): the tokens of a text that more text
 * cannot change (the stable ones), and every way the rest (the unstable bytes, the last
 * pre-tokenizer piece's tokens) could be tokenized once more text follows (the completions).
 *
 * The completions of a long unstable tail are many (tens of thousands for a run of spaces), so
 * they are not built at once: a handle keeps a cursor over the candidate tokens and each
 * st_unstable_next call computes as many as fit in the caller's buffers. A completion is one of:
 *  - a single token whose bytes start with the whole unstable bytes;
 *  - for each token whose bytes start with unstable[i..] (0 < i < U), the encoding of
 *    unstable[0..i) followed by that token's bytes (as ordinary text if that is valid UTF-8,
 *    else merged as one piece, as tiktoken merges non-UTF-8 bytes), cut after the first token
 *    that reaches the end of the unstable bytes;
 *  - when the unstable bytes end with one whitespace character after something else: the
 *    pieces before it and it, each merged on its own (a whitespace character last may split off
 *    from what comes before it once more text follows). */
#include "special_policy.h"
#include "../text/unicode.h"
#include "../text/utf8.h"

enum { PHASE_TOKENS, PHASE_SPACE, PHASE_DONE };

/* The ordinary tokens sorted by their first two bytes (a counting sort: one pass to count,
 * one to place), so that the tokens starting with given bytes are found in the bucket of their
 * first two, or, for one byte, in that byte's 257 buckets: a call looks at the tokens that can
 * match, never at the whole vocabulary (an interpreter runs a scan of 200,000 tokens in tens of
 * seconds). Bucket b0 * 257 holds the one-byte token b0, b0 * 257 + 1 + b1 the tokens starting
 * with b0 b1. */
#define N_BUCKETS (256 * 257)

static size_t bucket_of(const uint8_t *t, size_t len) {
    return (size_t)t[0] * 257 + (len > 1 ? 1 + (size_t)t[1] : 0);
}

struct st_unstable {
    st_allocator alloc;
    const st_encoding *enc;
    uint32_t *bucket_start; /* N_BUCKETS + 1 positions into sorted */
    uint32_t *sorted;       /* the ordinary token ids, by bucket */
    size_t n_sorted;
    uint32_t *stable;  /* the stable ids of the text last given */
    size_t n_stable, stable_cap;
    uint8_t *unstable; /* the unstable bytes, and room after them for a token's bytes (text) */
    size_t u_len, text_cap;
    uint32_t *out;     /* the completion being handed out (pending when it did not fit) */
    size_t out_cap, out_n;
    int pending;
    int phase;
    /* cursor: the suffix of the unstable bytes the tokens are matched against (0: first the
     * whole unstable bytes, as a prefix of a single token), and the positions in sorted left */
    size_t suffix, pos, end;
    int started;
};

static int is_special(const st_vocab *v, uint32_t id) {
    size_t lo = 0, hi = v->n_special; /* special_ids is sorted */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v->special_ids[mid] < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < v->n_special && v->special_ids[lo] == id;
}

/* A special id that is also an ordinary token's (a merge-rules model's special whose text is
 * that token's bytes: docs/formats/model-format.md, Specials). */
static int is_shared(const st_encoding *enc, uint32_t id) {
    return enc->kind == ST__KIND_RULES && id < enc->vocab.n_ordinary;
}

/* Whether any string of special id is allowed by the policy. */
static int allowed_by(const st_encoding *enc, const st_special_policy *sp, uint32_t id) {
    if (!sp) return 0;
    if (sp->flags & ST_SPECIAL_ALLOW_ALL) return 1;
    if (sp->flags & ST_SPECIAL_BY_TEXT) { /* the allowed strings: is one of them a string of id's? */
        for (size_t k = 0; k < sp->n_allowed; k++) {
            size_t a = k ? sp->ends[k - 1] : 0;
            long i = st__special_string_number(enc, (const uint8_t *)sp->strings + a, sp->ends[k] - a);
            uint32_t sid, at, tl;
            if (i >= 0 && st__vocab_special_string(&enc->vocab, (uint32_t)i, &sid, &at, &tl) && sid == id) return 1;
        }
        return 0;
    }
    for (size_t k = 0; k < sp->n_allowed; k++) {
        uint32_t got = sp->allowed[k], a, l;
        if (sp->flags & ST_SPECIAL_BY_STRING && !st__vocab_special_string(&enc->vocab, got, &got, &a, &l)) continue;
        if (got == id) return 1;
    }
    return 0;
}

/* An id in the encode's output that came from a special string in the text: a special id,
 * which, if an ordinary token has it too, is one only where its string is allowed. */
static int special_in_output(const st_encoding *enc, const st_special_policy *sp, uint32_t id) {
    if (!is_special(&enc->vocab, id)) return 0;
    return !is_shared(enc, id) || allowed_by(enc, sp, id);
}

/* tiktoken's test for the whitespace fix: an ordinary token of spaces, newlines and tabs. */
static int all_space(const st_encoding *enc, uint32_t id) {
    uint32_t a, len;
    if (is_special(&enc->vocab, id) || !st__vocab_span(&enc->vocab, id, &a, &len)) return 0;
    for (uint32_t k = 0; k < len; k++) {
        uint8_t c = enc->vocab.bytes[a + k];
        if (c != ' ' && c != '\n' && c != '\t') return 0;
    }
    return 1;
}

static st_status out_reserve(st_unstable *u, size_t n) {
    if (n <= u->out_cap) return ST_OK;
    size_t cap = u->out_cap ? u->out_cap : 64;
    while (cap < n) cap *= 2;
    uint32_t *p = (uint32_t *)st__alloc(&u->alloc, cap * sizeof *p);
    if (!p) return ST_ERR_OUT_OF_MEMORY;
    st__free(&u->alloc, u->out, u->out_cap * sizeof *u->out);
    u->out = p;
    u->out_cap = cap;
    return ST_OK;
}

/* bytes[0..len) merged as one piece, appended to u->out. */
static st_status append_piece(st_unstable *u, const uint8_t *bytes, size_t len, st_error *err) {
    st_status st = out_reserve(u, u->out_n + len);
    if (st != ST_OK) return st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
    size_t n = 0;
    st = st_encode_piece(u->enc, bytes, len, u->out + u->out_n, len, &n, err);
    if (st == ST_OK) u->out_n += n;
    return st;
}

/* The completion for a token whose bytes (a, len) start with the last `suffix` unstable bytes:
 * unstable[0..U - suffix) + the token, encoded, cut after the token reaching the end of U. */
static st_status retokenize(st_unstable *u, size_t suffix, uint32_t a, uint32_t len, st_error *err) {
    size_t head = u->u_len - suffix, n = head + len, got = 0;
    st_status st = out_reserve(u, n);
    if (st != ST_OK) return st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
    if (u->u_len + n > u->text_cap) {
        size_t cap = 2 * (u->u_len + n);
        uint8_t *p = (uint8_t *)st__alloc(&u->alloc, cap);
        if (!p) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        st__memcpy(p, u->unstable, u->u_len);
        st__free(&u->alloc, u->unstable, u->text_cap);
        u->unstable = p;
        u->text_cap = cap;
    }
    uint8_t *text = u->unstable + u->u_len; /* the room after the unstable bytes */
    st__memcpy(text, u->unstable, head);
    st__memcpy(text + head, u->enc->vocab.bytes + a, len);
    if (st_utf8_validate((const char *)text, n, NULL) == ST_OK)
        st = st_encode(u->enc, (const char *)text, n, NULL, 0, u->out, NULL, n, &got, err);
    else
        st = st_encode_piece(u->enc, text, n, u->out, n, &got, err);
    if (st != ST_OK) return st;
    size_t covered = 0, k = 0;
    while (k < got && covered < u->u_len) {
        uint32_t ta, tl;
        if (!st__vocab_span(&u->enc->vocab, u->out[k], &ta, &tl)) tl = 0;
        covered += tl;
        k++;
    }
    u->out_n = k;
    return ST_OK;
}

/* The next completion into u->out; 0 when there is none left. */
static st_status next_completion(st_unstable *u, int *found, st_error *err) {
    const st_vocab *v = &u->enc->vocab;
    const uint8_t *un = u->unstable;
    size_t U = u->u_len;
    *found = 0;
    u->out_n = 0;
    while (u->phase == PHASE_TOKENS) {
        /* what the tokens in [pos, end) must start with, and how much longer they may be */
        const uint8_t *want = u->suffix ? un + U - u->suffix : un;
        size_t n_want = u->suffix ? u->suffix : U;
        if (!u->started) {
            size_t b = bucket_of(want, n_want);
            u->pos = u->bucket_start[b];
            u->end = u->bucket_start[n_want > 1 ? b + 1 : b + 257];
            u->started = 1;
        }
        while (u->pos < u->end) {
            uint32_t id = u->sorted[u->pos++], a, len;
            if (!st__vocab_span(v, id, &a, &len) || len < n_want || st__memcmp(v->bytes + a, want, n_want) != 0)
                continue;
            st_status st;
            if (u->suffix == 0) { /* a single token starting with the whole unstable bytes */
                st = out_reserve(u, 1);
                if (st != ST_OK) return st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
                u->out[0] = id;
                u->out_n = 1;
            } else if ((st = retokenize(u, u->suffix, a, len, err)) != ST_OK) { /* it straddles the end */
                return st;
            }
            *found = 1;
            return ST_OK;
        }
        u->started = 0;
        if (++u->suffix >= U) u->phase = PHASE_SPACE;
    }
    if (u->phase == PHASE_SPACE) {
        u->phase = PHASE_DONE;
        /* the shortest tail of valid UTF-8, if it is one whitespace character after more bytes */
        for (size_t size = 1; U > 1 && size <= 4 && size <= U; size++) {
            if (st_utf8_validate((const char *)un + U - size, size, NULL) != ST_OK) continue;
            uint32_t cp = 0;
            const uint8_t *c = un + U - size;
            if (size == 1) cp = c[0];
            else if (size == 2) cp = (uint32_t)(c[0] & 0x1F) << 6 | (c[1] & 0x3F);
            else if (size == 3) cp = (uint32_t)(c[0] & 0x0F) << 12 | (uint32_t)(c[1] & 0x3F) << 6 | (c[2] & 0x3F);
            else cp = (uint32_t)(c[0] & 0x07) << 18 | (uint32_t)(c[1] & 0x3F) << 12 | (uint32_t)(c[2] & 0x3F) << 6 |
                      (c[3] & 0x3F);
            /* valid and the shortest such tail: one character (a shorter tail would have been valid) */
            if (st_ucd_class(cp) & ST_UCD_WHITE_SPACE && U > size) {
                st_status st = append_piece(u, un, U - size, err);
                if (st == ST_OK) st = append_piece(u, un + U - size, size, err);
                if (st != ST_OK) return st;
                *found = 1;
            }
            break;
        }
    }
    return ST_OK;
}

void st_unstable_free(st_unstable *u) {
    if (!u) return;
    st_allocator a = u->alloc;
    st__free(&a, u->bucket_start, (N_BUCKETS + 1) * sizeof *u->bucket_start);
    st__free(&a, u->sorted, u->n_sorted * sizeof *u->sorted);
    st__free(&a, u->stable, u->stable_cap * sizeof *u->stable);
    st__free(&a, u->unstable, u->text_cap);
    st__free(&a, u->out, u->out_cap * sizeof *u->out);
    st__free(&a, u, sizeof *u);
}

st_status st_unstable_new(const st_encoding *enc, const st_allocator *alloc, st_unstable **out, st_error *err) {
    st__error_clear(err);
    if (!enc || !out) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *out = NULL;
    if (enc->vocab.alphabet != ST_ALPHABET_BYTES)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a UBE encoding has no byte tokens");
    if (enc->kind == ST__KIND_RULES && enc->supers.n)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "more text can change every supermerge of the last run of words");
    if (enc->kind == ST__KIND_HF) /* its rules need not follow the tokens' order, which the search assumes */
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                             "encode_with_unstable is not available for an encoding from a tokenizer.json");
    st_allocator a;
    st__allocator_init(&a, alloc ? alloc : &enc->alloc);
    st_unstable *u = (st_unstable *)st__alloc(&a, sizeof *u);
    if (!u) return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    st__memset(u, 0, sizeof *u);
    u->alloc = a;
    u->enc = enc;
    u->phase = PHASE_DONE;
    const st_vocab *v = &enc->vocab;
    /* each id's bucket (N_BUCKETS: none), found in one tight pass (an interpreter runs this
     * loop over the whole vocabulary: every instruction in it counts) */
    uint32_t *key = (uint32_t *)st__alloc(&a, (v->n_ids ? v->n_ids : 1) * sizeof *key);
    u->bucket_start = (uint32_t *)st__alloc(&a, (N_BUCKETS + 1) * sizeof *u->bucket_start);
    if (!key || !u->bucket_start) {
        st__free(&a, key, (v->n_ids ? v->n_ids : 1) * sizeof *key);
        st_unstable_free(u);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    st__memset(u->bucket_start, 0, (N_BUCKETS + 1) * sizeof *u->bucket_start);
    uint32_t *count = u->bucket_start + 1; /* count[b]: the tokens in bucket b */
    const uint32_t *off = v->offsets;
    const uint8_t *bytes = v->bytes;
    uint32_t next_special = 0, shared_below = enc->kind == ST__KIND_RULES ? v->n_ordinary : 0;
    size_t n = 0;
    for (uint32_t id = 0; id < v->n_ids; id++) {
        uint32_t ta = off[id], tb = off[id + 1], k = N_BUCKETS;
        while (next_special < v->n_special && v->special_ids[next_special] < id) next_special++;
        int special_only = next_special < v->n_special && v->special_ids[next_special] == id && id >= shared_below;
        if (ta < tb && tb <= v->bytes_len && !special_only) {
            k = (uint32_t)bytes[ta] * 257 + (tb - ta > 1 ? 1 + (uint32_t)bytes[ta + 1] : 0);
            count[k]++;
            n++;
        }
        key[id] = k;
    }
    for (size_t b = 0; b < N_BUCKETS; b++) u->bucket_start[b + 1] += u->bucket_start[b];
    u->n_sorted = n;
    u->sorted = (uint32_t *)st__alloc(&a, (n ? n : 1) * sizeof *u->sorted);
    if (!u->sorted) {
        u->n_sorted = 0;
        st__free(&a, key, (v->n_ids ? v->n_ids : 1) * sizeof *key);
        st_unstable_free(u);
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    }
    /* place, each bucket in id order: bucket_start[b] runs up to the start of bucket b + 1 */
    for (uint32_t id = 0; id < v->n_ids; id++)
        if (key[id] != N_BUCKETS) u->sorted[u->bucket_start[key[id]]++] = id;
    st__free(&a, key, (v->n_ids ? v->n_ids : 1) * sizeof *key);
    for (size_t b = N_BUCKETS; b > 0; b--) u->bucket_start[b] = u->bucket_start[b - 1]; /* back to starts */
    u->bucket_start[0] = 0;
    *out = u;
    return ST_OK;
}

st_status st_unstable_encode(st_unstable *u, const char *text, size_t len, const st_special_policy *specials,
                             st_error *err) {
    st__error_clear(err);
    if (!u || (!text && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    const st_encoding *enc = u->enc;
    st_allocator a = u->alloc;
    u->phase = PHASE_DONE; /* until this text is done: nothing of the last one is handed out */
    u->n_stable = u->u_len = u->out_n = 0;
    u->pending = u->started = 0;
    u->suffix = 0;
    size_t cap = len ? len : 1, n = 0;
    uint32_t *ids = (uint32_t *)st__alloc(&a, cap * sizeof *ids);
    size_t *starts = (size_t *)st__alloc(&a, cap * sizeof *starts);
    st_status st = ids && starts ? ST_OK : st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
    if (st == ST_OK) st = st_encode(enc, text, len, specials, ST_OFFSETS_BYTES, ids, starts, cap, &n, err);
    size_t n_last = 0;
    if (st == ST_OK && n && !special_in_output(enc, specials, ids[n - 1])) {
        size_t first = n; /* the first token after the last special token */
        while (first > 0 && !special_in_output(enc, specials, ids[first - 1])) first--;
        /* the start of the last pre-tokenizer piece of the text after it */
        size_t seg = starts[first], at = 0;
        st__piece_iter it;
        st__pieces_init(&it, &enc->pt, (const uint8_t *)text + seg, len - seg);
        while (it.i < len - seg) {
            size_t end = st__pieces_next(&it);
            if (end < len - seg) at = end;
        }
        for (size_t k = first; k < n; k++) n_last += starts[k] >= seg + at;
        /* tiktoken's fix for unstable whitespace splits: a last piece starting with a token of
         * whitespace takes in the whitespace tokens before it */
        if (n_last > 0 && all_space(enc, ids[n - n_last]))
            while (n_last < n && all_space(enc, ids[n - n_last - 1])) n_last++;
    }
    size_t ulen = 0;
    for (size_t k = n - n_last; st == ST_OK && k < n; k++) {
        uint32_t ta, tl;
        if (st__vocab_span(&enc->vocab, ids[k], &ta, &tl)) ulen += tl;
    }
    if (st == ST_OK && (2 * ulen + 64 > u->text_cap || n - n_last > u->stable_cap)) {
        /* room for the unstable bytes and a retokenized text after them, and the stable ids */
        st__free(&a, u->unstable, u->text_cap);
        st__free(&a, u->stable, u->stable_cap * sizeof *u->stable);
        u->text_cap = 2 * ulen + 64;
        u->stable_cap = n - n_last ? n - n_last : 1;
        u->unstable = (uint8_t *)st__alloc(&a, u->text_cap);
        u->stable = (uint32_t *)st__alloc(&a, u->stable_cap * sizeof *u->stable);
        if (!u->unstable || !u->stable) {
            st__free(&a, u->unstable, u->text_cap);
            st__free(&a, u->stable, u->stable_cap * sizeof *u->stable);
            u->unstable = NULL;
            u->stable = NULL;
            u->text_cap = u->stable_cap = 0;
            st = st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        }
    }
    if (st == ST_OK) {
        u->n_stable = n - n_last;
        if (u->n_stable) st__memcpy(u->stable, ids, u->n_stable * sizeof *ids);
        for (size_t k = n - n_last; k < n; k++) {
            uint32_t ta, tl;
            if (!st__vocab_span(&enc->vocab, ids[k], &ta, &tl)) continue;
            st__memcpy(u->unstable + u->u_len, enc->vocab.bytes + ta, tl);
            u->u_len += tl;
        }
        u->phase = u->u_len ? PHASE_TOKENS : PHASE_DONE;
    }
    if (ids) st__free(&a, ids, cap * sizeof *ids);
    if (starts) st__free(&a, starts, cap * sizeof *starts);
    return st;
}

st_status st_unstable_stable(const st_unstable *u, uint32_t *ids, size_t cap, size_t *n_ids, st_error *err) {
    st__error_clear(err);
    if (!u || !n_ids || (!ids && cap)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_ids = u->n_stable;
    if (cap < u->n_stable) return st__error_set(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, NULL);
    if (u->n_stable) st__memcpy(ids, u->stable, u->n_stable * sizeof *ids);
    return ST_OK;
}

size_t st_unstable_length(const st_unstable *u) {
    return u ? u->u_len : 0;
}

st_status st_unstable_next(st_unstable *u, uint32_t *ids, size_t cap, uint32_t *lengths, size_t max_completions,
                           size_t *n_ids, size_t *n_completions, st_error *err) {
    st__error_clear(err);
    if (!u || !n_ids || !n_completions || (!ids && cap) || (!lengths && max_completions))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, NULL);
    *n_ids = 0;
    *n_completions = 0;
    while (*n_completions < max_completions) {
        if (!u->pending) {
            int found;
            st_status st = next_completion(u, &found, err);
            if (st != ST_OK) return st;
            if (!found) break;
            u->pending = 1;
        }
        if (u->out_n > cap - *n_ids) {
            if (*n_completions) break; /* the next call takes it */
            *n_ids = u->out_n;
            return st__error_set(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0, NULL);
        }
        st__memcpy(ids + *n_ids, u->out, u->out_n * sizeof *ids);
        *n_ids += u->out_n;
        lengths[(*n_completions)++] = (uint32_t)u->out_n;
        u->pending = 0;
    }
    return ST_OK;
}
