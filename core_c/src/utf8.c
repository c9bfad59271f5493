/* UTF-8 validation: the gate every text passes before a scanner sees it, so the scanners
 * can decode without bounds or validity checks. */
#include "internal.h"

#define U8_BYTES(x) (0x0101010101010101ull * (uint64_t)(x))

/* The eight bytes at p as a little-endian word on any host (one load where the host is
 * little-endian: compilers fold the shifts). */
static inline uint64_t u8_load(const uint8_t *p) {
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
}

/* Bit 7 of each byte of x (every byte of x below 0x80) that is zero. */
static inline uint64_t u8_zero(uint64_t x) { return ~((x + U8_BYTES(0x7F)) | x) & U8_BYTES(0x80); }

/* Eight bytes w (little-endian) starting on a character boundary, as a block of ASCII and of
 * two- and three-byte characters: how many of its first bytes (6 to 8) are whole valid
 * characters, or 0 if the block needs the checks character by character (a four-byte
 * character, an error, or a character cut by the block's end in a way the rule below does not
 * cover). Non-Latin text has a non-ASCII byte in nearly every block, and a test per byte there
 * cost 10-16 instructions a byte (Russian, Hindi); this costs a few per byte. Each byte's
 * kind is read from its top bits, moved to bit 7 by shifts (w << k moves bit 7-k of each
 * byte to its bit 7): 10xxxxxx continues a character, 110xxxxx leads two bytes, 1110xxxx
 * three. The block is valid when the continuation bytes are exactly those the leads call for,
 * with no C0/C1 lead (overlong), no E0 followed by 80-9F (overlong) and no ED followed by
 * A0-BF (surrogates); a lead whose character runs past the block ends it early. */
static inline size_t u8_block(uint64_t w) {
    const uint64_t H = U8_BYTES(0x80);
    uint64_t hi = w & H, b6 = (w << 1) & H, b5 = (w << 2) & H, b4 = (w << 3) & H;
    uint64_t cont = hi & ~b6, lead = hi & b6;
    if (lead & b5 & b4) return 0; /* F0-FF: four bytes, or never valid */
    uint64_t lead2 = lead & ~b5, lead3 = lead & b5;
    /* a character that the block's end cuts: the block ends before its lead */
    uint64_t cut = (lead2 & ((uint64_t)0x80 << 56)) | (lead3 & ((uint64_t)0x8080 << 48));
    size_t n = cut ? (size_t)__builtin_ctzll(cut) >> 3 : 8;
    uint64_t keep = n == 8 ? ~0ull : ((uint64_t)1 << (8 * n)) - 1;
    lead2 &= keep;
    lead3 &= keep;
    uint64_t want = (lead2 << 8) | (lead3 << 8) | (lead3 << 16);
    if (want & ~keep || (want ^ cont) & keep) return 0;
    uint64_t e0 = lead3 & u8_zero(w & U8_BYTES(0x0F));
    uint64_t ed = lead3 & u8_zero((w ^ U8_BYTES(0x0D)) & U8_BYTES(0x0F));
    if ((lead2 & u8_zero(w & U8_BYTES(0x1E))) || ((e0 << 8) & ~b5) || ((ed << 8) & b5)) return 0;
    return n;
}

st_status st_utf8_validate(const char *text, size_t len, st_error *err) {
    const uint8_t *s = (const uint8_t *)text;
    size_t i = 0;
    st__error_clear(err);
    if (!text && len) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "text is NULL");
    while (i < len) {
        /* eight bytes at a time: ASCII, and blocks of two- and three-byte characters */
        while (len - i >= 8) {
            uint64_t w = u8_load(s + i);
            if (!(w & U8_BYTES(0x80))) { i += 8; continue; }
            size_t n = u8_block(w);
            if (!n) break;
            i += n;
        }
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
