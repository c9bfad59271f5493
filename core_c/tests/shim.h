// The call forms the C tests were written against before st_error (a size_t *err_offset, an
// int *err_in_specials, an st_pattern number for encodings, a list of allowed specials and
// code point starts), mapped onto the current API, so the existing assertions keep running
// unchanged. Every shim also checks the st_error contract on each call it makes: the report's
// status is the status returned, and a call that succeeds leaves it cleared. New tests call the
// API directly (test_encode.c: test_errors_and_policy and the tests after it).
#ifndef ST_TEST_SHIM_H
#define ST_TEST_SHIM_H

#include <stdio.h>
#include <stdlib.h>

#include "supertok.h"

static void shim_check_err(const st_error *e, st_status st, const char *call) {
    int ok = e->status == (uint32_t)st;
    if (st == ST_OK)
        ok = ok && e->unit == ST_UNIT_NONE && e->offset == 0 && e->line == 0 && e->input == 0 &&
             e->token == 0xFFFFFFFFu && e->message[0] == 0;
    for (size_t k = 0; ok && k < sizeof e->message && e->message[k]; k++) ok = k + 1 < sizeof e->message;
    if (!ok) {
        printf("FAIL st_error contract broken by %s: returned %d, report status %u unit %u offset %llu\n", call,
               (int)st, e->status, e->unit, (unsigned long long)e->offset);
        abort();
    }
}

static st_status shim_ret(const st_error *e, st_status st, size_t *off, const char *call) {
    shim_check_err(e, st, call);
    if (off && st != ST_OK && e->unit != ST_UNIT_NONE) *off = (size_t)e->offset;
    return st;
}

static inline st_status t_utf8_validate(const char *text, size_t len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_utf8_validate(text, len, &e), off, "st_utf8_validate");
}

static inline st_status t_pretokenizer_new(int pattern, uint32_t flags, const char *scripts, size_t scripts_len,
                                           const st_allocator *alloc, st_pretokenizer **out, size_t *off) {
    st_error e;
    return shim_ret(&e, st_pretokenizer_new(pattern, flags, scripts, scripts_len, alloc, out, &e), off,
                    "st_pretokenizer_new");
}

static inline st_status t_pretokenize(const st_pretokenizer *pt, const char *text, size_t len, uint32_t flags,
                                      size_t *ends, size_t cap, size_t *n, size_t *off) {
    st_error e;
    return shim_ret(&e, st_pretokenize(pt, text, len, flags, ends, cap, n, &e), off, "st_pretokenize");
}

static inline st_status t_pretokenize_count(const st_pretokenizer *pt, const char *text, size_t len, size_t *n,
                                            size_t *off) {
    st_error e;
    return shim_ret(&e, st_pretokenize_count(pt, text, len, n, &e), off, "st_pretokenize_count");
}

static inline st_status t_pretokenize_join(const st_pretokenizer *pt, const char *text, size_t len, uint8_t sep,
                                           uint8_t *out, size_t cap, size_t *out_len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_pretokenize_join(pt, text, len, sep, out, cap, out_len, &e), off, "st_pretokenize_join");
}

/* An encoding with the plain pre-tokenizer of an st_pattern number, as constructors took. */
static inline st_status t_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials,
                                                size_t specials_len, int pattern, const st_allocator *alloc,
                                                st_encoding **out, size_t *off, int *in_specials) {
    st_error e;
    st_pretokenizer *pt = NULL;
    if (in_specials) *in_specials = 0;
    st_status st = st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &e);
    if (st != ST_OK) {
        if (out) *out = NULL;
        return shim_ret(&e, st, off, "st_pretokenizer_new");
    }
    st = st_encoding_new_tiktoken(ranks, ranks_len, specials, specials_len, pt, alloc, out, &e);
    st_pretokenizer_free(pt);
    if (st != ST_OK && in_specials) *in_specials = e.input == 1;
    return shim_ret(&e, st, off, "st_encoding_new_tiktoken");
}

