"""Mirrors core_c/src/encode/pipeline.c: the encode pipeline (docs/design.md §7), special tokens
-> pieces -> per-piece merge -> sink.

  1. the special-token policy (special_policy.py): refuse a disallowed special anywhere in the
     text, then cut the text at the allowed specials it holds (encode_all);
  2. the pre-tokenizer splits each stretch between them into pieces (encode_ordinary);
  3. each piece becomes tokens by its kind (encode_piece): for a rank vocabulary, the whole
     piece if it is a token, else backtracking or the merge loops (merge.py); for a rule model,
     the merge of its base symbols by rule, and for a superword model the superword pass over
     the pieces' tokens (superword_pass.py);
  4. the sink (sink.py) writes ids and start offsets, in the unit the caller asked for.
Pieces seen before are replayed from the piece cache (piece_cache.py), and a rank vocabulary's
spans of text seen before from the span cache (span_cache.py; encode_ordinary_spans).

The exports check their arguments, resolve the policy and validate the text in Python, then make
ONE kernel call that walks the whole text (encode_text: pre-tokenizer iterator, specials, merge,
cache, superword run, sink). The kernels take the encoding unpacked: kind, vocab (Vocab), rules
(Rules), sup (Supers), has_sup, pt (Pretokenizer), and a Work namedtuple of scratch arrays the
handle keeps in enc.lazy.extra (reused by every call).

The backtracking encoder (backtrack.py) is used when its tables are built; the call site is
bt_encode below. Until they are, or for a vocabulary they do not suit, the merge loops give the
same ids.
"""
from collections import namedtuple

import numpy as np
from numba import njit

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_OUT_OF_MEMORY, ST_ERR_NOT_ENCODABLE,
                           ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, ST_UNIT_BYTE, ST_UNIT_INDEX, ST_NO_TOKEN,
                           R_OFFSET, Err, new_report, report_set, clear, fail)
from ..base.hash import hash_short, hash_mid, hash_bytes
from ..formats.vocab import vocab_lookup_short, vocab_probe, vocab_find
from ..text.pretokenize import pieces_init, pieces_fill, ITER_FIELDS
from .encoding import ST__KIND_RANKS, ST__KIND_RULES, ST__KIND_HF, BT_NOT_BUILT, BT_READY, BT_UNAVAILABLE
from .backtrack import backtrack_encode, new_memo, NO_MEMO, _unsuitable
from .merge import merge_short, merge_short_syms, merge_heap, ST_LINEAR_PIECE, ST_MERGE_MAX_PARTS, MODE_RANKS, \
    MODE_RULES, MODE_HF, NO_MADE
from .piece_cache import (cache_find, cache_fill, piece_cache_open, piece_cache_close, piece_cache_restart, no_pc,
                          ST_CACHE_ID_BITS, ST_CACHE_LONG_TOKENS, PC_SPAN_HITS, PC_SPAN_MISSES)
from .span_cache import (span_hash, span_find, span_fill, ST_SPAN_MIN, ST_SPAN_TEXT, ST_SPAN_MAX, ST_SPAN_PENDING,
                         PENDING_FIELDS, P_HASH, P_AT, P_LEN, P_FIRST, P_M, SC_NPENDING)
from .cut import cut_supported, cut_within
from .sink import put, new_sink, map_starts, O_N, O_CAP, O_UNIT, O_STARTS, O_COPY, ST_OFFSETS_UTF16, \
    ST_OFFSETS_BYTES, SINK_FIELDS
from .special_policy import policy_resolve, check_disallowed, check_disallowed_kernel, special_at, \
    special_first_bytes, special_allowed
from ..text.normalize import nfc, nfc_unchanged, ST_NFC_MAX_EXPANSION
from ..formats.tokenizer_json import ST__HF_IGNORE_MERGES, ST__HF_NFC, ST__ADDED_LSTRIP, ST__ADDED_RSTRIP
from ..text.unicode import ucd_class, ST_UCD_WHITE_SPACE
from ..text.utf8 import utf8_decode
from .superword_pass import run_put, run_flush, piece_to_run, new_run, NO_RUN

ST_STACK_PIECE = 256
ST_PIECE_BATCH = 128
BT_COST_PER_VOCAB_BYTE = 200
ST_ALPHABET_BYTES, ST_ALPHABET_UBE = 0, 1
NEED_TABLES = 1000  # a kernel's status: the backtracking tables are due (see tables_for)
NO_SFLAGS = np.zeros(1, np.uint8)  # Enc.sflags of a handle not from a tokenizer.json

_NO = np.uint32(ST_NO_TOKEN)
_ID_MASK = np.uint32((1 << ST_CACHE_ID_BITS) - 1)
_ID_SHIFT = np.uint32(ST_CACHE_ID_BITS)

# The scratch a call reuses (C: stack arrays and the scratch block). lz: int64 [bt_state,
# bt_debt, budget, all_bytes]; flags of the call: int64 [merge_only].
Work = namedtuple("Work", "tok start rank10 heap nxt prv rank tk ends first sym off it lz opn first1")
# The handle as the kernels see it, and a call's state (C: the encoder struct).
Enc = namedtuple("Enc", "kind v rules sup has_sup pt bt memo made hf_flags sflags")
Call = namedtuple("Call", "w pairs pc run o ids starts report big")
# A call's scratch for pieces past ST_STACK_PIECE bytes (C allocates it per piece; a kernel
# without reference counting cannot): sized by the text, allocated per call (np.empty: pages
# never touched cost nothing).
Big = namedtuple("Big", "tok start heap nxt prv rank tk sym off opn")


