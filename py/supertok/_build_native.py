"""cffi builder for the native backend: compiles core_c/src into the extension `supertok._native`.

Used by setup.py (`pip install .`); the declarations below are the subset of
core_c/include/supertok.h the Python layer calls. API mode compiles them against the real
header, so a mismatch is a build error, not a silent ABI bug. cffi releases the GIL around
every call, which the batch APIs rely on.
"""
import glob
import os

from cffi import FFI

ROOT = os.path.relpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

CDEF = """
typedef struct st_allocator st_allocator;
typedef struct st_pretokenizer st_pretokenizer;
const char *st_status_str(int status);
uint32_t st_version(void);
const char *st_version_str(void);
const char *st_unicode_version(void);
void *st_malloc(size_t size);
void st_free(void *ptr);
int st_script_of(uint32_t cp);
const char *st_script_name(int script);
int st_script_count(void);
int st_script_from_name(const char *name, size_t len);
int st_pretokenizer_new(int pattern, uint32_t flags, const char *scripts, size_t scripts_len,
                        const st_allocator *alloc, st_pretokenizer **out, size_t *err_offset);
void st_pretokenizer_free(st_pretokenizer *pt);
int st_pretokenize(const st_pretokenizer *pt, const char *text, size_t len, uint32_t flags,
                   size_t *ends, size_t cap, size_t *n_pieces, size_t *err_offset);
int st_pretokenize_join(const st_pretokenizer *pt, const char *text, size_t len, uint8_t sep,
                        uint8_t *out, size_t cap, size_t *out_len, size_t *err_offset);
int st_pretokenize_count(const st_pretokenizer *pt, const char *text, size_t len,
                         size_t *n_pieces, size_t *err_offset);
int st_utf8_validate(const char *text, size_t len, size_t *err_offset);
int st_ube_encode_symbols(const char *text, size_t len, uint16_t *symbols, size_t cap,
                          size_t *n_symbols, size_t *err_offset);
typedef struct st_ube_stream { ...; } st_ube_stream;
size_t st_ube_stream_size(void);
void st_ube_stream_init(st_ube_stream *s);
int st_ube_stream_feed(st_ube_stream *s, const uint16_t *symbols, size_t n, uint32_t flags,
                       uint8_t *out, size_t cap, size_t *out_len, size_t *err_offset);
int st_ube_decode_symbols(const uint16_t *symbols, size_t n, uint32_t flags, uint8_t *out,
                          size_t cap, size_t *out_len, size_t *err_offset);
typedef struct st_encoding st_encoding;
int st_encoding_new_tiktoken(const char *ranks, size_t ranks_len, const char *specials,
                             size_t specials_len, int pattern, const st_allocator *alloc,
                             st_encoding **out, size_t *err_offset, int *err_in_specials);
void st_encoding_free(st_encoding *enc);
int st_encoding_save_image(const st_encoding *enc, uint8_t *out, size_t cap, size_t *size);
int st_encoding_from_image(const void *image, size_t len, const st_allocator *alloc,
                           st_encoding **out, size_t *err_offset);
uint32_t st_encoding_n_vocab(const st_encoding *enc);
uint32_t st_encoding_n_special(const st_encoding *enc);
uint32_t st_encoding_special_id(const st_encoding *enc, uint32_t i);
int st_token_bytes(const st_encoding *enc, uint32_t id, const uint8_t **ptr, size_t *len);
int st_encode(const st_encoding *enc, const char *text, size_t len, const uint32_t *allowed_special,
              size_t n_allowed, uint32_t *ids, size_t *char_starts, size_t cap, size_t *n_ids,
              size_t *err_offset);
int st_encode_many(const st_encoding *enc, const char *texts, const size_t *offsets, size_t n_texts,
                   const uint32_t *allowed_special, size_t n_allowed, uint32_t *ids, size_t cap,
                   size_t *counts, size_t *n_ids, size_t *err_offset);
int st_encode_count(const st_encoding *enc, const char *text, size_t len,
                    const uint32_t *allowed_special, size_t n_allowed, size_t *n_tokens,
                    size_t *err_offset);
int st_decode(const st_encoding *enc, const uint32_t *ids, size_t n, uint8_t *out, size_t cap,
              size_t *out_len, size_t *err_offset);
"""

ffibuilder = FFI()
ffibuilder.cdef(CDEF)
ffibuilder.set_source(
    "supertok._native",
    '#include "supertok.h"',
    sources=sorted(glob.glob(os.path.join(ROOT, "core_c", "src", "*.c"))),
    include_dirs=[os.path.join(ROOT, "core_c", "include")],
    extra_compile_args=["-O2", "-std=c11"] if os.name != "nt" else ["/O2"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
