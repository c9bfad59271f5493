"""Mirrors core_c/src/train/candidates.c and candidates.h: supermerge candidates (docs/design.md §8):
which pretokens are eligible (a letter, and the bytes of a token of the phase-1 vocabulary the
algorithm keeps), and the state a candidates counter carries. The counter itself is made from a
finished phase-1 trainer by train/trainer.py, or from the trainer's spec by candidates_spec.py;
the counting is pretoken_counter.py's (the same table, merge, save and load serve both kinds of
counter); a candidate's key is its pretokens' bytes joined with 0xFF, a byte UTF-8 never holds,
so the key splits back unambiguously.

Layout:
  Tokset (st__tokset): alphabet; seq (uint8, the tokens' base-symbol bytes: bytes, or each UBE
    symbol as 2 big-endian bytes), seq_len; off (uint64[n]), len (uint32[n]): token id's
    symbols are seq[off[id] : off[id] + len[id]]; n; slots (uint32[mask + 1], id + 1, 0 empty;
    open addressing, about half full; None when the index was never made, the C's NULL); mask;
    scratch (uint8: a UBE pretoken's symbols), scratch_cap.
  Cand (st__cand): algorithm, alphabet, supermerges, kept, fingerprint, ngram_cmin,
    ngram_max_len (Python ints), given_back (0/1), toks (a Tokset; None in a split counter),
    key (uint8: the run being built), hot ((word uint64, len uint32, eligible uint32) arrays of
    1 << ST__CAND_HOT_BITS, empty until the counter has seen some text).

Kernels for the other modules: has_letter(p, n) and has_letter_at(p, pi, n); tokset_find_at(alphabet,
seq, off, len_, slots, scratch, p, pi, n) (scratch at least 2n bytes for UBE) and tokset_find_sym (the
same with a uint16[4] symbols buffer passed in: no allocation); cand_pieces(p, pi, n).
"""
import numpy as np
from numba import njit

from ..base.common import ST_OK
from ..base.hash import hash_bytes, mix64
from ..text.pretokenize import Pretokenizer
from ..text.unicode import ucd_class, ST_UCD_CLASS_MASK, ST_UCD_LU, ST_UCD_LO
from ..text.utf8 import utf8_decode, ube_char_symbols

U64 = np.uint64
ST__NO_TOKEN_ID = 0xFFFFFFFF
ST__CAND_SEP = 0xFF     # joins the pretokens of a candidate's key (never in UTF-8)
ST__CAND_HOT_BITS = 12
ST__NGRAM_MAX_LEN = 30  # Appendix B: the longest n-gram the split counts, in pretokens
ST_ALPHABET_BYTES, ST_ALPHABET_UBE = 0, 1
ST_ALGORITHM_BPE, ST_ALGORITHM_BOUNDLESS, ST_ALGORITHM_SUPERBPE = 0, 1, 2


# ---- the vocabulary index ------------------------------------------------------------------
class Tokset:
    """st__tokset (see the module's docstring)."""
    __slots__ = ("alphabet", "seq", "seq_len", "off", "len", "n", "slots", "mask", "scratch", "scratch_cap")

    def __init__(self):
        self.alphabet = 0
        self.seq = self.off = self.len = self.slots = None
        self.seq_len = self.n = self.mask = self.scratch_cap = 0
        self.scratch = np.zeros(0, np.uint8)


@njit(cache=True, nogil=True, _nrt=False)
def _eq(a, ai, p, pi, n):
    for k in range(n):
        if a[ai + k] != p[pi + k]:
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def tok_slot(slots, seq, off, len_, k, ki, kn, h):
    """tok_slot: the slot of the key k[ki .. ki + kn) (hash h): its token's, or the empty one
    where it would go."""
    mask = np.int64(slots.size - 1)
    i = np.int64(h & U64(mask))
    while True:
        v = slots[i]
        if v == 0:
            return i
        tid = np.int64(v) - 1
        if np.int64(len_[tid]) == kn and _eq(seq, np.int64(off[tid]), k, ki, kn):
            return i
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def tokset_fill(slots, seq, off, len_, n):
    for tid in range(n):
        o = np.int64(off[tid])
        ln = np.int64(len_[tid])
        i = tok_slot(slots, seq, off, len_, seq, o, ln, hash_bytes(seq, o, ln))
        if slots[i] == 0:
            slots[i] = tid + 1  # the smaller id keeps a sequence two merges spell


