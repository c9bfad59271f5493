/* Train a phase-1 BPE model from a text file with the C API (one document per line, as
 * HuggingFace's trainer reads .txt files), and print the counting and merging times.
 *
 *   train_file [-m paper|hf] [-a bytes|ube] [-p gpt2|cl100k|o200k] [-s] [-f MIN_FREQ]
 *              [-o MODEL] FILE VOCAB_SIZE
 *
 * The file is read in blocks cut after a '\n', so memory holds one block and the counts, never
 * the file. -s: the script-aware pre-tokenizer (default scripts). Times go to stderr; with -o the
 * model file is written. A C embedder's example as much as a benchmark driver. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "supertok.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double cpu(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
}

static long max_rss_kb(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

static int die(const char *what, const st_error *e) {
    fprintf(stderr, "train_file: %s: %s (%s)\n", what, e->message[0] ? e->message : st_status_str((int)e->status),
            st_status_name((int)e->status));
    return 1;
}

int main(int argc, char **argv) {
    int mode = ST_TRAIN_PAPER, alphabet = ST_ALPHABET_BYTES, pattern = ST_PATTERN_O200K;
    uint32_t flags = 0;
    uint64_t minf = 0;
    const char *out_path = NULL;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(o, "-s")) { flags |= ST_PRETOK_SCRIPT_AWARE; continue; }
        i++;
        if (!strcmp(o, "-m")) mode = !strcmp(v, "hf") ? ST_TRAIN_HF : ST_TRAIN_PAPER;
        else if (!strcmp(o, "-a")) alphabet = !strcmp(v, "ube") ? ST_ALPHABET_UBE : ST_ALPHABET_BYTES;
        else if (!strcmp(o, "-p")) pattern = !strcmp(v, "gpt2") ? ST_PATTERN_GPT2 : !strcmp(v, "cl100k") ? ST_PATTERN_CL100K : ST_PATTERN_O200K;
        else if (!strcmp(o, "-f")) minf = strtoull(v, NULL, 10);
        else if (!strcmp(o, "-o")) out_path = v;
        else { fprintf(stderr, "train_file: unknown option %s\n", o); return 2; }
    }
    if (argc - i != 2) {
        fprintf(stderr, "usage: train_file [-m paper|hf] [-a bytes|ube] [-p gpt2|cl100k|o200k] [-s] [-f MIN_FREQ] "
                        "[-o MODEL] FILE VOCAB_SIZE\n");
        return 2;
    }
    const char *path = argv[i];
    uint64_t vocab = strtoull(argv[i + 1], NULL, 10);
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return 1; }
    st_error e;
    st_counter *c = NULL;
    if (st_counter_new(pattern, flags, NULL, 0, NULL, &c, &e) != ST_OK) return die("counter", &e);

    double t0 = now(), c0 = cpu();
    size_t cap = 16u << 20, have = 0;
    char *buf = malloc(cap);
    uint64_t offset = 0;
    for (;;) {
        size_t got = fread(buf + have, 1, cap - have, f);
        have += got;
        if (!have) break;
        size_t cut = have;
        if (got) { /* whole lines only, the rest waits for the next block */
            while (cut > 0 && buf[cut - 1] != '\n') cut--;
            if (cut == 0) { /* a line longer than the block: grow it */
                cap *= 2;
                buf = realloc(buf, cap);
                continue;
            }
        }
        if (st_counter_add(c, buf, cut, ST_COUNT_LINES, &e) != ST_OK) {
            fprintf(stderr, "at byte %llu of the file: ", (unsigned long long)(offset + e.offset));
            return die("count", &e);
        }
        offset += cut;
        memmove(buf, buf + cut, have - cut);
        have -= cut;
        if (!got && !have) break;
    }
    free(buf);
    fclose(f);
    double t1 = now(), c1 = cpu();
    uint64_t bytes = st_counter_stat(c, ST_COUNTER_BYTES);
    fprintf(stderr, "counting: %.2f s wall, %.2f s CPU, %.1f MB/s per CPU second; %llu documents, %llu pretokens, "
            "%llu distinct\n",
            t1 - t0, c1 - c0, bytes / 1e6 / (c1 - c0), (unsigned long long)st_counter_stat(c, ST_COUNTER_DOCUMENTS),
            (unsigned long long)st_counter_stat(c, ST_COUNTER_PRETOKENS),
            (unsigned long long)st_counter_stat(c, ST_COUNTER_UNIQUE));

    st_trainer *t = NULL;
    if (st_trainer_new(c, mode, alphabet, vocab, minf, 0, NULL, &t, &e) != ST_OK) return die("trainer", &e);
    st_counter_free(c);
    double t2 = now(), c2 = cpu();
    size_t made;
    do {
        if (st_trainer_step(t, 4096, &made, &e) != ST_OK) return die("step", &e);
    } while (made == 4096);
    double t3 = now(), c3 = cpu();
    const uint64_t *counts;
    size_t n = st_trainer_merges(t, NULL, &counts);
    fprintf(stderr, "trainer setup: %.2f s wall, %.2f s CPU; merging: %.2f s wall, %.2f s CPU, %zu merges (last count %llu)\n",
            t2 - t1, c2 - c1, t3 - t2, c3 - c2, n, n ? (unsigned long long)counts[n - 1] : 0ull);
    fprintf(stderr, "total: %.2f s wall, %.2f s CPU, peak RSS %.1f MB\n", t3 - t0, c3 - c0, max_rss_kb() / 1024.0);
    if (out_path) {
        size_t len = 0;
        st_trainer_write_model(t, "trained", 7, NULL, NULL, 0, NULL, 0, &len, NULL);
        char *m = malloc(len);
        if (st_trainer_write_model(t, "trained", 7, NULL, NULL, 0, m, len, &len, &e) != ST_OK) return die("model", &e);
        FILE *o = fopen(out_path, "wb");
        if (!o || fwrite(m, 1, len, o) != len || fclose(o)) { perror(out_path); return 1; }
        free(m);
    }
    st_trainer_free(t);
    return 0;
}
