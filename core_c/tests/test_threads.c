// One loaded encoding shared by several threads (docs/design.md §3: a loaded tokenizer is safe to share).
//
// The backtracking encoder's tables are built by whichever thread first wants them (a piece that
// tips the merge-work debt, or st_encoding_prepare), while the other threads keep encoding with
// the merge loop (pipeline.c: tables_for). Here 6 threads start at once on a fresh o200k_base encoding,
// each encoding texts that want the tables (Chinese, Russian, a long run of one letter) and
// texts that do not, several rounds; every result must equal the one-thread result of a
// second encoding with its piece cache off. The shared encoding's piece cache lasts across calls
// (pipeline.c), so the threads' calls hit entries other calls wrote: pass 0 with the default size,
// pass 1 with a tiny one (entries replaced all the time) while thread 0 keeps changing the size
// between its calls (tables emptied and resized under the other threads); then the same for a
// superword model (its superword pass). run.sh runs it
// under ASan/UBSan, and under ThreadSanitizer where the compiler has it (a data race there is a
// failure).
//
// Build and run from the repository root:
//   cc -std=c11 -O2 -pthread -Icore_c/include core_c/src/*/*.c core_c/tests/test_threads.c -o test_threads
//   ./test_threads py/supertok/vocab    # prints "N passed, M failed"; exit 1 on failure
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "supertok.h"
#include "error_contract.h"
#include "check.h"

/* more threads than a handle keeps scratch blocks (ST_SCRATCH_SLOTS, 4): the last ones
 * allocate their own */
#define N_THREADS 6
#define ROUNDS 3

static const char *TEXTS[] = {
    "\xE4\xB8\xAD\xE5\x8D\x8E\xE4\xBA\xBA\xE6\xB0\x91\xE5\x85\xB1\xE5\x92\x8C\xE5\x9B\xBD\xE6\x88\x90\xE7\xAB\x8B"
    "\xE4\xBA\x8E\xE4\xB8\x80\xE4\xB9\x9D\xE5\x9B\x9B\xE4\xB9\x9D\xE5\xB9\xB4",
    "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82, \xD0\xBC\xD0\xB8\xD1\x80! "
    "\xD0\x93\xD0\xBE\xD1\x81\xD1\x83\xD0\xB4\xD0\xB0\xD1\x80\xD1\x81\xD1\x82\xD0\xB2\xD0\xB5\xD0\xBD\xD0\xBD\xD1\x8B\xD0\xB9",
    "Hello world, it's 2024! The quick brown fox jumps over the lazy dog.",
    NULL, /* a long run of one letter, filled in main */
    "    def f(x):\n        return x * 2\n",
    NULL, /* 12 KB of mixed words: the piece cache of a reused scratch block, filled in main */
    NULL, /* 16 KB of " the cat": runs for the superword model's pass, filled in main */
};

/* A superword model (test_encode.c's SW_BYTES: rules building " the", " cat", "the"; supermerges
 * joining them): the same texts through its superword pass, from the same threads. */
static const char SW_MODEL[] =
    "supertok-model 1\nname sw\nkind rules\nalphabet bytes\npattern gpt2\nscript-aware no\n"
    "merges 8\n32 116\n256 104\n257 101\n99 97\n32 259\n260 116\n116 104\n262 101\n"
    "supermerges 6\n258 261\n263 261\n264 258\n261 258\n258 46\n263 263\nspecials 0\nend\n";
#define N_TEXTS (sizeof TEXTS / sizeof TEXTS[0])

static st_encoding *g_shared;
static uint32_t *g_want[N_TEXTS];
static size_t g_want_n[N_TEXTS];
static int g_failures[N_THREADS];
static pthread_barrier_t g_start;
static int g_resize; /* pass 1: thread 0 changes the cache size between its calls */


