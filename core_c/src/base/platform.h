/* The one place the core touches the platform (docs/design.md §3).
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
/* ptr's block resized to size, its first min(old, size) bytes kept (realloc: natively a large
 * block is moved by remapping its pages, never copied, so growing one never holds it twice); NULL,
 * ptr untouched, when out of memory. old is its size as allocated (the wasm allocator copies). */
void *st__platform_realloc(void *ptr, size_t old, size_t size);
/* Freed memory handed back to the system where the C library keeps it (glibc holds freed heap
 * pages resident until the heap's top is free): after a phase frees most of what it used, so
 * the next phase's peak does not stand on it. Nothing elsewhere. */
void st__platform_release_free(void);
/* The bytes to ask for a block that grows (with st__platform_realloc) and now needs want: natively
 * on 64-bit glibc a block of 1 MiB or more is asked at 64 MiB at once, above the largest size
 * glibc serves from its heap (32 MiB), so it has pages of its own: only those written are
 * resident, and realloc moves it by remapping them, where a heap block of 32 MiB or less is
 * copied (held twice). Elsewhere want. */
size_t st__platform_grow_bytes(size_t want);

#if defined(__GNUC__) || defined(__clang__)
#define ST_LIKELY(x) __builtin_expect(!!(x), 1)
#define ST_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define ST_INLINE static inline __attribute__((always_inline))
#define ST_PREFETCH(p) __builtin_prefetch(p)
#else
#define ST_LIKELY(x) (x)
#define ST_UNLIKELY(x) (x)
#define ST_INLINE static inline
#define ST_PREFETCH(p) ((void)(p))
#endif

/* Bit scans of a nonzero 64-bit word: the index of its lowest and of its highest set bit. */
#if defined(__GNUC__) || defined(__clang__)
ST_INLINE unsigned st__lowest_bit(uint64_t x) { return (unsigned)__builtin_ctzll(x); }
ST_INLINE unsigned st__highest_bit(uint64_t x) { return 63u - (unsigned)__builtin_clzll(x); }
#else
ST_INLINE unsigned st__lowest_bit(uint64_t x) {
    unsigned k = 0;
    while (!(x & 1)) { x >>= 1; k++; }
    return k;
}
ST_INLINE unsigned st__highest_bit(uint64_t x) {
    unsigned k = 0;
    while (x >>= 1) k++;
    return k;
}
#endif

/* SIMD kernels: x86-64 always has SSE2 (the ASCII block classifier of the pre-tokenizer,
 * text/pretokenize.c, uses it); other targets, wasm32 among them, take the portable code.
 * -DST_NO_SIMD builds without it (tests compare the two). */
#if defined(__SSE2__) && !defined(ST_NO_SIMD)
#include <emmintrin.h>
#define ST_SSE2 1
#endif

/* Kernels chosen at run time: on x86-64 with GCC or Clang (not clang-cl, whose default runtime
 * lacks the CPU check), a function marked ST_TARGET_AVX2 is compiled for AVX2 whatever the
 * build's -m flags, and runs only where st__cpu_has_avx2() says the processor and the operating
 * system support it (the first: the UTF-8 validator, text/utf8.c). Every such kernel has a
 * portable version, the reference the tests hold it to. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(_MSC_VER) && !defined(ST_NO_SIMD)
#include <immintrin.h>
#define ST_X86_DISPATCH 1
#define ST_TARGET_AVX2 __attribute__((target("avx2")))
/* Nonzero when AVX2 kernels may run here. */
int st__cpu_has_avx2(void);
#endif

/* Atomics for one-time initialisation shared by threads (a loaded tokenizer builds its
 * backtracking tables on first need, from whichever thread needs them first). */
#if defined(__GNUC__) || defined(__clang__)
ST_INLINE int st__atomic_load(const int *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
ST_INLINE void st__atomic_store(int *p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
/* 1 if *p was `from` and is now `to` (this caller won), 0 if *p was something else */
ST_INLINE int st__atomic_claim(int *p, int from, int to) {
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
/* Counters and sizes read by one thread while others add to them (the piece cache's figures:
 * piece_cache.c). Relaxed: nothing else is published through them. */
ST_INLINE size_t st__atomic_load_size(const size_t *p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
ST_INLINE void st__atomic_store_size(size_t *p, size_t v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
ST_INLINE void st__atomic_add_size(size_t *p, size_t v) { (void)__atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
#elif defined(_MSC_VER)
#include <intrin.h>
ST_INLINE int st__atomic_load(const int *p) {
    int v = *(const volatile int *)p;
    _ReadWriteBarrier();
    return v;
}
ST_INLINE void st__atomic_store(int *p, int v) {
    _ReadWriteBarrier();
    *(volatile int *)p = v;
}
ST_INLINE int st__atomic_claim(int *p, int from, int to) {
    return _InterlockedCompareExchange((volatile long *)p, to, from) == from;
}
ST_INLINE size_t st__atomic_load_size(const size_t *p) { return *(const volatile size_t *)p; }
ST_INLINE void st__atomic_store_size(size_t *p, size_t v) { *(volatile size_t *)p = v; }
#if defined(_WIN64)
ST_INLINE void st__atomic_add_size(size_t *p, size_t v) { (void)_InterlockedExchangeAdd64((volatile __int64 *)p, (__int64)v); }
#else
ST_INLINE void st__atomic_add_size(size_t *p, size_t v) { (void)_InterlockedExchangeAdd((volatile long *)p, (long)v); }
#endif
#else
#error "supertok: no atomics for this compiler; add them to platform.h"
#endif

#endif
