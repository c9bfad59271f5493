/* Base64 (base64.h). No libc: the core is freestanding. */
#include "base64.h"

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* 0..63 for the alphabet, 64 for anything else */
static const uint8_t values[256] = {
#define X64 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64
    X64, X64,
    64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 62, 64, 64, 64, 63,
    52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 64, 64, 64, 64, 64, 64,
    64, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
    15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 64, 64, 64, 64, 64,
    64, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
    41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 64, 64, 64, 64, 64,
    X64, X64, X64, X64, X64, X64, X64, X64
#undef X64
};

static int value(uint8_t c) { return values[c] == 64 ? -1 : values[c]; }

long st__base64_decoded_length(const uint8_t *s, size_t n) {
    if (n == 0 || n % 4) return -1;
    size_t pad = (size_t)(s[n - 1] == '=') + (size_t)(s[n - 2] == '=');
    return (long)(n / 4 * 3 - pad);
}

long st__base64_decode(const uint8_t *s, size_t n, uint8_t *out) {
    if (n == 0 || n % 4) return -1;
    size_t pad = 0;
    if (s[n - 1] == '=') pad++;
    if (s[n - 2] == '=') pad++;
    size_t len = n / 4 * 3 - pad, o = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (size_t k = 0; k < 4; k++) {
            if (s[i + k] == '=' && i + 4 == n && k + pad >= 4) v[k] = 0;
            else if ((v[k] = value(s[i + k])) < 0) return -1;
        }
        uint32_t w = ((uint32_t)v[0] << 18) | ((uint32_t)v[1] << 12) | ((uint32_t)v[2] << 6) | (uint32_t)v[3];
        uint8_t b[3] = {(uint8_t)(w >> 16), (uint8_t)(w >> 8), (uint8_t)w};
        for (int k = 0; k < 3 && o < len; k++, o++)
            if (out) out[o] = b[k];
    }
    return (long)len;
}

int st__base64_canonical(const uint8_t *s, size_t n) {
    if (n == 0 || n % 4) return 0;
    size_t pad = (s[n - 1] == '=') + (size_t)(s[n - 2] == '=' && s[n - 1] == '=');
    for (size_t i = 0; i < n - pad; i++)
        if (value(s[i]) < 0) return 0;
    if (pad == 1 && (value(s[n - 2]) & 3)) return 0;
    if (pad == 2 && (value(s[n - 3]) & 15)) return 0;
    return 1;
}

size_t st__base64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }

void st__base64_encode(const uint8_t *s, size_t n, uint8_t *out) {
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t w = (uint32_t)s[i] << 16;
        if (i + 1 < n) w |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n) w |= s[i + 2];
        out[o++] = (uint8_t)alphabet[(w >> 18) & 63];
        out[o++] = (uint8_t)alphabet[(w >> 12) & 63];
        out[o++] = i + 1 < n ? (uint8_t)alphabet[(w >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? (uint8_t)alphabet[w & 63] : '=';
    }
}