static inline st_status t_encoding_new_merges(int alphabet, const uint32_t *merges, size_t n_merges,
                                              const char *specials, size_t specials_len, int pattern,
                                              const st_allocator *alloc, st_encoding **out, size_t *off,
                                              int *in_specials) {
    st_error e;
    st_pretokenizer *pt = NULL;
    if (in_specials) *in_specials = 0;
    st_status st = st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &e);
    if (st != ST_OK) {
        if (out) *out = NULL;
        return shim_ret(&e, st, off, "st_pretokenizer_new");
    }
    st = st_encoding_new_merges(alphabet, merges, n_merges, specials, specials_len, pt, alloc, out, &e);
    st_pretokenizer_free(pt);
    if (st != ST_OK && in_specials) *in_specials = e.input == 1;
    return shim_ret(&e, st, off, "st_encoding_new_merges");
}

static inline st_status t_encoding_from_image(const void *image, size_t len, const st_allocator *alloc,
                                              st_encoding **out, size_t *off) {
    st_error e;
    return shim_ret(&e, st_encoding_from_image(image, len, alloc, out, &e), off, "st_encoding_from_image");
}

static inline st_status t_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size) {
    st_error e;
    return shim_ret(&e, st_encoding_save_image(enc, out, cap, size, &e), NULL, "st_encoding_save_image");
}

static inline st_status t_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len) {
    st_error e;
    return shim_ret(&e, st_token_bytes(enc, id, ptr, len, &e), NULL, "st_token_bytes");
}

static inline st_status t_token_symbols(const st_encoding *enc, uint32_t id, uint16_t *out, size_t cap, size_t *n) {
    st_error e;
    return shim_ret(&e, st_token_symbols(enc, id, out, cap, n, &e), NULL, "st_token_symbols");
}

/* allowed specials recognised, nothing refused; starts in code points */
static inline st_status t_encode(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed,
                                 size_t n_allowed, uint32_t *ids, size_t *char_starts, size_t cap, size_t *n_ids,
                                 size_t *off) {
    st_error e;
    st_special_policy p = {allowed, n_allowed, NULL, 0, 0, NULL, NULL};
    return shim_ret(&e, st_encode(enc, text, len, &p, ST_OFFSETS_CODEPOINTS, ids, char_starts, cap, n_ids, &e), off,
                    "st_encode");
}

static inline st_status t_encode_count(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed,
                                       size_t n_allowed, size_t *n, size_t *off) {
    st_error e;
    st_special_policy p = {allowed, n_allowed, NULL, 0, 0, NULL, NULL};
    return shim_ret(&e, st_encode_count(enc, text, len, &p, n, &e), off, "st_encode_count");
}

static inline st_status t_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets,
                                      size_t n_texts, const uint32_t *allowed, size_t n_allowed, uint32_t *ids,
                                      size_t cap, size_t *counts, size_t *n_ids, size_t *off) {
    st_error e;
    st_special_policy p = {allowed, n_allowed, NULL, 0, 0, NULL, NULL};
    return shim_ret(&e, st_encode_many(enc, texts, offsets, n_texts, &p, ids, cap, counts, n_ids, &e), off,
                    "st_encode_many");
}

static inline st_status t_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
                                 size_t *out_len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_decode(enc, ids, n, out, cap, out_len, &e), off, "st_decode");
}

static inline st_status t_decode_text(const st_encoding *enc, const uint32_t *ids, size_t n, uint32_t flags,
                                      uint8_t *out, size_t cap, size_t *out_len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_decode_text(enc, ids, n, flags, out, cap, out_len, &e), off, "st_decode_text");
}

static inline st_status t_ube_encode_symbols(const char *text, size_t len, uint16_t *symbols, size_t cap,
                                             size_t *n_symbols, size_t *off) {
    st_error e;
    return shim_ret(&e, st_ube_encode_symbols(text, len, symbols, cap, n_symbols, &e), off, "st_ube_encode_symbols");
}

static inline st_status t_ube_stream_feed(st_ube_stream *s, const uint16_t *symbols, size_t n, uint32_t flags,
                                          uint8_t *out, size_t cap, size_t *out_len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_ube_stream_feed(s, symbols, n, flags, out, cap, out_len, &e), off, "st_ube_stream_feed");
}

static inline st_status t_ube_decode_symbols(const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out,
                                             size_t cap, size_t *out_len, size_t *off) {
    st_error e;
    return shim_ret(&e, st_ube_decode_symbols(symbols, n, flags, out, cap, out_len, &e), off, "st_ube_decode_symbols");
}

#endif
