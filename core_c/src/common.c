/* Status messages, version, and allocator plumbing. */
#include "internal.h"
#include "unicode_tables.h"

const char *st_status_str(int status) {
    switch (status) {
    case ST_OK: return "ok";
    case ST_ERR_INVALID_ARGUMENT: return "invalid argument";
    case ST_ERR_OUT_OF_MEMORY: return "out of memory";
    case ST_ERR_INVALID_UTF8: return "invalid UTF-8";
    case ST_ERR_BUFFER_TOO_SMALL: return "output buffer too small";
    case ST_ERR_UNKNOWN_PATTERN: return "unknown pre-tokenizer pattern";
    case ST_ERR_UNKNOWN_SCRIPT: return "unknown script name";
    case ST_ERR_MALFORMED_MODEL: return "malformed model file";
    case ST_ERR_INVALID_TOKEN: return "invalid token id";
    case ST_ERR_NOT_ENCODABLE: return "a byte has no token in this vocabulary";
    case ST_ERR_DISALLOWED_SPECIAL: return "the text holds a disallowed special token";
    case ST_ERR_UNSUPPORTED_PATTERN: return "no pre-tokenizer implements this pattern";
    default: return "unknown status";
    }
}

#define ST_STR2(x) #x
#define ST_STR(x) ST_STR2(x)

uint32_t st_version(void) {
    return ((uint32_t)ST_VERSION_MAJOR << 16) | ((uint32_t)ST_VERSION_MINOR << 8) | ST_VERSION_PATCH;
}

const char *st_version_str(void) {
    return ST_STR(ST_VERSION_MAJOR) "." ST_STR(ST_VERSION_MINOR) "." ST_STR(ST_VERSION_PATCH);
}

const char *st_unicode_version(void) { return st_ucd_unicode_version; }

void *st_malloc(size_t size) { return st__platform_alloc(size); }
void st_free(void *ptr) { st__platform_free(ptr); }

static void *default_alloc(void *ctx, size_t size) { (void)ctx; return st__platform_alloc(size); }
static void default_free(void *ctx, void *ptr, size_t size) { (void)ctx; (void)size; st__platform_free(ptr); }

void st__allocator_init(st_allocator *dst, const st_allocator *src) {
    if (src && src->alloc && src->free) {
        *dst = *src;
    } else {
        dst->alloc = default_alloc;
        dst->free = default_free;
        dst->ctx = NULL;
    }
}

void *st__alloc(const st_allocator *a, size_t size) { return a->alloc(a->ctx, size); }
void st__free(const st_allocator *a, void *ptr, size_t size) { if (ptr) a->free(a->ctx, ptr, size); }
