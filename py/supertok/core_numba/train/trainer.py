"""Mirrors core_c/src/train/trainer.c and trainer.h: BPE training (docs/design.md §8), phase 1 in
its two exact semantics (paper: non-overlapping counts of equal adjacent pairs, ties to the
smallest pair of base-symbol sequences; hf: HuggingFace's BpeTrainer, overlapping counts, ties
to the smallest pair of HF ids, reuse of an existing token's id), the extension of a model by
seed merges, and phase 2 (superwords: BoundlessBPE and SuperBPE, from candidates counters).

The algorithm is the C's (read trainer.c's header comment): words (the distinct pretokens of two
or more symbols) as integer symbols, a pair table with each pair's live count and the words
that held it, a heap of (count, pair) with lazy invalidation, and a merge that visits only the
words listed for its pair and, in each, only the windows around the merge sites.

Layout. The trainer handle is a Trainer (Python object) whose `st` is a State namedtuple of
numpy arrays that the kernels take and give back (an array that grows is a new array, so a
kernel that may grow one returns a new State):
  S  int64[N_SCALARS]     the C struct's scalar fields (MODE, TARGET, N_MERGES, ...: the
                          indices below); the uint64 options vocab_size and min_frequency stay
                          on the Trainer (Python ints) and reach the kernels clamped to int64
  W  Words                sym uint32 (the words' symbols), woff int64, wcount int64, wlen
                          uint32, wstamp uint32 (per word, as the C's arrays)
  X  Scratch              sites, window uint32[max word length]; dkey, dval int64[ST__DELTAS]
                          (the per-word pending deltas)
  T  PairTables           P uint32[cap, P_COLS] (per pair: left, right, its word list's head
                          and tail, the list's length, stamp, blocked), PC int64[cap] (the live
                          counts), pk int64 / pv uint32 (the (left << 32 | right) -> pair + 1
                          open-addressing table), lw / ln uint32 (the word lists: one log of
                          (word, next) entries, a pair's list a chain from head to tail, in the
                          order the C appends them; NIL ends a chain), touched uint32[cap]
  H  Heap                 hc int64 (count), hp uint32 (pair): the binary heap's entries
  K  Toks                 seq uint8 (the tokens' base-symbol sequences), tok_off int64, tok_len
                          uint32, hf_key uint32 (by internal id), str_slots uint32 (hf: the
                          token strings' table, id + 1, 0 empty)
  M  Lists                merges uint32[2 cap], counts uint64[cap]; sup / sup_counts (the
                          supermerges, the same way); wait_head uint32[made], wait_pair /
                          wait_next uint32 (BOUNDLESS: pairs waiting for a regular merge);
                          seeds uint32[2 n] (an extension's seed merges)
  E  Specials             spec_bytes uint8, spec_off int64, spec_len int64 (-1: the C's
                          SIZE_MAX, no byte-level form): hf's specials as byte-level bytes

Where the C reallocates inside a merge (a pair, a word-list entry, a touched pair, a heap entry),
the kernels make room first: before each word a merge visits, room for 2 * its length + 2 new
pairs and list entries (a word's new windows add at most that many), and the heap before its
pushes. So a merge runs in kernels without numba's reference counting (_nrt=False: every call
that passes an array otherwise costs an atomic increment and decrement of its count), and only
the growth, rare, calls kernels that allocate: the drivers phase1_steps and phase2_steps (one call
of st_trainer_step) keep the State's parts in locals, check for room (rooms_ok, needs_room), grow
what lacks it and call the per-merge kernels (merge_select / super_select, merge_words, ...).
merge_word and what it calls are inlined at the numba level: a call passes every array of its
tuples as separate arguments, which cost more than the work of a short word.

The word lists: the C gives each pair an array (doubled when full) and frees it when the pair's
count drops to 0. Here the lists are chains in one log, appended at its end (so a chain's entries
are in increasing order); a dropped chain's entries are dead until the log fills, when the live
ones slide down in place, in order (compact_log), and the log grows by a quarter only if that
left less than an eighth of it free. init_pairs counts with each entry holding its pair instead
of a link, then sorts the entries into contiguous chains (sort_log). The lists hold the same words
in the same order as the C's, so every result is the C's.

The port ignores st_allocator; allocation failure is not simulated (the C's "oom" is set only
where the C sets it for a limit, e.g. a supermerge id past ST_RULES_MAX_IDS).
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_OUT_OF_MEMORY, ST_ERR_INVALID_UTF8,
                           ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, ST_UNIT_BYTE, ST_UNIT_INDEX, ST_KIND_OUT_OF_ORDER,
                           clear, fail, quoted)
from ..base.hash import hash_bytes, mix64
from ..text.utf8 import ube_char_symbols, utf8_validate
from ..text.pretokenize import pretokenizer_init, ST_PRETOK_SCRIPT_AWARE, ST_SCRIPT_WORDS
from ..text.unicode import st_script_count, st_script_name
from ..formats import model as FM
from .candidates import (counter_new_cand, vocab_fingerprint, tokset_init, tokset_find_at, cand_pieces,
                         ST__CAND_SEP, ST__NO_TOKEN_ID)
from .pretoken_counter import counter_hand_over, pretokenizers_equal
from .ngram import counter_split_ngrams

U64 = np.uint64
_kernel = njit(cache=True, nogil=True, _nrt=False)  # allocates nothing: no reference counting
_jit = njit(cache=True, nogil=True)
_jit_inline = njit(cache=True, nogil=True, inline="always")  # a part of a loop written once, compiled into it
_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")

# ---- constants (supertok.h) -----------------------------------------------------------------
ST_TRAIN_PAPER, ST_TRAIN_HF = 0, 1
ST_ALPHABET_BYTES, ST_ALPHABET_UBE = 0, 1
ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE, ST_ALGORITHM_EXTEND = 0, 1, 2, 3
ST_SUPERWORDS_NGRAM_SPLIT = 1
ST_EXTEND_COLON_SPACE = 1
ST_RULES_MAX_IDS = (1 << 21) - 1
ST_RULES_TOKEN_BYTES_BASE, ST_RULES_TOKEN_BYTES_PER_RULE = 16777216, 256

(ST_TRAINER_ALPHABET, ST_TRAINER_TARGET, ST_TRAINER_MERGES, ST_TRAINER_DONE, ST_TRAINER_WORDS, ST_TRAINER_PHASE,
 ST_TRAINER_SUPERMERGES, ST_TRAINER_REGULAR, ST_TRAINER_CANDIDATES, ST_TRAINER_NGRAM_CMIN, ST_TRAINER_STEPS,
 ST_TRAINER_STOP, ST_TRAINER_STOP_PHASE1, ST_TRAINER_PHASE1_SHORT, ST_TRAINER_PHASE1_WANTED,
 ST_TRAINER_PHASE1_MADE, ST_TRAINER_PHASE2_SHORT, ST_TRAINER_PHASE2_MADE, ST_TRAINER_STATE,
 ST_TRAINER_PASS_DOCUMENTS, ST_TRAINER_PASS_BYTES, ST_TRAINER_SEED_MERGES, ST_TRAINER_BLOCKED) = range(23)
ST_TRAINING_MERGES, ST_TRAINING_CANDIDATES, ST_TRAINING_SUPERMERGES, ST_TRAINING_DONE = 1, 2, 3, 4
(ST_STOP_RUNNING, ST_STOP_VOCAB_SIZE, ST_STOP_NO_PAIR, ST_STOP_MIN_FREQUENCY, ST_STOP_NO_CANDIDATE, ST_STOP_LIMIT,
 ST_STOP_TOKEN_BYTES, ST_STOP_CONSTRAINTS) = range(8)
ST_COUNTER_DOCUMENTS, ST_COUNTER_BYTES = 0, 1
ST__NGRAM_MAX_LEN = 30

INT64_MAX = (1 << 63) - 1
NIL = 0xFFFFFFFF  # an empty word list (head, tail, next)
ST__DELTAS = 32

# ---- the scalars (S) ---------------------------------------------------------------------------
(MODE, ALPHABET, BASE, TARGET, ALPHABET_SIZE, N_SPECIALS, N_PRETOKENS, DONE, STOP, STOP1, CAPPED, DISTINCT,
 HF_VOCAB, SPECIALS_SET, REUSED, STEP_NO, OOM, N_MERGES, PHASE, ALGORITHM, NGRAM_SPLIT, STEPPED, N_WORDS,
 N_PAIRS, PMASK, HEAP_N, N_TOUCHED, LOG_N, N_DELTAS, SKIP_KEY, SEQ_LEN, N_STRS, STR_MASK, MADE, NEXT_MERGE,
 N_SUPER, N_WAIT, EXTEND, MAX_WORDS, COLON_SPACE, N_BLOCKED, N_SEEDS, STEPS, SUPERMERGES_ARG, N_CANDIDATES,
 NGRAM_CMIN, NGRAM_MAX_LEN, PASS_DOCUMENTS, PASS_BYTES, MAX_TOK_LEN, LIVE, INIT) = range(52)
N_SCALARS = 52

# the columns of P (st__pair but its count, which is PC)
P_LEFT, P_RIGHT, P_HEAD, P_TAIL, P_N, P_STAMP, P_BLOCKED = range(7)
P_COLS = 8

Words = namedtuple("Words", "sym woff wcount wlen wstamp")
Scratch = namedtuple("Scratch", "sites window dkey dval")
PairTables = namedtuple("PairTables", "P PC pk pv lw ln touched")
Heap = namedtuple("Heap", "hc hp")
Toks = namedtuple("Toks", "seq tok_off tok_len hf_key str_slots")
Lists = namedtuple("Lists", "merges counts sup sup_counts wait_head wait_pair wait_next seeds")
Specials = namedtuple("Specials", "spec_bytes spec_off spec_len")
State = namedtuple("State", "S W X T H K M E")


# ---- growth (kernels with the runtime: they allocate) ------------------------------------------
@_jit
def grow(a, need):
    """a, or a copy with room for need elements (doubling)."""
    n = a.shape[0]
    if need <= n:
        return a
    c = n if n > 0 else 16
    while c < need:
        c *= 2
    b = np.empty(c, a.dtype)  # not zeroed: the pages past the copy stay untouched until used
    b[:n] = a
    return b


@_jit
def grow_rows(a, need):
    n = a.shape[0]
    if need <= n:
        return a
    c = n if n > 0 else 16
    while c < need:
        c *= 2
    b = np.empty((c, a.shape[1]), a.dtype)
    b[:n] = a
    return b


@_kernel
def slot_of(h, mask):
    return np.int64(h & U64(0x7FFFFFFFFFFFFFFF)) & mask


@_kernel
def rules_token_bytes_limit(n_rules):
    """st__rules_token_bytes_limit."""
    return ST_RULES_TOKEN_BYTES_BASE + ST_RULES_TOKEN_BYTES_PER_RULE * n_rules


# ---- tokens ---------------------------------------------------------------------------------
@_inline
def cmp_seq(K, a, b):
    if a == b:
        return 0
    an = np.int64(K.tok_len[a])
    bn = np.int64(K.tok_len[b])
    oa = K.tok_off[a]
    ob = K.tok_off[b]
    m = an if an < bn else bn
    seq = K.seq
    for k in range(m):
        ca = seq[oa + k]
        cb = seq[ob + k]
        if ca != cb:
            return -1 if ca < cb else 1
    if an < bn:
        return -1
    return 1 if an > bn else 0


@_inline
def better(mode, P, K, ca, pa, cb, pb):
    """1 if heap entry (ca, pa) goes before (cb, pb): the higher count, then the smaller pair by the
    mode's order (paper: base-symbol sequences of left then right; hf: HF ids of left then right);
    two pairs spelling the same sequences fall back to the smaller (left id, right id)."""
    if ca != cb:
        return ca > cb
    pl = np.int64(P[pa, P_LEFT])
    pr = np.int64(P[pa, P_RIGHT])
    ql = np.int64(P[pb, P_LEFT])
    qr = np.int64(P[pb, P_RIGHT])
    if mode == ST_TRAIN_HF:
        a = K.hf_key[pl]
        b = K.hf_key[ql]
        if a != b:
            return a < b
        return K.hf_key[pr] < K.hf_key[qr]
    r = cmp_seq(K, pl, ql)
    if r == 0:
        r = cmp_seq(K, pr, qr)
    if r != 0:
        return r < 0
    if pl != ql:
        return pl < ql
    return pr < qr


@_kernel
def heap_up(H, i, mode, P, K):
    hc = H.hc
    hp = H.hp
    ec = hc[i]
    ep = hp[i]
    while i:
        parent = (i - 1) // 2
        if not better(mode, P, K, ec, ep, hc[parent], hp[parent]):
            break
        hc[i] = hc[parent]
        hp[i] = hp[parent]
        i = parent
    hc[i] = ec
    hp[i] = ep


@_kernel
def heap_down(H, n, i, mode, P, K):
    hc = H.hc
    hp = H.hp
    ec = hc[i]
    ep = hp[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and better(mode, P, K, hc[c + 1], hp[c + 1], hc[c], hp[c]):
            c += 1
        if not better(mode, P, K, hc[c], hp[c], ec, ep):
            break
        hc[i] = hc[c]
        hp[i] = hp[c]
        i = c
    hc[i] = ec
    hp[i] = ep


@_kernel
def heap_push(S, H, pair, count, P, K):
    """The caller made room."""
    n = S[HEAP_N]
    H.hc[n] = count
    H.hp[n] = pair
    S[HEAP_N] = n + 1
    heap_up(H, n, S[MODE], P, K)


@_kernel
def heapify(S, H, P, K):
    n = S[HEAP_N]
    for i in range(n // 2 - 1, -1, -1):
        heap_down(H, n, i, S[MODE], P, K)


@_kernel
def heap_pop(S, H, P, K):
    """The top entry (count, pair), removed."""
    hc = H.hc
    hp = H.hp
    c = hc[0]
    p = np.int64(hp[0])
    n = S[HEAP_N] - 1
    S[HEAP_N] = n
    hc[0] = hc[n]
    hp[0] = hp[n]
    if n:
        heap_down(H, n, 0, S[MODE], P, K)
    return c, p


# ---- pairs ----------------------------------------------------------------------------------
@_jit
def pair_rehash(P, n_pairs, nslots):
    """pair_rehash: a new table of nslots slots over the n_pairs pairs."""
    pk = np.zeros(nslots, np.int64)
    pv = np.zeros(nslots, np.uint32)
    mask = nslots - 1
    for i in range(n_pairs):
        key = (np.int64(P[i, P_LEFT]) << 32) | np.int64(P[i, P_RIGHT])
        s = slot_of(mix64(key), mask)
        while pv[s]:
            s = (s + 1) & mask
        pk[s] = key
        pv[s] = i + 1
    return pk, pv


@_inline
def pair_get(S, T, key):
    """The pair (key), made if new (the caller made room: see reserve)."""
    mask = S[PMASK]
    s = slot_of(mix64(key), mask)
    pv = T.pv
    while True:
        v = pv[s]
        if v == 0:
            break
        if T.pk[s] == key:
            return np.int64(v) - 1
        s = (s + 1) & mask
    n = S[N_PAIRS]
    P = T.P
    P[n, P_LEFT] = np.uint32(key >> 32)
    P[n, P_RIGHT] = np.uint32(key & 0xFFFFFFFF)
    P[n, P_HEAD] = NIL
    P[n, P_TAIL] = NIL
    P[n, P_N] = 0
    P[n, P_STAMP] = 0
    P[n, P_BLOCKED] = 0
    T.PC[n] = 0
    T.pk[s] = key
    pv[s] = n + 1
    S[N_PAIRS] = n + 1
    return n


@_kernel
def pair_free_words(S, P, pi):
    S[LIVE] -= np.int64(P[pi, P_N])
    P[pi, P_HEAD] = NIL
    P[pi, P_TAIL] = NIL
    P[pi, P_N] = 0


@_inline
def apply_delta(S, W, T, key, d, w):
    """Apply d occurrences of pair key in word w (count wcount[w])."""
    pi = pair_get(S, T, key)
    P = T.P
    c = T.PC[pi] + d * W.wcount[w]
    T.PC[pi] = c
    if c == 0:  # no word holds it any more: its list is all stale
        pair_free_words(S, P, pi)
        return
    if d > 0:
        tail = P[pi, P_TAIL]
        if tail == NIL or T.lw[tail] != w:
            e = S[LOG_N]
            S[LOG_N] = e + 1
            T.lw[e] = w
            if S[INIT]:  # init_pairs: the entry's pair, sorted into chains afterwards (sort_log)
                T.ln[e] = pi
            else:
                T.ln[e] = NIL
                if tail == NIL:
                    P[pi, P_HEAD] = e
                else:
                    T.ln[tail] = e
            P[pi, P_TAIL] = e
            P[pi, P_N] += 1
            S[LIVE] += 1
        if P[pi, P_STAMP] != S[STEP_NO]:
            P[pi, P_STAMP] = S[STEP_NO]
            T.touched[S[N_TOUCHED]] = pi
            S[N_TOUCHED] += 1


@_inline
def delta(S, W, T, X, x, y, d, w):
    """A pending delta of word w: equal pairs are summed first, so a pair that a merge leaves as
    it was costs no table update."""
    key = (np.int64(x) << 32) | np.int64(y)
    if key == S[SKIP_KEY]:
        return
    n = S[N_DELTAS]
    dkey = X.dkey
    for i in range(n):
        if dkey[i] == key:
            X.dval[i] += d
            return
    if n == ST__DELTAS:
        apply_delta(S, W, T, key, d, w)
        return
    dkey[n] = key
    X.dval[n] = d
    S[N_DELTAS] = n + 1


@_inline
def flush_deltas(S, W, T, X, w):
    for i in range(S[N_DELTAS]):
        if X.dval[i]:
            apply_delta(S, W, T, X.dkey[i], X.dval[i], w)
    S[N_DELTAS] = 0


@_inline
def contributions(S, W, T, X, s, off, a, b, sign, w):
    """The pair contributions of s[off + a .. off + b), whose edges are between unequal symbols or
    at the word's ends, times sign."""
    if S[MODE] == ST_TRAIN_HF:
        for i in range(a, b - 1):
            delta(S, W, T, X, s[off + i], s[off + i + 1], sign, w)
        return
    i = a
    while i < b:
        j = i + 1
        si = s[off + i]
        while j < b and s[off + j] == si:
            j += 1
        if j - i >= 2:
            delta(S, W, T, X, si, si, sign * ((j - i) // 2), w)
        if j < b:
            delta(S, W, T, X, si, s[off + j], sign, w)
        i = j


@_inline
def window_start(mode, s, off, i, stop):
    """window_start of trainer.c (read its comment: exact when above stop)."""
    a = i - 1 if i else np.int64(0)
    if mode == ST_TRAIN_PAPER:
        while a > stop and s[off + a - 1] == s[off + a]:
            a -= 1
    return a


@_inline
def window_end(mode, s, off, L, i, known):
    b = i + 2
    if b < L:
        b += 1
        if mode == ST_TRAIN_PAPER:
            if b <= known:
                return known
            while b < L and s[off + b] == s[off + b - 1]:
                b += 1
    return b


@_inline
def merge_word(S, W, T, X, w, x, y, nt):
    """Merge (x, y) -> nt in word w, updating the pair counts: for each cluster of sites whose
    windows touch, the old window's contributions out, the new window's in."""
    s = W.sym
    off = W.woff[w]
    L = np.int64(W.wlen[w])
    sites = X.sites
    win = X.window
    mode = S[MODE]
    ns = 0
    i = np.int64(0)
    while i + 1 < L:
        if s[off + i] == x and s[off + i + 1] == y:
            sites[ns] = i
            ns += 1
            i += 2
        else:
            i += 1
    if ns == 0:  # the word lost the pair since it was listed
        return
    b = np.int64(0)
    k = 0
    while k < ns:
        a = window_start(mode, s, off, np.int64(sites[k]), 0)
        last = k
        b = window_end(mode, s, off, L, np.int64(sites[k]), b)
        while last + 1 < ns and window_start(mode, s, off, np.int64(sites[last + 1]), b) <= b:
            last += 1
            b = window_end(mode, s, off, L, np.int64(sites[last]), b)
        contributions(S, W, T, X, s, off, a, b, -1, w)
        n2 = 0
        q = k
        i = a
        while i < b:
            if q <= last and i == sites[q]:
                win[n2] = nt
                i += 2
                q += 1
            else:
                win[n2] = s[off + i]
                i += 1
            n2 += 1
        contributions(S, W, T, X, win, 0, 0, n2, 1, w)
        flush_deltas(S, W, T, X, w)
        k = last + 1
    j = np.int64(sites[0])
    q = 0
    i = np.int64(sites[0])
    while i < L:
        if q < ns and i == sites[q]:
            s[off + j] = nt
            i += 2
            q += 1
        else:
            s[off + j] = s[off + i]
            i += 1
        j += 1
    W.wlen[w] = j


@_kernel
def needs_room(S, T, B):
    """Whether the pair tables lack room for B more pairs and word-list entries."""
    n = S[N_PAIRS] + B
    return n > T.P.shape[0] or n * 10 > (S[PMASK] + 1) * 7 or S[LOG_N] + B > T.lw.shape[0]


@_jit
def reserve(S, T, B, e):
    """Room for B more pairs and word-list entries (what one word's merge may add); e, an entry of
    the word list being walked (or NIL), as it is after a compaction of the log. Returns (T, e)."""
    n = S[N_PAIRS] + B
    P, PC, touched = T.P, T.PC, T.touched
    if n > P.shape[0]:
        P = grow_rows(P, n)
        PC = grow(PC, P.shape[0])
        touched = grow(touched, P.shape[0])  # touched pairs are distinct
    pk, pv = T.pk, T.pv
    if n * 10 > (S[PMASK] + 1) * 7:
        slots = S[PMASK] + 1
        while n * 10 > slots * 7:
            slots *= 2
        pk, pv = pair_rehash(P, S[N_PAIRS], slots)
        S[PMASK] = slots - 1
    T = PairTables(P, PC, pk, pv, T.lw, T.ln, touched)
    if S[LOG_N] + B > T.lw.shape[0]:
        cap = T.lw.shape[0]
        if S[LOG_N] > S[LIVE]:
            e = compact_log(S, T, e)
        if S[LIVE] + B > cap - cap // 8:  # less than an eighth free: grow by a quarter
            c = cap + cap // 4
            if c < S[LOG_N] + B:
                c = S[LOG_N] + B
            T = PairTables(P, PC, pk, pv, grow_to(T.lw, c), grow_to(T.ln, c), touched)
    return T, e


@_jit
def grow_to(a, c):
    b = np.empty(c, a.dtype)
    b[:a.shape[0]] = a
    return b


@_jit
def sort_log(S, T, cap):
    """init_pairs' word lists into a new log of cap entries, each pair's chain contiguous: while
    counting, an entry holds its pair in place of the next entry (S[INIT]), and a counting sort
    by pair (stable: each list in the order the C appends it) makes the chains."""
    P = T.P
    lw = np.empty(cap, np.uint32)
    ln = np.empty(cap, np.uint32)
    o = 0
    for i in range(S[N_PAIRS]):
        n = np.int64(P[i, P_N])
        if n == 0:
            P[i, P_HEAD] = NIL
            P[i, P_TAIL] = NIL
            continue
        P[i, P_HEAD] = o
        P[i, P_TAIL] = o  # the fill cursor
        o += n
    for e in range(S[LOG_N]):
        pi = np.int64(T.ln[e])
        pos = np.int64(P[pi, P_TAIL])
        lw[pos] = T.lw[e]
        ln[pos] = pos + 1
        P[pi, P_TAIL] = pos + 1
    for i in range(S[N_PAIRS]):
        if P[i, P_HEAD] != NIL:
            P[i, P_TAIL] -= 1
            ln[P[i, P_TAIL]] = NIL
    S[LOG_N] = o
    return PairTables(P, T.PC, T.pk, T.pv, lw, ln, T.touched)


@_kernel
def popcount(x):
    x = x - ((x >> U64(1)) & U64(0x5555555555555555))
    x = (x & U64(0x3333333333333333)) + ((x >> U64(2)) & U64(0x3333333333333333))
    x = (x + (x >> U64(4))) & U64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * U64(0x0101010101010101)) >> U64(56))


