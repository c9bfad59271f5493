/* Exports of an encoding to other libraries' formats (docs/formats/export.md): a tiktoken rank
 * file and a HuggingFace tokenizers tokenizer.json, and which tokens they hold.
 *
 * Both formats are byte-level BPE over a regex pre-tokenizer, so only encodings that are
 * exactly that go out: the bytes alphabet, no supermerges, no script-aware pre-tokenizer, and
 * for tokenizer.json merge rules (a rank vocabulary has none to give). Both hold each byte
 * string once: an ordinary token whose bytes a lower id has (two rules can make the same bytes)
 * is left out, the lower id keeps them. The JSON text is what Python's
 * json.dumps(obj, ensure_ascii=False, indent=1) writes for the object, plus a newline: the same
 * key order, spacing and string escapes, so a file is the same whichever host wrote it. */
#include "export.h"
#include "base64.h"
#include "../text/pretokenize.h"

/* ---- output ----------------------------------------------------------------------------------
 * Every writer runs once: bytes past cap are counted, not written, so one pass gives both the
 * size and (when it fits) the text. */

typedef struct out_buf {
    uint8_t *out;
    size_t cap;
    uint64_t n; /* bytes the whole output takes: may pass SIZE_MAX on wasm32 (then refused) */
} out_buf;

static void put(out_buf *w, const void *data, size_t len) {
    if (w->n < w->cap) {
        size_t room = w->cap - (size_t)w->n;
        st__memcpy(w->out + w->n, data, len <= room ? len : room);
    }
    w->n += len;
}

static void put_s(out_buf *w, const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    put(w, s, n);
}

static void put_u64(out_buf *w, uint64_t v) {
    char b[20];
    put(w, b, st__u64_decimal(v, b));
}

static st_status finish(out_buf *w, size_t *out_len, st_error *err) {
    if (w->n > (uint64_t)SIZE_MAX) {
        *out_len = 0;
        return st__error_set(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, "the export is larger than SIZE_MAX bytes");
    }
    *out_len = (size_t)w->n;
    return st__error_status(err, w->n > w->cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}

/* ---- sorting ----------------------------------------------------------------------------- */

static void sift_down(uint64_t *a, size_t root, size_t n) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && a[child + 1] > a[child]) child++;
        if (a[root] >= a[child]) return;
        uint64_t t = a[root];
        a[root] = a[child];
        a[child] = t;
        root = child;
    }
}

void st__sort_u64(uint64_t *a, size_t n) {
    if (n < 2) return;
    for (size_t i = n / 2; i-- > 0;) sift_down(a, i, n);
    for (size_t end = n - 1; end > 0; end--) {
        uint64_t t = a[0];
        a[0] = a[end];
        a[end] = t;
        sift_down(a, 0, end);
    }
}

/* ---- which tokens go out -------------------------------------------------------------------- */

/* The span of ordinary id i when an export writes it: an ordinary token whose bytes no lower id
 * has. *first: the lower id that has them (ST_NO_TOKEN when i is written). */
static int exported(const st__export_source *src, uint32_t i, uint32_t *start, uint32_t *len, uint32_t *first) {
    const st_vocab *v = src->vocab;
    *first = ST_NO_TOKEN;
    if (!st__vocab_ordinary(v, src->rules != NULL, i) || !st__vocab_span(v, i, start, len)) return 0;
    /* the bytes -> id table holds the lowest id of bytes two tokens share (vocab.h) */
    uint32_t j = st__vocab_lookup(v, v->bytes + *start, *len);
    if (j != ST_NO_TOKEN && j < i) {
        *first = j;
        return 0;
    }
    return 1;
}

/* ST_ERR_INVALID_ARGUMENT with the reason the format cannot express the encoding (kind), or
 * ST_OK. The order of the checks is the order a host reports them in. */
