/* encode_file: encode a UTF-8 text file with a tiktoken rank file, using libsupertok.
 *
 *   encode_file [-c] RANKS.tiktoken PATTERN TEXTFILE
 *
 * RANKS.tiktoken  a rank file (lines "base64(token) rank"), e.g. py/supertok/vocab/o200k_base.tiktoken
 * PATTERN         the pre-tokenizer: o200k, cl100k or gpt2 (or an encoding's name: o200k_base,
 *                 cl100k_base, p50k_base, r50k_base)
 * TEXTFILE        the text to encode (UTF-8); "-" reads standard input
 * -c              print the number of tokens instead of the ids
 *
 * Prints the token ids on one line, separated by spaces (tiktoken's encode_ordinary: special
 * tokens in the text are encoded as ordinary text). Exit status 0 on success, 1 on an error
 * from the library (the message names the file, the status and where it went wrong), 2 on bad
 * usage or an unreadable file.
 *
 * Build against an installed library:  cc encode_file.c $(pkg-config --cflags --libs supertok)
 *
 * The calls into supertok are all in the three functions under "The library calls" below, so
 * a change of the library's API touches only them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "supertok.h"

static const char *prog = "encode_file";

/* ---- The library calls ------------------------------------------------------------------- */

/* Where a failure happened, as the library reported it (st_error: status, position, unit,
 * line, message). */
typedef struct failure {
    st_status status;
    st_error err;
} failure;

static void report(const char *file, const failure *f) {
    static const char *const units[] = {"", "byte offset", "character", "UTF-16 unit", "index"};
    const st_error *e = &f->err;
    fprintf(stderr, "%s: %s: %s (%s)", prog, file, st_status_str((int)f->status), st_status_name((int)f->status));
    if (e->line) fprintf(stderr, ", line %llu", (unsigned long long)e->line);
    if (e->unit != ST_UNIT_NONE && e->unit < sizeof units / sizeof units[0])
        fprintf(stderr, ", at %s %llu", units[e->unit], (unsigned long long)e->offset);
    if (e->message[0]) fprintf(stderr, ": %s", e->message);
    fprintf(stderr, "\n");
}

/* Load a rank file (no special tokens) with a pre-tokenizer pattern. */
static st_status load_encoding(const char *ranks, size_t len, int pattern, st_encoding **enc, failure *f) {
    st_pretokenizer *pt = NULL;
    st_status st = st_pretokenizer_new(pattern, 0, NULL, 0, NULL, &pt, &f->err);
    if (st == ST_OK) st = st_encoding_new_tiktoken(ranks, len, "", 0, pt, NULL, enc, &f->err);
    st_pretokenizer_free(pt); /* the encoding keeps its own copy */
    f->status = st;
    return st;
}

/* Encode text: *ids (malloc'd, the caller frees it) and their number, or only the number when
 * ids is NULL. No special tokens are recognised (a NULL policy: tiktoken's encode_ordinary). */
static st_status encode_text(const st_encoding *enc, const char *text, size_t len, uint32_t **ids, size_t *n,
                             failure *f) {
    st_status st;
    if (!ids) {
        st = st_encode_count(enc, text, len, NULL, n, &f->err);
    } else {
        /* at most one id per byte */
        *ids = (uint32_t *)malloc((len ? len : 1) * sizeof(uint32_t));
        if (!*ids) {
            st = ST_ERR_OUT_OF_MEMORY;
        } else {
            st = st_encode(enc, text, len, NULL, ST_OFFSETS_BYTES, *ids, NULL, len, n, &f->err);
            if (st != ST_OK) {
                free(*ids);
                *ids = NULL;
            }
        }
    }
    f->status = st;
    return st;
}

static void free_encoding(st_encoding *enc) { st_encoding_free(enc); }

/* ---- The program ------------------------------------------------------------------------- */

static int pattern_from_name(const char *name) {
    static const struct { const char *name; int pattern; } names[] = {
        {"o200k", ST_PATTERN_O200K},     {"o200k_base", ST_PATTERN_O200K}, {"cl100k", ST_PATTERN_CL100K},
        {"cl100k_base", ST_PATTERN_CL100K}, {"gpt2", ST_PATTERN_GPT2},     {"r50k_base", ST_PATTERN_GPT2},
        {"p50k_base", ST_PATTERN_GPT2},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(name, names[i].name) == 0) return names[i].pattern;
    return 0;
}

/* The whole file into a malloc'd buffer; NULL (and a message) on failure. */
static char *read_all(const char *path, size_t *len) {
    FILE *fp = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!fp) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = (char *)malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n, fp);
        if (n < cap) break;
        char *bigger = cap > ((size_t)-1) / 2 ? NULL : (char *)realloc(buf, cap * 2);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    int bad = buf ? ferror(fp) : 0;
    if (fp != stdin) fclose(fp);
    if (!buf) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, path);
        return NULL;
    }
    if (bad) {
        fprintf(stderr, "%s: %s: read error\n", prog, path);
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static int usage(void) {
    fprintf(stderr,
            "usage: %s [-c] RANKS.tiktoken PATTERN TEXTFILE\n"
            "  PATTERN: o200k, cl100k or gpt2 (or o200k_base, cl100k_base, p50k_base, r50k_base)\n"
            "  TEXTFILE: a UTF-8 file, or - for standard input\n"
            "  -c: print the number of tokens instead of the ids\n",
            prog);
    return 2;
}

int main(int argc, char **argv) {
    int count_only = 0, arg = 1;
    if (arg < argc && (strcmp(argv[arg], "-c") == 0 || strcmp(argv[arg], "--count") == 0)) {
        count_only = 1;
        arg++;
    }
    if (argc - arg != 3) return usage();
    const char *ranks_path = argv[arg], *pattern_name = argv[arg + 1], *text_path = argv[arg + 2];
    int pattern = pattern_from_name(pattern_name);
    if (!pattern) {
        fprintf(stderr, "%s: unknown PATTERN '%s'\n", prog, pattern_name);
        return usage();
    }

    int rc = 1;
    size_t ranks_len = 0, text_len = 0, n = 0;
    char *ranks = NULL, *text = NULL;
    uint32_t *ids = NULL;
    st_encoding *enc = NULL;
    failure f;

    if (!(ranks = read_all(ranks_path, &ranks_len)) || !(text = read_all(text_path, &text_len))) {
        rc = 2;
        goto done;
    }
    if (load_encoding(ranks, ranks_len, pattern, &enc, &f) != ST_OK) {
        report(ranks_path, &f);
        goto done;
    }
    free(ranks); /* the encoding keeps no pointer into the rank text */
    ranks = NULL;
    if (encode_text(enc, text, text_len, count_only ? NULL : &ids, &n, &f) != ST_OK) {
        report(text_path, &f);
        goto done;
    }
    if (count_only) {
        printf("%zu\n", n);
    } else {
        for (size_t i = 0; i < n; i++) printf(i ? " %u" : "%u", (unsigned)ids[i]);
        printf("\n");
    }
    rc = fflush(stdout) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "%s: writing the output failed\n", prog);

done:
    free(ids);
    free_encoding(enc);
    free(text);
    free(ranks);
    return rc;
}
