/* The candidates spec (docs/formats/train-format.md, "The candidates spec"; supertok.h,
 * st_trainer_candidates_spec / st_candidates_new): what a candidates counter needs, saved from a
 * trainer whose phase 1 is done, so that another process or machine makes the same counter
 * without the trainer. The spec holds the pre-tokenizer, the algorithm and its argument, the
 * alphabet, the kept regular merges and their fingerprint; the reader rebuilds the eligible
 * vocabulary's tokens from the merges (as the trainer made them), recomputes the fingerprint and
 * refuses a spec whose fingerprint differs. A counter made from a spec is a counter
 * st__counter_new_candidates makes from the trainer: the same parameters, index and fingerprint,
 * so their counts merge, load into each other and go back to the trainer. */
#include "trainer.h"
#include "candidates.h"
#include "../formats/vocab.h" /* st__rules_token_bytes_limit */

static const uint8_t spec_magic[8] = {'s', 't', 'c', 'a', 'n', 'd', 's', 'p'};
#define SPEC_VERSION 1u
#define SPEC_HEADER 84u /* magic, version, pattern, flags, scripts (32), algorithm, alphabet,
                           supermerges, kept, fingerprint */
#define SPEC_MERGE 8u   /* u32 left, u32 right */


st_status st__candidates_spec(const st_trainer *t, int algorithm, uint64_t supermerges, uint8_t *out, size_t cap,
                              size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!t || !out_len || (!out && cap))
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out_len is NULL, or out NULL with a cap");
    const char *why = st__superword_args_error(t, algorithm, supermerges);
    if (why) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why);
    uint64_t kept = st__trainer_kept(t, algorithm, supermerges);
    size_t size = SPEC_HEADER + (size_t)kept * SPEC_MERGE;
    *out_len = size;
    if (cap < size) return st__error_status(err, ST_ERR_BUFFER_TOO_SMALL);
    st__memcpy(out, spec_magic, 8);
    st__put_le32(out + 8, SPEC_VERSION);
    st__put_le32(out + 12, (uint32_t)t->pt.pattern);
    st__put_le32(out + 16, t->pt.flags);
    for (int w = 0; w < ST_SCRIPT_WORDS; w++)
        st__put_le32(out + 20 + 4 * w, (t->pt.flags & ST_PRETOK_SCRIPT_AWARE) ? t->pt.single_letter_scripts[w] : 0);
    st__put_le32(out + 52, (uint32_t)algorithm);
    st__put_le32(out + 56, (uint32_t)t->alphabet);
    st__put_le64(out + 60, algorithm == ST_ALGORITHM_SUPERBPE ? supermerges : 0);
    st__put_le64(out + 68, kept);
    st__put_le64(out + 76, st__vocab_fingerprint(t->alphabet, t->merges, kept));
    for (uint64_t i = 0; i < kept; i++) {
        st__put_le32(out + SPEC_HEADER + SPEC_MERGE * i, t->merges[2 * i]);
        st__put_le32(out + SPEC_HEADER + SPEC_MERGE * i + 4, t->merges[2 * i + 1]);
    }
    return ST_OK;
}

st_status st_trainer_candidates_spec(const st_trainer *t, uint8_t *out, size_t cap, size_t *out_len, st_error *err) {
    st__error_clear(err);
    if (!t || !out_len) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out_len is NULL");
    if (st_trainer_stat(t, ST_TRAINER_STATE) != ST_TRAINING_CANDIDATES) {
        st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                      t->phase == 2 ? "the pass over the texts is closed (phase 2 has started)"
                      : !t->done ? "phase 1 is not finished: the texts are wanted again after it (ST_TRAINING_CANDIDATES)"
                                 : "the algorithm is BPE: training reads the texts once (st_trainer_set_superwords)");
        st__error_kind(err, ST_KIND_OUT_OF_ORDER, 0);
        return ST_ERR_INVALID_ARGUMENT;
    }
    return st__candidates_spec(t, t->algorithm, t->supermerges_arg, out, cap, out_len, err);
}

static st_status bad(st_error *err, size_t off, const char *what) {
    return st__error_set(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, off, what);
}