static st_status refuse(const st__export_source *src, int format, st_error *err) {
    if (format != ST_EXPORT_TIKTOKEN && format != ST_EXPORT_HF_JSON)
        return st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown export format");
    st_error_kind kind = ST_KIND_NONE;
    const char *why = NULL;
    if (src->vocab->alphabet != ST_ALPHABET_BYTES) {
        kind = ST_KIND_EXPORT_UBE;
        why = "a UBE encoding: its tokens are symbols, the format is byte-level";
    } else if (src->n_supers) {
        kind = ST_KIND_EXPORT_SUPERMERGES;
        why = "supermerges: the format merges inside each pretoken only";
    } else if (src->pt_flags & ST_PRETOK_SCRIPT_AWARE) {
        kind = ST_KIND_EXPORT_SCRIPT_AWARE;
        why = "a script-aware pre-tokenizer: no regular expression expresses it";
    } else if (format == ST_EXPORT_HF_JSON && !src->rules) {
        kind = ST_KIND_EXPORT_NO_RULES;
        why = "a rank vocabulary: a HuggingFace BPE model needs merge rules";
    } else if (!st__pattern_regex(src->pattern)) {
        why = "the encoding has no known pattern";
    } else if (format == ST_EXPORT_TIKTOKEN && src->pattern == ST_PATTERN_SUPERBPE) {
        why = "the superbpe pre-tokenizer: tiktoken keeps only a regex's matches, not the text between them";
    } else if (format == ST_EXPORT_TIKTOKEN && src->pattern >= ST_PATTERN_LLAMA3) {
        why = "a HuggingFace pre-tokenizer (llama3, qwen2, deepseek_v3): tiktoken does not ship its pattern";
    }
    if (!why) return ST_OK;
    st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why);
    st__error_kind(err, kind, 0);
    return ST_ERR_INVALID_ARGUMENT;
}

/* ---- tiktoken ----------------------------------------------------------------------------------
 * One line per token written, in id order: base64 of its bytes, a space, its id as the rank. */

static void write_tiktoken(const st__export_source *src, out_buf *w) {
    const st_vocab *v = src->vocab;
    uint8_t b64[4 * 64];
    for (uint32_t i = 0; i < v->n_ids; i++) {
        uint32_t start, len, first;
        if (!exported(src, i, &start, &len, &first)) continue;
        const uint8_t *p = v->bytes + start;
        /* in whole groups of 3 bytes, so the pieces join into the token's one base64 text */
        for (uint32_t k = 0; k < len; k += 3 * 64) {
            size_t n = len - k < 3 * 64 ? len - k : 3 * 64;
            st__base64_encode(p + k, n, b64);
            put(w, b64, st__base64_encoded_len(n));
        }
        put(w, " ", 1);
        put_u64(w, i);
        put(w, "\n", 1);
    }
}

/* ---- JSON ------------------------------------------------------------------------------------ */

/* The byte-level alphabet of GPT-2 and HuggingFace's ByteLevel: the printable bytes 33-126,
 * 161-172 and 174-255 stand for themselves; the 68 others take the code points 256, 257, ...
 * in byte order. chars[b] is the UTF-8 of byte b's character (1 or 2 bytes, len[b]), with '"'
 * and '\' already escaped as a JSON string needs them. */
typedef struct byte_chars {
    uint8_t utf8[256][2];
    uint8_t len[256];
} byte_chars;

static void byte_chars_init(byte_chars *c) {
    uint32_t extra = 0;
    for (uint32_t b = 0; b < 256; b++) {
        int printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
        uint32_t cp = printable ? b : 256 + extra++;
        if (cp == '"' || cp == '\\') {
            c->utf8[b][0] = '\\';
            c->utf8[b][1] = (uint8_t)cp;
            c->len[b] = 2;
        } else if (cp < 0x80) {
            c->utf8[b][0] = (uint8_t)cp;
            c->len[b] = 1;
        } else {
            c->utf8[b][0] = (uint8_t)(0xC0 | (cp >> 6));
            c->utf8[b][1] = (uint8_t)(0x80 | (cp & 0x3F));
            c->len[b] = 2;
        }
    }
}

