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

st_status st_utf8_validate(const char *text, size_t len, st_error *err) {
    const uint8_t *s = (const uint8_t *)text;
    size_t i = 0;
    st__error_clear(err);
    if (!text && len) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "text is NULL");
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