@_kernel
def log_rank(bits, base, i):
    """The live entries of the log before entry i (bits: the live ones; base: per 64 entries)."""
    b = i >> 6
    return base[b] + popcount(bits[b] & ((U64(1) << U64(i & 63)) - U64(1)))


@_jit
def compact_log(S, T, e):
    """Drop the dead entries of the word-list log in place (the C frees a pair's list when its
    count drops to 0; here its chain is dropped and the space is won back here): the live entries
    slide down in order, so each chain keeps its order (a chain's entries are in increasing order,
    being appended at the log's end). Returns e (an entry, or NIL) renumbered."""
    n = S[LOG_N]
    nb = (n >> 6) + 1
    bits = np.zeros(nb, np.uint64)
    P = T.P
    lw = T.lw
    ln = T.ln
    for i in range(S[N_PAIRS]):
        x = np.int64(P[i, P_HEAD])
        while x != NIL:
            bits[x >> 6] |= U64(1) << U64(x & 63)
            x = np.int64(ln[x])
    base = np.zeros(nb, np.int64)
    acc = 0
    for b in range(nb):
        base[b] = acc
        acc += popcount(bits[b])
    for i in range(S[N_PAIRS]):
        if P[i, P_HEAD] != NIL:
            P[i, P_HEAD] = log_rank(bits, base, np.int64(P[i, P_HEAD]))
            P[i, P_TAIL] = log_rank(bits, base, np.int64(P[i, P_TAIL]))
    j = 0
    for i in range(n):
        if (bits[i >> 6] >> U64(i & 63)) & U64(1):
            nx = np.int64(ln[i])
            lw[j] = lw[i]
            ln[j] = NIL if nx == NIL else log_rank(bits, base, nx)
            j += 1
    S[LOG_N] = j
    if e != NIL:
        e = log_rank(bits, base, e)
    return e