def tokset_init(alphabet, seq, off, len_, n):
    """st__tokset_init: the index of the first n tokens (ids 0..n-1) of a token table (seq, off,
    len_: their base-symbol bytes, laid out in id order)."""
    s = Tokset()
    s.alphabet = alphabet
    s.n = n
    nbytes = int(off[n - 1]) + int(len_[n - 1]) if n else 0
    slots = 16
    while slots < 2 * n + 2:
        slots <<= 1
    s.seq = np.zeros(max(nbytes, 1), np.uint8)
    if nbytes:
        s.seq[:nbytes] = np.asarray(seq[:nbytes], np.uint8)
    s.seq_len = nbytes
    s.off = np.array(off[:n], np.uint64) if n else np.zeros(1, np.uint64)
    s.len = np.array(len_[:n], np.uint32) if n else np.zeros(1, np.uint32)
    s.slots = np.zeros(slots, np.uint32)
    s.mask = slots - 1
    tokset_fill(s.slots, s.seq, s.off, s.len, n)
    return s


@njit(cache=True, nogil=True, _nrt=False)
def tokset_find_sym(alphabet, seq, off, len_, slots, scratch, sy, p, pi, n):
    """st__tokset_find for the valid UTF-8 text p[pi .. pi + n): the smallest id whose symbols are
    its own, ST__NO_TOKEN_ID when none is. UBE: scratch holds at least 2n bytes; sy is a uint16
    array of 4 (a character's symbols)."""
    if slots.size == 0:
        return np.int64(ST__NO_TOKEN_ID)
    if alphabet == ST_ALPHABET_UBE:
        # the text's UBE symbols, 2 big-endian bytes each: at most 2 bytes per text byte
        kn = np.int64(0)
        i = pi
        while i < pi + n:
            m, cl = ube_char_symbols(p, i, sy)
            for q in range(m):
                scratch[kn] = np.uint8(sy[q] >> 8)
                scratch[kn + 1] = np.uint8(sy[q] & 0xFF)
                kn += 2
            i += cl
        v = slots[tok_slot(slots, seq, off, len_, scratch, 0, kn, hash_bytes(scratch, 0, kn))]
    else:
        v = slots[tok_slot(slots, seq, off, len_, p, pi, n, hash_bytes(p, pi, n))]
    return np.int64(v) - 1 if v else np.int64(ST__NO_TOKEN_ID)


@njit(cache=True, nogil=True)
def tokset_find_at(alphabet, seq, off, len_, slots, scratch, p, pi, n):
    """tokset_find_sym with a symbols buffer of its own."""
    return tokset_find_sym(alphabet, seq, off, len_, slots, scratch, np.zeros(4, np.uint16), p, pi, n)


def tokset_find(s, p, n):
    """st__tokset_find: the smallest id whose symbols are those of the valid UTF-8 text p[0..n)
    (p a uint8 array), ST__NO_TOKEN_ID when none is."""
    if s.slots is None:
        return ST__NO_TOKEN_ID
    if s.alphabet == ST_ALPHABET_UBE and 2 * n > s.scratch_cap:
        cap = s.scratch_cap or 256
        while cap < 2 * n:
            cap *= 2
        s.scratch = np.zeros(cap, np.uint8)
        s.scratch_cap = cap
    return int(tokset_find_at(s.alphabet, s.seq, s.off, s.len, s.slots, s.scratch, p, 0, n))


@njit(cache=True, nogil=True, _nrt=False)
def has_letter_at(p, pi, n):
    """st__has_letter of the valid UTF-8 text p[pi .. pi + n)."""
    i = pi
    end = pi + n
    while i < end:
        b = np.int64(p[i])
        if b < 0x80:
            if 97 <= (b | 0x20) <= 122:
                return 1
            i += 1
            continue
        cp, ln = utf8_decode(p, i)
        i += ln
        cls = ucd_class(cp) & ST_UCD_CLASS_MASK
        if cls >= ST_UCD_LU and cls <= ST_UCD_LO:
            return 1
    return 0


