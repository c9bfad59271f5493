/* The linear encoder for rank vocabularies; backtrack.h explains the method and the tables. */
#include "backtrack.h"

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
 * from the second-level cache. The low 32 bits of a key's mix pick the word and two bits in
 * it; the high 32 bits pick the table slot. */
ST_INLINE uint64_t filter_bits(uint64_t h) { return (1ull << (h & 63)) | (1ull << ((h >> 6) & 63)); }
ST_INLINE int filter_has(const uint64_t *f, uint32_t mask, uint64_t h) {
    uint64_t b = filter_bits(h);
    return (f[(uint32_t)(h >> 12) & mask] & b) == b;
}
ST_INLINE void filter_add(uint64_t *f, uint32_t mask, uint64_t h) { f[(uint32_t)(h >> 12) & mask] |= filter_bits(h); }
/* words for a filter of about ten bits a key: a power of two */
static uint32_t filter_words(size_t keys) {
    uint32_t w = 64;
    while ((uint64_t)w * 64 < (uint64_t)keys * 10 && w < (1u << 20)) w *= 2;
    return w;
}

ST_INLINE uint32_t slot_at(uint64_t h, uint32_t cap) { return (uint32_t)(((h >> 32) * (uint64_t)cap) >> 32); }

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

/* The child of node by byte in a trie table, ST_NO_TOKEN if none (flags kept in the value). */
ST_INLINE uint32_t table_child(const uint64_t *trie, uint32_t cap, uint32_t node, uint8_t byte) {
    uint32_t key = trie_key(node, byte);
    return trie_probe(trie, cap, key, st__mix64(key));
}

/* The same in the finished trie, its filter first. */
ST_INLINE uint32_t trie_child(const st_backtrack *bt, uint32_t node, uint8_t byte) {
    uint32_t key = trie_key(node, byte);
    uint64_t h = st__mix64(key);
    if (!filter_has(bt->trie_filter, bt->trie_filter_mask, h)) return ST_NO_TOKEN;
    return trie_probe(bt->trie, bt->trie_cap, key, h);
}

/* The character edge from node by code point cp: the value (BT_CHAR_* flags), or ST_NO_TOKEN. */
ST_INLINE uint32_t char_child(const st_backtrack *bt, uint32_t node, uint32_t cp) {
    uint64_t key = ((uint64_t)(node & BT_NODE_MASK) << 16) | cp;
    uint64_t h = st__mix64(key + 0x100000000000ull); /* apart from the byte keys' hashes */
    if (!filter_has(bt->chars_filter, bt->chars_filter_mask, h)) return ST_NO_TOKEN;
    uint32_t i = slot_at(h, bt->chars_cap);
    for (;;) {
        uint64_t s = bt->chars[i];
        if (!s) return ST_NO_TOKEN;
        if ((s & 0xFFFFFFFFFFull) == key) return (uint32_t)(s >> 40);
        if (++i == bt->chars_cap) i = 0;
    }
}

ST_INLINE void trie_put(uint64_t *trie, uint32_t cap, uint32_t key_plus_1, uint32_t child) {
    uint32_t i = slot_at(st__mix64(key_plus_1), cap);
    while (trie[i])
        if (++i == cap) i = 0;
    trie[i] = ((uint64_t)child << 32) | key_plus_1;
}

