/* Unicode NFC normalization with an offset map (docs/design.md §4): HuggingFace tokenizers'
 * `NFC` normalizer, Unicode 9.0 tables (nfc_tables.h). */
#ifndef ST_NORMALIZE_H
#define ST_NORMALIZE_H

#include "../base/internal.h"

/* NFC output is at most this many times its input, in UTF-8 bytes (a character's full canonical
 * decomposition is at most 3 times its bytes, U+1D160; composing never lengthens). */
#define ST__NFC_MAX_EXPANSION 3

/* NFC of valid UTF-8 s[0..len) into out[0..cap) (out may be NULL when cap is 0), and, when map
 * is not NULL, for each output byte k < cap, map[k] = the byte offset in s of the start of the
 * input character it came from (within a combining sequence whose marks were reordered, the
 * smallest such offset of it and of what follows it in that sequence, so map never decreases).
 * Writes nothing at or past cap; returns the full output length. Text with no code point at or
 * above U+0300 comes back unchanged. Linear time: O(len) for any input (see normalize.c). */
size_t st__nfc(const uint8_t *s, size_t len, uint8_t *out, size_t *map, size_t cap);
/* 1 if NFC leaves s[0..len) (valid UTF-8) as it is by st__nfc's fast paths alone (every character
 * one NFC gives back, none composing with the one before): a check that writes nothing, for a
 * caller that would otherwise normalize into a copy to compare; 0 also for text that is NFC
 * but needs the full walk to tell. */
int st__nfc_unchanged(const uint8_t *s, size_t len);
/* 1 if cp is a starter (class 0) that is the second of a primary composite (for the tests: the
 * list normalize.c keeps against the tables). */
int st__nfc_starter_second(uint32_t cp);

#endif
