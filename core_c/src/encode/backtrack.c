/* The linear encoder for rank vocabularies; backtrack.h explains the method and the tables. */
#include "backtrack.h"
#include "../text/utf8.h"

#define BT_ID_MASK ((1u << 21) - 1)   /* pair slots pack three ids of 21 bits each */
#define BT_MAX_NODES ((1u << 24) - 2) /* trie keys pack a node and a byte into 32 bits */
#define BT_MAX_TOKEN_LEN 65536u       /* longer tokens: no tables (the length sort is by bucket) */

#define BT_LEAF 0x80000000u      /* flag on a trie node value: the node has no children */
#define BT_NODE_MASK 0x7FFFFFFFu
#define BT_CHAR_NODES (1u << 22)   /* character edges hold node ids below this */
#define BT_CHAR_LEAF (1u << 22)
#define BT_CHAR_MID (1u << 23)

ST_INLINE int is_reachable(const st_backtrack *bt, uint32_t id) {
    return id < bt->n_ids && ((bt->reach[id >> 6] >> (id & 63)) & 1);
}

/* Most lookups in both tables are for keys that are not there (the step past the end of a
 * match; a pair of parts that is no merge), and the tables are megabytes, so each has a Bloom
 * filter of about ten bits a key, one 64-bit word a query, that answers most of those misses
 * from the second-level cache. The high 32 bits of a key's mix pick the table slot and the
 * word, the low 12 bits two bits in it. */
ST_INLINE uint64_t filter_bits(uint64_t h) { return (1ull << (h & 63)) | (1ull << ((h >> 6) & 63)); }
/* The word: from the high bits, as the table slot (slot_at), so that keys added in slot order
 * fill the filter front to back too (the trie is built so). */
ST_INLINE uint32_t filter_word(uint32_t mask, uint64_t h) { return (uint32_t)(((h >> 32) * ((uint64_t)mask + 1)) >> 32); }
ST_INLINE int filter_has(const uint64_t *f, uint32_t mask, uint64_t h) {
    uint64_t b = filter_bits(h);
    return (f[filter_word(mask, h)] & b) == b;
}
ST_INLINE void filter_add(uint64_t *f, uint32_t mask, uint64_t h) { f[filter_word(mask, h)] |= filter_bits(h); }
/* words for a filter of about ten bits a key: a power of two */
static uint32_t filter_words(size_t keys) {
    uint32_t w = 64;
    while ((uint64_t)w * 64 < (uint64_t)keys * 10 && w < (1u << 20)) w *= 2;
    return w;
}

ST_INLINE uint32_t slot_at(uint64_t h, uint32_t cap) { return (uint32_t)(((h >> 32) * (uint64_t)cap) >> 32); }

/* The mix of a table key: one multiply (Fibonacci hashing) spreads the keys over the high
 * bits, which pick the slot; folding them onto the low bits gives the filter its bits. A
 * third of the cost of a full finalizer, and the tables are probed about a million times
 * while they are built and once or twice a byte while encoding. */