@njit(cache=True, nogil=True, _nrt=False)
def has_letter(p, n):
    """st__has_letter: 1 if the valid UTF-8 text p[0..n) holds a letter (\\p{L}: general category
    L*)."""
    return has_letter_at(p, 0, n)


@njit(cache=True, nogil=True)
def fingerprint_kernel(alphabet, merges, kept):
    h = mix64(U64(0x5375706572776F72) ^ U64(alphabet))
    h = mix64(h ^ U64(kept))
    for i in range(kept):
        h = mix64(h ^ ((U64(merges[2 * i]) << U64(32)) | U64(merges[2 * i + 1])))
    return h


def vocab_fingerprint(alphabet, merges, kept):
    """st__vocab_fingerprint: the fingerprint (an int) of an eligible vocabulary: the alphabet and
    the kept merges (uint32 pairs, flat), in order."""
    m = merges if merges is not None and len(merges) else np.zeros(2, np.uint32)
    return int(fingerprint_kernel(int(alphabet), np.asarray(m, np.uint32), int(kept)))


@njit(cache=True, nogil=True, _nrt=False)
def cand_pieces(p, pi, n):
    """st__cand_pieces: the number of pretokens in a candidate's key p[pi .. pi + n)."""
    c = 1
    for k in range(n):
        if p[pi + k] == ST__CAND_SEP:
            c += 1
    return c


# ---- the candidates' state -----------------------------------------------------------------
class Cand:
    """st__cand (see the module's docstring)."""
    __slots__ = ("algorithm", "alphabet", "supermerges", "kept", "fingerprint", "ngram_cmin", "ngram_max_len",
                 "given_back", "toks", "key", "hot")

    def __init__(self):
        self.algorithm = self.alphabet = 0
        self.supermerges = self.kept = self.fingerprint = self.ngram_cmin = self.ngram_max_len = 0
        self.given_back = 0
        self.toks = None
        self.key = np.zeros(0, np.uint8)
        self.hot = (np.zeros(0, np.uint64), np.zeros(0, np.uint32), np.zeros(0, np.uint32))


def counter_new_cand(pt, algorithm, alphabet, supermerges, kept, fingerprint, seq, off, len_, n, err):
    """st__counter_new_cand: (status, a candidates counter of pre-tokenizer pt over the eligible
    vocabulary of n tokens (seq, off, len_: their base-symbol bytes as the trainer lays them
    out) with these parameters); what the trainer's st_trainer_candidates_new and
    st_candidates_new (from a spec) both make."""
    from .pretoken_counter import Counter
    c = Counter(Pretokenizer(int(pt.pattern), int(pt.flags), np.array(pt.single_letter_scripts, np.uint32)))
    cd = Cand()
    cd.algorithm = int(algorithm)
    cd.alphabet = int(alphabet)
    cd.supermerges = int(supermerges) if algorithm == ST_ALGORITHM_SUPERBPE else 0
    cd.kept = int(kept)
    cd.fingerprint = int(fingerprint)
    cd.toks = tokset_init(int(alphabet), seq, off, len_, int(n))
    c.cand = cd
    return ST_OK, c


def cand_compatible(a, b):
    """st__cand_compatible: 1 if candidates of a and b may be summed (same vocabulary, algorithm
    and split)."""
    return int(a.algorithm == b.algorithm and a.alphabet == b.alphabet and a.supermerges == b.supermerges
               and a.kept == b.kept and a.fingerprint == b.fingerprint and a.ngram_cmin == b.ngram_cmin
               and a.ngram_max_len == b.ngram_max_len)


def cand_clone_params(src):
    """st__cand_clone_params: a copy of src's parameters (not its index): for a split counter."""
    c = Cand()
    c.algorithm, c.alphabet, c.supermerges, c.kept = src.algorithm, src.alphabet, src.supermerges, src.kept
    c.fingerprint, c.ngram_cmin, c.ngram_max_len = src.fingerprint, src.ngram_cmin, src.ngram_max_len
    return c