@_kernel
def merge_words(S, W, X, T, e, x, y, nt):
    """apply_pair's walk over the pair's word list from entry e: each word not visited yet in this
    step merged. Returns NIL at the end, or the entry of a word whose merge needs more room than
    the pair tables have (not merged yet: the caller makes room and calls again from there)."""
    lw = T.lw
    ln = T.ln
    wstamp = W.wstamp
    wlen = W.wlen
    step = S[STEP_NO]
    while e != NIL:
        w = np.int64(lw[e])
        if wstamp[w] != step:
            if needs_room(S, T, 2 * np.int64(wlen[w]) + 2):
                return e
            wstamp[w] = step
            merge_word(S, W, T, X, w, x, y, nt)
        e = np.int64(ln[e])
    return e


@_kernel
def apply_begin(S, T, pi):
    """apply_pair's start: a new step, the merged pair's key skipped; the head of its word list."""
    S[STEP_NO] += 1
    S[N_TOUCHED] = 0
    S[SKIP_KEY] = (np.int64(T.P[pi, P_LEFT]) << 32) | np.int64(T.P[pi, P_RIGHT])
    return np.int64(T.P[pi, P_HEAD])


@_kernel
def apply_end(S, T, pi):
    """apply_pair's end, before the touched pairs are queued: the merged pair is gone. Returns the
    heap size those pushes need."""
    S[SKIP_KEY] = -1
    T.PC[pi] = 0
    pair_free_words(S, T.P, pi)
    return S[HEAP_N] + S[N_TOUCHED]


@_kernel
def push_touched(S, T, H, K):
    """Queue the pairs that gained occurrences (the heap has room)."""
    P = T.P
    for k in range(S[N_TOUCHED]):
        q = np.int64(T.touched[k])
        if T.PC[q] > 0 and not P[q, P_BLOCKED]:
            heap_push(S, H, q, T.PC[q], P, K)


@_jit
def grow_heap(H, need):
    hc = grow(H.hc, need)
    return Heap(hc, grow(H.hp, hc.shape[0]))


@_kernel
def count_words(S, W, T, X, w):
    """init_pairs' count of the pairs of words w, w + 1, ...: returns the number of words, or the
    first word whose pairs need more room than the pair tables have (not counted yet)."""
    while w < S[N_WORDS]:
        if needs_room(S, T, 2 * np.int64(W.wlen[w]) + 2):
            return w
        contributions(S, W, T, X, W.sym, W.woff[w], 0, np.int64(W.wlen[w]), 1, w)
        flush_deltas(S, W, T, X, w)
        w += 1
    return w


