/* Platform services: see platform.h. */
#include "platform.h"

#if ST_X86_DISPATCH
/* Asked at each call, not kept (the core holds no global state): libgcc or compiler-rt reads the
 * processor's flags once, at load, and these read what it found. */
int st__cpu_has_avx2(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2"); /* the CPU's flag, and the OS saving the YMM registers */
}
#endif

#if !ST_FREESTANDING
#include <stdlib.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

void *st__platform_alloc(size_t size) { return malloc(size ? size : 1); }
void st__platform_free(void *ptr) { free(ptr); }
void *st__platform_realloc(void *ptr, size_t old, size_t size) {
    (void)old;
    return realloc(ptr, size ? size : 1);
}
void st__platform_release_free(void) {
#if defined(__GLIBC__)
    malloc_trim(0);
#endif
}
size_t st__platform_grow_bytes(size_t want) {
#if defined(__GLIBC__) && UINTPTR_MAX > 0xFFFFFFFFu
    if (want >= ((size_t)1 << 20) && want < ((size_t)64 << 20)) return (size_t)64 << 20;
#endif
    return want;
}

#else /* wasm32, freestanding */

void *memcpy(void *dst, const void *src, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (!(((uintptr_t)d | (uintptr_t)s) & 7)) /* word copies when both are aligned: most copies here are */
        for (; n >= 8; n -= 8, d += 8, s += 8) *(uint64_t *)(void *)d = *(const uint64_t *)(const void *)s;
    if (!(((uintptr_t)d | (uintptr_t)s) & 3))
        for (; n >= 4; n -= 4, d += 4, s += 4) *(uint32_t *)(void *)d = *(const uint32_t *)(const void *)s;
    while (n--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    if (d == s || n == 0) return dst;
    if (d < s) {
        while (n--) *d++ = *s++;
    } else {
        d += n; s += n;
        while (n--) *--d = *--s;
    }
    return dst;
}

/* Eight bytes a store once aligned: the encoder clears tables of hundreds of kilobytes (the pair
 * cache, the piece cache), and an interpreter such as pywasm spends seconds on a store a byte. */
void *memset(void *dst, int c, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    for (; n && ((uintptr_t)d & 7); n--) *d++ = (unsigned char)c;
    uint64_t w = (uint64_t)(unsigned char)c * 0x0101010101010101u;
    for (; n >= 8; n -= 8, d += 8) *(uint64_t *)(void *)d = w;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

/* Eight bytes a step while they agree (wasm loads need no alignment): the special strings'
 * order compares strings that share most of their bytes, and pywasm pays per instruction. */
int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
    for (; n >= 8; n -= 8, x += 8, y += 8) {
        uint64_t u, v;
        __builtin_memcpy(&u, x, 8);
        __builtin_memcpy(&v, y, 8);
        if (u != v) break;
    }
    for (; n; n--, x++, y++)
        if (*x != *y) return *x < *y ? -1 : 1;
    return 0;
}

/* A size-class allocator: blocks of 2^k bytes (k = 4..31) carved from memory.grow pages,
 * freed blocks kept on one free list per class. Each block starts with an 8-byte header
 * holding its class, so st_free needs no size. Simple, O(1), and enough for a tokenizer's
 * few large arrays and many small ones; wasted space is under half of each block. */
#define ST_WASM_PAGE 65536u
#define ST_MIN_CLASS 4
#define ST_MAX_CLASS 31
#define ST_HEADER 8u

extern unsigned char __heap_base;
static uintptr_t heap_top;        /* next unused byte of linear memory */
static void *free_lists[ST_MAX_CLASS + 1];

static int grow_to(uintptr_t end) {
    uintptr_t have = (uintptr_t)__builtin_wasm_memory_size(0) * ST_WASM_PAGE;
    if (end <= have) return 1;
    uintptr_t pages = (end - have + ST_WASM_PAGE - 1) / ST_WASM_PAGE;
    return __builtin_wasm_memory_grow(0, pages) != (size_t)-1;
}

void *st__platform_alloc(size_t size) {
    if (size > ((size_t)1 << ST_MAX_CLASS) - ST_HEADER) return NULL;
    size_t need = size + ST_HEADER;
    int k = ST_MIN_CLASS;
    while (((size_t)1 << k) < need) k++;
    unsigned char *block = (unsigned char *)free_lists[k];
    if (block) {
        free_lists[k] = *(void **)(void *)(block + ST_HEADER);
    } else {
        if (!heap_top) heap_top = ((uintptr_t)&__heap_base + 15) & ~(uintptr_t)15;
        uintptr_t start = heap_top, end = start + ((uintptr_t)1 << k);
        if (end < start || !grow_to(end)) return NULL;
        heap_top = end;
        block = (unsigned char *)start;
    }
    *(uint32_t *)(void *)block = (uint32_t)k;
    return block + ST_HEADER;
}

void st__platform_free(void *ptr) {
    if (!ptr) return;
    unsigned char *block = (unsigned char *)ptr - ST_HEADER;
    uint32_t k = *(uint32_t *)(void *)block;
    if (k < ST_MIN_CLASS || k > ST_MAX_CLASS) return; /* not ours: ignore rather than corrupt */
    *(void **)ptr = free_lists[k];
    free_lists[k] = block;
}

void *st__platform_realloc(void *ptr, size_t old, size_t size) {
    if (!ptr) return st__platform_alloc(size);
    unsigned char *block = (unsigned char *)ptr - ST_HEADER;
    uint32_t k = *(uint32_t *)(void *)block;
    if (size + ST_HEADER <= ((size_t)1 << k)) return ptr; /* its size class holds it */
    void *p = st__platform_alloc(size);
    if (!p) return NULL;
    memcpy(p, ptr, old < size ? old : size);
    st__platform_free(ptr);
    return p;
}

void st__platform_release_free(void) {}
size_t st__platform_grow_bytes(size_t want) { return want; }

#endif