static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    pthread_barrier_wait(&g_start);
    for (int round = 0; round < ROUNDS; round++)
        for (size_t k = 0; k < N_TEXTS; k++) {
            /* two threads race to build the tables while the others encode (short texts never
             * build them: the build waits for enough merge work, pipeline.c tables_for) */
            if (round == 0 && k == 1 && t >= N_THREADS - 2 && st_encoding_prepare(g_shared) == ST_ERR_OUT_OF_MEMORY)
                g_failures[t]++;
            size_t i = (k + (size_t)t) % N_TEXTS, len = strlen(TEXTS[i]), n = 0;
            if (g_resize && t == 0) st_encoding_set_cache_size(g_shared, (k % 3) * 4096 + 2048);
            uint32_t *ids = (uint32_t *)malloc((len + 1) * 4);
            st_error err;
            st_status st = CHECKED(err, st_encode(g_shared, TEXTS[i], len, NULL, 0, ids, NULL, len + 1, &n, &err));
            if (st != ST_OK || n != g_want_n[i] || memcmp(ids, g_want[i], n * 4) != 0) g_failures[t]++;
            free(ids);
        }
    return NULL;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "py/supertok/vocab";
    char path[1024];
    snprintf(path, sizeof path, "%s/o200k_base.tiktoken", dir);
    size_t rlen = 0;
    char *ranks = read_file(path, &rlen);
    if (!ranks) {
        fprintf(stderr, "test_threads: cannot read %s\n", path);
        return 1;
    }
    char *run = (char *)malloc(20001);
    memset(run, 'a', 20000);
    run[20000] = 0;
    TEXTS[3] = run;
    static const char words[] = "unbelievable \xD0\xBF\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82\xD1\x81\xD1\x82\xD0\xB2\xD0\xB8\xD0\xB5 "
                                "\xE4\xB8\xAD\xE5\x8D\x8E\xE4\xBA\xBA\xE6\xB0\x91 misunderstanding "
                                /* a piece of 111 bytes: the long table */
                                " \xE4\xB8\xAD\xE5\x8D\x8E\xE4\xBA\xBA\xE6\xB0\x91\xE5\x85\xB1\xE5\x92\x8C\xE5\x9B\xBD\xE6\x88\x90\xE7\xAB\x8B\xE4\xBA\x8E\xE4\xB8\x80\xE4\xB9\x9D\xE5\x9B\x9B\xE4\xB9\x9D\xE5\xB9\xB4\xE5\x8D\x81\xE6\x9C\x88\xE4\xB8\x80\xE6\x97\xA5\xE9\xA6\x96\xE9\x83\xBD\xE5\x8C\x97\xE4\xBA\xAC\xE5\xA4\xA9\xE5\xAE\x89\xE9\x97\xA8\xE5\xB9\xBF\xE5\x9C\xBA\xE4\xB8\xBE\xE8\xA1\x8C\xE4\xBA\x86\xE7\x9B\x9B\xE5\xA4\xA7\xE7\x9A\x84\xE5\xBC\x80\xE5\x9B\xBD\xE5\xA4\xA7\xE5\x85\xB8 ";
    size_t wl = sizeof words - 1, reps = 12000 / wl + 1;
    char *mixed = (char *)malloc(reps * wl + 1);
    for (size_t r = 0; r < reps; r++) memcpy(mixed + r * wl, words, wl);
    mixed[reps * wl] = 0;
    TEXTS[5] = mixed;
    static const char cat[] = " the cat the cat. the cat";
    size_t cl = sizeof cat - 1, creps = 16000 / cl + 1;
    char *cats = (char *)malloc(creps * cl + 1);
    for (size_t r = 0; r < creps; r++) memcpy(cats + r * cl, cat, cl);
    cats[creps * cl] = 0;
    TEXTS[6] = cats;
    st_encoding *ref = NULL;
    st_error err;
    st_pretokenizer *pt = NULL;
    if (CHECKED(err, st_pretokenizer_new(ST_PATTERN_O200K, 0, NULL, 0, NULL, &pt, &err)) != ST_OK ||
        CHECKED(err, st_encoding_new_tiktoken(ranks, rlen, NULL, 0, pt, NULL, &ref, &err)) != ST_OK ||
        CHECKED(err, st_encoding_new_tiktoken(ranks, rlen, NULL, 0, pt, NULL, &g_shared, &err)) != ST_OK) {
        fprintf(stderr, "test_threads: loading o200k_base failed at %llu: %s\n", (unsigned long long)err.offset,
                err.message);
        return 1;
    }
    st_pretokenizer_free(pt);
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 2) { /* the superword model, shared the same way */
            st_encoding_free(g_shared);
            st_encoding_free(ref);
            g_shared = ref = NULL;
            st_error e;
            if (st_encoding_new_model(SW_MODEL, sizeof SW_MODEL - 1, NULL, &ref, &e) != ST_OK ||
                st_encoding_new_model(SW_MODEL, sizeof SW_MODEL - 1, NULL, &g_shared, &e) != ST_OK) {
                fprintf(stderr, "test_threads: loading the superword model failed: %s\n", e.message);
                return 1;
            }
        }
        memset(g_failures, 0, sizeof g_failures);
        st_encoding_set_cache_size(ref, 0); /* the reference merges every piece */
        g_resize = pass == 1;
        if (pass == 1) st_encoding_set_cache_size(g_shared, 16384); /* 32 entries a table */
        for (size_t i = 0; i < N_TEXTS; i++) { /* the one-thread results, from the other encoding */
            size_t len = strlen(TEXTS[i]);
            g_want[i] = (uint32_t *)malloc((len + 1) * 4);
            CHECK(CHECKED(err, st_encode(ref, TEXTS[i], len, NULL, 0, g_want[i], NULL, len + 1, &g_want_n[i], &err)) ==
                      ST_OK,
                  "one-thread encode of text %zu", i);
        }
        pthread_t th[N_THREADS];
        pthread_barrier_init(&g_start, NULL, N_THREADS);
        for (int t = 0; t < N_THREADS; t++) pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < N_THREADS; t++) pthread_join(th[t], NULL);
        pthread_barrier_destroy(&g_start);
        static const char *const what[] = {"o200k_base", "o200k_base, tiny cache resized", "superword model"};
        for (int t = 0; t < N_THREADS; t++)
            CHECK(!g_failures[t], "%s: thread %d: %d of %d encodes differ from the one-thread result", what[pass], t,
                  g_failures[t], (int)(ROUNDS * N_TEXTS));
        /* the figures: hits (every text is encoded 18 times), memory within the last limit set
         * now that no call runs, and the cache off in the reference */
        st_cache_info info, rinfo;
        CHECK(st_encoding_cache_info(g_shared, &info) == ST_OK && st_encoding_cache_info(ref, &rinfo) == ST_OK,
              "%s: cache info", what[pass]);
        CHECK(info.hits > 0 && info.bytes <= info.limit && info.max_piece == 240,
              "%s: %llu hits, %llu bytes held, limit %llu", what[pass], (unsigned long long)info.hits,
              (unsigned long long)info.bytes, (unsigned long long)info.limit);
        CHECK(rinfo.limit == 0 && rinfo.bytes == 0 && rinfo.hits == 0 && rinfo.misses == 0,
              "%s: the reference's cache is off", what[pass]);
        CHECK(st_encoding_set_cache_size(NULL, 1) == ST_ERR_INVALID_ARGUMENT &&
              st_encoding_cache_info(NULL, &info) == ST_ERR_INVALID_ARGUMENT &&
              st_encoding_cache_info(ref, NULL) == ST_ERR_INVALID_ARGUMENT, "cache calls: NULL arguments");
        for (size_t i = 0; i < N_TEXTS; i++) free(g_want[i]);
    }
    st_encoding_free(g_shared);
    st_encoding_free(ref);
    free(cats);
    free(run);
    free(mixed);
    free(ranks);
    printf("%d passed, %d failed\n", g_pass, g_fail);
    return g_fail != 0;
}
