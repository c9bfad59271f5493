// libFuzzer harness for the UBE streaming decoder's caller-owned state (st_ube_stream_feed).
//
// Build (from the repository root; Debian: apt-get install clang libclang-rt-14-dev):
//
//   clang -std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
//         -Icore_c/include core_c/src/*/*.c core_c/tests/fuzz_ube_stream.c -o fuzz_ube_stream
//   ./fuzz_ube_stream -max_total_time=60
//
// The caller owns the state (a wasm host keeps it in linear memory), so every byte of it may be
// damaged. Each input is: the state's bytes (st_ube_stream_size() of them, copied over the
// struct as they are, padding included), one flags byte, one byte picking the output capacity,
// then symbols (2 bytes each, little-endian; above 511 too). Checked, under ASan and UBSan:
//  - the call never writes past out[0..cap) nor past the state (ASan: both are exact-size heap
//    blocks), and returns ST_OK, ST_ERR_INVALID_ARGUMENT (a damaged state), ST_ERR_INVALID_TOKEN,
//    ST_ERR_INVALID_UTF8 (strict) or ST_ERR_BUFFER_TOO_SMALL;
//  - on every error the state is byte for byte what it was;
//  - on ST_OK the output is valid UTF-8 of at most 3 n + 3 bytes, and the state it leaves is one
//    the call accepts again (a flush with ST_UBE_FINAL gives ST_OK and valid UTF-8);
//  - a state the call accepted decodes the same symbols fed in one call or one by one.
//
// Without libFuzzer the same file builds a random driver: cc -DST_FUZZ_MAIN ... fuzz_ube_stream.c,
// then "fuzz_ube_stream N SEED" runs N random inputs (half of them from states a valid stream
// left, half from random bytes), and names the failing input.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"
#include "fuzz_support.h"

static void fail(const char *what, const uint8_t *data, size_t size) {
    fprintf(stderr, "invariant broken: %s\ninput (%zu bytes):", what, size);
    for (size_t i = 0; i < size && i < 256; i++) fprintf(stderr, " %02x", data[i]);
    fprintf(stderr, "\n");
    abort();
}

static int valid_utf8(const uint8_t *p, size_t n) { return st_utf8_validate((const char *)p, n, NULL) == ST_OK; }