ST_INLINE uint32_t pair_get(const st_backtrack *bt, uint32_t left, uint32_t right) {
    uint64_t key = ((uint64_t)left << 21) | right;
    uint64_t h = st__mix64(key);
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

typedef struct growing_trie { /* the trie while it is built: a power-of-two table kept half empty */
    uint64_t *slots;
    uint32_t cap, count;
} growing_trie;

static int grow(growing_trie *g, const st_allocator *a) {
    uint32_t cap = g->cap ? g->cap * 2 : (1u << 16);
    uint64_t *slots = (uint64_t *)st__alloc(a, (size_t)cap * 8);
    if (!slots) return 0;
    st__memset(slots, 0, (size_t)cap * 8);
    for (uint32_t i = 0; i < g->cap; i++)
        if (g->slots[i]) trie_put(slots, cap, (uint32_t)g->slots[i], (uint32_t)(g->slots[i] >> 32));
    if (g->slots) st__free(a, g->slots, (size_t)g->cap * 8);
    g->slots = slots;
    g->cap = cap;
    return 1;
}

/* ids of the ordinary tokens, shortest first: a token's prefixes then get their trie nodes
 * (numbered by their ids) before any longer token passes through them. */
static uint32_t *ordinary_by_length(const st_vocab *v, const st_allocator *a, size_t *count, uint32_t max_len) {
    size_t nb = (size_t)max_len + 2;
    uint32_t *bucket = (uint32_t *)st__alloc(a, nb * sizeof(uint32_t));
    if (!bucket) return NULL;
    st__memset(bucket, 0, nb * sizeof(uint32_t));
    size_t n = 0;
    for (uint32_t id = 0; id < v->n_ids; id++) {
        uint32_t len = v->offsets[id + 1] - v->offsets[id];
        if (len && !st__vocab_is_special(v, id)) { bucket[len + 1]++; n++; }
    }
    uint32_t *order = (uint32_t *)st__alloc(a, (n ? n : 1) * sizeof(uint32_t));
    if (order) {
        for (size_t k = 1; k < nb; k++) bucket[k] += bucket[k - 1]; /* bucket[len] = first slot */
        for (uint32_t id = 0; id < v->n_ids; id++) {
            uint32_t len = v->offsets[id + 1] - v->offsets[id];
            if (len && !st__vocab_is_special(v, id)) order[bucket[len]++] = id;
        }
        *count = n;
    }
    st__free(a, bucket, nb * sizeof(uint32_t));
    return order;
}

void st__backtrack_free(st_backtrack *bt, const st_allocator *a) {
    if (bt->owned) st__free(a, bt->owned, bt->owned_size);
    if (bt->trie_owned) st__free(a, bt->trie_owned, bt->trie_owned_size);
    if (bt->chars_owned) st__free(a, bt->chars_owned, bt->chars_owned_size);
    st__memset(bt, 0, sizeof *bt);
}

/* The character edges of the trie in g (nodes 0..n_nodes-1, inner = bit per node with a
 * child): for every node X inside the trie (not the root: by_char covers it) followed by the
 * bytes of a whole character of 2 or 3 bytes, an edge (X, code point) to the node after them. */
static st_status build_char_edges(st_backtrack *bt, const growing_trie *g, const uint32_t *root, const uint64_t *inner,
                                  uint32_t n_nodes, const st_allocator *a) {
    if (n_nodes >= BT_CHAR_NODES) return ST_OK;
    size_t usz = (size_t)n_nodes * 5;
    uint32_t *up = (uint32_t *)st__alloc(a, usz); /* parent of each node; via[] the byte into it */
    if (!up) return ST_ERR_OUT_OF_MEMORY;
    uint8_t *via = (uint8_t *)(up + n_nodes);
    st__memset(up, 0xFF, (size_t)n_nodes * 4);
    for (uint32_t i = 0; i < g->cap; i++)
        if (g->slots[i]) {
            uint32_t key = (uint32_t)g->slots[i] - 1, child = (uint32_t)(g->slots[i] >> 32);
            up[child] = key >> 8;
            via[child] = (uint8_t)key;
        }
    for (int b = 0; b < 256; b++)
        if (root[b] != ST_NO_TOKEN) via[root[b] & BT_NODE_MASK] = (uint8_t)b; /* up: none */
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
            uint64_t h = st__mix64(key + 0x100000000000ull);
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
            if (!chars) {
                st__free(a, up, usz);
                return ST_ERR_OUT_OF_MEMORY;
            }
            st__memset(chars, 0, bt->chars_owned_size);
            cf = chars + cap;
        }
    }
    st__free(a, up, usz);
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
    uint32_t *order = ordinary_by_length(v, a, &n_ord, max_len);
    if (!order) return ST_ERR_OUT_OF_MEMORY;

    /* the fixed tables, in one block */
    size_t words = ((size_t)n + 63) / 64;
    uint32_t pair_cap = (uint32_t)(n_ord + n_ord * 2 / 3 + 1); /* at most 60% full */
    uint32_t pf_words = filter_words(n_ord);
    size_t size = (256 + 65536) * 4 + (size_t)n * 12 + words * 8 + ((size_t)pair_cap + pf_words) * 8;
    size = (size + 7) & ~(size_t)7;
    uint8_t *block = (uint8_t *)st__alloc(a, size);
    growing_trie g = {NULL, 0, 0};
    if (!block || !grow(&g, a)) goto out_of_memory;
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

    /* 1. the trie, shortest tokens first; each token's longest proper prefix token is the last
     *    token node its walk passes */
    uint32_t next_node = n;
    for (size_t k = 0; k < n_ord; k++) {
        uint32_t id = order[k];
        const uint8_t *t = v->bytes + v->offsets[id];
        uint32_t len = v->offsets[id + 1] - v->offsets[id];
        uint32_t last_token = ST_NO_TOKEN;
        if (root[t[0]] == ST_NO_TOKEN) root[t[0]] = len == 1 ? id : next_node++;
        uint32_t node = root[t[0]];
        for (uint32_t i = 1; i < len; i++) {
            if (node < n) last_token = node;
            uint32_t child = table_child(g.slots, g.cap, node, t[i]);
            if (child == ST_NO_TOKEN) {
                child = i + 1 == len ? id : next_node++;
                if (next_node > BT_MAX_NODES) goto unsuitable;
                if ((g.count + 1) * 2 > g.cap && !grow(&g, a)) goto out_of_memory;
                trie_put(g.slots, g.cap, ((node << 8) | t[i]) + 1, child);
                g.count++;
            }
            node = child;
        }
        prefix[id] = last_token;
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
            uint32_t right = st__vocab_lookup(v, v->bytes + start + llen, len - llen);
            if (right == ST_NO_TOKEN || !is_reachable(bt, right) || !pair_ok(bt, left, right)) continue;
            split[2 * (size_t)id] = left;
            split[2 * (size_t)id + 1] = right;
            uint64_t key = ((uint64_t)left << 21) | right;
            uint64_t h = st__mix64(key);
            filter_add(pair_filter, pf_words - 1, h);
            uint32_t i = slot_at(h, pair_cap);
            while (pairs[i])
                if (++i == pair_cap) i = 0;
            pairs[i] = (key << 21) | id;
            reach[id >> 6] |= 1ull << (id & 63);
            break;
        }
    }

    /* 3. prefixes skip unreachable tokens (shortest first, so a prefix's own is final) */
    for (size_t k = 0; k < n_ord; k++) {
        uint32_t id = order[k], p = prefix[id];
        if (p != ST_NO_TOKEN && !is_reachable(bt, p)) prefix[id] = prefix[p];
    }

    /* 4. the trie, moved to a table sized to its load (at most 60% full), with its filter and
     *    the leaf flags: a walk stops at a leaf without a probe */
    {
        size_t lw = ((size_t)next_node + 63) / 64;
        uint64_t *inner = (uint64_t *)st__alloc(a, lw * 8); /* bit per node: has a child */
        if (!inner) goto out_of_memory;
        st__memset(inner, 0, lw * 8);
        for (uint32_t i = 0; i < g.cap; i++)
            if (g.slots[i]) {
                uint32_t parent = ((uint32_t)g.slots[i] - 1) >> 8;
                inner[parent >> 6] |= 1ull << (parent & 63);
            }
#define LEAF_FLAG(node) (((inner[(node) >> 6] >> ((node) & 63)) & 1) ? 0u : BT_LEAF)
        uint32_t cap = g.count + g.count * 2 / 3 + 1, tf_words = filter_words(g.count * 8 / 10);
        size_t tsize = ((size_t)cap + tf_words) * 8;
        uint64_t *trie = (uint64_t *)st__alloc(a, tsize);
        if (!trie) { st__free(a, inner, lw * 8); goto out_of_memory; }
        st__memset(trie, 0, tsize);
        uint64_t *tf = trie + cap;
        for (uint32_t i = 0; i < g.cap; i++)
            if (g.slots[i]) {
                uint32_t key = (uint32_t)g.slots[i], child = (uint32_t)(g.slots[i] >> 32);
                trie_put(trie, cap, key, child | LEAF_FLAG(child));
                filter_add(tf, tf_words - 1, st__mix64(key));
            }
        for (int b = 0; b < 256; b++)
            if (root[b] != ST_NO_TOKEN) root[b] |= LEAF_FLAG(root[b]);
#undef LEAF_FLAG
        bt->trie = trie; /* owned from here on: freed with bt */
        bt->trie_cap = cap;
        bt->trie_filter = tf;
        bt->trie_filter_mask = tf_words - 1;
        bt->trie_owned = trie;
        bt->trie_owned_size = tsize;
        st_status cst = build_char_edges(bt, &g, root, inner, next_node, a);
        st__free(a, inner, lw * 8);
        if (cst != ST_OK) goto out_of_memory;
    }
    /* 5. the first-character table */
    for (uint32_t cp = 0; cp < 65536; cp++) {
        uint8_t u[3];
        size_t ulen = 0;
        if (cp >= 0x80 && cp < 0x800) {
            u[0] = (uint8_t)(0xC0 | (cp >> 6));
            u[1] = (uint8_t)(0x80 | (cp & 0x3F));
            ulen = 2;
        } else if (cp >= 0x800 && (cp < 0xD800 || cp > 0xDFFF)) {
            u[0] = (uint8_t)(0xE0 | (cp >> 12));
            u[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
            u[2] = (uint8_t)(0x80 | (cp & 0x3F));
            ulen = 3;
        }
        uint32_t node = ulen ? root[u[0]] : ST_NO_TOKEN;
        for (size_t i = 1; i < ulen && node != ST_NO_TOKEN; i++) node = trie_child(bt, node, u[i]);
        by_char[cp] = node != ST_NO_TOKEN && is_reachable(bt, node & BT_NODE_MASK) ? node : ST_NO_TOKEN;
    }
    st__free(a, g.slots, (size_t)g.cap * 8);
    st__free(a, order, (n_ord ? n_ord : 1) * sizeof(uint32_t));
    bt->ready = 1;
    return ST_OK;

unsuitable:
    if (g.slots) st__free(a, g.slots, (size_t)g.cap * 8);
    st__free(a, order, (n_ord ? n_ord : 1) * sizeof(uint32_t));
    st__backtrack_free(bt, a);
    return ST_OK;
out_of_memory:
    if (g.slots) st__free(a, g.slots, (size_t)g.cap * 8);
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
