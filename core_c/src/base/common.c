/* Status messages, version, and allocator plumbing. */
#include "internal.h"

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
void *st__realloc(const st_allocator *a, void *ptr, size_t old, size_t size) {
    if (!ptr) return a->alloc(a->ctx, size);
    if (a->alloc == default_alloc) return st__platform_realloc(ptr, old, size);
    void *p = a->alloc(a->ctx, size);
    if (!p) return NULL;
    st__memcpy(p, ptr, old < size ? old : size);
    a->free(a->ctx, ptr, old);
    return p;
}
void *st__realloc_grow(const st_allocator *a, void *ptr, size_t *cap, size_t need, size_t most, size_t elem) {
    if (need > most || need > (size_t)-1 / elem) return NULL;
    size_t more = need;
    if (st__realloc_gives_back(a)) {
        more = st__platform_grow_bytes(need * elem) / elem;
        if (more < need) more = need;
        if (more > most) more = most;
    }
    void *p = st__realloc(a, ptr, *cap * elem, more * elem);
    if (!p && more > need) p = st__realloc(a, ptr, *cap * elem, (more = need) * elem);
    if (p) *cap = more;
    return p;
}
int st__realloc_gives_back(const st_allocator *a) {
#if ST_FREESTANDING
    (void)a;
    return 0; /* wasm memory never shrinks */
#else
    return a->alloc == default_alloc;
#endif
}

const char *st_status_name(int status) {
    switch (status) {
    case ST_OK: return "ST_OK";
    case ST_ERR_INVALID_ARGUMENT: return "ST_ERR_INVALID_ARGUMENT";
    case ST_ERR_OUT_OF_MEMORY: return "ST_ERR_OUT_OF_MEMORY";
    case ST_ERR_INVALID_UTF8: return "ST_ERR_INVALID_UTF8";
    case ST_ERR_BUFFER_TOO_SMALL: return "ST_ERR_BUFFER_TOO_SMALL";
    case ST_ERR_UNKNOWN_PATTERN: return "ST_ERR_UNKNOWN_PATTERN";
    case ST_ERR_UNKNOWN_SCRIPT: return "ST_ERR_UNKNOWN_SCRIPT";
    case ST_ERR_MALFORMED_MODEL: return "ST_ERR_MALFORMED_MODEL";
    case ST_ERR_INVALID_TOKEN: return "ST_ERR_INVALID_TOKEN";
    case ST_ERR_NOT_ENCODABLE: return "ST_ERR_NOT_ENCODABLE";
    case ST_ERR_DISALLOWED_SPECIAL: return "ST_ERR_DISALLOWED_SPECIAL";
    case ST_ERR_UNSUPPORTED_PATTERN: return "ST_ERR_UNSUPPORTED_PATTERN";
    default: return NULL;
    }
}

const char *st_error_kind_name(int kind) {
    switch (kind) {
    case ST_KIND_NONE: return "ST_KIND_NONE";
    case ST_KIND_DISALLOWED_SPECIAL: return "ST_KIND_DISALLOWED_SPECIAL";
    case ST_KIND_ID_REPEATED: return "ST_KIND_ID_REPEATED";
    case ST_KIND_ID_TAKEN: return "ST_KIND_ID_TAKEN";
    case ST_KIND_EMPTY_TOKEN: return "ST_KIND_EMPTY_TOKEN";
    case ST_KIND_ID_TOO_LARGE: return "ST_KIND_ID_TOO_LARGE";
    case ST_KIND_OUT_OF_ORDER: return "ST_KIND_OUT_OF_ORDER";
    case ST_KIND_EXPORT_UBE: return "ST_KIND_EXPORT_UBE";
    case ST_KIND_EXPORT_SUPERMERGES: return "ST_KIND_EXPORT_SUPERMERGES";
    case ST_KIND_EXPORT_SCRIPT_AWARE: return "ST_KIND_EXPORT_SCRIPT_AWARE";
    case ST_KIND_EXPORT_NO_RULES: return "ST_KIND_EXPORT_NO_RULES";
    default: return NULL;
    }
}

/* ---- the error report ------------------------------------------------------------------------
 * The core is freestanding (no snprintf), so messages are built with the small appenders below;
 * each keeps the message NUL-terminated and silently cuts what does not fit. */

void st__error_clear(st_error *err) {
    if (!err) return;
    st__memset(err, 0, sizeof *err);
    err->token = ST__NO_TOKEN_ID;
}

st_status st__error_set(st_error *err, st_status status, st_unit unit, uint64_t offset, const char *message) {
    if (err) {
        err->status = (uint32_t)status;
        err->unit = (uint32_t)unit;
        err->offset = unit == ST_UNIT_NONE ? 0 : offset;
        err->kind = ST_KIND_NONE;
        err->length = 0;
        err->message[0] = 0;
        if (message) st__error_append(err, message);
    }
    return status;
}

/* The length of the message so far (bounded: the array is always terminated). */
static size_t message_len(const st_error *err) {
    size_t n = 0;
    while (n < sizeof err->message && err->message[n]) n++;
    return n;
}

void st__error_append_bytes(st_error *err, const char *s, size_t len) {
    if (!err) return;
    size_t n = message_len(err);
    for (size_t k = 0; k < len && n + 1 < sizeof err->message; k++) err->message[n++] = s[k];
    err->message[n < sizeof err->message ? n : sizeof err->message - 1] = 0;
}

void st__error_append(st_error *err, const char *s) {
    size_t len = 0;
    while (s[len]) len++;
    st__error_append_bytes(err, s, len);
}

size_t st__u64_decimal(uint64_t v, char out[20]) {
    char t[20];
    size_t k = 0;
    do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
    for (size_t i = 0; i < k; i++) out[i] = t[k - 1 - i];
    return k;
}

void st__error_append_u64(st_error *err, uint64_t x) {
    char digits[20];
    st__error_append_bytes(err, digits, st__u64_decimal(x, digits));
}

/* Token bytes quoted for a message: printable ASCII as it is, everything else (and '"', '\\')
 * as \xNN, so a message stays one line of ASCII whatever the token holds. */
void st__error_append_quoted(st_error *err, const uint8_t *p, size_t len) {
    static const char hex[] = "0123456789abcdef";
    st__error_append_bytes(err, "\"", 1);
    for (size_t k = 0; k < len; k++) {
        uint8_t c = p[k];
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            st__error_append_bytes(err, (const char *)&c, 1);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            st__error_append_bytes(err, e, 4);
        }
    }
    st__error_append_bytes(err, "\"", 1);
}

/* Hosts read st_error from the module's memory at fixed offsets (supertok.h): the same layout
 * on every target, wasm32 included, or a host reads garbage. */
_Static_assert(sizeof(st_error) == 160, "st_error is 160 bytes");
_Static_assert(offsetof(st_error, unit) == 4 && offsetof(st_error, offset) == 8 && offsetof(st_error, line) == 16 &&
                   offsetof(st_error, token) == 24 && offsetof(st_error, input) == 28 &&
                   offsetof(st_error, kind) == 32 && offsetof(st_error, length) == 36 &&
                   offsetof(st_error, message) == 40,
               "st_error field offsets");