@_jit
def init_pairs(S, W, T, K):
    """The pair table, word lists and heap of the words W holds (phase 1's pretokens, or phase 2's
    candidates); T is empty (no pairs)."""
    maxlen = 2
    for w in range(S[N_WORDS]):
        if W.wlen[w] > maxlen:
            maxlen = np.int64(W.wlen[w])
    X = Scratch(np.zeros(maxlen, np.uint32), np.zeros(maxlen, np.uint32), np.zeros(ST__DELTAS, np.int64),
                np.zeros(ST__DELTAS, np.int64))
    # Distinct pairs are at most the symbols: a small corpus gets a small table; it grows as pairs come
    slots = 64
    while slots < (1 << 16) and slots < 2 * W.sym.shape[0]:
        slots <<= 1
    pk, pv = pair_rehash(T.P, 0, slots)
    S[PMASK] = slots - 1
    T = PairTables(T.P, T.PC, pk, pv, T.lw, T.ln, T.touched)
    S[STEP_NO] = 1
    S[SKIP_KEY] = -1
    S[INIT] = 1
    w = count_words(S, W, T, X, 0)
    while w < S[N_WORDS]:
        T, _ = reserve(S, T, 2 * np.int64(W.wlen[w]) + 2, NIL)
        w = count_words(S, W, T, X, w)
    S[N_TOUCHED] = 0
    S[INIT] = 0
    T = sort_log(S, T, S[LIVE] + S[LIVE] // 4 + 2 * maxlen + 2)
    n = S[N_PAIRS]
    H = Heap(np.zeros(n if n else 1, np.int64), np.zeros(n if n else 1, np.uint32))
    m = 0
    for i in range(n):
        if T.PC[i] <= 0:
            continue
        H.hc[m] = T.PC[i]
        H.hp[m] = i
        m += 1
    S[HEAP_N] = m
    heapify(S, H, T.P, K)
    return X, T, H


# ---- the alphabet -------------------------------------------------------------------------------

def reachable(alphabet):
    """The base symbols valid UTF-8 text can produce (trainer.c's closed form): how many."""
    if alphabet == ST_ALPHABET_BYTES:
        return sum(1 for k in range(256) if not (k == 0xC0 or k == 0xC1 or k >= 0xF5))
    return 0xC0 + (0xDF - 0xC2 + 1) + 256


def hf_byte_is_self(b):
    return 33 <= b <= 126 or 161 <= b <= 172 or b >= 174


def hf_byte_ranks():
    """HF's id order of the 256 bytes: rank[b]."""
    rank = [0] * 256
    r = 0
    for b in range(256):
        if hf_byte_is_self(b):
            rank[b] = r
            r += 1
    for b in range(256):
        if not hf_byte_is_self(b):
            rank[b] = r
            r += 1
    return rank


def byte_of_char(cp):
    """The byte of GPT-2's byte-level character cp, or -1 if cp is none."""
    if 33 <= cp <= 126 or 161 <= cp <= 172 or 174 <= cp <= 255:
        return cp
    if cp < 256 or cp >= 256 + 68:
        return -1
    k = cp - 256
    for b in range(256):
        if not hf_byte_is_self(b):
            if k == 0:
                return b
            k -= 1
    return -1


# ---- token strings (hf: reuse) ---------------------------------------------------------------------
@_kernel
def str_lookup(S, K, p, pi, n):
    """The recorded token spelling bytes p[pi .. pi + n), or -1."""
    slots = K.str_slots
    if slots.shape[0] == 0:
        return -1
    mask = S[STR_MASK]
    k = slot_of(hash_bytes(p, pi, n), mask)
    while True:
        v = np.int64(slots[k])
        if v == 0:
            return -1
        id_ = v - 1
        if K.tok_len[id_] == n:
            o = K.tok_off[id_]
            same = True
            for q in range(n):
                if K.seq[o + q] != p[pi + q]:
                    same = False
                    break
            if same:
                return id_
        k = (k + 1) & mask


@_jit
def str_rehash(S, K, nslots):
    s = np.zeros(nslots, np.uint32)
    mask = nslots - 1
    old = K.str_slots
    for i in range(old.shape[0]):
        v = np.int64(old[i])
        if v == 0:
            continue
        k = slot_of(hash_bytes(K.seq, K.tok_off[v - 1], np.int64(K.tok_len[v - 1])), mask)
        while s[k]:
            k = (k + 1) & mask
        s[k] = v
    S[STR_MASK] = mask
    return Toks(K.seq, K.tok_off, K.tok_len, K.hf_key, s)


@_kernel
def str_needs_rehash(S, K):
    return K.str_slots.shape[0] == 0 or (S[N_STRS] + 1) * 10 > (S[STR_MASK] + 1) * 7


@_kernel
def str_find_or_add(S, K, id_):
    """The token spelling the same sequence as token id_, or id_ itself after recording it (the
    table has room: str_needs_rehash)."""
    mask = S[STR_MASK]
    slots = K.str_slots
    k = slot_of(hash_bytes(K.seq, K.tok_off[id_], np.int64(K.tok_len[id_])), mask)
    while True:
        v = np.int64(slots[k])
        if v == 0:
            break
        if cmp_seq(K, v - 1, id_) == 0:
            return v - 1
        k = (k + 1) & mask
    slots[k] = id_ + 1
    S[N_STRS] += 1
    return id_


@_kernel
def special_with_bytes(S, E, p, pi, n):
    """The special whose text is the byte-level string of bytes p[pi .. pi + n), or -1."""
    if E.spec_len.shape[0] == 0:
        return -1
    for i in range(S[N_SPECIALS]):
        if E.spec_len[i] == n:
            o = E.spec_off[i]
            same = True
            for q in range(n):
                if E.spec_bytes[o + q] != p[pi + q]:
                    same = False
                    break
            if same:
                return i
    return -1


# ---- a merge ---------------------------------------------------------------------------------------
@_kernel
def tok_symbol(S, K, id_, k):
    """Base symbol k of token id_."""
    o = K.tok_off[id_]
    if S[BASE] == 512:
        return (np.int64(K.seq[o + 2 * k]) << 8) | np.int64(K.seq[o + 2 * k + 1])
    return np.int64(K.seq[o + k])


@_kernel
def breaks_constraints(S, K, x, y):
    """Whether the token of x then y breaks an extension's constraints: more than max_words words
    (maximal runs of symbols other than ' '), or ':' then ' '."""
    sw = 2 if S[BASE] == 512 else 1
    words = 0
    prev = 32
    for part in range(2):
        id_ = y if part else x
        n = np.int64(K.tok_len[id_]) // sw
        for k in range(n):
            c = tok_symbol(S, K, id_, k)
            if c != 32 and prev == 32:
                words += 1
            if S[COLON_SPACE] and c == 32 and prev == 58:
                return True
            prev = c
    return S[MAX_WORDS] != 0 and words > S[MAX_WORDS]


@_kernel
def pop_best(S, H, T, K):
    """The best live pair, popped; -1 when none is left. After the seed merges of an extension, a
    pair that breaks its constraints is dropped (and marked, so it is never queued again)."""
    P = T.P
    while S[HEAP_N]:
        c, pi = heap_pop(S, H, P, K)
        live = T.PC[pi]
        if live <= 0 or P[pi, P_BLOCKED]:
            continue
        if live != c:
            heap_push(S, H, pi, live, P, K)
            continue
        if S[EXTEND] and breaks_constraints(S, K, np.int64(P[pi, P_LEFT]), np.int64(P[pi, P_RIGHT])):
            P[pi, P_BLOCKED] = 1
            S[N_BLOCKED] += 1
            continue
        return pi
    return -1


@_kernel
def written_token_bytes(S, K):
    """The bytes of the tokens made by the rules of the model written now (phase 1's merges; in
    phase 2 the kept regular merges and the supermerges)."""
    start = S[BASE] * (2 if S[ALPHABET] == ST_ALPHABET_UBE else 1)
    if S[PHASE] != 2:
        return S[SEQ_LEN] - start
    made = S[MADE]
    last = S[BASE] + made - 1
    end1 = K.tok_off[last] + np.int64(K.tok_len[last]) if made else start
    kept = K.tok_off[S[BASE] + S[NEXT_MERGE]] if S[NEXT_MERGE] < made else end1
    return (kept - start) + (S[SEQ_LEN] - end1)


@_kernel
def token_fits(S, K, x, y):
    """make_token's limit: False (and the stop set) when the token of x then y would take the
    model past the loader's limit on token bytes (training stops there, so every model it writes
    loads)."""
    rules = (S[NEXT_MERGE] + S[N_SUPER] if S[PHASE] == 2 else S[N_MERGES]) + 1
    if written_token_bytes(S, K) + np.int64(K.tok_len[x]) + np.int64(K.tok_len[y]) > rules_token_bytes_limit(rules):
        S[STOP] = ST_STOP_TOKEN_BYTES
        return False
    return True


@_kernel
def write_token(S, K, x, y, id_):
    """Token id_ spells x's base symbols then y's (the table has room)."""
    lx = np.int64(K.tok_len[x])
    ly = np.int64(K.tok_len[y])
    seq = K.seq
    n = S[SEQ_LEN]
    ox = K.tok_off[x]
    oy = K.tok_off[y]
    K.tok_off[id_] = n
    K.tok_len[id_] = lx + ly
    if lx + ly > S[MAX_TOK_LEN]:
        S[MAX_TOK_LEN] = lx + ly
    for q in range(lx):
        seq[n + q] = seq[ox + q]
    for q in range(ly):
        seq[n + lx + q] = seq[oy + q]
    S[SEQ_LEN] = n + lx + ly


@_kernel
def put_pair(pairs, counts, n, left, right, count):
    """Append (left, right, count) as entry n of a list of pairs (2 ids and a count an entry; the
    list has room)."""
    pairs[2 * n] = left
    pairs[2 * n + 1] = right
    counts[n] = count


@_jit
def grow_pairs_list(pairs, counts, n):
    counts = grow(counts, n + 1)
    return grow(pairs, 2 * counts.shape[0]), counts


@_kernel
def merge_check(S, vocab_size):
    """merge_once's first checks: False (and the stop set) when training is finished."""
    hf = S[MODE] == ST_TRAIN_HF
    if (S[HF_VOCAB] >= vocab_size) if hf else (S[DISTINCT] >= S[TARGET]):
        S[STOP] = ST_STOP_LIMIT if S[CAPPED] else ST_STOP_VOCAB_SIZE
        return False
    # hf mode counts vocabulary entries, not merges, but every merge takes an id of the written
    # rules model all the same: the model format's limit stops it as it stops paper mode
    if hf and S[CAPPED] and S[N_MERGES] >= S[TARGET]:
        S[STOP] = ST_STOP_LIMIT
        return False
    return True


@_kernel
def no_pair_stop(S, T):
    """merge_once when no pair is left: why."""
    if not S[OOM]:
        S[STOP] = ST_STOP_NO_PAIR
    if S[N_BLOCKED]:  # pairs are left, all ruled out
        for i in range(S[N_PAIRS]):
            if T.P[i, P_BLOCKED] and T.PC[i] > 0:
                S[STOP] = ST_STOP_CONSTRAINTS
                break


@_kernel
def hf_key_of_new(S, E, K, id_):
    """hf: a new string's id: a special's when it spells a special's text, else the next."""
    sp = special_with_bytes(S, E, K.seq, K.tok_off[id_], np.int64(K.tok_len[id_]))
    if sp >= 0:
        K.hf_key[id_] = sp
    else:
        K.hf_key[id_] = S[HF_VOCAB]
        S[HF_VOCAB] += 1


@_kernel
def rooms_ok(S, T, K, M):
    """Whether every table a merge writes outside its words has room for one more merge: the
    token table (an id, and bytes for the longest token twice), the merges, hf's strings, and a
    pair (a seed merge's may be new)."""
    id_ = S[BASE] + S[N_MERGES] + S[N_SUPER]
    return (id_ < K.tok_off.shape[0] and S[SEQ_LEN] + 2 * S[MAX_TOK_LEN] <= K.seq.shape[0]
            and S[N_MERGES] < M.counts.shape[0] and S[N_SUPER] < M.sup_counts.shape[0]
            and not (S[MODE] == ST_TRAIN_HF and str_needs_rehash(S, K)) and not needs_room(S, T, 1))


@_jit
def grow_rooms(S, T, K, M):
    """Room for what rooms_ok checks."""
    id_ = S[BASE] + S[N_MERGES] + S[N_SUPER]
    tok_off = grow(K.tok_off, id_ + 1)
    tok_len = grow(K.tok_len, tok_off.shape[0])
    hf_key = grow(K.hf_key, tok_off.shape[0])
    seq = grow(K.seq, S[SEQ_LEN] + 2 * S[MAX_TOK_LEN])
    K = Toks(seq, tok_off, tok_len, hf_key, K.str_slots)
    if S[MODE] == ST_TRAIN_HF and str_needs_rehash(S, K):
        K = str_rehash(S, K, (S[STR_MASK] + 1) * 2 if K.str_slots.shape[0] else 1024)
    merges, counts = M.merges, M.counts
    if S[N_MERGES] >= counts.shape[0]:
        merges, counts = grow_pairs_list(merges, counts, S[N_MERGES])
    sup, sup_counts = M.sup, M.sup_counts
    if S[N_SUPER] >= sup_counts.shape[0]:
        sup, sup_counts = grow_pairs_list(sup, sup_counts, S[N_SUPER])
    M = Lists(merges, counts, sup, sup_counts, M.wait_head, M.wait_pair, M.wait_next, M.seeds)
    if needs_room(S, T, 1):
        T, _ = reserve(S, T, 1, NIL)
    return T, K, M


@_kernel
def merge_select(S, T, H, K, M, E, vocab_size, min_frequency):
    """merge_once and seed_once of trainer.c up to apply_pair (the tables have room: rooms_ok):
    (the pair to apply, or -1; its new token; False when training is finished)."""
    if not merge_check(S, vocab_size):
        return -1, 0, False
    if S[N_MERGES] < S[N_SEEDS]:
        # seed_once: the next seed merge, replayed whatever its count (0 when the counted text
        # never holds the pair: its token is made all the same)
        nm = S[N_MERGES]
        x = np.int64(M.seeds[2 * nm])
        y = np.int64(M.seeds[2 * nm + 1])
        id_ = S[BASE] + nm
        pi = pair_get(S, T, (x << 32) | y)
        live = T.PC[pi]
        count = live if live > 0 else np.int64(0)
        if not token_fits(S, K, x, y):
            return -1, 0, False
        write_token(S, K, x, y, id_)
        S[DISTINCT] += 1
        put_pair(M.merges, M.counts, nm, x, y, count)
        S[N_MERGES] = nm + 1
        return (pi if count else -1), id_, True
    pi = pop_best(S, H, T, K)
    if pi < 0:
        no_pair_stop(S, T)
        return -1, 0, False
    count = T.PC[pi]
    if count < min_frequency:
        heap_push(S, H, pi, count, T.P, K)  # left as it was: a later step stops here again
        S[STOP] = ST_STOP_MIN_FREQUENCY
        return -1, 0, False
    x = np.int64(T.P[pi, P_LEFT])
    y = np.int64(T.P[pi, P_RIGHT])
    id_ = S[BASE] + S[N_MERGES]
    if not token_fits(S, K, x, y):
        return -1, 0, False
    write_token(S, K, x, y, id_)
    nt = id_
    if S[MODE] == ST_TRAIN_HF:
        nt = str_find_or_add(S, K, id_)
        if nt == id_:
            hf_key_of_new(S, E, K, id_)
    if nt == id_:
        S[DISTINCT] += 1
    else:
        S[REUSED] += 1
    put_pair(M.merges, M.counts, S[N_MERGES], x, y, count)
    S[N_MERGES] += 1
    return pi, nt, True


@_kernel
def heap_room(H, need):
    return need <= H.hc.shape[0]


@_kernel
def room_at(W, T, e):
    """The room the merge of the word at word-list entry e needs."""
    return 2 * np.int64(W.wlen[T.lw[e]]) + 2


@_kernel
def pair_parts(T, pi):
    return np.int64(T.P[pi, P_LEFT]), np.int64(T.P[pi, P_RIGHT])


@_jit_inline
def apply_pair(S, W, X, T, H, K, pi, nt):
    """apply_pair: merge pair pi into token nt in every word that holds it, then queue the pairs it
    touched; (T, H), grown where they had no room. Inlined into both step loops (a call would
    pass every array of their tuples)."""
    x, y = pair_parts(T, pi)
    e = apply_begin(S, T, pi)
    while True:
        e = merge_words(S, W, X, T, e, x, y, nt)
        if e == NIL:
            break
        T, e = reserve(S, T, room_at(W, T, e), e)
    need = apply_end(S, T, pi)
    if not heap_room(H, need):
        H = grow_heap(H, need)
    push_touched(S, T, H, K)
    return T, H


@_jit
def phase1_steps(st, max_merges, vocab_size, min_frequency):
    """st_trainer_step's loop in phase 1: (merges made, the new state). Only growth calls kernels
    that count references (and allocate); a merge otherwise runs in kernels that do not."""
    S, W, X, T, H, K, M, E = st
    k = 0
    while k < max_merges and not S[DONE]:
        before = S[N_MERGES]
        if not rooms_ok(S, T, K, M):
            T, K, M = grow_rooms(S, T, K, M)
        pi, nt, more = merge_select(S, T, H, K, M, E, vocab_size, min_frequency)
        if pi >= 0:
            T, H = apply_pair(S, W, X, T, H, K, pi, nt)
            more = more and not S[OOM]
        if S[OOM]:
            break
        if S[N_MERGES] > before:
            k += 1
        if not more:
            S[DONE] = 1
    return k, State(S, W, X, T, H, K, M, E)


@_jit
def heap_reorder(st):
    heapify(st.S, st.H, st.T.P, st.K)


# ---- building the trainer ------------------------------------------------------------------------
@_jit
def build_words(arena, e_off, e_len, e_count, n, ube):
    """The words of a pretoken counter: its distinct pretokens of two or more symbols (bytes: the
    bytes; UBE: each character's symbols)."""
    nw = 0
    nsym = 0
    for i in range(n):
        if e_len[i] >= 2:
            nw += 1
            nsym += np.int64(e_len[i])  # UBE gives at most one symbol per byte
    sym = np.empty(nsym if nsym else 1, np.uint32)
    woff = np.zeros(nw if nw else 1, np.int64)
    wcount = np.zeros(nw if nw else 1, np.int64)
    wlen = np.zeros(nw if nw else 1, np.uint32)
    wstamp = np.zeros(nw if nw else 1, np.uint32)
    sy = np.zeros(4, np.uint16)
    pos = 0
    nwords = 0
    for i in range(n):
        ln = np.int64(e_len[i])
        if ln < 2:
            continue
        p = np.int64(e_off[i])
        start = pos
        if not ube:
            for k in range(ln):
                sym[pos] = arena[p + k]
                pos += 1
        else:
            k = 0
            while k < ln:
                m, cl = ube_char_symbols(arena, p + k, sy)
                for q in range(m):
                    sym[pos] = sy[q]
                    pos += 1
                k += cl
        if pos - start < 2:
            pos = start
            continue
        woff[nwords] = start
        wlen[nwords] = pos - start
        wcount[nwords] = np.int64(e_count[i])
        nwords += 1
    return Words(sym, woff, wcount, wlen, wstamp), nwords


def _empty_lists():
    z32 = np.zeros(0, np.uint32)
    return Lists(np.zeros(2048, np.uint32), np.zeros(1024, np.uint64), np.zeros(512, np.uint32),
                 np.zeros(256, np.uint64), z32, np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.uint32))


def _empty_specials():
    return Specials(np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int64))


def _empty_pair_tables(n_sym, maxlen):
    cap = 4096
    log = n_sym + 2 * maxlen + 16
    return PairTables(np.zeros((cap, P_COLS), np.uint32), np.zeros(cap, np.int64), np.zeros(0, np.int64),
                      np.zeros(0, np.uint32), np.zeros(log, np.uint32), np.zeros(log, np.uint32),
                      np.zeros(cap, np.uint32))


