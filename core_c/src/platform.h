/* The one place the core touches the platform (DESIGN §3).
 *
 * Native builds take malloc/free and the mem* functions from libc. The wasm32 build is
 * freestanding with no imports: platform.c supplies memcpy/memset/memcmp/memmove (compilers
 * emit calls to them even in freestanding code) and an allocator over memory.grow.
 * Nothing else in core_c/src includes a libc header. */
#ifndef ST_PLATFORM_H
#define ST_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#if defined(__wasm__)
#define ST_FREESTANDING 1
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
#else
#include <string.h>
#endif

#define st__memcpy memcpy
#define st__memmove memmove
#define st__memset memset
#define st__memcmp memcmp

/* The platform allocator (malloc/free natively, a size-class allocator in wasm). */
void *st__platform_alloc(size_t size);
void st__platform_free(void *ptr);

#if defined(__GNUC__) || defined(__clang__)
#define ST_LIKELY(x) __builtin_expect(!!(x), 1)
#define ST_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ST_INLINE static inline __attribute__((always_inline))
#else
#define ST_LIKELY(x) (x)
#define ST_UNLIKELY(x) (x)
#define ST_INLINE static inline
#endif

#endif
