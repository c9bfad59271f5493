/* Base64 (RFC 4648, standard alphabet, padded): the token text of rank files and model files. */
#ifndef ST_BASE64_H
#define ST_BASE64_H

#include "../base/platform.h"

/* Decoded length of padded base64 text of n characters, -1 if n is no such length (the
 * characters are not checked). */
long st__base64_decoded_length(const uint8_t *s, size_t n);
/* Decoded length of s[0..n), or -1 if it is not valid padded base64 (the bits past the data
 * need not be zero, as tiktoken's loader takes them). Writes the bytes to out if given. */
long st__base64_decode(const uint8_t *s, size_t n, uint8_t *out);
/* 1 if s[0..n) is canonical padded base64 of at least one byte (the bits past the data zero,
 * as every encoder writes them): tiktoken's files are, and a model file must be. */
int st__base64_canonical(const uint8_t *s, size_t n);
/* The length of n bytes in base64, and the text itself (st__base64_encoded_len(n) bytes at out). */
size_t st__base64_encoded_len(size_t n);
void st__base64_encode(const uint8_t *s, size_t n, uint8_t *out);

#endif