class Trainer:
    """struct st_trainer: the State of arrays the kernels take, and the fields Python keeps."""
    __slots__ = ("st", "vocab_size", "min_frequency", "pt", "pass_", "seed_min_count", "base_name",
                 "super_out", "super_out_n", "super_out_kept", "__weakref__")

    def __init__(self):
        self.st = None
        self.vocab_size = 0
        self.min_frequency = 0
        self.pt = None
        self.pass_ = None  # the candidates given back so far (a candidates Counter), or None
        self.seed_min_count = 0
        self.base_name = b""
        self.super_out = None
        self.super_out_n = 0
        self.super_out_kept = 0

    @property
    def S(self):
        return self.st.S


def _clamp(v):
    return min(int(v), INT64_MAX)


def target_of(t):
    """The trainer's target (merges wanted)."""
    return int(t.S[TARGET])


def _below_alphabet(err, vocab_size, alphabet_size, n_specials):
    return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                "vocab_size %d is below the alphabet (%d) plus the special tokens (%d)"
                % (vocab_size, alphabet_size, n_specials))


def _merges_limit(base, n_specials):
    """The most merges the written rules model has ids for (its limit of 2^21 - 2, less the base
    symbols and the special tokens): a trainer's target is capped there."""
    return (1 << 21) - 2 - base - n_specials


def _target(vocab_size, alphabet_size, n_specials, base):
    """The merges wanted, and whether the rules model's id limit lowered it."""
    target = vocab_size - alphabet_size - n_specials
    limit = _merges_limit(base, n_specials)
    if target > limit:
        return (limit if limit > 0 else 0), 1
    return target, 0


@export
def st_trainer_new(counter, mode, alphabet, vocab_size, min_frequency, n_specials, alloc, out, err):
    clear(err)
    if out is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL")
    out.v = None
    if counter is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "counter is NULL")
    if counter.cand is not None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "a candidates counter goes back to its trainer (st_trainer_candidates_add), not to st_trainer_new")
    if mode not in (ST_TRAIN_PAPER, ST_TRAIN_HF):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "mode is neither ST_TRAIN_PAPER nor ST_TRAIN_HF")
    if alphabet not in (ST_ALPHABET_BYTES, ST_ALPHABET_UBE):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "alphabet is neither bytes nor UBE")
    if mode == ST_TRAIN_HF and alphabet == ST_ALPHABET_UBE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "mode hf is HuggingFace's byte-level trainer: bytes alphabet only, not UBE")
    base = 512 if alphabet == ST_ALPHABET_UBE else 256
    alphabet_size = 256 if mode == ST_TRAIN_HF else reachable(alphabet)
    if vocab_size < alphabet_size or vocab_size - alphabet_size < n_specials:
        return _below_alphabet(err, vocab_size, alphabet_size, n_specials)
    target, capped = _target(vocab_size, alphabet_size, n_specials, base)
    S = np.zeros(N_SCALARS, np.int64)
    S[MODE], S[ALPHABET], S[BASE], S[TARGET], S[CAPPED] = mode, alphabet, base, target, capped
    S[ALPHABET_SIZE], S[N_SPECIALS], S[N_PRETOKENS] = alphabet_size, n_specials, counter.n
    S[PHASE] = 1
    S[SKIP_KEY] = -1

    # base tokens
    sw = 2 if alphabet == ST_ALPHABET_UBE else 1
    cap = base + 1024
    tok_off = np.zeros(cap, np.int64)
    tok_len = np.zeros(cap, np.uint32)
    hf_key = np.zeros(cap, np.uint32)
    seq = np.zeros(65536, np.uint8)
    ids = np.arange(base, dtype=np.int64)
    tok_off[:base] = ids * sw
    tok_len[:base] = sw
    if sw == 2:
        seq[0:2 * base:2] = ids >> 8
        seq[1:2 * base:2] = ids & 0xFF
    else:
        seq[:base] = ids
    rank = hf_byte_ranks()
    hf_key[:base] = ids
    hf_key[:256] = [n_specials + r for r in rank]
    S[SEQ_LEN] = base * sw
    S[HF_VOCAB] = n_specials + 256
    K = Toks(seq, tok_off, tok_len, hf_key, np.zeros(0, np.uint32))

    # words: the distinct pretokens of two or more symbols (a symbol alone holds no pair)
    n = counter.n
    if int(np.count_nonzero(counter.e_len[:n] >= 2)) > 0xFFFFFFFE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "more than 2^32 - 2 distinct pretokens")
    W, nwords = build_words(counter.arena, counter.e_off, counter.e_len, counter.e_count, n,
                            alphabet == ST_ALPHABET_UBE)
    S[N_WORDS] = nwords
    t = Trainer()
    t.vocab_size, t.min_frequency, t.pt = int(vocab_size), int(min_frequency), counter.pt
    maxlen = int(W.wlen[:nwords].max()) if nwords else 2
    X, T, H = init_pairs(S, W, _empty_pair_tables(int(W.sym.shape[0]), max(maxlen, 2)), K)
    t.st = State(S, W, X, T, H, K, _empty_lists(), _empty_specials())
    out.v = t
    return ST_OK


@export
def st_trainer_free(t):
    if t is not None:
        t.st = None
        t.pass_ = None


@export
def st_trainer_set_specials(t, specials, ends, n, err):
    clear(err)
    if t is None or (n and (specials is None or ends is None)):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer, specials or ends is NULL")
    S = t.S
    if n != S[N_SPECIALS]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "n is %d but the trainer was made for %d special tokens" % (n, S[N_SPECIALS]))
    if S[N_MERGES] or S[SPECIALS_SET]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the special tokens are given once, before the first step")
    e = [int(x) for x in ends[:n]] if n else []
    for i in range(n):
        s0 = e[i - 1] if i else 0
        if e[i] <= s0:
            fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "a special token is empty (or ends decrease)",
                 line=0, input=1)
            return ST_ERR_INVALID_ARGUMENT
        at, _ = utf8_validate(specials[s0:], e[i] - s0)
        if at >= 0:
            fail(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, s0 + int(at), "a special token is not valid UTF-8",
                 line=0, input=1)
            return ST_ERR_INVALID_UTF8
    if S[MODE] != ST_TRAIN_HF:  # paper: texts play no part
        S[SPECIALS_SET] = 1
        return ST_OK
    st = t.st
    total = e[n - 1] if n else 0
    spec_bytes = np.zeros(total if total else 1, np.uint8)
    spec_off = np.zeros(n, np.int64)
    spec_len = np.zeros(n, np.int64)
    pos = 0
    for i in range(n):
        s0 = e[i - 1] if i else 0
        spec_off[i] = pos
        text = bytes(specials[s0:e[i]]).decode("utf-8")
        bs = []
        for ch in text:
            b = byte_of_char(ord(ch))
            if b < 0:
                bs = None
                break
            bs.append(b)
        if bs is None:
            spec_len[i] = -1
        else:
            spec_len[i] = len(bs)
            spec_bytes[pos:pos + len(bs)] = bs
            pos += len(bs)
    E = Specials(spec_bytes, spec_off, spec_len)
    # HuggingFace's ids: the specials first, then the byte-level characters by code point, each
    # taking a special's id when the special has its string (the vocabulary then holds one less)
    rank = hf_byte_ranks()
    order = [0] * 256
    for b in range(256):
        order[rank[b]] = b
    by_bytes = {}
    for i in range(n):
        if spec_len[i] == 1 and int(spec_bytes[spec_off[i]]) not in by_bytes:
            by_bytes[int(spec_bytes[spec_off[i]])] = i
    nxt = n
    hf_key = st.K.hf_key
    for r in range(256):
        b = order[r]
        sp = by_bytes.get(b)
        if sp is not None:
            hf_key[b] = sp
        else:
            hf_key[b] = nxt
            nxt += 1
    S[HF_VOCAB] = nxt
    target = t.vocab_size - nxt if t.vocab_size > nxt else 0
    # every merge still takes an id of the written rules model: its limit caps the target as
    # st_trainer_new's does
    limit = _merges_limit(int(S[BASE]), int(S[N_SPECIALS]))
    S[CAPPED] = 1 if target > limit else 0
    S[TARGET] = limit if target > limit else target
    S[SPECIALS_SET] = 1
    t.st = st._replace(E=E)
    heap_reorder(t.st)  # the heap was ordered with the old ids: order it again
    return ST_OK


def _state_of(t):
    """What st_trainer_step does next (ST_TRAINER_STATE)."""
    S = t.S
    if S[PHASE] == 2:
        return ST_TRAINING_DONE if S[DONE] else ST_TRAINING_SUPERMERGES
    if not S[DONE]:
        return ST_TRAINING_MERGES
    return ST_TRAINING_DONE if S[ALGORITHM] == ST_ALGORITHM_BPE else ST_TRAINING_CANDIDATES


def _out_of_order(err, why):
    return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why, kind=ST_KIND_OUT_OF_ORDER)


@export
def st_trainer_set_vocab_size(t, vocab_size, err):
    clear(err)
    if t is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer is NULL")
    S = t.S
    if S[ALGORITHM] != ST_ALGORITHM_BPE or S[PHASE] != 1:
        return _out_of_order(err, "the vocabulary size changes in phase-1 BPE only (no superwords)")
    alphabet_size, n_specials = int(S[ALPHABET_SIZE]), int(S[N_SPECIALS])
    if vocab_size < alphabet_size or vocab_size - alphabet_size < n_specials:
        return _below_alphabet(err, vocab_size, alphabet_size, n_specials)
    target, capped = _target(vocab_size, alphabet_size, n_specials, int(S[BASE]))
    if S[EXTEND] and target < S[N_SEEDS]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "vocab_size leaves fewer merges than the seed merges")
    # what is made stays made: a smaller size than the merges (hf: the vocabulary) reached so far
    # cannot be had from this trainer
    if (S[HF_VOCAB] > vocab_size) if S[MODE] == ST_TRAIN_HF else (S[DISTINCT] > target):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "vocab_size is below what this trainer has already made")
    t.vocab_size = int(vocab_size)
    S[TARGET] = target
    S[CAPPED] = capped
    # a trainer that stopped at its size goes on; one that stopped for another reason would stop
    # there again at any size
    if S[DONE] and S[STOP] in (ST_STOP_VOCAB_SIZE, ST_STOP_LIMIT):
        S[DONE] = 0
    return ST_OK


@export
def st_trainer_step(t, max_merges, made, err):
    clear(err)
    if made is not None:
        made.v = 0
    if t is None or made is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or made is NULL")
    S = t.S
    if S[OOM]:
        return fail(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, "an earlier step ran out of memory")
    S[STEPPED] = 1
    if _state_of(t) == ST_TRAINING_CANDIDATES:
        return close_pass(t, err)
    if S[PHASE] == 2:
        k, t.st = phase2_steps(t.st, _clamp(max_merges), _clamp(t.min_frequency))
    else:
        k, t.st = phase1_steps(t.st, _clamp(max_merges), _clamp(t.vocab_size), _clamp(t.min_frequency))
    if S[OOM]:
        return fail(err, ST_ERR_OUT_OF_MEMORY, ST_UNIT_NONE, 0, "")
    made.v = int(k)
    return ST_OK


def phase1_wanted(t):
    """The regular merges phase 1 aimed for: SuperBPE keeps target - s of them."""
    S = t.S
    if S[PHASE] == 2 and S[ALGORITHM] == ST_ALGORITHM_SUPERBPE:
        return int(S[TARGET] - S[SUPERMERGES_ARG])
    return target_of(t)


def phase2_short(t):
    S = t.S
    return int(S[PHASE] == 2 and bool(S[DONE]) and S[STOP] != ST_STOP_VOCAB_SIZE)


def phase1_short(t):
    S = t.S
    if S[PHASE] != 2:
        return int(bool(S[DONE]) and S[STOP] != ST_STOP_VOCAB_SIZE)
    if S[ALGORITHM] == ST_ALGORITHM_SUPERBPE:
        return int(S[MADE] < phase1_wanted(t))
    return int(S[STOP1] != ST_STOP_VOCAB_SIZE and phase2_short(t))