ST_INLINE uint64_t bt_mix(uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

/* The value stored for key (its mix h) in a trie table, ST_NO_TOKEN if none. */
ST_INLINE uint32_t trie_probe(const uint64_t *trie, uint32_t cap, uint32_t key, uint64_t h) {
    uint32_t i = slot_at(h, cap);
    for (;;) {
        uint64_t s = trie[i];
        if ((uint32_t)s == key) return (uint32_t)(s >> 32);
        if (!s) return ST_NO_TOKEN;
        if (++i == cap) i = 0;
    }
}

ST_INLINE uint32_t trie_key(uint32_t node, uint8_t byte) { return (((node & BT_NODE_MASK) << 8) | byte) + 1; }

/* The child of node by byte in the trie, ST_NO_TOKEN if none (flags kept in the value): its
 * filter first. */
ST_INLINE uint32_t trie_child(const st_backtrack *bt, uint32_t node, uint8_t byte) {
    uint32_t key = trie_key(node, byte);
    uint64_t h = bt_mix(key);
    if (!filter_has(bt->trie_filter, bt->trie_filter_mask, h)) return ST_NO_TOKEN;
    return trie_probe(bt->trie, bt->trie_cap, key, h);
}

/* The character edge from node by code point cp: the value (BT_CHAR_* flags), or ST_NO_TOKEN. */
ST_INLINE uint32_t char_child(const st_backtrack *bt, uint32_t node, uint32_t cp) {
    uint64_t key = ((uint64_t)(node & BT_NODE_MASK) << 16) | cp;
    uint64_t h = bt_mix(key + 0x100000000000ull); /* apart from the byte keys' hashes */
    if (!filter_has(bt->chars_filter, bt->chars_filter_mask, h)) return ST_NO_TOKEN;
    uint32_t i = slot_at(h, bt->chars_cap);
    for (;;) {
        uint64_t s = bt->chars[i];
        if (!s) return ST_NO_TOKEN;
        if ((s & 0xFFFFFFFFFFull) == key) return (uint32_t)(s >> 40);
        if (++i == bt->chars_cap) i = 0;
    }
}

ST_INLINE uint32_t pair_get(const st_backtrack *bt, uint32_t left, uint32_t right) {
    uint64_t key = ((uint64_t)left << 21) | right;
    uint64_t h = bt_mix(key);
    if (!filter_has(bt->pair_filter, bt->pair_filter_mask, h)) return ST_NO_TOKEN;
    uint32_t i = slot_at(h, bt->pair_cap);
    for (;;) {
        uint64_t s = bt->pairs[i];
        if (!s) return ST_NO_TOKEN;
        if ((s >> 21) == key) return (uint32_t)s & BT_ID_MASK;
        if (++i == bt->pair_cap) i = 0;
    }
}

/* Is [a, b] what merging the bytes of a followed by the bytes of b gives? Undo the later of
 * the two tokens' last merges, step by step down their facing edges (a's right parts, b's left
 * parts); at each step the two parts that face each other across the boundary must not join
 * into a token that merging would make before the merge being undone. Ties go to the left
 * (tiktoken merges the leftmost of equal ranks), hence the +1 on the right side's limit. */
static int pair_ok(const st_backtrack *bt, uint32_t a, uint32_t b) {
    uint32_t limit = 0xFFFFFFFFu;
    for (;;) {
        uint32_t c = pair_get(bt, a, b);
        if (c != ST_NO_TOKEN && c < limit) return 0;
        if (a > b) {
            limit = a;
            a = bt->split[2 * (size_t)a + 1];
            if (a == limit) { /* a is a single byte: undo b instead */
                limit = b + 1;
                b = bt->split[2 * (size_t)b];
                if (b + 1 == limit) return 1;
            }
        } else {
            limit = b + 1;
            b = bt->split[2 * (size_t)b];
            if (b + 1 == limit) {
                limit = a;
                a = bt->split[2 * (size_t)a + 1];
                if (a == limit) return 1;
            }
        }
    }
}

/* ---- building the tables ------------------------------------------------------------------- */

/* Is token x before token y in byte order (a prefix before what extends it)? */
static int tok_before(const st_vocab *v, uint32_t x, uint32_t y) {
    uint32_t xa = v->offsets[x], xl = v->offsets[x + 1] - xa, ya = v->offsets[y], yl = v->offsets[y + 1] - ya;
    int c = st__memcmp(v->bytes + xa, v->bytes + ya, xl < yl ? xl : yl);
    return c ? c < 0 : xl < yl;
}

/* Move ids[r] down the max-heap ids[0..end) (by bytes) to its place. */
static void sift_down(const st_vocab *v, uint32_t *ids, size_t r, size_t end) {
    for (;;) {
        size_t c = 2 * r + 1;
        if (c >= end) return;
        if (c + 1 < end && tok_before(v, ids[c], ids[c + 1])) c++;
        if (!tok_before(v, ids[r], ids[c])) return;
        uint32_t t = ids[r];
        ids[r] = ids[c];
        ids[c] = t;
        r = c;
    }
}

/* Sort ids[0..n) by their tokens' bytes: insertion sort for a few, heapsort past that (a
 * vocabulary could hold any number of tokens that share their first 8 bytes). */
static void sort_by_bytes(const st_vocab *v, uint32_t *ids, size_t n) {
    if (n <= 16) {
        for (size_t i = 1; i < n; i++) {
            uint32_t x = ids[i];
            size_t j = i;
            for (; j > 0 && tok_before(v, x, ids[j - 1]); j--) ids[j] = ids[j - 1];
            ids[j] = x;
        }
        return;
    }
    for (size_t k = n / 2; k-- > 0;) sift_down(v, ids, k, n);
    for (size_t end = n - 1; end > 0; end--) {
        uint32_t t = ids[0];
        ids[0] = ids[end];
        ids[end] = t;
        sift_down(v, ids, 0, end);
    }
}

/* The ids of the ordinary tokens in byte order: every token after its prefixes, and the tokens
 * that extend one right after it, so the trie comes out of one pass with a stack (a hash probe
 * a new edge instead of one a byte of every token, in an order where each touches the cache).
 * A radix sort on the first 8 bytes (big-endian, zero-padded), then the few runs of equal keys
 * by their whole bytes. */
static uint32_t *ordinary_in_byte_order(const st_vocab *v, const st_allocator *a, size_t *count) {
    size_t n = 0;
    for (uint32_t id = 0; id < v->n_ids; id++)
        if (v->offsets[id + 1] > v->offsets[id] && !st__vocab_is_special(v, id)) n++;
    size_t m = n ? n : 1, size = m * 24 + 8 * 256 * sizeof(uint32_t);
    uint8_t *mem = (uint8_t *)st__alloc(a, size);
    uint32_t *order = (uint32_t *)st__alloc(a, m * sizeof(uint32_t));
    if (!mem || !order) {
        if (mem) st__free(a, mem, size);
        if (order) st__free(a, order, m * sizeof(uint32_t));
        return NULL;
    }
    uint64_t *key = (uint64_t *)(void *)mem, *key2 = key + m;
    uint32_t *ids = order, *ids2 = (uint32_t *)(void *)(key2 + m), *cnt = ids2 + m; /* cnt: 8 x 256 */
    st__memset(cnt, 0, 8 * 256 * sizeof(uint32_t));
    size_t k = 0;
    for (uint32_t id = 0; id < v->n_ids; id++) {
        uint32_t at = v->offsets[id], len = v->offsets[id + 1] - at;
        if (!len || st__vocab_is_special(v, id)) continue;
        /* one little-endian read (the packed bytes are padded by 8), masked, then byte-swapped */
        uint64_t x = st__load_le64(v->bytes + at) & (len >= 8 ? ~0ull : (1ull << (8 * len)) - 1);
        x = ((x & 0x00FF00FF00FF00FFull) << 8) | ((x >> 8) & 0x00FF00FF00FF00FFull);
        x = ((x & 0x0000FFFF0000FFFFull) << 16) | ((x >> 16) & 0x0000FFFF0000FFFFull);
        x = (x << 32) | (x >> 32);
        key[k] = x;
        ids[k++] = id;
        for (int d = 0; d < 8; d++) cnt[256 * d + ((x >> (8 * d)) & 255)]++;
    }
    for (int d = 0; d < 8; d++) { /* stable LSD passes, a byte each, the last byte first */
        uint32_t *c = cnt + 256 * d, sum = 0;
        int shift = 8 * d;
        if (n && c[(key[0] >> shift) & 255] == n) continue; /* one digit for all: nothing moves */
        for (int b = 0; b < 256; b++) {
            uint32_t x = c[b];
            c[b] = sum;
            sum += x;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t at = c[(key[i] >> shift) & 255]++;
            key2[at] = key[i];
            ids2[at] = ids[i];
        }
        uint64_t *tk = key;
        key = key2;
        key2 = tk;
        uint32_t *ti = ids;
        ids = ids2;
        ids2 = ti;
    }
    if (ids != order) st__memcpy(order, ids, n * sizeof(uint32_t));
    for (size_t i = 0; i < n;) { /* runs of one key: by their whole bytes */
        size_t j = i + 1;
        while (j < n && key[j] == key[i]) j++;
        if (j - i > 1) sort_by_bytes(v, order + i, j - i);
        i = j;
    }
    st__free(a, mem, size);
    *count = n;
    return order;
}

void st__backtrack_free(st_backtrack *bt, const st_allocator *a) {
    if (bt->owned) st__free(a, bt->owned, bt->owned_size);
    if (bt->trie_owned) st__free(a, bt->trie_owned, bt->trie_owned_size);
    if (bt->trie_filter_owned_size) st__free(a, (void *)bt->trie_filter, bt->trie_filter_owned_size);
    if (bt->chars_owned) st__free(a, bt->chars_owned, bt->chars_owned_size);
    st__memset(bt, 0, sizeof *bt);
}

/* The character edges of the trie (nodes 0..n_nodes-1; up: the parent of each node,
 * ST_NO_TOKEN for the root's children; via: the byte into it; inner: bit per node with a
 * child): for every node X inside the trie (not the root: by_char covers it) followed by the
 * bytes of a whole character of 2 or 3 bytes, an edge (X, code point) to the node after them. */
static st_status build_char_edges(st_backtrack *bt, const uint32_t *up, const uint8_t *via, const uint64_t *inner,
                                  uint32_t n_nodes, const st_allocator *a) {
    uint64_t *chars = NULL, *cf = NULL;
    uint32_t cap = 0, cf_words = 0;
    for (int pass = 0; pass < 2; pass++) {
        size_t count = 0;
        for (uint32_t y = 0; y < n_nodes; y++) {
            /* y ends a character of 2 or 3 bytes that starts below a node x */
            uint32_t p1 = up[y], p2, x, cp, mid;
            if (p1 == ST_NO_TOKEN || (via[y] & 0xC0) != 0x80) continue;
            if (via[p1] >= 0xC2 && via[p1] < 0xE0) {
                x = up[p1];
                cp = ((uint32_t)(via[p1] & 0x1F) << 6) | (via[y] & 0x3F);
                mid = is_reachable(bt, p1);
            } else if ((via[p1] & 0xC0) == 0x80 && (p2 = up[p1]) != ST_NO_TOKEN && via[p2] >= 0xE0 && via[p2] < 0xF0) {
                x = up[p2];
                cp = ((uint32_t)(via[p2] & 0x0F) << 12) | ((uint32_t)(via[p1] & 0x3F) << 6) | (via[y] & 0x3F);
                mid = is_reachable(bt, p1) || is_reachable(bt, p2);
            } else {
                continue;
            }
            if (x == ST_NO_TOKEN) continue; /* from the root: by_char */
            count++;
            if (pass == 0) continue;
            uint32_t value = y | (((inner[y >> 6] >> (y & 63)) & 1) ? 0u : BT_CHAR_LEAF) | (mid ? BT_CHAR_MID : 0u);
            uint64_t key = ((uint64_t)x << 16) | cp;
            uint64_t h = bt_mix(key + 0x100000000000ull);
            filter_add(cf, cf_words - 1, h);
            uint32_t i = slot_at(h, cap);
            while (chars[i])
                if (++i == cap) i = 0;
            chars[i] = ((uint64_t)value << 40) | key;
        }
        if (pass == 0) {
            cap = (uint32_t)(count + count * 2 / 3 + 1);
            cf_words = filter_words(count * 8 / 10);
            bt->chars_owned_size = ((size_t)cap + cf_words) * 8;
            chars = (uint64_t *)st__alloc(a, bt->chars_owned_size);
            if (!chars) return ST_ERR_OUT_OF_MEMORY;
            st__memset(chars, 0, bt->chars_owned_size);
            cf = chars + cap;
        }
    }
    bt->chars = chars;
    bt->chars_filter = cf;
    bt->chars_cap = cap;
    bt->chars_filter_mask = cf_words - 1;
    bt->chars_owned = chars;
    return ST_OK;
}

st_status st__backtrack_build(st_backtrack *bt, const st_vocab *v, const st_allocator *a) {
    st__memset(bt, 0, sizeof *bt);
    uint32_t n = v->n_ids, max_len = 0;
    if (n == 0 || n >= BT_ID_MASK) return ST_OK;
    for (int b = 0; b < 256; b++)
        if (v->byte_ids[b] == ST_NO_TOKEN) return ST_OK; /* not byte-level: the merge loop reports */
    for (uint32_t id = 0; id < n; id++) {
        uint32_t len = v->offsets[id + 1] - v->offsets[id];
        if (len > max_len) max_len = len;
    }
    if (max_len > BT_MAX_TOKEN_LEN) return ST_OK;

    size_t n_ord = 0;
    uint32_t *order = ordinary_in_byte_order(v, a, &n_ord);
    if (!order) return ST_ERR_OUT_OF_MEMORY;
    uint32_t *lcp = NULL, *path = NULL; /* see step 1 */
    size_t lcp_size = (n_ord ? n_ord : 1) * sizeof(uint32_t), path_size = ((size_t)max_len + 1) * 8;
    uint64_t *inner = NULL, *edges = NULL;
    size_t inner_size = 0, edges_size = 0;

    /* the fixed tables, in one block */
    size_t words = ((size_t)n + 63) / 64;
    uint32_t pair_cap = (uint32_t)(n_ord + n_ord * 2 / 3 + 1); /* at most 60% full */
    uint32_t pf_words = filter_words(n_ord);
    size_t size = (256 + 65536) * 4 + (size_t)n * 12 + words * 8 + ((size_t)pair_cap + pf_words) * 8;
    size = (size + 7) & ~(size_t)7;
    uint8_t *block = (uint8_t *)st__alloc(a, size);
    if (!block) goto out_of_memory;
    uint64_t *reach = (uint64_t *)(void *)block;
    uint64_t *pairs = reach + words;
    uint64_t *pair_filter = pairs + pair_cap;
    uint32_t *root = (uint32_t *)(void *)(pair_filter + pf_words);
    uint32_t *by_char = root + 256;
    uint32_t *split = by_char + 65536;
    uint32_t *prefix = split + 2 * (size_t)n;
    st__memset(reach, 0, words * 8);
    st__memset(pairs, 0, ((size_t)pair_cap + pf_words) * 8);
    st__memset(root, 0xFF, 256 * 4);
    st__memset(split, 0xFF, (size_t)n * 8);
    st__memset(prefix, 0xFF, (size_t)n * 4);
    bt->owned = block;
    bt->owned_size = size;
    bt->n_ids = n;
    bt->reach = reach;
    bt->pairs = pairs;
    bt->pair_cap = pair_cap;
    bt->pair_filter = pair_filter;
    bt->pair_filter_mask = pf_words - 1;
    bt->root = root;
    bt->by_char = by_char;
    bt->split = split;
    bt->prefix = prefix;

    /* 1. the trie, from the tokens in byte order: the path of the token before is on a stack,
     *    a token shares its first lcp bytes with it and adds a node a byte past them (the last
     *    is the token's own, numbered by its id; the others are no tokens, as a token that is a
     *    prefix comes before, and get numbers from n_ids up). First a pass that counts them, to
     *    size the table; then one that fills it. A node is a leaf unless the next token extends
     *    it; each token's longest proper prefix token is the last token node on its path. */
    lcp = (uint32_t *)st__alloc(a, lcp_size);
    path = (uint32_t *)st__alloc(a, path_size);
    if (!lcp || !path) goto out_of_memory;
    size_t n_edges = 0, n_inter = 0;
    for (size_t k = 0; k < n_ord; k++) {
        uint32_t at = v->offsets[order[k]], len = v->offsets[order[k] + 1] - at, l = 0;
        if (k > 0) {
            uint32_t pat = v->offsets[order[k - 1]], plen = v->offsets[order[k - 1] + 1] - pat;
            uint32_t lim = plen < len ? plen : len;
            while (l < lim && v->bytes[pat + l] == v->bytes[at + l]) l++;
            if (l == len) goto unsuitable; /* the same bytes twice (a rank file never has them) */
        }
        lcp[k] = l;
        n_edges += len - (l ? l : 1);
        n_inter += len - l - 1;
    }
    if (n_inter > BT_MAX_NODES - n || n_edges > 0x7FFFFFFFu) goto unsuitable; /* ids and slots fit */
    uint32_t n_nodes = n + (uint32_t)n_inter;
    int with_chars = n_nodes < BT_CHAR_NODES;
    size_t lw = ((size_t)n_nodes + 63) / 64;
    inner_size = lw * 8 + (with_chars ? (size_t)n_nodes * 5 : 0);
    inner = (uint64_t *)st__alloc(a, inner_size); /* bit per node with a child; then up, via */
    if (!inner) goto out_of_memory;
    st__memset(inner, 0, lw * 8);
    uint32_t *up = (uint32_t *)(void *)(inner + lw); /* parent of each node; via: the byte into it */
    uint8_t *via = (uint8_t *)(up + (with_chars ? n_nodes : 0));
    if (with_chars) st__memset(up, 0xFF, (size_t)n_nodes * 4); /* ids of no node (specials, gaps): none */
    uint32_t *last_tok = path + max_len + 1; /* last_tok[d]: the last token node on path[1..d] */
    last_tok[0] = ST_NO_TOKEN;
    edges_size = (n_edges ? n_edges : 1) * 8;
    edges = (uint64_t *)st__alloc(a, edges_size); /* (value << 32 | key) of each edge, as made */
    if (!edges) goto out_of_memory;
    size_t n_put = 0;
    uint32_t next_node = n;
    for (size_t k = 0; k < n_ord; k++) {
        uint32_t id = order[k], at = v->offsets[id], len = v->offsets[id + 1] - at;
        const uint8_t *t = v->bytes + at;
        int extended = k + 1 < n_ord && lcp[k + 1] >= len;
        for (uint32_t d = lcp[k] + 1; d <= len; d++) {
            uint32_t node = d == len ? id : next_node++;
            uint32_t leaf = d == len && !extended ? BT_LEAF : 0u;
            if (!leaf) inner[node >> 6] |= 1ull << (node & 63);
            if (d == 1) {
                root[t[0]] = node | leaf;
                if (with_chars) up[node] = ST_NO_TOKEN;
            } else {
                uint32_t key = ((path[d - 1] << 8) | t[d - 1]) + 1;
                edges[n_put++] = ((uint64_t)(node | leaf) << 32) | key;
                if (with_chars) up[node] = path[d - 1];
            }
            if (with_chars) via[node] = t[d - 1];
            path[d] = node;
            last_tok[d] = node < n ? node : last_tok[d - 1];
        }
        prefix[id] = last_tok[len - 1];
    }
    st__free(a, path, path_size);
    path = NULL;
    st__free(a, lcp, lcp_size);
    lcp = NULL;
    /* the edges into the table and its filter by their slots' order, a run of slots at a time
     * (in the order made, each would be a cache miss in a table of megabytes): a counting sort
     * on the slot's top bits, then the inserts, each near the one before */
    {
        uint32_t nb = 1;
        while (nb < 4096 && (size_t)nb * 64 < n_edges) nb *= 2; /* buckets of about 64 slots or more */
        uint32_t bshift = 0;
        while ((1u << bshift) < nb) bshift++;
        size_t esize2 = n_edges * 8 + ((size_t)nb + 1) * sizeof(uint32_t);
        uint64_t *sorted = (uint64_t *)st__alloc(a, esize2 ? esize2 : 8);
        if (!sorted) goto out_of_memory;
        uint32_t *start = (uint32_t *)(void *)(sorted + n_edges);
        st__memset(start, 0, ((size_t)nb + 1) * sizeof(uint32_t));
#define EDGE_BUCKET(e) (bshift ? (uint32_t)(bt_mix((uint32_t)(e)) >> 32) >> (32 - bshift) : 0u)
        for (size_t e = 0; e < n_edges; e++) start[EDGE_BUCKET(edges[e]) + 1]++;
        for (uint32_t b = 0; b < nb; b++) start[b + 1] += start[b];
        for (size_t e = 0; e < n_edges; e++) sorted[start[EDGE_BUCKET(edges[e])]++] = edges[e];
#undef EDGE_BUCKET
        st__free(a, edges, edges_size);
        edges = NULL;
        uint32_t tcap = (uint32_t)(n_edges + n_edges * 2 / 3 + 1), tf_words = filter_words(n_edges * 8 / 10);
        uint64_t *trie = (uint64_t *)st__alloc(a, (size_t)tcap * 8);
        uint64_t *tf = trie ? (uint64_t *)st__alloc(a, (size_t)tf_words * 8) : NULL;
        if (!tf) {
            if (trie) st__free(a, trie, (size_t)tcap * 8);
            st__free(a, sorted, esize2 ? esize2 : 8);
            goto out_of_memory;
        }
        bt->trie = trie; /* owned from here on: freed with bt */
        bt->trie_cap = tcap;
        bt->trie_owned = trie;
        bt->trie_owned_size = (size_t)tcap * 8;
        bt->trie_filter = tf;
        bt->trie_filter_mask = tf_words - 1;
        bt->trie_filter_owned_size = (size_t)tf_words * 8;
        st__memset(trie, 0, (size_t)tcap * 8);
        st__memset(tf, 0, (size_t)tf_words * 8);
        for (size_t e = 0; e < n_edges; e++) {
            uint32_t key = (uint32_t)sorted[e];
            uint64_t h = bt_mix(key);
            filter_add(tf, tf_words - 1, h);
            uint32_t i = slot_at(h, tcap);
            while (trie[i])
                if (++i == tcap) i = 0;
            trie[i] = sorted[e];
        }
        st__free(a, sorted, esize2 ? esize2 : 8);
    }

    /* 2. splits, in rank order: a token is reachable when some prefix token and the token
     *    spelling the rest, both of lower rank and reachable, form a compatible pair; then BPE
     *    on its bytes ends by joining exactly those two (there is at most one such pair) */
    for (uint32_t id = 0; id < n; id++) {
        uint32_t start = v->offsets[id], len = v->offsets[id + 1] - start;
        if (!len || st__vocab_is_special(v, id)) continue;
        if (len == 1) {
            split[2 * (size_t)id] = split[2 * (size_t)id + 1] = id;
            reach[id >> 6] |= 1ull << (id & 63);
            continue;
        }
        for (uint32_t left = prefix[id]; left != ST_NO_TOKEN; left = prefix[left]) {
            if (!is_reachable(bt, left)) continue; /* also every id above this one */
            uint32_t llen = v->offsets[left + 1] - v->offsets[left];
            const uint8_t *r = v->bytes + start + llen;
            /* a short rest is one masked word (the packed bytes are padded, so the read is in bounds) */
            uint32_t right = len - llen <= 8 && v->pair_ids ? st__vocab_lookup_short(v, r, len - llen)
                                                            : st__vocab_lookup(v, r, len - llen);
            if (right == ST_NO_TOKEN || !is_reachable(bt, right) || !pair_ok(bt, left, right)) continue;
            split[2 * (size_t)id] = left;
            split[2 * (size_t)id + 1] = right;
            uint64_t key = ((uint64_t)left << 21) | right;
            uint64_t h = bt_mix(key);
            filter_add(pair_filter, pf_words - 1, h);
            uint32_t i = slot_at(h, pair_cap);
            while (pairs[i])
                if (++i == pair_cap) i = 0;
            pairs[i] = (key << 21) | id;
            reach[id >> 6] |= 1ull << (id & 63);
            break;
        }
    }

    /* 3. prefixes skip unreachable tokens (in byte order, so a prefix's own is final) */
    for (size_t k = 0; k < n_ord; k++) {
        uint32_t id = order[k], p = prefix[id];
        if (p != ST_NO_TOKEN && !is_reachable(bt, p)) prefix[id] = prefix[p];
    }

    /* 4. the character edges */
    if (with_chars && build_char_edges(bt, up, via, inner, n_nodes, a) != ST_OK) goto out_of_memory;
    st__free(a, inner, inner_size);
    inner = NULL;

    /* 5. the first-character table */
    for (uint32_t cp = 0; cp < 65536; cp++) {
        uint8_t u[4];
        size_t ulen = cp >= 0x80 && (cp < 0xD800 || cp > 0xDFFF) ? st__utf8_encode(cp, u) : 0;
        uint32_t node = ulen ? root[u[0]] : ST_NO_TOKEN;
        for (size_t i = 1; i < ulen && node != ST_NO_TOKEN; i++) node = trie_child(bt, node, u[i]);
        by_char[cp] = node != ST_NO_TOKEN && is_reachable(bt, node & BT_NODE_MASK) ? node : ST_NO_TOKEN;
    }
    st__free(a, order, (n_ord ? n_ord : 1) * sizeof(uint32_t));
    bt->ready = 1;
    return ST_OK;

unsuitable:
    if (lcp) st__free(a, lcp, lcp_size);
    if (path) st__free(a, path, path_size);
    st__free(a, order, (n_ord ? n_ord : 1) * sizeof(uint32_t));
    st__backtrack_free(bt, a);
    return ST_OK;
out_of_memory:
    if (edges) st__free(a, edges, edges_size);
    if (lcp) st__free(a, lcp, lcp_size);
    if (path) st__free(a, path, path_size);
    if (inner) st__free(a, inner, inner_size);
    if (block && !bt->owned) st__free(a, block, size);
    st__free(a, order, (n_ord ? n_ord : 1) * sizeof(uint32_t));
    st__backtrack_free(bt, a);
    return ST_ERR_OUT_OF_MEMORY;
}

/* ---- encoding ------------------------------------------------------------------------------ */

/* The longest reachable token that is a prefix of p[0..n), n >= 1, valid UTF-8 from a
 * character start or from inside a character. */
ST_INLINE uint32_t longest_match(const st_backtrack *bt, const uint8_t *p, size_t n, size_t *best_len, int whole) {
    uint32_t node = ST_NO_TOKEN, best = ST_NO_TOKEN;
    size_t i = 1, blen = 0;
    uint8_t b0 = p[0];
    if (b0 >= 0xC2 && b0 < 0xF0) { /* a 2- or 3-byte character: whole, from the table */
        size_t clen = b0 < 0xE0 ? 2 : 3;
        if (n >= clen) {
            uint32_t cp = clen == 2 ? ((uint32_t)(b0 & 0x1F) << 6) | (p[1] & 0x3F)
                                    : ((uint32_t)(b0 & 0x0F) << 12) | ((uint32_t)(p[1] & 0x3F) << 6) | (p[2] & 0x3F);
            node = bt->by_char[cp];
            if (node != ST_NO_TOKEN) { best = node & BT_NODE_MASK; i = blen = clen; }
        }
    }
    if (node == ST_NO_TOKEN) {
        node = bt->root[b0];
        if (node == ST_NO_TOKEN) return ST_NO_TOKEN;
        if (is_reachable(bt, node & BT_NODE_MASK)) { best = node & BT_NODE_MASK; blen = 1; }
    }
    while (i < n && !(node & BT_LEAF)) {
        ST_COUNT(1); /* test builds only: one trie probe */
        uint8_t b = p[i];
        if (b >= 0xC2 && b < 0xF0 && bt->chars_cap) { /* a whole character in one probe */
            size_t clen = b < 0xE0 ? 2 : 3;
            if (i + clen <= n) {
                uint32_t cp = clen == 2 ? ((uint32_t)(b & 0x1F) << 6) | (p[i + 1] & 0x3F)
                                        : ((uint32_t)(b & 0x0F) << 12) | ((uint32_t)(p[i + 1] & 0x3F) << 6) |
                                              (p[i + 2] & 0x3F);
                uint32_t v = char_child(bt, node, cp);
                if (v != ST_NO_TOKEN && !(v & BT_CHAR_MID)) {
                    node = (v & (BT_CHAR_NODES - 1)) | ((v & BT_CHAR_LEAF) ? BT_LEAF : 0u);
                    i += clen;
                    if (is_reachable(bt, node & BT_NODE_MASK)) { best = node & BT_NODE_MASK; blen = i; }
                    continue;
                }
                /* no edge: the walk may still end inside the character; or a node inside it
                 * is a token: take it byte by byte */
            }
        }
        node = trie_child(bt, node, b);
        if (node == ST_NO_TOKEN) break;
        i++;
        if (is_reachable(bt, node & BT_NODE_MASK)) { best = node & BT_NODE_MASK; blen = i; }
    }
    if (whole && i == n && node != ST_NO_TOKEN && (node & BT_NODE_MASK) < bt->n_ids) {
        /* the whole piece is a token: tiktoken takes it even if merging could not reach it */
        best = node & BT_NODE_MASK;
        blen = n;
    }
    *best_len = blen;
    return best;
}

size_t st__backtrack_scratch_size(size_t n) { return (n / 64 + 1) * sizeof(uint64_t); }

ST_INLINE int pair_ok_memo(const st_backtrack *bt, uint64_t *memo, uint32_t a, uint32_t b) {
    if (!memo) return pair_ok(bt, a, b);
    uint64_t key = ((uint64_t)a << 21) | b;
    uint64_t *slot = &memo[(key * 0x9E3779B97F4A7C15ull) >> (64 - ST_BT_MEMO_BITS)];
    if ((*slot >> 1) == key) return (int)(*slot & 1);
    int ok = pair_ok(bt, a, b);
    *slot = (key << 1) | (uint64_t)ok;
    return ok;
}

size_t st__backtrack_encode(const st_backtrack *bt, const st_vocab *v, const uint8_t *p, size_t n, uint32_t *tok,
                            uint32_t *start, void *scratch, uint64_t *memo) {
    /* open[i / 64] bit i: a token may still end at position i (cleared at dead ends) */
    uint64_t *open = (uint64_t *)scratch;
    st__memset(open, 0xFF, st__backtrack_scratch_size(n));
    size_t m = 0, pos = 0, next_len = 0;
    uint32_t next = longest_match(bt, p, n, &next_len, 1);
    while (pos < n) {
        uint32_t t = next;
        size_t len = next_len; /* t's length, known from the walk */
        if (t == ST_NO_TOKEN) return 0;
        for (;;) {
            ST_COUNT(1); /* test builds only: one candidate token tried */
            size_t end = pos + len;
            if (end <= n && ((open[end >> 6] >> (end & 63)) & 1) && (m == 0 || pair_ok_memo(bt, memo, tok[m - 1], t))) {
                tok[m] = t;
                start[m++] = (uint32_t)pos;
                pos = end;
                next = pos < n ? longest_match(bt, p + pos, n - pos, &next_len, 0) : ST_NO_TOKEN;
                break;
            }
            t = bt->prefix[t];
            if (t == ST_NO_TOKEN) { /* nothing fits here: step back one token */
                open[pos >> 6] &= ~(1ull << (pos & 63));
                if (m == 0) return 0;
                m--;
                next_len = pos - start[m];
                pos = start[m];
                next = tok[m];
                break;
            }
            uint32_t at, tl;
            if (!st__vocab_span(v, t, &at, &tl)) return 0;
            len = tl;
        }
    }
    return m;
}
