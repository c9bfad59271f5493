/* Shared internals of the core: allocator plumbing and error reports. */
#ifndef ST_INTERNAL_H
#define ST_INTERNAL_H

#include "platform.h"
#include "work_counter.h" /* ST_COUNT: empty unless -DST_TEST_COUNTERS */
#include "../../include/supertok.h"

/* The allocator a handle was made with; a copy is kept in every handle. */
void st__allocator_init(st_allocator *dst, const st_allocator *src);
void *st__alloc(const st_allocator *a, size_t size);
void st__free(const st_allocator *a, void *ptr, size_t size);
/* ptr's block (old bytes, from a) resized to size, keeping its first min(old, size) bytes; NULL,
 * ptr untouched, when out of memory. The platform allocator resizes in place where it can (a
 * large native block is remapped, not copied); a host's allocator gets alloc, copy, free. */
void *st__realloc(const st_allocator *a, void *ptr, size_t old, size_t size);
/* 1 when st__realloc shrinking a block of a gives its tail back to the system without a copy
 * (the native platform allocator); a host's allocator, or wasm's, would copy or keep it. */
int st__realloc_gives_back(const st_allocator *a);
/* A growing array of a's (ptr, *cap elements of elem bytes) resized to hold need (need > *cap,
 * need <= most): room for more where the platform allocator grows a larger block without a copy
 * (st__platform_grow_bytes), up to most; if that much address space cannot be had (a process
 * under RLIMIT_AS or strict overcommit), room for need alone. *cap is then the room made; NULL,
 * ptr and *cap untouched, when even need cannot be had. */
void *st__realloc_grow(const st_allocator *a, void *ptr, size_t *cap, size_t need, size_t most, size_t elem);

#define ST__NO_TOKEN_ID 0xFFFFFFFFu

/* The error report (common.c). Every public call clears it at entry (st__error_clear) and
 * fills it where it fails (st__error_set returns the status, for `return st__error_set(...)`);
 * the appenders add to its message (no snprintf: the core is freestanding). */
void st__error_clear(st_error *err);
st_status st__error_set(st_error *err, st_status status, st_unit unit, uint64_t offset, const char *message);
void st__error_append(st_error *err, const char *s);
void st__error_append_bytes(st_error *err, const char *s, size_t len);
void st__error_append_u64(st_error *err, uint64_t x);
/* The decimal digits of v into out (no NUL, no sign, no leading zero but "0"); their count (1..20). */
size_t st__u64_decimal(uint64_t v, char out[20]);
void st__error_append_quoted(st_error *err, const uint8_t *p, size_t len);
/* The status of a return that sets no position (ST_ERR_BUFFER_TOO_SMALL, mostly). */
ST_INLINE st_status st__error_status(st_error *err, st_status st) {
    if (err && st != ST_OK) err->status = (uint32_t)st;
    return st;
}
ST_INLINE void st__error_line(st_error *err, uint64_t line, uint32_t input) {
    if (err) { err->line = line; err->input = input; }
}
ST_INLINE void st__error_token(st_error *err, uint32_t token) {
    if (err) err->token = token;
}
/* What was wrong (an st_error_kind) and the length, in the report's unit, of what is at its offset. */
ST_INLINE void st__error_kind(st_error *err, st_error_kind kind, uint32_t length) {
    if (err) { err->kind = (uint32_t)kind; err->length = length; }
}

#endif