@export
def st_trainer_stat(t, what):
    if t is None:
        return 0
    S = t.S
    counts = t.st.M.counts
    if what == ST_TRAINER_ALPHABET:
        return int(S[ALPHABET_SIZE])
    if what == ST_TRAINER_TARGET:
        return target_of(t)
    if what == ST_TRAINER_MERGES:
        return int(S[N_MERGES])
    if what == ST_TRAINER_PHASE:
        return int(S[PHASE])
    if what == ST_TRAINER_SUPERMERGES:
        return int(S[N_SUPER])
    if what == ST_TRAINER_REGULAR:
        return int(S[NEXT_MERGE] if S[PHASE] == 2 else S[N_MERGES])
    if what == ST_TRAINER_CANDIDATES:
        return int(S[N_CANDIDATES]) if S[PHASE] == 2 else (t.pass_.n if t.pass_ is not None else 0)
    if what == ST_TRAINER_NGRAM_CMIN:
        m = int(S[MADE]) if S[PHASE] == 2 else int(S[N_MERGES])
        last = int(counts[m - 1]) if m else 0
        return last if last > 15 else 15
    if what == ST_TRAINER_STEPS:
        return int(S[STEPS]) if S[PHASE] == 2 else 0
    if what == ST_TRAINER_DONE:
        return int(_state_of(t) == ST_TRAINING_DONE)
    if what == ST_TRAINER_STATE:
        return _state_of(t)
    if what == ST_TRAINER_PASS_DOCUMENTS:
        return int(t.pass_.stats[ST_COUNTER_DOCUMENTS]) if t.pass_ is not None else int(S[PASS_DOCUMENTS])
    if what == ST_TRAINER_PASS_BYTES:
        return int(t.pass_.stats[ST_COUNTER_BYTES]) if t.pass_ is not None else int(S[PASS_BYTES])
    if what == ST_TRAINER_STOP:
        return int(S[STOP]) if S[DONE] else ST_STOP_RUNNING
    if what == ST_TRAINER_STOP_PHASE1:
        return int(S[STOP1]) if S[PHASE] == 2 else (int(S[STOP]) if S[DONE] else ST_STOP_RUNNING)
    if what == ST_TRAINER_WORDS:
        return int(S[N_PRETOKENS])
    if what == ST_TRAINER_SEED_MERGES:
        return int(S[N_SEEDS])
    if what == ST_TRAINER_BLOCKED:
        return int(S[N_BLOCKED])
    if what == ST_TRAINER_PHASE1_SHORT:
        return phase1_short(t)
    if what == ST_TRAINER_PHASE1_WANTED:
        return phase1_wanted(t)
    if what == ST_TRAINER_PHASE1_MADE:
        return int(S[MADE] if S[PHASE] == 2 else S[N_MERGES])
    if what == ST_TRAINER_PHASE2_SHORT:
        return phase2_short(t)
    if what == ST_TRAINER_PHASE2_MADE:
        if S[PHASE] != 2:
            return 0
        return int(S[N_SUPER] if S[ALGORITHM] == ST_ALGORITHM_SUPERBPE else S[NEXT_MERGE] + S[N_SUPER])
    return 0


@export
def st_trainer_merges(t, pairs, counts):
    if pairs is not None:
        pairs.v = t.st.M.merges if t is not None else None
    if counts is not None:
        counts.v = t.st.M.counts if t is not None else None
    if t is None:
        return 0
    S = t.S
    return int(S[NEXT_MERGE] if S[PHASE] == 2 else S[N_MERGES])


# ---- the model file --------------------------------------------------------------------------

_STOP_TEXT = {
    ST_STOP_NO_PAIR: "no pair left (every pretoken is a single token)",
    ST_STOP_MIN_FREQUENCY: "the best pair left occurs fewer than min_frequency times",
    ST_STOP_NO_CANDIDATE: "no supermerge candidate pair left",
    ST_STOP_LIMIT: "the model format's limit of 2^21 - 1 ids",
    ST_STOP_TOKEN_BYTES: "the next token would pass the limit on the tokens' bytes (16 MiB + 256 a rule)",
    ST_STOP_CONSTRAINTS: "every pair left makes a token of more than max_words words or holding ': '",
}


def stop_text(stop):
    return _STOP_TEXT.get(int(stop), "interrupted")


def append_stop(t):
    """The comment line saying why training made fewer entries than asked (none when it did not)."""
    S = t.S
    done, stop = bool(S[DONE]), int(S[STOP])
    why = stop_text(stop) if done else "interrupted"
    if S[PHASE] != 2:
        if done and stop == ST_STOP_VOCAB_SIZE:
            return ""
        return "comment stopped at %d of %d merges: %s\n" % (S[N_MERGES], target_of(t), why)
    out = ""
    if S[ALGORITHM] == ST_ALGORITHM_SUPERBPE:
        if phase1_short(t):
            out += ("comment phase 1 stopped at %d merges, below the %d regular merges SuperBPE keeps: %s\n"
                    % (S[MADE], phase1_wanted(t), stop_text(S[STOP1])))
        if done and stop == ST_STOP_VOCAB_SIZE:
            return out
        return out + "comment stopped at %d of %d supermerges: %s\n" % (S[N_SUPER], S[STEPS], why)
    if done and stop == ST_STOP_VOCAB_SIZE:
        return out
    out += "comment stopped at %d regular merges + %d supermerges of %d: %s" % (S[NEXT_MERGE], S[N_SUPER],
                                                                                S[TARGET], why)
    if S[STOP1] != ST_STOP_VOCAB_SIZE:
        out += "; phase 1 stopped at %d merges: %s" % (S[MADE], stop_text(S[STOP1]))
    return out + "\n"


def _printable_name(name, name_len):
    nm = bytes(name[:name_len]) if name_len else b""
    for i, c in enumerate(nm):
        if c <= 0x20 or c >= 0x7F:
            return i
    return -1


@export
def st_trainer_write_model(t, name, name_len, specials, special_ends, n_specials, out, cap, out_len, err):
    clear(err)
    if out_len is not None:
        out_len.v = 0
    if t is None or out_len is None or (out is None and cap) or (name is None and name_len) or \
            (n_specials and special_ends is None):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument")
    S = t.S
    if n_specials != S[N_SPECIALS]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "n_specials is %d but the trainer was made for %d" % (n_specials, S[N_SPECIALS]))
    if name_len < 1 or name_len > 128:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "name: 1 to 128 printable ASCII characters")
    bad = _printable_name(name, name_len)
    if bad >= 0:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, bad, "name: printable ASCII without spaces only")
    # the special tokens: non-empty, valid UTF-8, distinct
    ends = [int(x) for x in special_ends[:n_specials]] if n_specials else []
    texts = []
    for i in range(n_specials):
        s0, s1 = (ends[i - 1] if i else 0), ends[i]
        if s1 < s0:
            return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special_ends must not decrease")
        if s1 == s0:
            fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special token is empty", line=0, input=1)
            return ST_ERR_INVALID_ARGUMENT
        at, _ = utf8_validate(specials[s0:], s1 - s0)
        if at >= 0:
            fail(err, ST_ERR_INVALID_UTF8, ST_UNIT_BYTE, s0 + int(at), "special token %d is not valid UTF-8" % i,
                 line=0, input=1)
            return ST_ERR_INVALID_UTF8
        text = bytes(specials[s0:s1])
        if text in texts:
            fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i, "special token given twice: " + quoted(text),
                 line=0, input=1)
            return ST_ERR_INVALID_ARGUMENT
        texts.append(text)
    phase2 = S[PHASE] == 2
    n_regular = int(S[NEXT_MERGE] if phase2 else S[N_MERGES])
    n_super = int(S[N_SUPER]) if phase2 else 0
    base = int(S[BASE])
    if base + n_regular + n_super + n_specials > (1 << 21) - 1:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "more than 2^21 - 1 ids")

    # the model's text fields: name, comment line, scripts, in one buffer
    nm = bytes(name[:name_len])
    algorithm = int(S[ALGORITHM])
    mode = int(S[MODE])
    head = ("comment trained by supertok, extending a BPE model (SuperBPE Stage 2): mode " if S[EXTEND]
            else "comment trained by supertok phase-1 BPE: mode " if not phase2
            else "comment trained by supertok BoundlessBPE: mode " if algorithm == ST_ALGORITHM_BOUNDLESS
            else "comment trained by supertok SuperBPE: mode ")
    head += "hf" if mode == ST_TRAIN_HF else "paper"
    head += ", vocab_size %d, min_frequency %d" % (t.vocab_size, t.min_frequency)
    if mode == ST_TRAIN_HF and S[REUSED]:
        head += ", %d merges spell an earlier token (HF reuses its id)" % S[REUSED]
    comments = (head + "\n" + append_stop(t)).encode()
    src = nm + comments
    scripts_off = len(src)
    scripts_kind = FM.ST__SCRIPTS_LIST
    pt = t.pt
    if pt.flags & ST_PRETOK_SCRIPT_AWARE:
        _, default = pretokenizer_init(pt.pattern, pt.flags)
        if np.array_equal(default.single_letter_scripts, pt.single_letter_scripts):
            scripts_kind = FM.ST__SCRIPTS_DEFAULT
        else:
            names = []
            for sid in range(min(st_script_count(), 32 * ST_SCRIPT_WORDS)):
                if (int(pt.single_letter_scripts[sid >> 5]) >> (sid & 31)) & 1:
                    names.append(bytes(st_script_name(sid)))
            lst = b",".join(names)
            if len(src) + len(lst) + 2 > 4096:
                return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "script list too long")
            src += lst
    scripts_len = len(src) - scripts_off
    base_off = len(src)
    if S[EXTEND]:
        if len(src) + len(t.base_name) > 4096:
            return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "script list too long")
        src += t.base_name
    st = t.st
    merges = ModelPairs_(st.M.merges, st.M.counts, n_regular)
    supermerges = FM._EMPTY_PAIRS
    tr = dict(has_training=0, tr_algorithm=0, tr_mode=0, tr_vocab_size=0, tr_min_frequency=0, tr_supermerges=0,
              tr_ngram=0, tr_c_min=0, tr_max_len=0, tr_base_off=0, tr_base_len=0, tr_seed_merges=0,
              tr_max_words=0, tr_min_count=0, tr_colon_space=0)
    if phase2:
        if n_super:
            sp_pairs, sp_counts = trainer_supermerges_arrays(t)
            supermerges = FM.ModelPairs(sp_pairs, sp_counts, n_super, 1, 0)
        tr.update(has_training=1, tr_algorithm=algorithm, tr_mode=mode, tr_vocab_size=t.vocab_size,
                  tr_min_frequency=t.min_frequency, tr_supermerges=int(S[SUPERMERGES_ARG]),
                  tr_ngram=int(S[NGRAM_MAX_LEN] != 0), tr_c_min=int(S[NGRAM_CMIN]), tr_max_len=int(S[NGRAM_MAX_LEN]))
    if S[EXTEND]:
        tr.update(has_training=1, tr_algorithm=ST_ALGORITHM_EXTEND, tr_mode=mode, tr_vocab_size=t.vocab_size,
                  tr_min_frequency=t.min_frequency, tr_base_off=base_off, tr_base_len=len(t.base_name),
                  tr_seed_merges=int(S[N_SEEDS]), tr_max_words=int(S[MAX_WORDS]), tr_colon_space=int(S[COLON_SPACE]),
                  tr_min_count=t.seed_min_count)
    # hf: a special that HuggingFace's vocabulary puts at a token's id shares that id when its text
    # is also the token's bytes (printable ASCII); the others take the ids after the rules, in
    # their order. A model lists its specials by increasing id: the shared ones first.
    n_tok = base + n_regular + n_super
    shared_at = {}    # token id -> special index
    shares = set()
    E = st.E
    if mode == ST_TRAIN_HF and E.spec_len.shape[0] and n_specials:
        for i in range(n_specials):
            s0 = ends[i - 1] if i else 0
            ln = ends[i] - s0
            o = int(E.spec_off[i])
            if E.spec_len[i] != ln or bytes(E.spec_bytes[o:o + ln]) != texts[i]:
                continue  # not a token's string, or its bytes differ from the string's
            if ln == 1:
                tid = int(specials[s0])
            else:
                tid = int(str_lookup(st.S, st.K, specials, s0, ln))
                if tid < 0:
                    tid = 0xFFFFFFFF
            if tid < n_tok and tid not in shared_at:
                shared_at[tid] = i
                shares.add(i)
    sp_id, sp_off, sp_len = [], [], []
    for tid in sorted(shared_at):
        i = shared_at[tid]
        s0 = ends[i - 1] if i else 0
        sp_id.append(tid)
        sp_off.append(s0)
        sp_len.append(ends[i] - s0)
    nxt = n_tok
    for i in range(n_specials):
        if i in shares:
            continue
        s0 = ends[i - 1] if i else 0
        sp_id.append(nxt)
        nxt += 1
        sp_off.append(s0)
        sp_len.append(ends[i] - s0)
    special_text = np.asarray(specials[:ends[-1]] if n_specials else np.zeros(0, np.uint8), np.uint8)
    m = FM.Model(
        src=src, src_len=len(src), name_off=0, name_len=name_len, comments_off=name_len, comments_len=len(comments),
        kind=FM.ST_MODEL_RULES, alphabet=int(S[ALPHABET]), pattern=pt.pattern, flags=pt.flags,
        scripts_kind=scripts_kind, scripts_off=scripts_off, scripts_len=scripts_len, script_aware_line=0,
        training_line=0, merges=merges, supermerges=supermerges, tokens_off=0, tokens_len=0, n_tokens=0,
        tokens_line=0, ranks=np.zeros(0, np.uint32),
        specials=FM.ModelSpecials(np.array(sp_id, np.uint32), np.array(sp_off, np.int64), np.array(sp_len, np.int64)),
        n_specials=n_specials, specials_line=0, special_text=special_text, **tr)
    text = FM.model_text(m)
    if cap and out is not None:
        k = min(cap, len(text))
        out[:k] = np.frombuffer(text[:k], np.uint8)
    out_len.v = len(text)
    if len(text) > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


