/* UTF-8 validation: the gate every text passes before a scanner sees it, so the scanners
 * can decode without bounds or validity checks. */
#include "utf8.h"

#define U8_BYTES(x) (0x0101010101010101ull * (uint64_t)(x))

/* The eight bytes at p as a little-endian word on any host (one load where the host is
 * little-endian: compilers fold the shifts). */
static inline uint64_t u8_load(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* Bit 7 of each byte of x (every byte of x below 0x80) that is zero. */
static inline uint64_t u8_zero(uint64_t x) { return ~((x + U8_BYTES(0x7F)) | x) & U8_BYTES(0x80); }

/* The fast path for blocks of eight bytes: ASCII and two- and three-byte characters. Non-Latin
 * text has a non-ASCII byte in nearly every block, and a test per character there cost 10-16
 * instructions a byte (Russian, Hindi). Each byte's kind is read from its top bits, moved to
 * bit 7 by shifts (w << k moves bit 7-k of each byte to bit 7): 10xxxxxx continues a
 * character, 110xxxxx leads two bytes, 1110xxxx three. The bytes are valid when the
 * continuation bytes are exactly those the leads call for (a character cut by the block's end
 * carries its continuations into the next block), with no C0/C1 lead (overlong), no E0
 * followed by 80-9F (overlong), no ED followed by A0-BF (surrogates). Anything else (a four-byte
 * character, any error) stops the fast path at the start of the character where it could not
 * go on, and the checks below take over there. Returns the new position. */
static size_t u8_fast(const uint8_t *s, size_t i, size_t len) {
    const uint64_t H = U8_BYTES(0x80);
    uint64_t carry = 0; /* continuation bytes the last block's cut character calls for */
    uint64_t e0_next = 0, ed_next = 0; /* ... when that character is led by E0, ED */
    while (len - i >= 8) {
        uint64_t w = u8_load(s + i);
        if (!((w & H) | carry)) { /* ASCII: a loop of its own, so it keeps nothing else in registers */
            do i += 8;
            while (len - i >= 8 && !(u8_load(s + i) & H));
            continue;
        }
        uint64_t hi = w & H, b6 = (w << 1) & H, b5 = (w << 2) & H;
        uint64_t cont = hi & ~b6, lead = hi & b6;
        uint64_t lead2 = lead & ~b5, lead3 = lead & b5;
        uint64_t want = (lead2 << 8) | (lead3 << 8) | (lead3 << 16) | carry;
        if (((lead3 & (w << 3)) | (want ^ cont)) & H) break; /* F0-FF, or a continuation amiss */
        if (lead2 & u8_zero(w & U8_BYTES(0x1E))) break; /* C0, C1 */
        uint64_t e0 = 0, ed = 0;
        if (lead3) {
            e0 = lead3 & u8_zero(w & U8_BYTES(0x0F));
            ed = lead3 & u8_zero((w ^ U8_BYTES(0x0D)) & U8_BYTES(0x0F));
        }
        /* the byte after E0 needs bit 5 set, after ED clear (the last block's too) */
        if ((((e0 << 8) | e0_next) & ~b5) | (((ed << 8) | ed_next) & b5)) break;
        e0_next = e0 >> 56;
        ed_next = ed >> 56;
        carry = (lead2 >> 56) | (lead3 >> 56) | (lead3 >> 48);
        i += 8;
    }
    if (carry) /* back to the lead of the character the last block cut */
        do i--;
        while ((s[i] & 0xC0) == 0x80);
    return i;
}

#if ST_X86_DISPATCH
/* The AVX2 kernel: 32 bytes a block, by the lookup method of Keiser and Lemire ("Validating UTF-8
 * in less than one instruction per byte", 2021). Each byte is checked against the three before
 * it: three 16-entry tables, indexed by the high and low halves of the byte before and the high
 * half of this one, give each a set of error kinds it could be part of; a byte is in error when
 * the three sets share one (two continuation bytes in a row being an error unless the byte two
 * or three back leads a three- or four-byte character, which flips that bit). It only says
 * where the valid text ends, never why: it reads 128 bytes a step (a step with an error again
 * by blocks), stops at the first block with an error, or before the last 32 bytes, and returns
 * the start of the character that block (or the end) cuts, so the scalar checks below go on
 * from a character boundary and report any error themselves. */
#define E_SHORT 0x01     /* a lead not followed by a continuation */
#define E_LONG 0x02      /* a continuation after ASCII */
#define E_OVERLONG3 0x04 /* E0 80-9F */
#define E_LARGE 0x08     /* F4 90-BF, F5-FF */
#define E_SURROGATE 0x10 /* ED A0-BF */
#define E_OVERLONG2 0x20 /* C0, C1 */
#define E_LARGE1000 0x40 /* F5-FF 80-8F; also F0 80-8F, overlong (the same bit: the leads differ) */
#define E_TWO_CONTS 0x80 /* a continuation after a continuation (valid in the 3rd and 4th byte) */
#define E_CARRY (E_SHORT | E_LONG | E_TWO_CONTS)

ST_TARGET_AVX2 static inline __m256i prev_bytes(__m256i in, __m256i before, int k) {
    /* the 32 bytes k places back: the last k of before, then in's first 32 - k */
    __m256i joined = _mm256_permute2x128_si256(before, in, 0x21);
    switch (k) {
    case 1: return _mm256_alignr_epi8(in, joined, 15);
    case 2: return _mm256_alignr_epi8(in, joined, 14);
    default: return _mm256_alignr_epi8(in, joined, 13);
    }
}

#define T16(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)                                                            \
    _mm256_setr_epi8((char)(a), (char)(b), (char)(c), (char)(d), (char)(e), (char)(f), (char)(g), (char)(h),         \
                     (char)(i), (char)(j), (char)(k), (char)(l), (char)(m), (char)(n), (char)(o), (char)(p),         \
                     (char)(a), (char)(b), (char)(c), (char)(d), (char)(e), (char)(f), (char)(g), (char)(h),         \
                     (char)(i), (char)(j), (char)(k), (char)(l), (char)(m), (char)(n), (char)(o), (char)(p))

typedef struct u8_tables {
    __m256i by_prev_high, by_prev_low, by_high;
} u8_tables;

/* The error kinds of each of in's 32 bytes (before: the 32 bytes in front of them); all zero when
 * every byte is right where it stands. */
ST_TARGET_AVX2 static inline __m256i block_errors(__m256i in, __m256i before, const u8_tables *t) {
    const __m256i nibble = _mm256_set1_epi8(0x0F), high_bit = _mm256_set1_epi8((char)0x80);
    const __m256i third = _mm256_set1_epi8((char)(0xE0 - 0x80)), fourth = _mm256_set1_epi8((char)(0xF0 - 0x80));
    __m256i p1 = prev_bytes(in, before, 1);
    __m256i e = _mm256_and_si256(
        _mm256_and_si256(_mm256_shuffle_epi8(t->by_prev_high, _mm256_and_si256(_mm256_srli_epi16(p1, 4), nibble)),
                         _mm256_shuffle_epi8(t->by_prev_low, _mm256_and_si256(p1, nibble))),
        _mm256_shuffle_epi8(t->by_high, _mm256_and_si256(_mm256_srli_epi16(in, 4), nibble)));
    /* the bytes that must continue a character: the third and fourth of one (bit 7 set) */
    __m256i must_continue = _mm256_and_si256(
        _mm256_or_si256(_mm256_subs_epu8(prev_bytes(in, before, 2), third), _mm256_subs_epu8(prev_bytes(in, before, 3), fourth)),
        high_bit);
    return _mm256_xor_si256(e, must_continue);
}

ST_TARGET_AVX2 static size_t valid_prefix_avx2(const uint8_t *s, size_t len) {
    u8_tables t;
    const int C = E_CARRY, L = E_CARRY | E_LARGE | E_LARGE1000; /* by the low half: any byte, F5-FF */
    t.by_prev_high = T16(E_LONG, E_LONG, E_LONG, E_LONG, E_LONG, E_LONG, E_LONG, E_LONG, /* 0-7: ASCII */
                         E_TWO_CONTS, E_TWO_CONTS, E_TWO_CONTS, E_TWO_CONTS,             /* 8-B: continuation */
                         E_SHORT | E_OVERLONG2, E_SHORT,                                  /* C, D */
                         E_SHORT | E_OVERLONG3 | E_SURROGATE,                             /* E */
                         E_SHORT | E_LARGE | E_LARGE1000);                                /* F */
    t.by_prev_low = T16(C | E_OVERLONG3 | E_OVERLONG2 | E_LARGE1000, C | E_OVERLONG2, C, C, /* 0-3 */
                        C | E_LARGE, L, L, L, L, L, L, L, L,                            /* 4-C */
                        L | E_SURROGATE, L, L);                                         /* D-F */
    t.by_high = T16(E_SHORT, E_SHORT, E_SHORT, E_SHORT, E_SHORT, E_SHORT, E_SHORT, E_SHORT, /* 0-7 */
                    E_LONG | E_OVERLONG2 | E_TWO_CONTS | E_OVERLONG3 | E_LARGE1000,       /* 8 */
                    E_LONG | E_OVERLONG2 | E_TWO_CONTS | E_OVERLONG3 | E_LARGE,           /* 9 */
                    E_LONG | E_OVERLONG2 | E_TWO_CONTS | E_SURROGATE | E_LARGE,           /* A */
                    E_LONG | E_OVERLONG2 | E_TWO_CONTS | E_SURROGATE | E_LARGE,           /* B */
                    E_SHORT, E_SHORT, E_SHORT, E_SHORT);                                 /* C-F */
    __m256i before = _mm256_setzero_si256(); /* the text starts as if after ASCII */
    int before_ascii = 1;
    size_t i = 0;
    /* 128 bytes a step, their errors tested once (a branch a block mispredicts on text where
     * ASCII and other blocks alternate, as in German); a step with an error is read again a
     * block at a time below, to stop at that block */
    for (; len - i >= 128; i += 128) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 64));
        __m256i d = _mm256_loadu_si256((const __m256i *)(const void *)(s + i + 96));
        if (before_ascii && !_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d)))) {
            before = d;
            continue;
        }
        __m256i e = _mm256_or_si256(_mm256_or_si256(block_errors(a, before, &t), block_errors(b, a, &t)),
                                    _mm256_or_si256(block_errors(c, b, &t), block_errors(d, c, &t)));
        if (!_mm256_testz_si256(e, e)) break;
        before = d;
        before_ascii = !_mm256_movemask_epi8(d);
    }
    for (; len - i >= 32; i += 32) {
        __m256i in = _mm256_loadu_si256((const __m256i *)(const void *)(s + i));
        int ascii = !_mm256_movemask_epi8(in);
        if (!(ascii && before_ascii)) {
            __m256i e = block_errors(in, before, &t);
            if (!_mm256_testz_si256(e, e)) break;
        }
        before = in;
        before_ascii = ascii;
    }
    /* back to the lead of a character cut at i (the blocks before i passed every check, so one
     * of the three bytes before i is a lead or ASCII, or the three end a four-byte character) */
    for (size_t k = 1; k <= 3 && k <= i; k++) {
        uint8_t b = s[i - k];
        if ((b & 0xC0) != 0x80) return b >= 0xC0 ? i - k : i;
    }
    return i;
}
#endif