/* A token's bytes as a JSON string of byte-level characters. */
static void put_token(out_buf *w, const byte_chars *c, const uint8_t *p, size_t n) {
    put(w, "\"", 1);
    for (size_t k = 0; k < n; k++) put(w, c->utf8[p[k]], c->len[p[k]]);
    put(w, "\"", 1);
}

/* UTF-8 text as a JSON string, escaped as Python's json module escapes it with
 * ensure_ascii=False: '"', '\' and the control characters below U+0020 (\b \t \n \f \r by
 * name, the others as \u00XX in lower case); everything else as it is. */
static void put_text(out_buf *w, const uint8_t *p, size_t n) {
    static const char hex[] = "0123456789abcdef";
    put(w, "\"", 1);
    size_t run = 0; /* bytes since the last escape, written in one go */
    for (size_t k = 0; k < n; k++) {
        uint8_t ch = p[k];
        if (ch >= 0x20 && ch != '"' && ch != '\\') continue;
        put(w, p + run, k - run);
        run = k + 1;
        char e[6] = {'\\', (char)ch, 0, 0, 0, 0};
        size_t el = 2;
        switch (ch) {
        case '"': case '\\': break;
        case '\b': e[1] = 'b'; break;
        case '\t': e[1] = 't'; break;
        case '\n': e[1] = 'n'; break;
        case '\f': e[1] = 'f'; break;
        case '\r': e[1] = 'r'; break;
        default:
            e[1] = 'u';
            e[2] = '0';
            e[3] = '0';
            e[4] = hex[ch >> 4];
            e[5] = hex[ch & 15];
            el = 6;
        }
        put(w, e, el);
    }
    put(w, p + run, n - run);
    put(w, "\"", 1);
}

/* json.dumps's layout with indent=1: a container's items one a line, each indented one space
 * deeper than the container, separated by ",", the closing bracket on a line of its own at the
 * container's depth; an empty container is "[]" or "{}"; a key is followed by ": ". The fixed
 * text of the object lies between its four lists (added tokens, vocab, merges) and the pattern: */
static const char hf_head[] = "{\n \"version\": \"1.0\",\n \"truncation\": null,\n \"padding\": null,\n"
                              " \"added_tokens\": [";
static const char hf_added_id[] = "{\n   \"id\": ";
static const char hf_added_content[] = ",\n   \"content\": ";
static const char hf_added_rest[] = ",\n   \"single_word\": false,\n   \"lstrip\": false,\n   \"rstrip\": false,\n"
                                    "   \"normalized\": false,\n   \"special\": true\n  }";
static const char hf_pattern[] = ",\n \"normalizer\": null,\n \"pre_tokenizer\": {\n  \"type\": \"Sequence\",\n"
                                 "  \"pretokenizers\": [\n   {\n    \"type\": \"Split\",\n    \"pattern\": {\n"
                                 "     \"Regex\": ";
static const char hf_vocab[] = "\n    },\n    \"behavior\": \"Isolated\",\n    \"invert\": false\n   },\n   {\n"
                               "    \"type\": \"ByteLevel\",\n    \"add_prefix_space\": false,\n"
                               "    \"trim_offsets\": true,\n    \"use_regex\": false\n   }\n  ]\n },\n"
                               " \"post_processor\": null,\n \"decoder\": {\n  \"type\": \"ByteLevel\",\n"
                               "  \"add_prefix_space\": true,\n  \"trim_offsets\": true,\n  \"use_regex\": true\n },\n"
                               " \"model\": {\n  \"type\": \"BPE\",\n  \"dropout\": null,\n  \"unk_token\": null,\n"
                               "  \"continuing_subword_prefix\": null,\n  \"end_of_word_suffix\": null,\n"
                               "  \"fuse_unk\": false,\n  \"byte_fallback\": false,\n  \"ignore_merges\": false,\n"
                               "  \"vocab\": {";
/* deepseek_v3: Splits before the last one (st__pattern_regex's), \p{N}{1,3} and the CJK ranges
 * U+4E00-U+9FA5, U+3040-U+309F, U+30A0-U+30FF, written as DeepSeek V3's tokenizer.json writes them */