def ModelPairs_(pairs, counts, n):
    """The merges as model.c's st__model_pairs: "counts" even when empty."""
    return FM.ModelPairs(pairs, counts, n, 1, 0)


# ---- extension (seed merges) --------------------------------------------------------------------

@export
def st_trainer_set_seed_merges(t, pairs, n, base_name, base_name_len, max_words, flags, min_count, err):
    clear(err)
    if t is None or (n and pairs is None) or (base_name_len and base_name is None):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a NULL argument")
    S = t.S
    if S[STEPPED] or S[PHASE] != 1:
        return _out_of_order(err, "seed merges are set before the first step")
    if S[EXTEND]:
        return _out_of_order(err, "seed merges are set once")
    if S[MODE] != ST_TRAIN_PAPER:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "an extension trains in mode paper")
    if S[ALGORITHM] != ST_ALGORITHM_BPE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "an extension trains BPE merges, not superwords (st_trainer_set_superwords)")
    if flags & ~ST_EXTEND_COLON_SPACE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags (ST_EXTEND_*)")
    if base_name_len < 1 or base_name_len > 128:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "base_name: 1 to 128 printable ASCII characters")
    bad = _printable_name(base_name, base_name_len)
    if bad >= 0:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_BYTE, bad, "base_name: printable ASCII without spaces only")
    if n > S[TARGET]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "%d seed merges do not fit in the %d merges the vocabulary size leaves (ST_TRAINER_TARGET)"
                    % (n, S[TARGET]))
    ps = [int(v) for v in pairs[:2 * n]] if n else []
    base = int(S[BASE])
    for i in range(n):
        for side in range(2):
            v = ps[2 * i + side]
            if v >= base + i:
                return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i,
                            "seed merge %d: %s id %d is not made before it (ids below %d)"
                            % (i, "right" if side else "left", v, base + i))
    # a pair given twice: the second would replay nothing and write a rule the model format refuses
    first = {}
    for i in range(n):
        key = (ps[2 * i], ps[2 * i + 1])
        if key in first:
            return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, i,
                        "seed merge %d is the pair of seed merge %d" % (i, first[key]))
        first[key] = i
    st = t.st
    t.st = st._replace(M=st.M._replace(seeds=np.array(ps if n else [0, 0], np.uint32)))
    S[N_SEEDS] = n
    S[EXTEND] = 1
    S[MAX_WORDS] = max_words
    S[COLON_SPACE] = 1 if flags & ST_EXTEND_COLON_SPACE else 0
    t.seed_min_count = int(min_count)
    t.base_name = bytes(base_name[:base_name_len])
    return ST_OK


# ---- phase 2: superwords (docs/design.md §8) ----------------------------------------------------
# The engine above, on new words: the candidates as sequences of phase-1 token ids (one per
# pretoken). Pairs are counted and ordered as phase 1's (paper mode), a supermerge is a merge whose
# new token spells both parts' symbols, and the regular merges are replayed by index: replaying one
# changes no candidate (each pretoken is one token already), it only makes its token available as
# a supermerge part.

@_kernel
def pair_blocker(S, T, pi):
    """The regular merge whose replay a pair waits for (BOUNDLESS: a part made by a merge not yet
    replayed, the later of two), or -1 when both parts exist."""
    b = -1
    for k in range(2):
        x = np.int64(T.P[pi, P_LEFT if k == 0 else P_RIGHT])
        if x < S[BASE] or x >= S[BASE] + S[MADE]:  # a base symbol or a supermerge
            continue
        m = x - S[BASE]
        if m >= S[NEXT_MERGE] and (b < 0 or m > b):
            b = m
    return b


@_kernel
def pop_available(S, T, H, K, M, bound):
    """The best pair whose parts exist and whose count is above bound, popped (pairs found waiting
    are parked by their blocker); -1 when there is none; -2 when the wait list is full (nothing
    popped: the caller grows it and calls again)."""
    P = T.P
    while S[HEAP_N] and H.hc[0] > bound:
        if S[N_WAIT] >= M.wait_pair.shape[0]:
            return -2
        c, pi = heap_pop(S, H, P, K)
        live = T.PC[pi]
        if live <= 0:
            continue
        if live != c:  # stale: queued again with its live count
            heap_push(S, H, pi, live, P, K)
            continue
        b = pair_blocker(S, T, pi)
        if b < 0:
            return pi
        nw = S[N_WAIT]
        M.wait_pair[nw] = pi
        M.wait_next[nw] = M.wait_head[b]
        S[N_WAIT] = nw + 1
        M.wait_head[b] = nw + 1
    return -1


@_kernel
def super_select(S, T, H, K, M, min_frequency):
    """super_step of trainer.c up to apply_pair (the tables have room: rooms_ok): (the pair to
    apply or -1, its new token, a status: 1 an entry was added or a merge replayed, 0 phase 2 is
    finished, -2 the wait list needs room, -3 the heap needs room for the pairs waiting for merge
    k = the token returned)."""
    if (S[N_SUPER] >= S[STEPS]) if S[ALGORITHM] == ST_ALGORITHM_SUPERBPE else (S[NEXT_MERGE] + S[N_SUPER] >= S[TARGET]):
        S[STOP] = ST_STOP_LIMIT if S[ALGORITHM] != ST_ALGORITHM_SUPERBPE and S[CAPPED] else ST_STOP_VOCAB_SIZE
        return -1, 0, 0
    floor = min_frequency if min_frequency else 1
    regular_left = S[ALGORITHM] == ST_ALGORITHM_BOUNDLESS and S[NEXT_MERGE] < S[MADE]
    # a supermerge needs a count of at least floor, and above the next regular merge's
    bound = floor - 1
    if regular_left:
        c = np.int64(M.counts[S[NEXT_MERGE]])
        if c > bound:
            bound = c
    pi = pop_available(S, T, H, K, M, bound)
    if pi == -2:
        return -1, 0, -2
    if pi >= 0:
        nt = S[BASE] + S[MADE] + S[N_SUPER]
        if nt >= ST_RULES_MAX_IDS:
            S[OOM] = 1
            return -1, 0, 0
        x = np.int64(T.P[pi, P_LEFT])
        y = np.int64(T.P[pi, P_RIGHT])
        if not token_fits(S, K, x, y):
            return -1, 0, 0
        write_token(S, K, x, y, nt)
        put_pair(M.sup, M.sup_counts, S[N_SUPER], x, y, T.PC[pi])
        S[N_SUPER] += 1
        return pi, nt, 1
    if not regular_left:
        # every live pair has a heap entry of its count and none is above the bound: a live pair
        # left is below max(min_frequency, 1), else no candidate pair is left
        S[STOP] = ST_STOP_NO_CANDIDATE
        for i in range(S[N_PAIRS]):
            if T.PC[i] > 0:
                S[STOP] = ST_STOP_MIN_FREQUENCY
                break
        return -1, 0, 0
    k = S[NEXT_MERGE]
    # keeping regular merge k writes its token too: the same limit on the tokens' bytes as a
    # supermerge's (make_token)
    rules = S[NEXT_MERGE] + S[N_SUPER] + 1
    if written_token_bytes(S, K) + np.int64(K.tok_len[S[BASE] + k]) > rules_token_bytes_limit(rules):
        S[STOP] = ST_STOP_TOKEN_BYTES
        return -1, 0, 0
    # its token exists now: the pairs that waited for it compete again
    waiting = 0
    e = np.int64(M.wait_head[k])
    while e:
        waiting += 1
        e = np.int64(M.wait_next[e - 1])
    if S[HEAP_N] + waiting > H.hc.shape[0]:
        return -1, S[HEAP_N] + waiting, -3
    S[NEXT_MERGE] = k + 1
    e = np.int64(M.wait_head[k])
    while e:
        q = np.int64(M.wait_pair[e - 1])
        if T.PC[q] > 0:
            heap_push(S, H, q, T.PC[q], T.P, K)
        e = np.int64(M.wait_next[e - 1])
    M.wait_head[k] = 0
    return -1, 0, 1


@_jit
def grow_wait(M, need):
    wp = grow(M.wait_pair, need)
    return Lists(M.merges, M.counts, M.sup, M.sup_counts, M.wait_head, wp, grow(M.wait_next, wp.shape[0]), M.seeds)


@_jit
def phase2_steps(st, max_merges, min_frequency):
    """st_trainer_step's loop in phase 2 (super_step of trainer.c): (steps made, the new state)."""
    S, W, X, T, H, K, M, E = st
    k = 0
    while k < max_merges and not S[DONE]:
        if not rooms_ok(S, T, K, M):
            T, K, M = grow_rooms(S, T, K, M)
        pi, nt, r = super_select(S, T, H, K, M, min_frequency)
        if r == -2:
            M = grow_wait(M, S[N_WAIT] + 1)
            continue
        if r == -3:
            H = grow_heap(H, nt)
            continue
        if pi >= 0:
            T, H = apply_pair(S, W, X, T, H, K, pi, nt)
        if S[OOM]:
            break
        if r == 1:
            k += 1
        else:
            S[DONE] = 1
    return k, State(S, W, X, T, H, K, M, E)


@_jit
def layout_merged_tokens(seq, toff, tlen, merges, base, kept):
    """candidates_spec.c's layout of the merged tokens after the base symbols (for st_candidates_new)."""
    pos = np.int64(toff[base - 1]) + tlen[base - 1]
    for i in range(kept):
        l = np.int64(merges[2 * i])
        r = np.int64(merges[2 * i + 1])
        toff[base + i] = pos
        ol = np.int64(toff[l])
        orr = np.int64(toff[r])
        for q in range(tlen[l]):
            seq[pos + q] = seq[ol + q]
        pos += tlen[l]
        for q in range(tlen[r]):
            seq[pos + q] = seq[orr + q]
        pos += tlen[r]


def trainer_kept(t, algorithm, supermerges):
    """st__trainer_kept: the regular merges an algorithm keeps of a finished phase 1."""
    S = t.S
    if algorithm == ST_ALGORITHM_BOUNDLESS:
        return int(S[N_MERGES])
    room = int(S[TARGET]) - supermerges if S[TARGET] > supermerges else 0
    return min(int(S[N_MERGES]), room)