size_t st__utf8_valid_prefix(const uint8_t *s, size_t len) {
#if ST_X86_DISPATCH
    if (len >= 64 && st__cpu_has_avx2()) return valid_prefix_avx2(s, len);
#endif
    (void)s;
    (void)len;
    return 0;
}

st_status st_utf8_validate(const char *text, size_t len, st_error *err) {
    if (!text && len) {
        st__error_clear(err);
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "text is NULL");
    }
    return st__utf8_validate_from(text, len, st__utf8_valid_prefix((const uint8_t *)text, len), err);
}

st_status st__utf8_validate_from(const char *text, size_t len, size_t i, st_error *err) {
    const uint8_t *s = (const uint8_t *)text;
    st__error_clear(err);
    while (i < len) {
        i = u8_fast(s, i, len); /* eight bytes at a time */
        if (i >= len) break;
        uint8_t b = s[i];
        if (b < 0x80) { i++; continue; }
        /* Fast paths for the characters of most non-Latin text, taken only when the sequence
         * is valid: two bytes (Cyrillic, Greek, Hebrew, Arabic: any lead C2-DF) and three bytes
         * whose lead has no narrower second-byte range (E1-EC, EE-EF: CJK, Indic, Thai). Each
         * keeps going while the next character is of the same length, without returning to the
         * eight-byte ASCII test, which a non-Latin text fails at almost every character. Anything
         * else (and every error, so its position and message) goes through the checks below. */
        if ((uint8_t)(b - 0xC2) < 30) {
            size_t k = i;
            while (len - k >= 2 && (uint8_t)(s[k] - 0xC2) < 30 && (s[k + 1] & 0xC0) == 0x80) k += 2;
            if (k > i) { i = k; continue; }
        } else if ((uint8_t)(b - 0xE1) < 15 && b != 0xED) {
            size_t k = i;
            while (len - k >= 3 && (uint8_t)(s[k] - 0xE1) < 15 && s[k] != 0xED && (s[k + 1] & 0xC0) == 0x80 &&
                   (s[k + 2] & 0xC0) == 0x80)
                k += 3;
            if (k > i) { i = k; continue; }
        }
        size_t need;
        uint32_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
        if (b >= 0xC2 && b <= 0xDF) need = 1;
        else if (b >= 0xE0 && b <= 0xEF) {
            need = 2;
            if (b == 0xE0) lo = 0xA0;      /* no overlongs */
            else if (b == 0xED) hi = 0x9F; /* no surrogates */
        } else if (b >= 0xF0 && b <= 0xF4) {
            need = 3;
            if (b == 0xF0) lo = 0x90;      /* no overlongs */
            else if (b == 0xF4) hi = 0x8F; /* nothing above U+10FFFF */
        } else {
            return st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, i, NULL);
        }
        if (len - i <= need) return st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, i, "truncated sequence");
        if (s[i + 1] < lo || s[i + 1] > hi) return st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, i, NULL);
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80) return st__error_set(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, i, NULL);
        i += need + 1;
    }
    return ST_OK;
}