static const char *const hf_deepseek_first[2] = {
    "\\p{N}{1,3}", "[\xE4\xB8\x80-\xE9\xBE\xA5\xE3\x81\x80-\xE3\x82\x9F\xE3\x82\xA0-\xE3\x83\xBF]+"};
static const char hf_next_split[] = "\n    },\n    \"behavior\": \"Isolated\",\n    \"invert\": false\n   },\n   {\n"
                                    "    \"type\": \"Split\",\n    \"pattern\": {\n     \"Regex\": ";
static const char hf_merges[] = ",\n  \"merges\": [";
static const char hf_tail[] = "\n }\n}\n";

/* Before item k of a list whose items stand at the given indent ("\n" and the spaces). */
static void list_item(out_buf *w, size_t k, const char *indent) {
    if (k) put(w, ",", 1);
    put_s(w, indent);
}

/* The end of a list of n items: its closing bracket on a line of its own at the list's indent
 * ("\n" and the spaces), or right after the opening one when it is empty ("[]", "{}"). */
static void list_end(out_buf *w, size_t n, const char *indent, char bracket) {
    if (n) put_s(w, indent);
    put(w, &bracket, 1);
}

/* The special strings in the order of the added tokens: by id, an id's strings in the order of
 * st_encoding_special_string (its first string, then its further ones as given). */
static st_status special_order(const st_vocab *v, const st_allocator *a, uint64_t **order, size_t *n) {
    *n = st__vocab_n_strings(v);
    *order = NULL;
    if (!*n) return ST_OK;
    *order = (uint64_t *)st__alloc(a, *n * sizeof(uint64_t));
    if (!*order) return ST_ERR_OUT_OF_MEMORY;
    size_t m = 0;
    for (uint32_t k = 0; k < *n; k++) {
        uint32_t id, start, len;
        if (st__vocab_special_string(v, k, &id, &start, &len)) (*order)[m++] = ((uint64_t)id << 32) | k;
    }
    st__sort_u64(*order, m);
    *n = m;
    return ST_OK;
}

/* The rules as pairs by rule index (rule i makes id base + i), from the rules table, which is
 * keyed by pair: pairs[2i], pairs[2i + 1]. */
static st_status rules_pairs(const st__export_source *src, uint32_t n_rules, uint32_t **pairs) {
    *pairs = NULL;
    if (!n_rules) return ST_OK;
    uint32_t *p = (uint32_t *)st__alloc(src->alloc, (size_t)n_rules * 2 * sizeof(uint32_t));
    if (!p) return ST_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < 2 * (size_t)n_rules; i++) p[i] = ST_NO_TOKEN;
    const st_rules *r = src->rules;
    for (size_t s = 0; s <= r->mask; s++) {
        uint64_t slot = r->slots[s];
        if (!slot) continue;
        uint32_t token = (uint32_t)slot & ST_RULES_MAX_IDS;
        uint64_t key = slot >> 21;
        if (token < r->base || token - r->base >= n_rules) continue;
        p[2 * (size_t)(token - r->base)] = (uint32_t)(key >> 21);
        p[2 * (size_t)(token - r->base) + 1] = (uint32_t)key & ST_RULES_MAX_IDS;
    }
    *pairs = p;
    return ST_OK;
}