def superword_args_error(t, algorithm, supermerges):
    """st__superword_args_error: why (algorithm, supermerges) cannot start from this trainer, or None."""
    S = t.S
    if S[MODE] == ST_TRAIN_HF:
        return "superwords need mode paper: HuggingFace's trainer (mode hf) has no superwords to match"
    if algorithm not in (ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE):
        return "algorithm must be ST_ALGORITHM_BOUNDLESS or ST_ALGORITHM_SUPERBPE"
    if S[PHASE] != 1:
        return "phase 2 has started already"
    if not S[DONE]:
        return "phase 1 is not finished (step until ST_TRAINER_DONE)"
    if algorithm == ST_ALGORITHM_SUPERBPE and supermerges > S[TARGET]:
        return "supermerges is more than the merges the vocabulary size leaves (ST_TRAINER_TARGET)"
    if S[OOM]:
        return "the trainer ran out of memory"
    return None


def _merges_fingerprint(t, kept):
    return vocab_fingerprint(int(t.S[ALPHABET]), t.st.M.merges, kept)


def counter_new_candidates(t, algorithm, supermerges, err):
    """st__counter_new_candidates: (status, a candidates counter over the eligible vocabulary of
    algorithm, or None)."""
    clear(err)
    if t is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out is NULL"), None
    why = superword_args_error(t, algorithm, supermerges)
    if why:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why), None
    kept = trainer_kept(t, algorithm, supermerges)
    K = t.st.K
    return counter_new_cand(t.pt, algorithm, int(t.S[ALPHABET]), supermerges, kept, _merges_fingerprint(t, kept),
                            K.seq, K.tok_off.view(np.uint64), K.tok_len, int(t.S[BASE]) + kept, err)


@_jit
def build_candidate_words(arena, e_off, e_len, e_count, n, alphabet, seq, off, len_, slots, scratch):
    """The candidates as words of phase-1 token ids (one per pretoken of a key): (Words, -1, 0, 0),
    or (_, i, start, length) for the first pretoken that is no token (candidate i)."""
    nsym = 0
    for i in range(n):
        nsym += cand_pieces(arena, np.int64(e_off[i]), np.int64(e_len[i]))
    nw = n if n else 1
    sym = np.zeros(nsym if nsym else 1, np.uint32)
    woff = np.zeros(nw, np.int64)
    wcount = np.zeros(nw, np.int64)
    wlen = np.zeros(nw, np.uint32)
    wstamp = np.zeros(nw, np.uint32)
    pos = 0
    for i in range(n):
        p = np.int64(e_off[i])
        ln = np.int64(e_len[i])
        woff[i] = pos
        wcount[i] = np.int64(e_count[i])
        s0 = 0
        for k in range(ln + 1):
            if k < ln and arena[p + k] != ST__CAND_SEP:
                continue
            id_ = tokset_find_at(alphabet, seq, off, len_, slots, scratch, arena, p + s0, k - s0)
            if id_ == ST__NO_TOKEN_ID:
                return Words(sym, woff, wcount, wlen, wstamp), i, p + s0, k - s0
            sym[pos] = id_
            pos += 1
            s0 = k + 1
        wlen[i] = pos - woff[i]
    return Words(sym, woff, wcount, wlen, wstamp), -1, 0, 0


def trainer_start_superwords(t, cands, algorithm, supermerges, err):
    """st__trainer_start_superwords: phase 2 from the candidates; a refusal leaves phase 1 as it was."""
    clear(err)
    if t is None or cands is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or candidates is NULL")
    why = superword_args_error(t, algorithm, supermerges)
    if why:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why)
    cd = cands.cand
    if cd is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "candidates: a pretoken counter, not a candidates counter (st_trainer_candidates_new)")
    if cd.algorithm != algorithm:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the candidates were made for another algorithm")
    if algorithm == ST_ALGORITHM_SUPERBPE and cd.supermerges != supermerges:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the candidates were made for another number of supermerges")
    S = t.S
    kept = trainer_kept(t, algorithm, supermerges)
    if cd.alphabet != S[ALPHABET] or cd.kept != kept or cd.fingerprint != _merges_fingerprint(t, kept):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the candidates were made from another vocabulary (another trainer or corpus)")
    if not pretokenizers_equal(cands.pt, t.pt):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "the candidates were made with another pre-tokenizer")
    n = cands.n
    if n > 0xFFFFFFFE:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "more than 2^32 - 2 candidates")
    # the candidates as token ids, built aside: a refusal leaves phase 1 as it was
    K = t.st.K
    ts = tokset_init(int(S[ALPHABET]), K.seq, K.tok_off, K.tok_len, int(S[BASE]) + kept)
    longest = int(cands.e_len[:n].max()) if n else 0
    scratch = np.zeros(max(2 * longest, 16), np.uint8)
    W, bad, b0, bn = build_candidate_words(cands.arena, cands.e_off, cands.e_len, cands.e_count, n, ts.alphabet,
                                           ts.seq, ts.off, ts.len, ts.slots, scratch)
    if bad >= 0:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, int(bad),
                    "a candidate's pretoken is not a token of the vocabulary: "
                    + quoted(bytes(cands.arena[b0:b0 + bn])))
    made = int(S[N_MERGES])
    S[N_WORDS] = n
    S[N_PAIRS] = 0
    S[HEAP_N] = 0
    S[LOG_N] = 0
    S[LIVE] = 0
    S[N_TOUCHED] = 0
    S[N_DELTAS] = 0
    S[MADE] = made
    S[PHASE] = 2
    S[DONE] = 0
    S[STOP1] = S[STOP]
    S[STOP] = ST_STOP_RUNNING
    S[ALGORITHM] = algorithm
    S[SUPERMERGES_ARG] = supermerges if algorithm == ST_ALGORITHM_SUPERBPE else 0
    S[NEXT_MERGE] = kept if algorithm == ST_ALGORITHM_SUPERBPE else 0
    S[STEPS] = supermerges if algorithm == ST_ALGORITHM_SUPERBPE else S[TARGET]
    S[N_CANDIDATES] = n
    S[NGRAM_CMIN] = cd.ngram_cmin
    S[NGRAM_MAX_LEN] = cd.ngram_max_len
    st = t.st
    maxlen = int(W.wlen[:n].max()) if n else 2
    t.st = None  # phase 1's words and pairs are dropped before phase 2's are counted
    X, T, H = init_pairs(S, W, _empty_pair_tables(int(W.sym.shape[0]), max(maxlen, 2)), st.K)
    M = st.M._replace(wait_head=np.zeros(made if made else 1, np.uint32), wait_pair=np.zeros(256, np.uint32),
                      wait_next=np.zeros(256, np.uint32))
    t.st = State(S, W, X, T, H, st.K, M, st.E)
    return ST_OK


def close_pass(t, err):
    """The step that closes the pass over the texts: the candidates (split into n-grams when asked)
    start phase 2. A failure leaves the pass open, as it was."""
    S = t.S
    if t.pass_ is None:
        st, c = counter_new_candidates(t, int(S[ALGORITHM]), int(S[SUPERMERGES_ARG]), err)
        if st != ST_OK:
            return st
        t.pass_ = c
    split = None
    if S[NGRAM_SPLIT]:
        st, split = counter_split_ngrams(t.pass_, st_trainer_stat(t, ST_TRAINER_NGRAM_CMIN), ST__NGRAM_MAX_LEN, err)
        if st != ST_OK:
            return st
    st = trainer_start_superwords(t, split if split is not None else t.pass_, int(S[ALGORITHM]),
                                  int(S[SUPERMERGES_ARG]), err)
    if st != ST_OK:
        return st
    S[PASS_DOCUMENTS] = int(t.pass_.stats[ST_COUNTER_DOCUMENTS])
    S[PASS_BYTES] = int(t.pass_.stats[ST_COUNTER_BYTES])
    t.pass_ = None
    return ST_OK


@export
def st_trainer_set_superwords(t, algorithm, supermerges, flags, err):
    clear(err)
    if t is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer is NULL")
    S = t.S
    if S[STEPPED] or S[PHASE] != 1:
        return _out_of_order(err, "the algorithm is set before the first step")
    if algorithm not in (ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "algorithm must be ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS or ST_ALGORITHM_SUPERBPE")
    if flags & ~ST_SUPERWORDS_NGRAM_SPLIT:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags (ST_SUPERWORDS_*)")
    if algorithm != ST_ALGORITHM_BPE and S[MODE] == ST_TRAIN_HF:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "superwords need mode paper: HuggingFace's trainer (mode hf) has no superwords to match")
    if algorithm != ST_ALGORITHM_SUPERBPE and supermerges:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "supermerges applies only to ST_ALGORITHM_SUPERBPE")
    if algorithm == ST_ALGORITHM_BPE and flags:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "the n-gram split applies to superwords (BOUNDLESS or SUPERBPE), not to BPE")
    if algorithm == ST_ALGORITHM_SUPERBPE and supermerges > S[TARGET]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "supermerges is more than the merges the vocabulary size leaves (ST_TRAINER_TARGET)")
    if algorithm != ST_ALGORITHM_BPE and S[EXTEND]:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "an extension (seed merges) trains BPE merges, not superwords")
    S[ALGORITHM] = algorithm
    S[SUPERMERGES_ARG] = supermerges
    S[NGRAM_SPLIT] = 1 if flags & ST_SUPERWORDS_NGRAM_SPLIT else 0
    return ST_OK


@export
def st_trainer_candidates_new(t, alloc, out, err):
    clear(err)
    if out is None or t is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out is NULL")
    out.v = None
    state = _state_of(t)
    if state != ST_TRAINING_CANDIDATES:
        return _out_of_order(err, "phase 1 is not finished: the texts are wanted again after it (ST_TRAINING_CANDIDATES)"
                             if state == ST_TRAINING_MERGES else
                             "the algorithm is BPE: training reads the texts once (st_trainer_set_superwords)"
                             if t.S[ALGORITHM] == ST_ALGORITHM_BPE else
                             "the pass over the texts is closed (phase 2 has started)")
    st, c = counter_new_candidates(t, int(t.S[ALGORITHM]), int(t.S[SUPERMERGES_ARG]), err)
    if st == ST_OK:
        out.v = c
    return st


@export
def st_trainer_candidates_add(t, c, err):
    clear(err)
    if t is None or c is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or candidates is NULL")
    if _state_of(t) != ST_TRAINING_CANDIDATES:
        return _out_of_order(err, "the pass over the texts is closed (phase 2 has started)" if t.S[PHASE] == 2
                             else "the trainer does not want the texts now (ST_TRAINER_STATE)")
    if c.cand is None or c.cand.ngram_max_len:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "not a candidates counter of the trainer (st_trainer_candidates_new)")
    if c.cand.given_back:
        return _out_of_order(err, "the candidates counter was given back already")
    if t.pass_ is None:
        st, p = counter_new_candidates(t, int(t.S[ALGORITHM]), int(t.S[SUPERMERGES_ARG]), err)
        if st != ST_OK:
            return st
        t.pass_ = p
    # refuses another vocabulary or pre-tokenizer; c's counts move, c is left empty
    st = counter_hand_over(t.pass_, c, err)
    if st != ST_OK:
        return st
    c.cand.given_back = 1
    return ST_OK


def trainer_supermerges_arrays(t):
    """The supermerges in written ids (a cache rebuilt when stale: the written ids depend on the
    regular merges kept, which BOUNDLESS still grows), and their counts."""
    S = t.S
    n = int(S[N_SUPER])
    kept = int(S[NEXT_MERGE])
    if t.super_out is None or t.super_out_n != n or t.super_out_kept != kept:
        sup = t.st.M.sup[:2 * n].astype(np.int64)
        first = int(S[BASE]) + int(S[MADE])
        shift = int(S[MADE]) - kept
        out = np.where(sup >= first, sup - shift, sup).astype(np.uint32)
        t.super_out, t.super_out_n, t.super_out_kept = out, n, kept
    return t.super_out, t.st.M.sup_counts


@export
def st_trainer_supermerges(t, pairs, counts):
    if pairs is not None:
        pairs.v = None
    if counts is not None:
        counts.v = None
    if t is None or not t.S[N_SUPER]:
        return 0
    p, c = trainer_supermerges_arrays(t)
    if pairs is not None:
        pairs.v = p
    if counts is not None:
        counts.v = c
    return int(t.S[N_SUPER])