/* Feed syms to a copy of *state in one call; the output into a fresh exact-size buffer. */
static st_status feed(st_ube_stream *state, const uint16_t *syms, size_t n, uint32_t flags, size_t cap, uint8_t **out,
                      size_t *len) {
    *out = (uint8_t *)malloc(cap ? cap : 1);
    st_error err;
    return st_ube_stream_feed(state, n ? syms : NULL, n, flags, cap ? *out : NULL, cap, len, &err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    size_t ss = st_ube_stream_size();
    if (ss != sizeof(st_ube_stream)) fail("st_ube_stream_size is not the struct's size", data, size);
    if (size < ss + 2) return 0;
    st_ube_stream *s = (st_ube_stream *)malloc(ss), *before = (st_ube_stream *)malloc(ss);
    memcpy(s, data, ss);
    memcpy(before, data, ss);
    uint32_t flags = data[ss] & (ST_UBE_FINAL | ST_UBE_STRICT);
    size_t n = (size - ss - 2) / 2;
    uint16_t *syms = (uint16_t *)malloc((n ? n : 1) * sizeof *syms);
    for (size_t k = 0; k < n; k++) syms[k] = (uint16_t)(data[ss + 2 + 2 * k] | (data[ss + 3 + 2 * k] << 8));
    /* capacity: enough (3 n + 3), or short by a byte-picked amount */
    size_t full = 3 * n + 3, cap = data[ss + 1] < 128 ? full : (size_t)(data[ss + 1] - 128) % (full + 1);
    uint8_t *out;
    size_t len = 0;
    st_status st = feed(s, syms, n, flags, cap, &out, &len);
    if (st != ST_OK) {
        if (st != ST_ERR_INVALID_ARGUMENT && st != ST_ERR_INVALID_TOKEN && st != ST_ERR_INVALID_UTF8 &&
            st != ST_ERR_BUFFER_TOO_SMALL)
            fail("an unexpected status", data, size);
        if (memcmp(s, before, ss) != 0) fail("an error changed the state", data, size);
    } else {
        if (len > full || len > cap) fail("output longer than 3 n + 3 or than cap", data, size);
        if (!valid_utf8(out, len)) fail("output is not valid UTF-8", data, size);
        /* the state left is accepted again: a flush */
        uint8_t *o2;
        size_t l2 = 0;
        st_ube_stream *s2 = (st_ube_stream *)malloc(ss);
        memcpy(s2, s, ss);
        if (feed(s2, NULL, 0, ST_UBE_FINAL, 3, &o2, &l2) != ST_OK || !valid_utf8(o2, l2))
            fail("the state a feed left is refused", data, size);
        free(o2);
        free(s2);
        /* the same symbols one at a time give the same text and state (the state's padding aside) */
        if (cap == full) {
            st_ube_stream *s3 = (st_ube_stream *)malloc(ss);
            memcpy(s3, before, ss);
            uint8_t *acc = (uint8_t *)malloc(full);
            size_t an = 0;
            for (size_t k = 0; k < n; k++) {
                uint8_t *o3;
                size_t l3 = 0;
                uint32_t f = k + 1 == n ? flags : flags & ST_UBE_STRICT;
                if (feed(s3, syms + k, 1, f, 6, &o3, &l3) != ST_OK) fail("one symbol at a time fails", data, size);
                memcpy(acc + an, o3, l3);
                an += l3;
                free(o3);
            }
            if (n == 0 && (flags & ST_UBE_FINAL)) {
                uint8_t *o3;
                size_t l3 = 0;
                if (feed(s3, NULL, 0, flags, 3, &o3, &l3) != ST_OK) fail("a flush fails", data, size);
                memcpy(acc + an, o3, l3);
                an += l3;
                free(o3);
            }
            if (an != len || memcmp(acc, out, len) != 0) fail("one call and one symbol a call differ", data, size);
            if (s3->alphabet != s->alphabet || s3->n_pending != s->n_pending || s3->base != s->base ||
                (s3->n_pending && (s3->run_start != s->run_start || memcmp(s3->pending, s->pending, s3->n_pending))))
                fail("one call and one symbol a call leave different states", data, size);
            free(acc);
            free(s3);
        }
    }
    free(out);
    free(syms);
    free(s);
    free(before);
    return 0;
}

#ifdef ST_FUZZ_MAIN
/* A symbol: mostly valid text's (ASCII, UTF-8 lead and continuation bytes, UTF-16 units and
 * surrogates), sometimes anything below 512, rarely above. */
static uint16_t rnd_symbol(void) {
    switch (rnd() % 8) {
    case 0: return (uint16_t)(rnd() % 128);
    case 1: return (uint16_t)(0x80 + rnd() % 64);
    case 2: return (uint16_t)(0xC2 + rnd() % 0x33);
    case 3: return (uint16_t)(256 + rnd() % 256);
    case 4: return (uint16_t)(256 + 0xD8 + rnd() % 8);
    case 5: return (uint16_t)(256 + 0xDC + rnd() % 4);
    case 6: return (uint16_t)(rnd() % 512);
    default: return (uint16_t)(rnd() % 16 ? rnd() % 512 : rnd());
    }
}

int main(int argc, char **argv) {
    long iters = argc > 1 ? atol(argv[1]) : 20000;
    g_rng = (uint64_t)(argc > 2 ? atoll(argv[2]) : 1) * 0x9E3779B97F4A7C15ull + 1;
    size_t ss = st_ube_stream_size();
    long refused = 0;
    for (long it = 0; it < iters; it++) {
        uint8_t buf[512];
        st_ube_stream s;
        if (it % 2 == 0) { /* a state a valid stream left, then maybe one field damaged */
            st_ube_stream_init(&s);
            uint16_t pre[8];
            size_t pn = (size_t)(rnd() % 8);
            for (size_t k = 0; k < pn; k++) pre[k] = (uint16_t)(rnd_symbol() % 512);
            uint8_t tmp[32];
            size_t tl;
            (void)st_ube_stream_feed(&s, pn ? pre : NULL, pn, 0, tmp, sizeof tmp, &tl, NULL);
            switch (rnd() % 6) {
            case 0: s.n_pending = (uint8_t)rnd(); break;
            case 1: s.alphabet = (uint8_t)rnd(); break;
            case 2: s.pending[rnd() % 4] = (uint8_t)rnd(); break;
            case 3: s.run_start = (size_t)rnd(); break;
            case 4: s.base = (size_t)rnd(); break;
            default: break; /* as the stream left it */
            }
            memcpy(buf, &s, ss);
        } else { /* random bytes: small fields mostly, so some states are valid */
            for (size_t i = 0; i < ss; i++) buf[i] = (uint8_t)rnd();
            memcpy(&s, buf, ss);
            if (rnd() % 2) s.alphabet = (uint8_t)(rnd() % 3);
            if (rnd() % 2) s.n_pending = (uint8_t)(rnd() % 6);
            if (rnd() % 2) s.run_start = s.base - s.n_pending;
            memcpy(buf, &s, ss);
        }
        size_t n = (size_t)(rnd() % 40);
        buf[ss] = (uint8_t)rnd();
        buf[ss + 1] = (uint8_t)(rnd() % 4 ? rnd() % 128 : rnd());
        for (size_t k = 0; k < n; k++) {
            uint16_t y = rnd_symbol();
            buf[ss + 2 + 2 * k] = (uint8_t)y;
            buf[ss + 3 + 2 * k] = (uint8_t)(y >> 8);
        }
        size_t size = ss + 2 + 2 * n;
        uint8_t *exact = (uint8_t *)malloc(size);
        memcpy(exact, buf, size);
        st_ube_stream probe;
        memcpy(&probe, exact, ss);
        uint8_t o[8];
        size_t ol;
        if (st_ube_stream_feed(&probe, NULL, 0, 0, o, sizeof o, &ol, NULL) == ST_ERR_INVALID_ARGUMENT) refused++;
        LLVMFuzzerTestOneInput(exact, size);
        free(exact);
    }
    printf("fuzz_ube_stream: %ld random states and inputs (%ld states refused as damaged), no invariant broken\n", iters,
           refused);
    return 0;
}
#endif