static st_status write_hf_json(const st__export_source *src, out_buf *w, st_error *err) {
    const st_vocab *v = src->vocab;
    const st_rules *r = src->rules;
    uint32_t n_rules = v->n_ordinary > r->base ? v->n_ordinary - r->base : 0;
    uint64_t *order = NULL;
    uint32_t *pairs = NULL;
    size_t n_strings = 0;
    st_status st = special_order(v, src->alloc, &order, &n_strings);
    if (st == ST_OK) st = rules_pairs(src, n_rules, &pairs);
    if (st != ST_OK) {
        st__error_set(err, st, ST_UNIT_NONE, 0, NULL);
        goto done;
    }
    byte_chars c;
    byte_chars_init(&c);
    put_s(w, hf_head);
    for (size_t k = 0; k < n_strings; k++) {
        uint32_t id, start, len;
        if (!st__vocab_special_string(v, (uint32_t)order[k], &id, &start, &len)) continue; /* checked in special_order */
        list_item(w, k, "\n  ");
        put_s(w, hf_added_id);
        put_u64(w, id);
        put_s(w, hf_added_content);
        put_text(w, v->bytes + start, len);
        put_s(w, hf_added_rest);
    }
    list_end(w, n_strings, "\n ", ']');
    /* the pattern as a Split pre-tokenizer (Isolated: every piece regex.findall gives, the same
     * pieces since the pattern matches every character; superbpe, llama3, qwen2: the model's own
     * Split; deepseek_v3: its three Splits in sequence), then ByteLevel without its own regex */
    put_s(w, hf_pattern);
    if (src->pattern == ST_PATTERN_DEEPSEEK_V3) {
        for (int k = 0; k < 2; k++) {
            size_t n = 0;
            while (hf_deepseek_first[k][n]) n++;
            put_text(w, (const uint8_t *)hf_deepseek_first[k], n);
            put_s(w, hf_next_split);
        }
    }
    const char *regex = st__pattern_regex(src->pattern);
    size_t regex_len = 0;
    while (regex[regex_len]) regex_len++;
    put_text(w, (const uint8_t *)regex, regex_len);
    put_s(w, hf_vocab);
    size_t k = 0;
    for (uint32_t i = 0; i < v->n_ids; i++) {
        uint32_t start, len, first;
        if (!exported(src, i, &start, &len, &first)) continue;
        list_item(w, k++, "\n   ");
        put_token(w, &c, v->bytes + start, len);
        put(w, ": ", 2);
        put_u64(w, i);
    }
    list_end(w, k, "\n  ", '}');
    /* each rule as its two parts' strings (a part left out as a duplicate has its first id's
     * bytes, so the same string) */
    put_s(w, hf_merges);
    for (uint32_t i = 0; i < n_rules; i++) {
        uint32_t sl, ll, sr, lr;
        if (!st__vocab_span(v, pairs[2 * (size_t)i], &sl, &ll) || !st__vocab_span(v, pairs[2 * (size_t)i + 1], &sr, &lr)) {
            st = st__error_set(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "rule without its parts");
            goto done;
        }
        list_item(w, i, "\n   [\n    ");
        put_token(w, &c, v->bytes + sl, ll);
        put(w, ",\n    ", 6);
        put_token(w, &c, v->bytes + sr, lr);
        put(w, "\n   ]", 5);
    }
    list_end(w, n_rules, "\n  ", ']');
    put_s(w, hf_tail);
done:
    if (order) st__free(src->alloc, order, st__vocab_n_strings(v) * sizeof(uint64_t));
    if (pairs) st__free(src->alloc, pairs, (size_t)n_rules * 2 * sizeof(uint32_t));
    return st;
}

/* ---- the calls ------------------------------------------------------------------------------- */

st_status st__export_write(const st__export_source *src, int format, char *out, size_t cap, size_t *out_len,
                           st_error *err) {
    st_status st = refuse(src, format, err);
    if (st != ST_OK) return st;
    out_buf w = {(uint8_t *)out, cap, 0};
    if (format == ST_EXPORT_TIKTOKEN) write_tiktoken(src, &w);
    else if ((st = write_hf_json(src, &w, err)) != ST_OK) return st;
    return finish(&w, out_len, err);
}

st_status st__export_duplicates(const st__export_source *src, uint32_t *pairs, size_t cap, size_t *n, st_error *err) {
    const st_vocab *v = src->vocab;
    size_t count = 0;
    for (uint32_t i = 0; i < v->n_ids; i++) {
        uint32_t start, len, first;
        if (exported(src, i, &start, &len, &first) || first == ST_NO_TOKEN) continue;
        if (count < cap) {
            pairs[2 * count] = i;
            pairs[2 * count + 1] = first;
        }
        count++;
    }
    *n = count;
    return st__error_status(err, count > cap ? ST_ERR_BUFFER_TOO_SMALL : ST_OK);
}