def new_big(n):
    n = max(n, 1)
    return Big(np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(3 * n + 1, np.uint64),
               np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
               np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
               np.empty(n // 64 + 1, np.uint64))


NO_BIG = new_big(1)


def big_for(length):
    return new_big(length) if length > ST_STACK_PIECE else NO_BIG


def new_work():
    n = ST_STACK_PIECE
    return Work(np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(ST_LINEAR_PIECE, np.uint32),
                np.empty(3 * n + 1, np.uint64), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
                np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32), np.empty(ST_PIECE_BATCH, np.uint64),
                np.zeros(256, np.uint8), np.empty(n + 1, np.uint32), np.empty(n + 1, np.uint32),
                np.zeros(ITER_FIELDS, np.int64), np.zeros(4, np.int64), np.empty(n // 64 + 1, np.uint64),
                np.zeros(256, np.uint8))


LZ_STATE, LZ_DEBT, LZ_BUDGET, LZ_ALL_BYTES = 0, 1, 2, 3
_SIZE_MAX = (1 << 64) - 1


# ---- the backtracking tables, built when they pay ----

@njit(cache=True, nogil=True, _nrt=False)
def merge_excess(s, a, n):
    if n > 64:
        bits = 0
        k = n
        while k:
            bits += 1
            k >>= 1
        return n * bits * 32
    k = n - 1
    while k > 0 and (s[a + k] & 0xC0) == 0x80:
        k -= 1
    return n * (512 if s[a + k] >= 0xE0 else 64)


@njit(cache=True, nogil=True, _nrt=False)
def tables_for(lz, s, a, n):
    """The tables for a piece that wants them: 1 ready, 0 none, 2 due now (the debt says so:
    the kernel returns NEED_TABLES and the export builds them)."""
    state = lz[LZ_STATE]
    if state == BT_READY:
        return 1
    if state != BT_NOT_BUILT:
        return 0
    budget = lz[LZ_BUDGET]
    debt = lz[LZ_DEBT]
    cost = merge_excess(s, a, n)
    if debt < budget and cost < budget - debt:
        return 0
    return 2


@njit(cache=True, nogil=True, _nrt=False)
def debt_add(lz, s, a, n):
    if lz[LZ_STATE] != BT_NOT_BUILT:
        return
    lz[LZ_DEBT] += merge_excess(s, a, n)


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def wants_backtrack(s, a, n):
    return n > 6 and (s[a + n - 1] >= 0x80 or n > 64)


@njit(cache=True, nogil=True, _nrt=False)
def bt_encode(bt, v, s, a, n, tok, start, opn, memo):
    """st__backtrack_encode on the piece s[a .. a + n): m tokens, 0 if the tables cannot encode
    it (the caller then uses the merge loops). opn: scratch of n // 64 + 1 words."""
    return backtrack_encode(bt, v, s[a:], n, tok, start, opn, memo)


# ---- per piece ----

@njit(cache=True, nogil=True, _nrt=False)
def replay_short(pc, ln, a, has_sup, run, v, rules, sup, pairs, o, ids, starts, s):
    lines = pc.lines
    n = np.int64(lines[ln * 64 + 4])
    m = np.int64(lines[ln * 64 + 5])
    w = (ln * 64 + 8 + ((n + 3) & ~3)) >> 2
    if has_sup:
        if lines[ln * 64 + 6]:
            run_put(run, pc.lines32[w] & _ID_MASK, a)
            return
        if run.rs[0]:
            run_flush(run, v, rules, sup, pairs, o, ids, starts, s)
    for k in range(m):
        x = pc.lines32[w + k]
        put(o, ids, starts, s, x & _ID_MASK, a + np.int64(x >> _ID_SHIFT))


@njit(cache=True, nogil=True, _nrt=False)
def replay_long(pc, le, a, has_sup, run, v, rules, sup, pairs, o, ids, starts, s):
    m = np.int64(pc.lmeta[2 * le + 1])
    t0 = le * ST_CACHE_LONG_TOKENS
    if has_sup:
        if piece_to_run(run, v, rules, sup, pairs, o, ids, starts, s, pc.ltok, t0, m, a):
            return
    for k in range(m):
        put(o, ids, starts, s, pc.ltok[t0 + k], a + np.int64(pc.lrel[t0 + k]))


@njit(cache=True, nogil=True, inline="always", _nrt=False)
def replay(pc, where, n, a, has_sup, run, v, rules, sup, pairs, o, ids, starts, s):
    if n <= 56:
        replay_short(pc, where, a, has_sup, run, v, rules, sup, pairs, o, ids, starts, s)
    else:
        replay_long(pc, where, a, has_sup, run, v, rules, sup, pairs, o, ids, starts, s)


@njit(cache=True, nogil=True, _nrt=False)
def piece_symbols(alphabet, s, a, n, sym, off):
    """The base symbols of the piece s[a .. a + n) and each one's byte offset in the piece."""
    if alphabet == ST_ALPHABET_BYTES:
        for i in range(n):
            sym[i] = s[a + i]
            off[i] = i
        return n
    ns = 0
    i = 0
    while i < n:
        c = np.int64(s[a + i])
        if c < 0x80:
            sym[ns] = c
            off[ns] = i
            ns += 1
            i += 1
            continue
        if c < 0xE0:
            ln = 2
            cp = ((c & 0x1F) << 6) | (np.int64(s[a + i + 1]) & 0x3F)
        elif c < 0xF0:
            ln = 3
            cp = ((c & 0x0F) << 12) | ((np.int64(s[a + i + 1]) & 0x3F) << 6) | (np.int64(s[a + i + 2]) & 0x3F)
        else:
            ln = 4
            cp = ((c & 0x07) << 18) | ((np.int64(s[a + i + 1]) & 0x3F) << 12) | \
                 ((np.int64(s[a + i + 2]) & 0x3F) << 6) | (np.int64(s[a + i + 3]) & 0x3F)
        if cp < 0x800:
            for j in range(ln):
                sym[ns] = s[a + i + j]
                off[ns] = i + j
                ns += 1
        elif cp < 0x10000:
            sym[ns] = 256 + (cp & 0xFF)
            off[ns] = i
            sym[ns + 1] = 256 + (cp >> 8)
            off[ns + 1] = i + 1
            ns += 2
        else:
            x = cp - 0x10000
            hi = 0xD800 + (x >> 10)
            lo = 0xDC00 + (x & 0x3FF)
            sym[ns] = 256 + (hi & 0xFF)
            sym[ns + 1] = 256 + (hi >> 8)
            sym[ns + 2] = 256 + (lo & 0xFF)
            sym[ns + 3] = 256 + (lo >> 8)
            for j in range(4):
                off[ns + j] = i + j
            ns += 4
        i += ln
    return ns


@njit(cache=True, nogil=True, _nrt=False)
def merge_symbols(mode, v, rules, sup, pairs, s, a, n, sym, ns, tok, start, heap, nxt, prv, rank, tk, made):
    """A rule model's piece s[a .. a + n), as its ns base symbols sym, merged by rule: the linear
    merge for up to ST_LINEAR_PIECE symbols of a piece ending in an ASCII byte, else the heap
    (the same merges; C: the measurements there)."""
    if ns <= ST_LINEAR_PIECE and s[a + n - 1] < 0x80:
        return merge_short_syms(mode, v, rules, sup, pairs, s, sym, ns, tok, start, rank, made)
    return merge_heap(mode, v, rules, sup, pairs, s, a, sym, ns, tok, start, heap, nxt, prv, rank, tk, made)


@njit(cache=True, nogil=True, _nrt=False)
def encode_piece_rules(e, c, s, a, b):
    """A rule model's piece: its base symbols merged by rule (a piece that spells a token is not
    taken whole: the rules decide)."""
    n = b - a
    hit, where, rh = cache_find(c.pc, s, a, n, np.uint64(0))
    if hit:
        replay(c.pc, where, n, a, e.has_sup, c.run, e.v, e.rules, e.sup, c.pairs, c.o, c.ids, c.starts, s)
        return ST_OK
    if n > ST_MERGE_MAX_PARTS:
        return ST_ERR_OUT_OF_MEMORY
    if n <= ST_STACK_PIECE:
        w = c.w
        rules_core(e, c, s, a, n, where, rh, w.sym, w.off, w.tok, w.start, w.heap, w.nxt, w.prv, w.rank, w.tk)
    else:  # C: allocated past ST_STACK_PIECE bytes
        g = c.big
        rules_core(e, c, s, a, n, where, rh, g.sym, g.off, g.tok, g.start, g.heap, g.nxt, g.prv, g.rank, g.tk)
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def rules_core(e, c, s, a, n, where, rh, sym, off, tok, start, heap, nxt, prv, rank, tk):
    v, rules, sup, has_sup, pairs, pc, run = e.v, e.rules, e.sup, e.has_sup, c.pairs, c.pc, c.run
    o, ids, starts = c.o, c.ids, c.starts
    ns = piece_symbols(v.alphabet, s, a, n, sym, off)
    m = merge_symbols(MODE_RULES, v, rules, sup, pairs, s, a, n, sym, ns, tok, start, heap, nxt, prv, rank, tk, NO_MADE)
    if not has_sup or not piece_to_run(run, v, rules, sup, pairs, o, ids, starts, s, tok, 0, m, a):
        for k in range(m):
            put(o, ids, starts, s, tok[k], a + np.int64(off[start[k]]))
    joins = 0
    if has_sup and m == 1 and (sup.eligible[tok[0] >> 6] >> np.uint64(tok[0] & 63)) & np.uint64(1):
        joins = 1
    cache_fill(pc, where, rh, s, a, n, m, tok, start, off, True, joins)


@njit(cache=True, nogil=True, _nrt=False)
def encode_piece_ranks(e, c, s, a, b, looked, h, merge_only):
    """A rank vocabulary's piece: one token if it is one; else backtracking (long or non-ASCII
    pieces, when the tables exist) or the merge loops. looked: the caller found the whole piece
    is no token; h: the piece's hash_bytes if the caller has it, else 0."""
    v, rules, sup, w, pairs, pc, run = e.v, e.rules, e.sup, c.w, c.pairs, c.pc, c.run
    o, ids, starts = c.o, c.ids, c.starts
    n = b - a
    lz = w.lz
    wants = not merge_only and wants_backtrack(s, a, n)
    use_bt = 0
    if wants:
        use_bt = tables_for(lz, s, a, n)
        if use_bt == 2:
            return NEED_TABLES
    if use_bt == 0 and not looked:
        if n <= 8:
            tid = np.uint32(vocab_lookup_short(v, s, a, n))
        else:
            h = hash_bytes(s, a, n)
            tid = np.uint32(vocab_find(v, s, a, n, h))
        if tid != _NO:
            put(o, ids, starts, s, tid, a)
            return ST_OK
    hit, where, rh = cache_find(pc, s, a, n, h)
    if hit:
        replay(pc, where, n, a, False, run, v, rules, sup, pairs, o, ids, starts, s)
        return ST_OK
    if lz[LZ_ALL_BYTES] == 0:
        lz[LZ_ALL_BYTES] = 1
        for k in range(256):
            if v.byte_ids[k] == _NO:
                lz[LZ_ALL_BYTES] = -1
    if lz[LZ_ALL_BYTES] < 0:
        for k in range(n):
            if v.byte_ids[s[a + k]] == _NO:
                report_set(c.report, ST_ERR_NOT_ENCODABLE, ST_UNIT_BYTE, a + k)
                return ST_ERR_NOT_ENCODABLE
    if n <= ST_STACK_PIECE:
        tok, start = w.tok, w.start
        m = bt_encode(e.bt, v, s, a, n, tok, start, w.opn, e.memo) if use_bt == 1 else 0
        if not m:
            if n <= ST_LINEAR_PIECE:
                m = merge_short(v, rules, sup, pairs, s, a, n, tok, start, w.rank10)
            else:
                m = merge_heap(MODE_RANKS, v, rules, sup, pairs, s, a, tok, n, tok, start, w.heap, w.nxt, w.prv,
                               w.rank, w.tk, NO_MADE)
        if wants and use_bt == 0:
            debt_add(lz, s, a, n)
        for k in range(m):
            put(o, ids, starts, s, tok[k], a + np.int64(start[k]))
        cache_fill(pc, where, rh, s, a, n, m, tok, start, start, False, 0)
        return ST_OK
    if n > ST_MERGE_MAX_PARTS:
        return ST_ERR_OUT_OF_MEMORY
    ranks_long(e, c, s, a, n, use_bt, wants)
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def ranks_long(e, c, s, a, n, use_bt, wants):
    """A piece past ST_STACK_PIECE bytes, in the call's scratch for long pieces (c.big, sized by
    the text: C allocates it per piece): backtracking or the heap merge (never cached: longer
    than the cache's pieces)."""
    v, rules, sup, pairs, o, ids, starts, big = e.v, e.rules, e.sup, c.pairs, c.o, c.ids, c.starts, c.big
    tok = big.tok
    start = big.start
    if use_bt == 1:
        m = bt_encode(e.bt, v, s, a, n, tok, start, big.opn, e.memo)
        if m:
            for k in range(m):
                put(o, ids, starts, s, tok[k], a + np.int64(start[k]))
            return
    m = merge_heap(MODE_RANKS, v, rules, sup, pairs, s, a, tok, n, tok, start, big.heap, big.nxt, big.prv, big.rank,
                   big.tk, NO_MADE)
    if wants and use_bt == 0:
        debt_add(c.w.lz, s, a, n)
    for k in range(m):
        put(o, ids, starts, s, tok[k], a + np.int64(start[k]))



@njit(cache=True, nogil=True, _nrt=False)
def encode_piece_hf(e, c, s, a, b, looked, h):
    """A HuggingFace model's piece (ST__KIND_HF): with ignore_merges, the whole piece if it is a
    token (the caller has looked: `looked`); else its bytes' tokens merged by the file's merges,
    lowest rank first, the leftmost of equal ones (tokenizers' BPE::merge_word). h: the piece's
    hash_bytes if the caller has it, else 0."""
    v = e.v
    n = b - a
    if (e.hf_flags & ST__HF_IGNORE_MERGES) and not looked:
        if h == 0:
            h = hash_bytes(s, a, n)
        tid = np.uint32(vocab_find(v, s, a, n, h))
        if tid != _NO:
            put(c.o, c.ids, c.starts, s, tid, a)
            return ST_OK
    hit, where, rh = cache_find(c.pc, s, a, n, h)
    if hit:
        replay(c.pc, where, n, a, False, c.run, v, e.rules, e.sup, c.pairs, c.o, c.ids, c.starts, s)
        return ST_OK
    if n > ST_MERGE_MAX_PARTS:
        return ST_ERR_OUT_OF_MEMORY
    if n <= ST_STACK_PIECE:
        w = c.w
        hf_core(e, c, s, a, n, where, rh, w.sym, w.tok, w.start, w.heap, w.nxt, w.prv, w.rank, w.tk)
    else:  # C: allocated past ST_STACK_PIECE bytes
        g = c.big
        hf_core(e, c, s, a, n, where, rh, g.sym, g.tok, g.start, g.heap, g.nxt, g.prv, g.rank, g.tk)
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def hf_core(e, c, s, a, n, where, rh, sym, tok, start, heap, nxt, prv, rank, tk):
    """The symbols (each byte's token: every byte has one, checked at load), merged."""
    v = e.v
    for k in range(n):
        sym[k] = v.byte_ids[s[a + k]]
    m = merge_symbols(MODE_HF, v, e.rules, e.sup, c.pairs, s, a, n, sym, n, tok, start, heap, nxt, prv, rank, tk,
                      e.made)
    for k in range(m):
        put(c.o, c.ids, c.starts, s, tok[k], a + np.int64(start[k]))
    cache_fill(c.pc, where, rh, s, a, n, m, tok, start, start, False, 0)


# ---- the pieces of a stretch of text ----

@njit(cache=True, nogil=True, _nrt=False)
def encode_ordinary_pieces(e, c, s, frm, to):
    """The pieces of s[frm .. to), a batch of ends at a time from the pre-tokenizer: for a rank
    vocabulary the whole-piece lookup inline (nearly every piece of real text is one token), one
    call per piece that is not (C: encode_ordinary_ranks, and encode_ordinary's loop for the
    other kinds)."""
    sub = s[frm:]
    sub_len = to - frm
    pt = e.pt
    v = e.v
    it = c.w.it
    ends = c.w.ends
    pieces_init(pt, sub, sub_len, it)
    a = frm
    byte_ids = v.byte_ids
    pair_ids = v.pair_ids
    # a rank vocabulary, and a HuggingFace model whose pieces that are tokens are those tokens
    # (ignore_merges), look every piece up whole first
    hf = e.kind == ST__KIND_HF
    ranks = e.kind == ST__KIND_RANKS or (hf and (e.hf_flags & ST__HF_IGNORE_MERGES) != 0)
    o, ids, starts = c.o, c.ids, c.starts
    while True:
        m = pieces_fill(pt, sub, sub_len, it, ends, ST_PIECE_BATCH)
        if m == 0:
            break
        for k in range(m):
            b = frm + np.int64(ends[k])
            n = b - a
            if ranks:
                h = np.uint64(0)
                looked = True
                if n == 1:
                    tid = byte_ids[s[a]]
                elif n == 2:
                    tid = pair_ids[(np.int64(s[a]) << 8) | np.int64(s[a + 1])]
                elif n <= 16:
                    h = hash_short(s, a, n) if n <= 8 else hash_mid(s, a, n)
                    tid = np.uint32(vocab_probe(v, s, a, n, h))
                else:
                    tid = _NO
                    looked = False
                if tid != _NO:
                    put(o, ids, starts, s, tid, a)
                else:
                    if hf:
                        st = encode_piece_hf(e, c, s, a, b, looked, h)
                    else:
                        st = encode_piece_ranks(e, c, s, a, b, looked, h, False)
                    if st != ST_OK:
                        return st
            else:
                if hf:
                    st = encode_piece_hf(e, c, s, a, b, False, np.uint64(0))
                else:
                    st = encode_piece_rules(e, c, s, a, b)
                if st != ST_OK:
                    return st
            a = b
    return ST_OK


ST_SPANS_ON = True  # bench/: False builds the pipeline without the span cache, to measure it


@njit(cache=True, nogil=True, _nrt=False)
def span_replay(e, c, src, w, m, a, b, s):
    """A span's m ids src[w .. w + m) to the sink, the span s[a .. b): copied whole when the
    caller wants ids alone; else each put with its start, the next token starting where this
    one's bytes end (a rank vocabulary's tokens of a span spell its bytes; kept within the
    span, whatever an image's offsets say)."""
    o, ids = c.o, c.ids
    if not o[O_STARTS]:
        n = o[O_N]
        room = o[O_CAP] - n if n < o[O_CAP] else 0
        for k in range(m if m < room else room):
            ids[n + k] = src[w + k]
        o[O_N] = n + m
        return
    offsets = e.v.offsets
    for k in range(m):
        tid = src[w + k]
        put(o, ids, c.starts, s, tid, a)
        a += np.int64(offsets[np.int64(tid) + 1]) - np.int64(offsets[np.int64(tid)])
        if a >= b:
            a = b - 1


@njit(cache=True, nogil=True, _nrt=False)
def spans_remember(c, sc, s):
    """The spans of this call waiting in the list, into the log (their ids are in the sink's
    buffer: the pending list holds only spans that were encoded there)."""
    q = sc.pending
    for k in range(sc.st[SC_NPENDING]):
        r = k * PENDING_FIELDS
        span_fill(sc, s, np.int64(q[r + P_AT]), np.int64(q[r + P_LEN]), q[r + P_HASH], c.ids,
                  np.int64(q[r + P_FIRST]), np.int64(q[r + P_M]))
    sc.st[SC_NPENDING] = 0


@njit(cache=True, nogil=True, _nrt=False)
def encode_span(e, c, sc, s, a, b, h):
    """The span s[a .. b) (hash h) through the span cache: its ids from the cache, or encoded (in
    the caller's buffer when it has room for one id a byte, remembered when the call ends; else
    in the cache's own, remembered now)."""
    n = b - a
    w, m = span_find(sc, s, a, n, h)
    pst = c.pc.st
    if w >= 0:
        pst[PC_SPAN_HITS] += 1
        span_replay(e, c, sc.log32, w, m, a, b, s)
        return ST_OK
    pst[PC_SPAN_MISSES] += 1
    o = c.o
    n0 = o[O_N]
    if not o[O_COPY] and n0 <= o[O_CAP] and n <= o[O_CAP] - n0:  # (a NULL ids buffer has cap 0)
        st = encode_ordinary_pieces(e, c, s, a, b)
        if st != ST_OK:
            return st
        if sc.st[SC_NPENDING] == ST_SPAN_PENDING:
            spans_remember(c, sc, s)
        r = sc.st[SC_NPENDING] * PENDING_FIELDS
        q = sc.pending
        q[r + P_HASH] = h
        q[r + P_AT] = a
        q[r + P_LEN] = n
        q[r + P_FIRST] = n0
        q[r + P_M] = o[O_N] - n0
        sc.st[SC_NPENDING] += 1
        return ST_OK
    own = sc.own  # C: a sink on the stack over the cache's ids, bytes, no starts
    for k in range(SINK_FIELDS):
        own[k] = 0
    own[O_CAP] = ST_SPAN_MAX
    own[O_UNIT] = ST_OFFSETS_BYTES
    st = encode_ordinary_pieces(e, Call(c.w, c.pairs, c.pc, c.run, own, sc.ids, c.starts, c.report, c.big), s, a, b)
    if st != ST_OK:
        return st
    span_fill(sc, s, a, n, h, sc.ids, 0, own[O_N])
    span_replay(e, c, sc.ids, 0, own[O_N], a, b, s)
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def span_end(e, s, a, to):
    """Where the span starting at a (a < to) ends, and whether it is cached: the first cut
    (cut.py) ST_SPAN_MIN bytes or more past a, or the end of the text, cached; with no cut
    within ST_SPAN_MAX bytes, the next cut (or the end), uncached (the stretch is encoded
    uncached). Each search starts where the last one stopped, so the work stays linear."""
    rest = to - a
    if rest <= ST_SPAN_MIN:
        return to, True
    sub = s[a:]
    b = cut_within(e.pt, e.has_sup, sub, rest, ST_SPAN_MIN, ST_SPAN_MAX)
    if b:
        return a + b, True
    if rest <= ST_SPAN_MAX:
        return to, True
    b = cut_within(e.pt, e.has_sup, sub, rest, ST_SPAN_MAX, rest)
    return (a + b if b else to), False


@njit(cache=True, nogil=True, _nrt=False)
def encode_ordinary_spans(e, c, sc, s, frm, to):
    """A rank vocabulary's text between special tokens, a span at a time (span_cache.py). The
    next span's end and hash are found before this span is encoded (C prefetches its index
    bucket then)."""
    a = frm
    b, cached = span_end(e, s, a, to)
    h = span_hash(s, a, b - a) if cached else np.uint64(0)
    while a < to:
        next_cached = False
        nb = to
        if b < to:
            nb, next_cached = span_end(e, s, b, to)
        g = np.uint64(0)
        if b < to and next_cached:
            g = span_hash(s, b, nb - b)
        if cached:
            st = encode_span(e, c, sc, s, a, b, h)
        else:
            st = encode_ordinary_pieces(e, c, s, a, b)
        if st != ST_OK:
            return st
        a = b
        b = nb
        h = g
        cached = next_cached
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def encode_ordinary(e, c, s, frm, to):
    """The text s[frm .. to) between special tokens: a rank vocabulary's or HuggingFace model's text
    long enough to hold a span, with a span cache and a pattern with cut rules, a span at a time;
    else its pieces."""
    sc = c.pc.span
    if ST_SPANS_ON and (e.kind == ST__KIND_RANKS or e.kind == ST__KIND_HF) and to - frm >= ST_SPAN_TEXT \
            and sc.size != 0 and cut_supported(e.pt):
        return encode_ordinary_spans(e, c, sc, s, frm, to)
    return encode_ordinary_pieces(e, c, s, frm, to)


@njit(cache=True, nogil=True, _nrt=False)
def flush_run(e, c, s):
    if e.has_sup and c.run.rs[0]:
        run_flush(c.run, e.v, e.rules, e.sup, c.pairs, c.o, c.ids, c.starts, s)


@njit(cache=True, nogil=True, _nrt=False)
def special_next(v, pl, bits, first, s, i, to):
    """The next cut of a pass over s[i .. to): (its place, or to; its id, or ST_NO_TOKEN; its
    length). A string of `bits` matched there (the earliest match, the longest at one place,
    starting and ending on a character) cuts the text if the policy allows it; one matched but
    not allowed stays text (tokenizers' encode_special_tokens) and the search goes on past it.
    first: special_first_bytes of bits."""
    while i < to:
        ch = s[i]
        if not first[ch] or (ch & 0xC0) == 0x80:  # matches start on a character
            i += 1
            continue
        tid, ml, k = special_at(v, bits, s, i, to)
        # and end on one: a loaded special is valid UTF-8, but an image's is trusted for nothing
        if tid == ST_NO_TOKEN or (i + ml < to and (s[i + ml] & 0xC0) == 0x80):
            i += 1
            continue
        if not special_allowed(pl, k):  # matched, but not allowed: text
            i += ml
            continue
        return i, tid, ml, k
    return to, ST_NO_TOKEN, 0, 0


@njit(cache=True, nogil=True, _nrt=False)
def strip_spaces(s, flags, seg, to, start, stop):
    """A HuggingFace added token with lstrip (rstrip) takes the whitespace (White_Space, Rust's
    char::is_whitespace) before it back to the end of the previous match (after it, up to `to`):
    tokenizers' AddedVocabulary::find_matches. [start, stop) is the match: (start, stop) widened."""
    if flags & ST__ADDED_LSTRIP:
        while start > seg:
            p = start - 1
            while p > seg and (s[p] & 0xC0) == 0x80:
                p -= 1
            cp, ln = utf8_decode(s, p)
            if not (ucd_class(cp) & ST_UCD_WHITE_SPACE):
                break
            start = p
    if flags & ST__ADDED_RSTRIP:
        while stop < to:
            cp, ln = utf8_decode(s, stop)
            if not (ucd_class(cp) & ST_UCD_WHITE_SPACE) or ln > to - stop:
                break
            stop += ln
    return start, stop


@njit(cache=True, nogil=True, _nrt=False)
def special_pass1(e, c, s, frm, to, pl):
    """special_pass with pass 1: a HuggingFace model's normalized added tokens (pl.normalized)
    cut s[frm .. to), and what lies between goes to the pre-tokenizer (encode_stretch of pass 1)."""
    v = e.v
    first = c.w.first1
    special_first_bytes(v, pl.normalized, first)
    seg = frm
    i = frm
    while True:
        i, tid, ml, k = special_next(v, pl, pl.normalized, first, s, i, to)
        if tid == ST_NO_TOKEN:
            break
        start, stop = i, i + ml
        if e.kind == ST__KIND_HF:
            start, stop = strip_spaces(s, e.sflags[k], seg, to, start, stop)
        if start > seg:
            st = encode_ordinary(e, c, s, seg, start)
            if st != ST_OK:
                return st
        flush_run(e, c, s)  # a run never crosses a special token
        put(c.o, c.ids, c.starts, s, np.uint32(tid), start)
        i = stop
        seg = i
    if to > seg:
        return encode_ordinary(e, c, s, seg, to)
    return ST_OK


@njit(cache=True, nogil=True, _nrt=False)
def pass1_or_ordinary(e, c, s, frm, to, pl):
    if pl.any_normalized:
        return special_pass1(e, c, s, frm, to, pl)
    return encode_ordinary(e, c, s, frm, to)


@njit(cache=True, nogil=True)
def normalized_stretch(e, c, s, frm, to, pl):
    """The text between a HuggingFace model's non-normalized added tokens, normalized (its NFC, as
    tokenizers normalizes each such stretch on its own), then its normalized added tokens and the
    pieces. Only a stretch holding a character at or above U+0300 (a lead byte of 0xCC or more)
    is normalized, and only one that NFC changes is encoded from a copy, with the copy's offsets
    mapped back to the text's (C: sink.h's nmap; here the sink writes the copy's byte offsets,
    which sink.py's map_starts then maps and puts in the caller's unit)."""
    n = to - frm
    if nfc_unchanged(s[frm:], n):  # NFC already
        return pass1_or_ordinary(e, c, s, frm, to, pl)
    cap = n * ST_NFC_MAX_EXPANSION
    copy = np.zeros(cap + 16, np.uint8)  # the copy (+16 readable bytes past it)
    nmap = np.zeros(cap, np.uint64)
    m = nfc(s[frm:], n, copy, nmap, True, cap)
    if m == n:
        same = True
        for q in range(n):
            if copy[q] != s[frm + q]:
                same = False
                break
        if same:  # NFC already
            return pass1_or_ordinary(e, c, s, frm, to, pl)
    o = c.o
    n0 = o[O_N]
    unit = o[O_UNIT]
    o[O_UNIT] = ST_OFFSETS_BYTES
    copying = o[O_COPY]
    o[O_COPY] = 1
    st = pass1_or_ordinary(e, c, copy, 0, m, pl)
    o[O_COPY] = copying
    o[O_UNIT] = unit
    map_starts(o, c.starts, s, n0, frm, nmap)
    return st


@njit(cache=True, nogil=True)
def encode_stretch0(e, c, s, frm, to, pl):
    """encode_stretch of pass 0: the text between the strings of the first pass."""
    if frm == to:
        return ST_OK
    if e.kind == ST__KIND_HF and (e.hf_flags & ST__HF_NFC):
        return normalized_stretch(e, c, s, frm, to, pl)
    return pass1_or_ordinary(e, c, s, frm, to, pl)


@njit(cache=True, nogil=True)
def special_pass0(e, c, s, frm, to, pl):
    """special_pass with pass 0: the strings of pl.match cut s[frm .. to), and what lies between
    goes to encode_stretch0."""
    v = e.v
    first = c.w.first
    special_first_bytes(v, pl.match, first)
    seg = frm
    i = frm
    while True:
        i, tid, ml, k = special_next(v, pl, pl.match, first, s, i, to)
        if tid == ST_NO_TOKEN:
            break
        start, stop = i, i + ml
        if e.kind == ST__KIND_HF:
            start, stop = strip_spaces(s, e.sflags[k], seg, to, start, stop)
        st = encode_stretch0(e, c, s, seg, start, pl)
        if st != ST_OK:
            return st
        flush_run(e, c, s)  # a run never crosses a special token
        put(c.o, c.ids, c.starts, s, np.uint32(tid), start)
        i = stop
        seg = i
    return encode_stretch0(e, c, s, seg, to, pl)


@njit(cache=True, nogil=True)
def encode_all(e, c, s, length, pl):
    """The text: the strings of the first pass cut it (the allowed specials; a HuggingFace
    model's added tokens), the second pass's and the pre-tokenizer split the rest; then the last
    run (a run never crosses a special token or the end of the text), and the spans waiting to
    be remembered (C: encode_text, then st_encode's flush of the span cache's pending list). Not
    _nrt=False: a normalized stretch allocates its copy, as C does."""
    c.run.rs[0] = 0
    if not pl.any_match:
        st = encode_stretch0(e, c, s, 0, length, pl)
    else:
        st = special_pass0(e, c, s, 0, length, pl)
    if st == ST_OK:
        flush_run(e, c, s)
    sc = c.pc.span
    if sc.st[SC_NPENDING]:  # the spans encoded in the caller's buffer (C: st_encode's end)
        if st == ST_OK:
            spans_remember(c, sc, s)
        sc.st[SC_NPENDING] = 0
    return st


@njit(cache=True, nogil=True)
def encode_many_kernel(e, c0, s, offsets, n_texts, pl, cap, counts):
    """st_encode_many's texts after the checks: each refused if it holds a disallowed string,
    else encoded into ids past the texts before it. (status (-1: text k holds a disallowed
    string), k or the total)."""
    total = 0
    ids = c0.ids
    for k in range(n_texts):
        a = np.int64(offsets[k])
        n = np.int64(offsets[k + 1]) - a
        t = s[a:]
        found, at, src, fa, fl, fid = check_disallowed_kernel(e.v, pl, t, n, c0.w.first)
        if found:
            return -1, k
        room = cap - total if total < cap else 0
        o = c0.o
        o[:] = 0
        o[O_CAP] = room
        c = Call(c0.w, c0.pairs, c0.pc, c0.run, o, ids[total:] if room else ids[:0], c0.starts, c0.report, c0.big)
        st = encode_all(e, c, t, n, pl)
        if st != ST_OK:
            return st, k
        counts[k] = o[O_N]
        total += o[O_N]
    return ST_OK, total


@njit(cache=True, nogil=True, _nrt=False)
def encode_piece_kernel(e, c, s, length):
    """st_encode_piece: one piece through the same merge code as st_encode's pieces (the merge
    loops alone: no pre-tokenizer, no specials, no piece cache, no superword pass)."""
    if e.kind == ST__KIND_RANKS:
        return encode_piece_ranks(e, c, s, 0, length, False, np.uint64(0), True)
    if e.kind == ST__KIND_RULES:
        return encode_piece_rules(e, c, s, 0, length)
    if e.kind == ST__KIND_HF:
        return encode_piece_hf(e, c, s, 0, length, False, np.uint64(0))
    return ST_ERR_INVALID_ARGUMENT


# ---- the calls ----

_EMPTY_TEXT = np.zeros(16, np.uint8)
_EMPTY_PAIRS = np.zeros(0, np.uint32)
_NO_STARTS = np.zeros(0, np.uint64)
_NO_IDS = np.zeros(1, np.uint32)
_NO_BT = None
_utf8_validate = None


def utf8_validate(text, length, err):
    global _utf8_validate
    if _utf8_validate is None:
        from .. import lookup
        _utf8_validate = lookup("st_utf8_validate")
        if _utf8_validate is None:
            raise NotImplementedError("the numba backend has no st_utf8_validate yet")
    return _utf8_validate(text, length, err)


def work_of(enc):
    """The handle's reusable scratch (C: the stack arrays of a call)."""
    lz = enc.lazy
    w = lz.extra.get("work")
    if w is None:
        w = lz.extra["work"] = new_work()
        v = enc.vocab
        vb = int(v.offsets[v.n_ids])
        w.lz[LZ_BUDGET] = min(vb * BT_COST_PER_VOCAB_BYTE, (1 << 62))
    return w


def _enc_of(enc, scratch, merge_only=False, supers=True):
    """The kernels' view of the handle (E): the backtracking tables if built, the memo of the
    call's scratch block."""
    global _NO_BT
    lz = enc.lazy
    w = work_of(enc)
    w.lz[LZ_STATE] = lz.bt_state
    w.lz[LZ_DEBT] = lz.bt_debt
    if _NO_BT is None:
        _NO_BT = _unsuitable()
    bt = lz.bt if lz.bt_state == BT_READY and lz.bt is not None else _NO_BT
    memo = NO_MEMO
    if bt is not _NO_BT and scratch is not None:
        if scratch.memo is None:
            scratch.memo = new_memo()
        memo = scratch.memo
    has_sup = supers and enc.kind == ST__KIND_RULES and enc.supers.n > 0
    if enc.kind == ST__KIND_HF:  # merger_of: its own rules, and the ids they make
        return Enc(enc.kind, enc.vocab, enc.hf.rules, enc.supers, False, enc.pt, bt, memo, enc.hf.made,
                   int(enc.hf.flags), enc.hf.string_flags), w
    return Enc(enc.kind, enc.vocab, enc.rules, enc.supers, has_sup, enc.pt, bt, memo, NO_MADE, 0, NO_SFLAGS), w


def _string_flags(enc):
    """A HuggingFace model's flags of its special strings (the policy's always/normalized rules)."""
    return enc.hf.string_flags if enc.kind == ST__KIND_HF and enc.hf is not None else None


def _host_array(a, dtype):
    """a is what the numba runtime makes for a call (1-d, C-contiguous, writable, of dtype), so
    the kernel's compiled entry point takes it as it took the first call's."""
    return a.ndim == 1 and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable


def _run(enc, kernel, args, host):
    """kernel(*args) through its compiled entry point, kept per handle after the first call
    (numba's dispatcher types every array of the nested namedtuples on every call: about 30 us
    a call); host: the arguments the caller made, with their dtypes, checked cheaply each call
    (anything unusual goes through the dispatcher)."""
    for a, dt in host:
        if not _host_array(a, dt):
            return kernel(*args)
    eps = enc.lazy.extra.setdefault("entry", {})
    key = (kernel, enc.lazy.bt_state == BT_READY)
    ep = eps.get(key)
    if ep is not None:
        return ep(*args)
    out = kernel(*args)
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    cres = kernel.overloads.get(sig)
    if cres is not None:
        eps[key] = cres.entry_point
    return out


def _after(enc, w):
    enc.lazy.bt_debt = int(w.lz[LZ_DEBT])


def _build_tables(enc):
    from .encoding import backtrack_tables
    backtrack_tables(enc)
    if enc.lazy.bt_state == BT_NOT_BUILT:  # no builder: never due again
        enc.lazy.bt_state = BT_UNAVAILABLE


def _ids_out(err, st, report, text, o, cap, n_ids):
    """The end of st_encode and st_encode_piece: the count in *n_ids, then the kernel's failure, or
    ST_ERR_BUFFER_TOO_SMALL when the ids did not fit in cap."""
    n = int(o[O_N])
    n_ids.v = n
    if st != ST_OK:
        return _finish(err, st, report, text)
    if n > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


def _finish(err, st, report, text):
    """A kernel's failure in err (the status alone where the kernel set no report)."""
    if st == ST_ERR_NOT_ENCODABLE and err is not None:
        off = int(report[R_OFFSET])
        return err.take(report, "byte %d is no token" % int(text[off]))
    if err is not None and err.status == ST_OK:
        err.fail(st)
    return st


@export
def st_encode(enc, text, length, specials, flags, ids, starts, cap, n_ids, err):
    clear(err)
    if enc is None or n_ids is None or (text is None and length) or (ids is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    if flags > ST_OFFSETS_UTF16:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "unknown flags")
    n_ids.v = 0
    if text is None:
        text = _EMPTY_TEXT
    st = utf8_validate(text, length, err)
    if st != ST_OK:
        return st
    v = enc.vocab
    st, pl = policy_resolve(v, specials, err, _string_flags(enc))
    if st == ST_OK:
        st = check_disallowed(v, pl, text, length, err)
    if st != ST_OK:
        return st
    scratch, pc = piece_cache_open(enc, length)
    pairs = scratch.pairs if scratch is not None else _EMPTY_PAIRS
    run = new_run(length + 1) if enc.kind == ST__KIND_RULES and enc.supers.n > 0 else NO_RUN
    ids_a = ids if ids is not None else _NO_IDS
    starts_a = starts if starts is not None else _NO_STARTS
    big = big_for(length)
    while True:
        e, w = _enc_of(enc, scratch)
        o = new_sink(cap, flags, starts is not None)
        report = new_report()
        st = _run(enc, encode_all, (e, Call(w, pairs, pc, run, o, ids_a, starts_a, report, big), text, length, pl),
                  ((text, np.uint8), (ids_a, np.uint32), (starts_a, np.uint64), (pl.strings, np.uint8),
                   (pl.ends, np.uint64)))
        _after(enc, w)
        if st != NEED_TABLES:
            break
        _build_tables(enc)  # then the call again, with them (or without, never due again)
        piece_cache_restart(pc)
    piece_cache_close(enc, scratch, pc)
    return _ids_out(err, st, report, text, o, cap, n_ids)


@export
def st_encode_piece(enc, data, length, ids, cap, n_ids, err):
    clear(err)
    if enc is None or n_ids is None or (data is None and length) or (ids is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    n_ids.v = 0
    if data is None:
        data = _EMPTY_TEXT
    if enc.kind == ST__KIND_RULES and enc.vocab.alphabet == ST_ALPHABET_UBE:
        st = utf8_validate(data, length, err)
        if st != ST_OK:
            return st
    if not length:
        return ST_OK
    e, w = _enc_of(enc, None, supers=False)  # one piece: the supermerges, which join pretokens, do not apply
    o = new_sink(cap, ST_OFFSETS_BYTES, False)
    report = new_report()
    ids_a = ids if ids is not None else _NO_IDS
    st = _run(enc, encode_piece_kernel, (e, Call(w, _EMPTY_PAIRS, no_pc(), NO_RUN, o, ids_a, _NO_STARTS, report,
                                                 big_for(length)), data, length),
              ((data, np.uint8), (ids_a, np.uint32)))
    return _ids_out(err, st, report, data, o, cap, n_ids)


@export
def st_encode_many(enc, texts, offsets, n_texts, specials, ids, cap, counts, n_ids, err):
    clear(err)
    if enc is None or n_ids is None or offsets is None or (counts is None and n_texts) or (ids is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT)
    n_ids.v = 0
    offs = [int(x) for x in offsets[:n_texts + 1]] if n_texts else []
    # the checks st_encode makes of each text, in C's order: its offsets, its UTF-8, the policy
    # (the same for every text: resolved once); the texts before the first that fails them are
    # encoded (one of them may fail first: its disallowed specials, a byte with no token)
    pl = None
    whole_valid = None
    kf, pre = n_texts, None
    for k in range(n_texts):
        a, b = offs[k], offs[k + 1]
        if b < a or (texts is None and b > a):
            kf, pre = k, Err()
            pre.fail(ST_ERR_INVALID_ARGUMENT, ST_UNIT_INDEX, k + 1, "offsets out of order, or texts NULL")
            break
        if whole_valid is None:
            whole_valid = _texts_valid(texts, offs, n_texts)
        if not whole_valid:
            e = Err()
            if utf8_validate(texts[a:] if texts is not None else _EMPTY_TEXT, b - a, e) != ST_OK:
                if e.unit == ST_UNIT_BYTE:
                    e.offset += a
                kf, pre = k, e
                break
        if pl is None:
            e = Err()
            st, pl = policy_resolve(enc.vocab, specials, e, _string_flags(enc))
            if st != ST_OK:
                kf, pre = k, e
                break
    if kf:
        st = _encode_many_run(enc, texts, offs, kf, pl, offsets, ids, cap, counts, n_ids, err)
        if st is not None:
            return st
    if pre is not None:
        if err is not None:
            for f in Err.__slots__:
                setattr(err, f, getattr(pre, f))
        return pre.status
    clear(err)
    return ST_OK


def _encode_many_run(enc, texts, offs, n_texts, pl, offsets, ids, cap, counts, n_ids, err):
    """The kernel over texts [0, n_texts): a status if one fails or all are done, else None."""
    if texts is None:
        texts = _EMPTY_TEXT
    v = enc.vocab
    scratch, pc = piece_cache_open(enc, offs[n_texts] - offs[0])
    pairs = scratch.pairs if scratch is not None else _EMPTY_PAIRS
    has_sup = enc.kind == ST__KIND_RULES and enc.supers.n > 0
    run = new_run(max(offs[k + 1] - offs[k] for k in range(n_texts)) + 1) if has_sup else NO_RUN
    offsets_arr = np.ascontiguousarray(offsets, np.uint64)
    big = big_for(max(offs[k + 1] - offs[k] for k in range(n_texts)))
    while True:
        e, w = _enc_of(enc, scratch)
        report = new_report()
        ids_a = ids if ids is not None else _NO_IDS
        st, k = _run(enc, encode_many_kernel,
                     (e, Call(w, pairs, pc, run, new_sink(0, 0, False), ids_a, _NO_STARTS, report, big), texts,
                      offsets_arr, n_texts, pl, cap, counts),
                     ((texts, np.uint8), (ids_a, np.uint32), (counts, np.uint64), (offsets_arr, np.uint64),
                      (pl.strings, np.uint8), (pl.ends, np.uint64)))
        _after(enc, w)
        if st != NEED_TABLES:
            break
        _build_tables(enc)
        piece_cache_restart(pc)
    piece_cache_close(enc, scratch, pc)
    if st == -1:  # text k holds a disallowed string: st_encode's report, from the start of texts
        a = offs[k]
        st = check_disallowed(v, pl, texts[a:], offs[k + 1] - a, err)
        if err is not None:
            err.offset += a
        return st
    if st != ST_OK:
        a = offs[k]
        st = _finish(err, st, report, texts[a:])
        if err is not None and err.unit == ST_UNIT_BYTE:
            err.offset += a
        return st
    total = k
    if n_texts < len(offs) - 1:
        return None
    n_ids.v = total
    clear(err)
    if total > cap:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    return ST_OK


def _texts_valid(texts, offs, n_texts):
    """Every text valid UTF-8: the whole buffer is, and every text starts on a character."""
    if texts is None:
        return True
    if any(offs[k + 1] < offs[k] for k in range(n_texts)):
        return False
    a, b = offs[0], offs[n_texts]
    if utf8_validate(texts[a:], b - a, None) != ST_OK:
        return False
    for k in range(n_texts + 1):
        x = offs[k]
        if x < b and (texts[x] & 0xC0) == 0x80:
            return False
    return True


@export
def st_encode_count(enc, text, length, specials, n_tokens, err):
    st = st_encode(enc, text, length, specials, 0, None, None, 0, n_tokens, err)
    if st == ST_ERR_BUFFER_TOO_SMALL:
        clear(err)
        return ST_OK
    return st
