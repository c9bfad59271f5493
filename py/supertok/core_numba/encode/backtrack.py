"""Mirrors core_c/src/encode/backtrack.c and backtrack.h: the linear encoder for rank
vocabularies, backtracking over longest matches (docs/design.md §7; backtrack.h explains the
method and the tables).

backtrack_build(vocab) -> (status, Backtrack), as st__backtrack_build returns a status and fills
the struct: ST_OK with ready 0 when the vocabulary does not suit (use the merge loop); running out
of memory raises MemoryError (numpy's), where C returns ST_ERR_OUT_OF_MEMORY;
backtrack_encode(bt, vocab, p, n, tok, start, scratch, memo) -> m (0: use the merge loop), a
kernel: p a uint8 array holding the piece at p[0..n), tok and start uint32 arrays of n entries,
scratch a uint64 array of at least backtrack_scratch_size(n) // 8 words, memo a uint64 array of
ST_BT_MEMO_SLOTS words all set when empty (new_memo()), or an empty uint64 array for none (C's
NULL).

Differences from the C file that change no result:
 - the tables are separate arrays (C packs them in one block; owned/owned_size are not kept);
 - the helpers take the arrays they read, the three hash tables as Table tuples (slots, cap,
   filter, mask), where C's take the st_backtrack: numba copies a namedtuple of 19 fields at
   every call that takes it, which made the walk five times slower;
 - ordinary_in_byte_order sorts the 8-byte keys with numpy's stable argsort where C runs its
   own LSD radix passes (the same stable order), then each run of equal keys by its bytes, as C;
 - step 2 looks the rest of a token up by walking the trie (trie_lookup) where C probes the
   vocabulary's hash table: both give the ordinary token with exactly those bytes (the build
   gives up on a vocabulary with the same bytes twice), and this one does not depend on the
   table's hash.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from ..base.common import ST_OK
from ..text.utf8 import utf8_byte, utf8_length

ST_NO_TOKEN = 0xFFFFFFFF
BT_ID_MASK = (1 << 21) - 1     # pair slots pack three ids of 21 bits each
BT_MAX_NODES = (1 << 24) - 2   # trie keys pack a node and a byte into 32 bits
BT_MAX_TOKEN_LEN = 65536       # longer tokens: no tables

BT_LEAF = 0x80000000           # flag on a trie node value: the node has no children
BT_NODE_MASK = 0x7FFFFFFF
BT_CHAR_NODES = 1 << 22        # character edges hold node ids below this
BT_CHAR_LEAF = 1 << 22
BT_CHAR_MID = 1 << 23

ST_BT_MEMO_BITS = 14
ST_BT_MEMO_SLOTS = 1 << ST_BT_MEMO_BITS

# One open-addressing table and its Bloom filter (slots, cap, filter, filter mask): the kernels
# take the tables so, made from a Backtrack's fields at a kernel's entry (numba copies a struct of
# many arrays at every use, so the hot loops never touch the Backtrack itself).
Table = namedtuple("Table", "slots cap filter mask")

Backtrack = namedtuple("Backtrack", "ready n_ids trie_cap pair_cap root by_char trie split prefix reach pairs "
                                    "trie_filter pair_filter trie_filter_mask pair_filter_mask "
                                    "chars chars_filter chars_cap chars_filter_mask")

_GOLD = np.uint64(0x9E3779B97F4A7C15)
_U1 = np.uint64(1)
_U6 = np.uint64(6)
_U21 = np.uint64(21)
_U32 = np.uint64(32)
_U40 = np.uint64(40)
_U63 = np.uint64(63)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW40 = np.uint64(0xFFFFFFFFFF)
_ID_MASK64 = np.uint64(BT_ID_MASK)
_CHAR_KEY_OFFSET = np.uint64(0x100000000000)  # apart from the byte keys' hashes
_MEMO_SHIFT = np.uint64(64 - ST_BT_MEMO_BITS)


def new_memo():
    """An empty compatibility memo (ST_BT_MEMO_SLOTS words, all bits set)."""
    return np.full(ST_BT_MEMO_SLOTS, np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64)


NO_MEMO = np.zeros(0, np.uint64)


@njit(cache=True, nogil=True)
def is_reachable(reach, n_ids, id):
    return id < n_ids and ((reach[id >> 6] >> np.uint64(id & 63)) & _U1) != 0


# Bloom filters of the two tables' keys (backtrack.c explains them): the high 32 bits of a key's
# mix pick the table slot and the word, the low 12 bits two bits in it.
@njit(cache=True, nogil=True)
def filter_bits(h):
    return (_U1 << (h & _U63)) | (_U1 << ((h >> _U6) & _U63))


@njit(cache=True, nogil=True)
def filter_word(mask, h):
    return np.int64(((h >> _U32) * np.uint64(mask + 1)) >> _U32)


@njit(cache=True, nogil=True)
def filter_has(f, mask, h):
    b = filter_bits(h)
    return (f[filter_word(mask, h)] & b) == b


@njit(cache=True, nogil=True)
def filter_add(f, mask, h):
    f[filter_word(mask, h)] |= filter_bits(h)


@njit(cache=True, nogil=True)
def filter_words(keys):
    """words for a filter of about ten bits a key: a power of two"""
    w = 64
    while w * 64 < keys * 10 and w < (1 << 20):
        w *= 2
    return w


@njit(cache=True, nogil=True)
def slot_at(h, cap):
    return np.int64(((h >> _U32) * np.uint64(cap)) >> _U32)


@njit(cache=True, nogil=True)
def bt_mix(key):
    """key: uint64. One multiply spreads the keys over the high bits; folded onto the low."""
    h = key * _GOLD
    return h ^ (h >> _U32)


@njit(cache=True, nogil=True)
def trie_probe(trie, cap, key, h):
    """The value stored for key (its mix h) in a trie table, ST_NO_TOKEN if none."""
    i = slot_at(h, cap)
    k = np.uint64(key)
    while True:
        s = trie[i]
        if (s & _LOW32) == k:
            return np.int64(s >> _U32)
        if s == 0:
            return ST_NO_TOKEN
        i += 1
        if i == cap:
            i = 0


@njit(cache=True, nogil=True)
def trie_key(node, byte):
    return (((node & BT_NODE_MASK) << 8) | byte) + 1


@njit(cache=True, nogil=True)
def trie_child(trie, node, byte):
    """The child of node by byte in the trie (a Table), ST_NO_TOKEN if none (flags kept in the
    value): its filter first."""
    key = trie_key(node, byte)
    h = bt_mix(np.uint64(key))
    if not filter_has(trie.filter, trie.mask, h):
        return ST_NO_TOKEN
    return trie_probe(trie.slots, trie.cap, key, h)


@njit(cache=True, nogil=True)
def char_child(chars, node, cp):
    """The character edge (chars: a Table) from node by code point cp: the value (BT_CHAR_*
    flags), or ST_NO_TOKEN."""
    key = np.uint64(((node & BT_NODE_MASK) << 16) | cp)
    h = bt_mix(key + _CHAR_KEY_OFFSET)
    if not filter_has(chars.filter, chars.mask, h):
        return ST_NO_TOKEN
    i = slot_at(h, chars.cap)
    while True:
        s = chars.slots[i]
        if s == 0:
            return ST_NO_TOKEN
        if (s & _LOW40) == key:
            return np.int64(s >> _U40)
        i += 1
        if i == chars.cap:
            i = 0


@njit(cache=True, nogil=True)
def pair_get(pairs, left, right):
    """The token whose split is (left, right) (pairs: a Table), ST_NO_TOKEN if none."""
    key = (np.uint64(left) << _U21) | np.uint64(right)
    h = bt_mix(key)
    if not filter_has(pairs.filter, pairs.mask, h):
        return ST_NO_TOKEN
    i = slot_at(h, pairs.cap)
    while True:
        s = pairs.slots[i]
        if s == 0:
            return ST_NO_TOKEN
        if (s >> _U21) == key:
            return np.int64(s & _ID_MASK64)
        i += 1
        if i == pairs.cap:
            i = 0


@njit(cache=True, nogil=True)
def pair_ok(pairs, split, a, b):
    """Is [a, b] what merging the bytes of a followed by the bytes of b gives? (backtrack.c)"""
    limit = 0xFFFFFFFF
    while True:
        c = pair_get(pairs, a, b)
        if c != ST_NO_TOKEN and c < limit:
            return False
        if a > b:
            limit = a
            a = np.int64(split[2 * a + 1])
            if a == limit:  # a is a single byte: undo b instead
                limit = b + 1
                b = np.int64(split[2 * b])
                if b + 1 == limit:
                    return True
        else:
            limit = b + 1
            b = np.int64(split[2 * b])
            if b + 1 == limit:
                limit = a
                a = np.int64(split[2 * a + 1])
                if a == limit:
                    return True


# ---- building the tables -------------------------------------------------------------------

@njit(cache=True, nogil=True)
def vocab_is_special(special_ids, id):
    """st__vocab_is_special (vocab.h) over the sorted special ids."""
    lo, hi = 0, special_ids.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if special_ids[mid] < id:
            lo = mid + 1
        else:
            hi = mid
    return lo < special_ids.shape[0] and special_ids[lo] == id


@njit(cache=True, nogil=True)
def tok_before(offsets, vb, x, y):
    """Is token x before token y in byte order (a prefix before what extends it)?"""
    xa = np.int64(offsets[x])
    xl = np.int64(offsets[x + 1]) - xa
    ya = np.int64(offsets[y])
    yl = np.int64(offsets[y + 1]) - ya
    lim = xl if xl < yl else yl
    for i in range(lim):
        if vb[xa + i] != vb[ya + i]:
            return vb[xa + i] < vb[ya + i]
    return xl < yl


@njit(cache=True, nogil=True)
def sift_down(offsets, vb, ids, r, end):
    """Move ids[r] down the max-heap ids[0..end) (by bytes) to its place."""
    while True:
        c = 2 * r + 1
        if c >= end:
            return
        if c + 1 < end and tok_before(offsets, vb, ids[c], ids[c + 1]):
            c += 1
        if not tok_before(offsets, vb, ids[r], ids[c]):
            return
        t = ids[r]
        ids[r] = ids[c]
        ids[c] = t
        r = c


@njit(cache=True, nogil=True)
def sort_by_bytes(offsets, vb, ids):
    """Sort ids by their tokens' bytes: insertion sort for a few, heapsort past that."""
    n = ids.shape[0]
    if n <= 16:
        for i in range(1, n):
            x = ids[i]
            j = i
            while j > 0 and tok_before(offsets, vb, x, ids[j - 1]):
                ids[j] = ids[j - 1]
                j -= 1
            ids[j] = x
        return
    for k in range(n // 2 - 1, -1, -1):
        sift_down(offsets, vb, ids, k, n)
    for end in range(n - 1, 0, -1):
        t = ids[0]
        ids[0] = ids[end]
        ids[end] = t
        sift_down(offsets, vb, ids, 0, end)


@njit(cache=True, nogil=True)
def ordinary_in_byte_order(offsets, vb, n_ids, special_ids):
    """The ids of the ordinary tokens in byte order (every token after its prefixes, and the
    tokens that extend one right after it): a sort on the first 8 bytes (big-endian,
    zero-padded), then the few runs of equal keys by their whole bytes."""
    n = 0
    for id in range(n_ids):
        if offsets[id + 1] > offsets[id] and not vocab_is_special(special_ids, id):
            n += 1
    key = np.empty(n, np.uint64)
    ids = np.empty(n, np.uint32)
    k = 0
    for id in range(n_ids):
        at = np.int64(offsets[id])
        ln = np.int64(offsets[id + 1]) - at
        if ln <= 0 or vocab_is_special(special_ids, id):
            continue
        x = np.uint64(0)
        for d in range(8):
            x = x << np.uint64(8)
            if d < ln:
                x |= np.uint64(vb[at + d])
        key[k] = x
        ids[k] = id
        k += 1
    perm = np.argsort(key, kind="mergesort")
    order = ids[perm]
    key = key[perm]
    i = 0
    while i < n:  # runs of one key: by their whole bytes
        j = i + 1
        while j < n and key[j] == key[i]:
            j += 1
        if j - i > 1:
            sort_by_bytes(offsets, vb, order[i:j])
        i = j
    return order


@njit(cache=True, nogil=True)
def build_char_edges(reach, n_ids, up, via, inner, n_nodes):
    """The character edges of the trie (up: the parent of each node, ST_NO_TOKEN for the root's
    children; via: the byte into it; inner: bit per node with a child): for every node X inside
    the trie followed by the bytes of a whole character of 2 or 3 bytes, an edge (X, code point)
    to the node after them. Returns (chars, chars_filter, cap, filter words)."""
    chars = np.zeros(1, np.uint64)
    cf = np.zeros(1, np.uint64)
    cap = 0
    cf_words = 0
    for pass_ in range(2):
        count = 0
        for y in range(n_nodes):
            p1 = np.int64(up[y])
            if p1 == ST_NO_TOKEN or (via[y] & 0xC0) != 0x80:
                continue
            if via[p1] >= 0xC2 and via[p1] < 0xE0:
                x = np.int64(up[p1])
                cp = ((np.int64(via[p1]) & 0x1F) << 6) | (np.int64(via[y]) & 0x3F)
                mid = is_reachable(reach, n_ids, p1)
            elif (via[p1] & 0xC0) == 0x80 and np.int64(up[p1]) != ST_NO_TOKEN and via[up[p1]] >= 0xE0 \
                    and via[up[p1]] < 0xF0:
                p2 = np.int64(up[p1])
                x = np.int64(up[p2])
                cp = ((np.int64(via[p2]) & 0x0F) << 12) | ((np.int64(via[p1]) & 0x3F) << 6) | (np.int64(via[y]) & 0x3F)
                mid = is_reachable(reach, n_ids, p1) or is_reachable(reach, n_ids, p2)
            else:
                continue
            if x == ST_NO_TOKEN:
                continue  # from the root: by_char
            count += 1
            if pass_ == 0:
                continue
            leaf = 0 if ((inner[y >> 6] >> np.uint64(y & 63)) & _U1) != 0 else BT_CHAR_LEAF
            value = y | leaf | (BT_CHAR_MID if mid else 0)
            key = (np.uint64(x) << np.uint64(16)) | np.uint64(cp)
            h = bt_mix(key + _CHAR_KEY_OFFSET)
            filter_add(cf, cf_words - 1, h)
            i = slot_at(h, cap)
            while chars[i] != 0:
                i += 1
                if i == cap:
                    i = 0
            chars[i] = (np.uint64(value) << _U40) | key
        if pass_ == 0:
            cap = count + count * 2 // 3 + 1
            cf_words = filter_words(count * 8 // 10)
            chars = np.zeros(cap, np.uint64)
            cf = np.zeros(cf_words, np.uint64)
    return chars, cf, cap, cf_words


@njit(cache=True, nogil=True)
def trie_lookup(root, trie, n_ids, vb, at, ln):
    """The ordinary token with exactly the bytes vb[at..at+ln), ST_NO_TOKEN if none (a walk of
    the trie; C's step 2 probes the vocabulary's table, st__vocab_lookup)."""
    node = np.int64(root[vb[at]])
    for i in range(1, ln):
        if node == ST_NO_TOKEN:
            return ST_NO_TOKEN
        node = trie_child(trie, node, np.int64(vb[at + i]))
    if node == ST_NO_TOKEN or (node & BT_NODE_MASK) >= n_ids:
        return ST_NO_TOKEN
    return node & BT_NODE_MASK


@njit(cache=True, nogil=True)
def _unsuitable():
    e32 = np.zeros(0, np.uint32)
    e64 = np.zeros(0, np.uint64)
    return Backtrack(0, 0, 0, 0, e32, e32, e64, e32, e32, e64, e64, e64, e64, 0, 0, e64, e64, 0, 0)


@njit(cache=True, nogil=True)
def backtrack_build_kernel(n, offsets, vb, special_ids, byte_ids):
    """st__backtrack_build over the vocabulary's arrays (n = n_ids, vb its bytes)."""
    max_len = 0
    if n == 0 or n >= BT_ID_MASK:
        return _unsuitable()
    for b in range(256):
        if byte_ids[b] == ST_NO_TOKEN:
            return _unsuitable()  # not byte-level: the merge loop reports
    for id in range(n):
        ln = np.int64(offsets[id + 1]) - np.int64(offsets[id])
        if ln > max_len:
            max_len = ln
    if max_len > BT_MAX_TOKEN_LEN:
        return _unsuitable()

    order = ordinary_in_byte_order(offsets, vb, n, special_ids)
    n_ord = order.shape[0]

    # the fixed tables
    words = (n + 63) // 64
    pair_cap = n_ord + n_ord * 2 // 3 + 1  # at most 60% full
    pf_words = filter_words(n_ord)
    reach = np.zeros(words, np.uint64)
    pairs = np.zeros(pair_cap, np.uint64)
    pair_filter = np.zeros(pf_words, np.uint64)
    root = np.full(256, ST_NO_TOKEN, np.uint32)
    by_char = np.full(65536, ST_NO_TOKEN, np.uint32)
    split = np.full(2 * n, ST_NO_TOKEN, np.uint32)
    prefix = np.full(n, ST_NO_TOKEN, np.uint32)

    # 1. the trie, from the tokens in byte order (backtrack.c): a pass that counts the nodes,
    #    then one that makes the edges; each token's longest proper prefix token is the last
    #    token node on its path
    lcp = np.zeros(max(n_ord, 1), np.int64)
    n_edges = 0
    n_inter = 0
    for k in range(n_ord):
        at = np.int64(offsets[order[k]])
        ln = np.int64(offsets[order[k] + 1]) - at
        l = 0
        if k > 0:
            pat = np.int64(offsets[order[k - 1]])
            plen = np.int64(offsets[order[k - 1] + 1]) - pat
            lim = plen if plen < ln else ln
            while l < lim and vb[pat + l] == vb[at + l]:
                l += 1
            if l == ln:
                return _unsuitable()  # the same bytes twice (a rank file never has them)
        lcp[k] = l
        n_edges += ln - (l if l else 1)
        n_inter += ln - l - 1
    if n_inter > BT_MAX_NODES - n or n_edges > 0x7FFFFFFF:
        return _unsuitable()  # ids and slots fit
    n_nodes = n + n_inter
    with_chars = n_nodes < BT_CHAR_NODES
    lw = (n_nodes + 63) // 64
    inner = np.zeros(lw, np.uint64)  # bit per node with a child
    up = np.full(n_nodes if with_chars else 0, ST_NO_TOKEN, np.uint32)  # parent of each node
    via = np.zeros(n_nodes if with_chars else 0, np.uint8)  # the byte into it
    path = np.zeros(max_len + 1, np.int64)
    last_tok = np.zeros(max_len + 1, np.int64)  # last_tok[d]: the last token node on path[1..d]
    last_tok[0] = ST_NO_TOKEN
    edges = np.zeros(max(n_edges, 1), np.uint64)  # (value << 32 | key) of each edge, as made
    n_put = 0
    next_node = n
    for k in range(n_ord):
        id = np.int64(order[k])
        at = np.int64(offsets[id])
        ln = np.int64(offsets[id + 1]) - at
        extended = k + 1 < n_ord and lcp[k + 1] >= ln
        for d in range(lcp[k] + 1, ln + 1):
            if d == ln:
                node = id
            else:
                node = next_node
                next_node += 1
            leaf = BT_LEAF if d == ln and not extended else 0
            if leaf == 0:
                inner[node >> 6] |= _U1 << np.uint64(node & 63)
            if d == 1:
                root[vb[at]] = node | leaf
                if with_chars:
                    up[node] = ST_NO_TOKEN
            else:
                key = ((path[d - 1] << 8) | np.int64(vb[at + d - 1])) + 1
                edges[n_put] = (np.uint64(node | leaf) << _U32) | np.uint64(key)
                n_put += 1
                if with_chars:
                    up[node] = path[d - 1]
            if with_chars:
                via[node] = vb[at + d - 1]
            path[d] = node
            last_tok[d] = node if node < n else last_tok[d - 1]
        prefix[id] = last_tok[ln - 1]
    # the edges into the table and its filter by their slots' order, a run of slots at a time:
    # a counting sort on the slot's top bits, then the inserts, each near the one before
    nb = 1
    while nb < 4096 and nb * 64 < n_edges:
        nb *= 2  # buckets of about 64 slots or more
    bshift = 0
    while (1 << bshift) < nb:
        bshift += 1
    sorted_ = np.zeros(max(n_edges, 1), np.uint64)
    bstart = np.zeros(nb + 1, np.int64)
    for e in range(n_edges):
        b = np.int64((bt_mix(edges[e] & _LOW32) >> _U32) >> np.uint64(32 - bshift)) if bshift else 0
        bstart[b + 1] += 1
    for b in range(nb):
        bstart[b + 1] += bstart[b]
    for e in range(n_edges):
        b = np.int64((bt_mix(edges[e] & _LOW32) >> _U32) >> np.uint64(32 - bshift)) if bshift else 0
        sorted_[bstart[b]] = edges[e]
        bstart[b] += 1
    tcap = n_edges + n_edges * 2 // 3 + 1
    tf_words = filter_words(n_edges * 8 // 10)
    trie = np.zeros(tcap, np.uint64)
    tf = np.zeros(tf_words, np.uint64)
    for e in range(n_edges):
        key = sorted_[e] & _LOW32
        h = bt_mix(key)
        filter_add(tf, tf_words - 1, h)
        i = slot_at(h, tcap)
        while trie[i] != 0:
            i += 1
            if i == tcap:
                i = 0
        trie[i] = sorted_[e]
    e64 = np.zeros(0, np.uint64)
    trie_t = Table(trie, tcap, tf, tf_words - 1)
    pairs_t = Table(pairs, pair_cap, pair_filter, pf_words - 1)

    # 2. splits, in rank order: a token is reachable when some prefix token and the token
    #    spelling the rest, both of lower rank and reachable, form a compatible pair
    for id in range(n):
        st = np.int64(offsets[id])
        ln = np.int64(offsets[id + 1]) - st
        if ln <= 0 or vocab_is_special(special_ids, id):
            continue
        if ln == 1:
            split[2 * id] = id
            split[2 * id + 1] = id
            reach[id >> 6] |= _U1 << np.uint64(id & 63)
            continue
        left = np.int64(prefix[id])
        while left != ST_NO_TOKEN:
            if is_reachable(reach, n, left):  # (also every id above this one is not)
                llen = np.int64(offsets[left + 1]) - np.int64(offsets[left])
                right = trie_lookup(root, trie_t, n, vb, st + llen, ln - llen)
                if right != ST_NO_TOKEN and is_reachable(reach, n, right) and pair_ok(pairs_t, split, left, right):
                    split[2 * id] = left
                    split[2 * id + 1] = right
                    key = (np.uint64(left) << _U21) | np.uint64(right)
                    h = bt_mix(key)
                    filter_add(pair_filter, pf_words - 1, h)
                    i = slot_at(h, pair_cap)
                    while pairs[i] != 0:
                        i += 1
                        if i == pair_cap:
                            i = 0
                    pairs[i] = (key << _U21) | np.uint64(id)
                    reach[id >> 6] |= _U1 << np.uint64(id & 63)
                    break
            left = np.int64(prefix[left])

    # 3. prefixes skip unreachable tokens (in byte order, so a prefix's own is final)
    for k in range(n_ord):
        id = np.int64(order[k])
        p = np.int64(prefix[id])
        if p != ST_NO_TOKEN and not is_reachable(reach, n, p):
            prefix[id] = prefix[p]

    # 4. the character edges
    chars, cf = e64, e64
    chars_cap, cf_words = 0, 0
    if with_chars:
        chars, cf, chars_cap, cf_words = build_char_edges(reach, n, up, via, inner, n_nodes)

    # 5. the first-character table
    for cp in range(65536):
        ulen = utf8_length(cp) if cp >= 0x80 and (cp < 0xD800 or cp > 0xDFFF) else 0
        node = np.int64(root[utf8_byte(cp, ulen, 0)]) if ulen else ST_NO_TOKEN
        i = 1
        while i < ulen and node != ST_NO_TOKEN:
            node = trie_child(trie_t, node, utf8_byte(cp, ulen, i))
            i += 1
        by_char[cp] = node if node != ST_NO_TOKEN and is_reachable(reach, n, node & BT_NODE_MASK) else ST_NO_TOKEN
    return Backtrack(1, n, tcap, pair_cap, root, by_char, trie, split, prefix, reach, pairs, tf, pair_filter,
                     tf_words - 1, pf_words - 1, chars, cf, chars_cap, max(cf_words - 1, 0))


def backtrack_build(vocab):
    """st__backtrack_build: (ST_OK, the tables for vocab, a Vocab), ready 0 when it does not
    suit."""
    return ST_OK, backtrack_build_kernel(int(vocab.n_ids), vocab.offsets, vocab.bytes, vocab.special_ids,
                                         np.asarray(vocab.byte_ids, np.uint32))


# ---- encoding ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def longest_match(root, by_char, reach, n_ids, trie, chars, p, pos, n, whole):
    """The longest reachable token that is a prefix of p[pos..pos+n), n >= 1, valid UTF-8 from a
    character start or from inside a character: (token, its length). (bt's fields: trie and
    chars as Tables.)"""
    node = ST_NO_TOKEN
    best = ST_NO_TOKEN
    i = 1
    blen = 0
    b0 = np.int64(p[pos])
    if b0 >= 0xC2 and b0 < 0xF0:  # a 2- or 3-byte character: whole, from the table
        clen = 2 if b0 < 0xE0 else 3
        if n >= clen:
            if clen == 2:
                cp = ((b0 & 0x1F) << 6) | (np.int64(p[pos + 1]) & 0x3F)
            else:
                cp = ((b0 & 0x0F) << 12) | ((np.int64(p[pos + 1]) & 0x3F) << 6) | (np.int64(p[pos + 2]) & 0x3F)
            node = np.int64(by_char[cp])
            if node != ST_NO_TOKEN:
                best = node & BT_NODE_MASK
                i = clen
                blen = clen
    if node == ST_NO_TOKEN:
        node = np.int64(root[b0])
        if node == ST_NO_TOKEN:
            return ST_NO_TOKEN, 0
        if is_reachable(reach, n_ids, node & BT_NODE_MASK):
            best = node & BT_NODE_MASK
            blen = 1
    while i < n and not (node & BT_LEAF):
        b = np.int64(p[pos + i])
        if b >= 0xC2 and b < 0xF0 and chars.cap:  # a whole character in one probe
            clen = 2 if b < 0xE0 else 3
            if i + clen <= n:
                if clen == 2:
                    cp = ((b & 0x1F) << 6) | (np.int64(p[pos + i + 1]) & 0x3F)
                else:
                    cp = (((b & 0x0F) << 12) | ((np.int64(p[pos + i + 1]) & 0x3F) << 6)
                          | (np.int64(p[pos + i + 2]) & 0x3F))
                v = char_child(chars, node, cp)
                if v != ST_NO_TOKEN and not (v & BT_CHAR_MID):
                    node = (v & (BT_CHAR_NODES - 1)) | (BT_LEAF if (v & BT_CHAR_LEAF) else 0)
                    i += clen
                    if is_reachable(reach, n_ids, node & BT_NODE_MASK):
                        best = node & BT_NODE_MASK
                        blen = i
                    continue
                # no edge: the walk may still end inside the character; or a node inside it
                # is a token: take it byte by byte
        node = trie_child(trie, node, b)
        if node == ST_NO_TOKEN:
            break
        i += 1
        if is_reachable(reach, n_ids, node & BT_NODE_MASK):
            best = node & BT_NODE_MASK
            blen = i
    if whole and i == n and node != ST_NO_TOKEN and (node & BT_NODE_MASK) < n_ids:
        # the whole piece is a token: tiktoken takes it even if merging could not reach it
        best = node & BT_NODE_MASK
        blen = n
    return best, blen


def backtrack_scratch_size(n):
    """Bytes of scratch backtrack_encode needs for a piece of n bytes (a uint64 array of a
    eighth of it)."""
    return (n // 64 + 1) * 8


@njit(cache=True, nogil=True)
def pair_ok_memo(pairs, split, memo, a, b):
    if memo.shape[0] == 0:
        return pair_ok(pairs, split, a, b)
    key = (np.uint64(a) << _U21) | np.uint64(b)
    slot = np.int64((key * _GOLD) >> _MEMO_SHIFT)
    s = memo[slot]
    if (s >> _U1) == key:
        return (s & _U1) != 0
    ok = pair_ok(pairs, split, a, b)
    memo[slot] = (key << _U1) | (_U1 if ok else np.uint64(0))
    return ok


@njit(cache=True, nogil=True)
def vocab_span_len(offsets, n_ids, bytes_len, id):
    """st__vocab_span's length of token id, checked; -1 if the span is bad."""
    if id >= n_ids:
        return -1
    a = np.int64(offsets[id])
    b = np.int64(offsets[id + 1])
    if a >= b or b > bytes_len:
        return -1
    return b - a


@njit(cache=True, nogil=True)
def backtrack_encode(bt, v, p, n, tok, start, scratch, memo):
    """st__backtrack_encode: the piece p[0..n) (n >= 1; valid UTF-8) into tok/start; m tokens,
    0 if the tables cannot encode it (the caller uses the merge loop)."""
    # bt's and v's fields, once (see Table)
    root, by_char, reach, n_ids, prefix, split = bt.root, bt.by_char, bt.reach, bt.n_ids, bt.prefix, bt.split
    trie = Table(bt.trie, bt.trie_cap, bt.trie_filter, bt.trie_filter_mask)
    chars = Table(bt.chars, bt.chars_cap, bt.chars_filter, bt.chars_filter_mask)
    pairs = Table(bt.pairs, bt.pair_cap, bt.pair_filter, bt.pair_filter_mask)
    offsets, v_n_ids, bytes_len = v.offsets, v.n_ids, v.bytes_len
    # open[i / 64] bit i: a token may still end at position i (cleared at dead ends)
    open_ = scratch
    for w in range(n // 64 + 1):
        open_[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
    m = 0
    pos = 0
    nxt, next_len = longest_match(root, by_char, reach, n_ids, trie, chars, p, 0, n, True)
    while pos < n:
        t = nxt
        ln = next_len  # t's length, known from the walk
        if t == ST_NO_TOKEN:
            return 0
        while True:
            end = pos + ln
            if end <= n and ((open_[end >> 6] >> np.uint64(end & 63)) & _U1) != 0 and (
                    m == 0 or pair_ok_memo(pairs, split, memo, np.int64(tok[m - 1]), t)):
                tok[m] = t
                start[m] = pos
                m += 1
                pos = end
                if pos < n:
                    nxt, next_len = longest_match(root, by_char, reach, n_ids, trie, chars, p, pos, n - pos, False)
                else:
                    nxt, next_len = ST_NO_TOKEN, 0
                break
            t = np.int64(prefix[t])
            if t == ST_NO_TOKEN:  # nothing fits here: step back one token
                open_[pos >> 6] &= ~(_U1 << np.uint64(pos & 63))
                if m == 0:
                    return 0
                m -= 1
                next_len = pos - np.int64(start[m])
                pos = np.int64(start[m])
                nxt = np.int64(tok[m])
                break
            ln = vocab_span_len(offsets, v_n_ids, bytes_len, t)
            if ln < 0:
                return 0
    return m