st_status st_candidates_new(const uint8_t *b, size_t len, const st_allocator *alloc, st_counter **out, st_error *err) {
    st__error_clear(err);
    if (!out || (!b && len)) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL, or spec NULL with a length");
    *out = NULL;
    if (len < 8 || st__memcmp(b, spec_magic, 8) != 0) return bad(err, 0, "not a candidates spec (magic 'stcandsp')");
    if (len < SPEC_HEADER) return bad(err, len, "candidates spec: the header is cut short (truncated?)");
    uint32_t version = st__get_le32(b + 8);
    if (version != SPEC_VERSION) {
        bad(err, 8, "candidates spec: format version ");
        st__error_append_u64(err, version);
        st__error_append(err, " is not supported (this core reads version 1)");
        return ST_ERR_MALFORMED_MODEL;
    }
    int pattern = (int)st__get_le32(b + 12);
    uint32_t flags = st__get_le32(b + 16);
    if (flags & ~ST_PRETOK_SCRIPT_AWARE) return bad(err, 16, "candidates spec: unknown pre-tokenizer flags");
    struct st_pretokenizer probe;
    if (st__pretokenizer_init(&probe, pattern, flags, NULL, 0, NULL) != ST_OK)
        return bad(err, 12, "candidates spec: unknown pattern");
    uint32_t scripts[ST_SCRIPT_WORDS];
    int nscripts = st_script_count();
    for (int w = 0; w < ST_SCRIPT_WORDS; w++) {
        uint32_t bits = st__get_le32(b + 20 + 4 * w);
        scripts[w] = bits;
        for (int k = 0; k < 32; k++)
            if (((bits >> k) & 1) && (!(flags & ST_PRETOK_SCRIPT_AWARE) || 32 * w + k >= nscripts))
                return bad(err, 20 + 4 * (size_t)w,
                           "candidates spec: a script bit that is no script (or set without script-aware)");
    }
    int algorithm = (int)st__get_le32(b + 52), alphabet = (int)st__get_le32(b + 56);
    uint64_t supermerges = st__get_le64(b + 60), kept = st__get_le64(b + 68), fingerprint = st__get_le64(b + 76);
    if (algorithm != ST_ALGORITHM_BOUNDLESS && algorithm != ST_ALGORITHM_SUPERBPE)
        return bad(err, 52, "candidates spec: unknown algorithm");
    if (alphabet != ST_ALPHABET_BYTES && alphabet != ST_ALPHABET_UBE) return bad(err, 56, "candidates spec: unknown alphabet");
    if (algorithm == ST_ALGORITHM_BOUNDLESS && supermerges)
        return bad(err, 60, "candidates spec: supermerges is SuperBPE's (0 with BoundlessBPE)");
    uint32_t base = alphabet == ST_ALPHABET_UBE ? 512u : 256u, sw = alphabet == ST_ALPHABET_UBE ? 2u : 1u;
    if (kept > (uint64_t)ST_RULES_MAX_IDS - base)
        return bad(err, 68, "candidates spec: more merges than a model holds (2^21 - 1 ids)");
    size_t size = SPEC_HEADER + (size_t)kept * SPEC_MERGE;
    if (len < size) return bad(err, len, "candidates spec: the merges are cut short (truncated?)");
    if (len > size) return bad(err, size, "candidates spec: bytes after the merges");
    /* the merges: each of ids made before it; the tokens' bytes within a model's limit */
    size_t n = base + (size_t)kept;
    st_allocator a;
    st__allocator_init(&a, alloc);
    uint32_t *merges = (uint32_t *)st__alloc(&a, (kept ? 2 * (size_t)kept : 1) * sizeof *merges);
    uint32_t *tlen = (uint32_t *)st__alloc(&a, n * sizeof *tlen);
    uint64_t *toff = (uint64_t *)st__alloc(&a, n * sizeof *toff);
    uint8_t *seq = NULL;
    size_t seq_len = 0;
    st_status st = ST_OK;
    st_counter *c = NULL;
    if (!merges || !tlen || !toff) {
        st = st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        goto done;
    }
    uint64_t made_bytes = 0;
    for (uint32_t id = 0; id < base; id++) tlen[id] = sw;
    for (uint64_t i = 0; i < kept; i++) {
        size_t at = SPEC_HEADER + SPEC_MERGE * (size_t)i;
        uint32_t l = st__get_le32(b + at), r = st__get_le32(b + at + 4);
        if (l >= base + i || r >= base + i) {
            st = bad(err, l >= base + i ? at : at + 4, "candidates spec: a merge of an id not made before it");
            goto done;
        }
        made_bytes += (uint64_t)tlen[l] + tlen[r];
        if (made_bytes > st__rules_token_bytes_limit(i + 1)) {
            st = bad(err, at, "candidates spec: the merges' tokens pass the limit on a model's token bytes");
            goto done;
        }
        tlen[base + i] = tlen[l] + tlen[r];
        merges[2 * i] = l;
        merges[2 * i + 1] = r;
    }
    if (st__vocab_fingerprint(alphabet, merges, kept) != fingerprint) {
        st = bad(err, 76, "candidates spec: the fingerprint does not match the merges");
        goto done;
    }
    /* the tokens' base-symbol sequences, laid out in id order as the trainer lays them out */
    seq_len = (size_t)base * sw + (size_t)made_bytes;
    seq = (uint8_t *)st__alloc(&a, seq_len);
    if (!seq) {
        st = st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, NULL);
        goto done;
    }
    size_t pos = 0;
    for (uint32_t id = 0; id < base; id++) {
        toff[id] = pos;
        if (sw == 2) seq[pos++] = (uint8_t)(id >> 8);
        seq[pos++] = (uint8_t)id;
    }
    for (uint64_t i = 0; i < kept; i++) {
        uint32_t l = merges[2 * i], r = merges[2 * i + 1];
        toff[base + i] = pos;
        st__memcpy(seq + pos, seq + toff[l], tlen[l]);
        st__memcpy(seq + pos + tlen[l], seq + toff[r], tlen[r]);
        pos += (size_t)tlen[l] + tlen[r];
    }
    /* the counter, as st__counter_new_candidates makes it from the trainer */
    struct st_pretokenizer pt;
    st__memset(&pt, 0, sizeof pt);
    pt.pattern = pattern;
    pt.flags = flags;
    st__memcpy(pt.single_letter_scripts, scripts, sizeof scripts);
    st = st__counter_new_cand(&pt, algorithm, alphabet, supermerges, kept, fingerprint, seq, toff, tlen, (uint32_t)n,
                              alloc, &c, err);
done:
    if (merges) st__free(&a, merges, (kept ? 2 * (size_t)kept : 1) * sizeof *merges);
    if (tlen) st__free(&a, tlen, n * sizeof *tlen);
    if (toff) st__free(&a, toff, n * sizeof *toff);
    if (seq) st__free(&a, seq, seq_len);
    if (st != ST_OK) {
        st_counter_free(c);
        return st;
    }
    *out = c;
    return ST_OK;
}
