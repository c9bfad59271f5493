/* UTF-8 validation: the gate every text passes before a scanner sees it, so the scanners
 * can decode without bounds or validity checks. */
#include "internal.h"

st_status st_utf8_validate(const char *text, size_t len, st_error *err) {
    const uint8_t *s = (const uint8_t *)text;
    size_t i = 0;
    st__error_clear(err);
    if (!text && len) return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "text is NULL");
    while (i < len) {
        /* ASCII fast path, 8 bytes at a time */
        while (i + 8 <= len) {
            uint64_t w;
            st__memcpy(&w, s + i, 8);
            if (w & 0x8080808080808080ull) break;
            i += 8;
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
