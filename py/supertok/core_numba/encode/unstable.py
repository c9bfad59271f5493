"""Mirrors core_c/src/encode/unstable.c: tiktoken's encode_with_unstable (docs/design.md §7): the
tokens of a text that more text cannot change (the stable ones), and every way the rest (the
unstable bytes, the last pre-tokenizer piece's tokens) could be tokenized once more text follows
(the completions), handed out a batch at a time (the C file's comment says what a completion
is).

The handle (struct st_unstable) is an Unstable object with the C fields; the passes over the
vocabulary (unstable_index: the counting sort of the ordinary tokens by their first two bytes)
and over a bucket (bucket_next) are kernels. The encodes go through the port's own st_encode and
st_encode_piece (encode/pipeline.py), looked up when first called.
"""
import numpy as np
from numba import njit

from .. import export, lookup
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, clear, fail)
from .encoding import ST__KIND_RULES, ST__KIND_HF
from .cut import special_string
from .special_policy import special_string_number

PHASE_TOKENS, PHASE_SPACE, PHASE_DONE = 0, 1, 2

# The ordinary tokens sorted by their first two bytes: bucket b0 * 257 holds the one-byte token
# b0, b0 * 257 + 1 + b1 the tokens starting with b0 b1.
N_BUCKETS = 256 * 257

ST_ALPHABET_BYTES = 0
ST_SPECIAL_ALLOW_ALL = 1
ST_SPECIAL_BY_STRING = 4
ST_SPECIAL_BY_TEXT = 8
ST_OFFSETS_BYTES = 0
ST_UCD_WHITE_SPACE = 8
PAD = 16
PIECE_BATCH = 4096


def bucket_of(t, at, length):
    return int(t[at]) * 257 + (1 + int(t[at + 1]) if length > 1 else 0)


@njit(cache=True, nogil=True)
def unstable_index(offsets, byts, bytes_len, n_ids, special_ids, n_special, shared_below):
    """st_unstable_new's passes: each id's bucket (N_BUCKETS: none), then the ids placed by
    bucket, each bucket in id order. (bucket_start uint32[N_BUCKETS + 1], sorted uint32[])."""
    bucket_start = np.zeros(N_BUCKETS + 1, np.uint32)
    key = np.empty(max(n_ids, 1), np.int64)
    next_special = 0
    n = 0
    for id in range(n_ids):
        ta = np.int64(offsets[id])
        tb = np.int64(offsets[id + 1])
        k = N_BUCKETS
        while next_special < n_special and special_ids[next_special] < id:
            next_special += 1
        special_only = next_special < n_special and special_ids[next_special] == id and id >= shared_below
        if ta < tb and tb <= bytes_len and not special_only:
            k = np.int64(byts[ta]) * 257 + (1 + np.int64(byts[ta + 1]) if tb - ta > 1 else 0)
            bucket_start[k + 1] += 1  # count[k]
            n += 1
        key[id] = k
    for b in range(N_BUCKETS):
        bucket_start[b + 1] += bucket_start[b]
    sorted_ = np.zeros(max(n, 1), np.uint32)
    for id in range(n_ids):
        if key[id] != N_BUCKETS:
            sorted_[bucket_start[key[id]]] = id
            bucket_start[key[id]] += 1
    for b in range(N_BUCKETS, 0, -1):  # back to starts
        bucket_start[b] = bucket_start[b - 1]
    bucket_start[0] = 0
    return bucket_start, sorted_[:n]


@njit(cache=True, nogil=True)
def bucket_next(offsets, byts, bytes_len, n_ids, sorted_, pos, end, want, wa, n_want):
    """The next id in sorted[pos..end) whose bytes start with want[wa..wa + n_want): (the
    position after it, id), or (end, -1)."""
    while pos < end:
        id = np.int64(sorted_[pos])
        pos += 1
        if id >= n_ids:
            continue
        a = np.int64(offsets[id])
        b = np.int64(offsets[id + 1])
        if a >= b or b > bytes_len or b - a < n_want:  # st__vocab_span, checked
            continue
        same = True
        for j in range(n_want):
            if byts[a + j] != want[wa + j]:
                same = False
                break
        if same:
            return pos, id
    return end, -1


def _span(v, id):
    """st__vocab_span: (start, len) or None."""
    if id >= v.n_ids:
        return None
    a, b = int(v.offsets[id]), int(v.offsets[id + 1])
    if a >= b or b > v.bytes_len:
        return None
    return a, b - a


def _valid_utf8(b):
    try:
        bytes(b).decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _padded(b):
    a = np.zeros(len(b) + PAD, np.uint8)
    a[:len(b)] = np.frombuffer(bytes(b), np.uint8)
    return a


class Unstable:
    """struct st_unstable."""
    __slots__ = ("enc", "bucket_start", "sorted", "n_sorted", "stable", "n_stable", "unstable", "u_len", "out",
                 "out_n", "pending", "phase", "suffix", "pos", "end", "started")


def is_special(v, id):
    n = int(v.n_special)
    lo = int(np.searchsorted(v.special_ids[:n], id)) if n else 0
    return lo < n and int(v.special_ids[lo]) == id


def is_shared(enc, id):
    """A special id that is also an ordinary token's (a merge-rules model's)."""
    return enc.kind == ST__KIND_RULES and id < enc.vocab.n_ordinary


def allowed_by(enc, sp, id):
    """Whether any string of special id is allowed by the policy."""
    if sp is None:
        return False
    if sp.flags & ST_SPECIAL_ALLOW_ALL:
        return True
    v = enc.vocab
    if sp.flags & ST_SPECIAL_BY_TEXT:  # the allowed strings: is one of them a string of id's?
        for k in range(sp.n_allowed):
            a = int(sp.ends[k - 1]) if k else 0
            i = int(special_string_number(v, sp.strings, a, int(sp.ends[k]) - a))
            if i >= 0:
                ok, sid, _, _ = special_string(v, i)
                if ok and sid == id:
                    return True
        return False
    for k in range(sp.n_allowed):
        got = int(sp.allowed[k])
        if sp.flags & ST_SPECIAL_BY_STRING:
            ok, got, _, _ = special_string(v, got)
            if not ok:
                continue
        if got == id:
            return True
    return False


def special_in_output(enc, sp, id):
    """An id in the encode's output that came from a special string in the text."""
    if not is_special(enc.vocab, id):
        return False
    return not is_shared(enc, id) or allowed_by(enc, sp, id)


def all_space(enc, id):
    """tiktoken's test for the whitespace fix: an ordinary token of spaces, newlines and tabs."""
    v = enc.vocab
    s = _span(v, id) if not is_special(v, id) else None
    if s is None:
        return False
    t = v.bytes[s[0]:s[0] + s[1]]
    return bool(np.all((t == 0x20) | (t == 0x0A) | (t == 0x09)))


def append_piece(u, b, err):
    """b merged as one piece, appended to u.out."""
    n = len(b)
    ids = np.zeros(max(n, 1), np.uint32)
    got = _Cell()
    st = lookup("st_encode_piece")(u.enc, _padded(b), n, ids, n, got, err)
    if st == ST_OK:
        u.out.extend(int(x) for x in ids[:got.v])
    return st


class _Cell:
    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


def retokenize(u, suffix, a, length, err):
    """The completion for a token whose bytes (a, length) start with the last `suffix` unstable
    bytes: unstable[0..U - suffix) + the token, encoded, cut after the token reaching the end
    of U."""
    head = u.u_len - suffix
    n = head + length
    text = u.unstable[:head] + u.enc.vocab.bytes[a:a + length].tobytes()
    ids = np.zeros(max(n, 1), np.uint32)
    got = _Cell()
    p = _padded(text)
    if _valid_utf8(text):
        st = lookup("st_encode")(u.enc, p, n, None, 0, ids, None, n, got, err)
    else:
        st = lookup("st_encode_piece")(u.enc, p, n, ids, n, got, err)
    if st != ST_OK:
        return st
    covered = k = 0
    v = u.enc.vocab
    while k < got.v and covered < u.u_len:
        s = _span(v, int(ids[k]))
        covered += s[1] if s is not None else 0
        k += 1
    u.out = [int(x) for x in ids[:k]]
    return ST_OK


def next_completion(u, err):
    """The next completion into u.out: (status, found)."""
    v = u.enc.vocab
    un = u.unstable
    U = u.u_len
    u.out = []
    while u.phase == PHASE_TOKENS:
        # what the tokens in [pos, end) must start with, and how much longer they may be
        want = un[U - u.suffix:] if u.suffix else un
        n_want = u.suffix if u.suffix else U
        if not u.started:
            b = bucket_of(want, 0, n_want)
            u.pos = int(u.bucket_start[b])
            u.end = int(u.bucket_start[b + 1 if n_want > 1 else b + 257])
            u.started = 1
        if u.pos < u.end:
            u.pos, id = bucket_next(v.offsets, v.bytes, np.int64(v.bytes_len), np.int64(v.n_ids), u.sorted,
                                    np.int64(u.pos), np.int64(u.end), _padded(want), np.int64(0), np.int64(n_want))
            u.pos = int(u.pos)
            if id >= 0:
                a, length = _span(v, int(id))
                if u.suffix == 0:  # a single token starting with the whole unstable bytes
                    u.out = [int(id)]
                else:  # it straddles the end
                    st = retokenize(u, u.suffix, a, length, err)
                    if st != ST_OK:
                        return st, False
                return ST_OK, True
        u.started = 0
        u.suffix += 1
        if u.suffix >= U:
            u.phase = PHASE_SPACE
    found = False
    if u.phase == PHASE_SPACE:
        u.phase = PHASE_DONE
        from ..text.unicode import ucd_class
        # the shortest tail of valid UTF-8, if it is one whitespace character after more bytes
        size = 1
        while U > 1 and size <= 4 and size <= U:
            c = un[U - size:]
            if not _valid_utf8(c):
                size += 1
                continue
            cp = ord(c.decode("utf-8"))  # valid and the shortest such tail: one character
            if ucd_class(cp) & ST_UCD_WHITE_SPACE and U > size:
                st = append_piece(u, un[:U - size], err)
                if st == ST_OK:
                    st = append_piece(u, un[U - size:], err)
                if st != ST_OK:
                    return st, False
                found = True
            break
    return ST_OK, found


@export
def st_unstable_free(u):
    pass


@export
def st_unstable_new(enc, alloc, out, err):
    clear(err)
    if enc is None or out is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    out.v = None
    v = enc.vocab
    if v.alphabet != ST_ALPHABET_BYTES:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "a UBE encoding has no byte tokens")
    if enc.kind == ST__KIND_RULES and enc.supers is not None and enc.supers.n:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "more text can change every supermerge of the last run of words")
    if enc.kind == ST__KIND_HF:  # its rules need not follow the tokens' order, which the search assumes
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0,
                    "encode_with_unstable is not available for an encoding from a tokenizer.json")
    u = Unstable()
    u.enc = enc
    u.phase = PHASE_DONE
    u.stable = np.zeros(0, np.uint32)
    u.n_stable = u.u_len = u.out_n = u.pending = u.started = u.suffix = u.pos = u.end = 0
    u.unstable = b""
    u.out = []
    shared_below = v.n_ordinary if enc.kind == ST__KIND_RULES else 0
    u.bucket_start, u.sorted = unstable_index(v.offsets, v.bytes, np.int64(v.bytes_len), np.int64(v.n_ids),
                                              v.special_ids, np.int64(v.n_special), np.int64(shared_below))
    u.n_sorted = len(u.sorted)
    out.v = u
    return ST_OK


def _last_piece_start(pt, s, length):
    """The start of the last pre-tokenizer piece of s[0..length) (0 if one piece)."""
    from ..text.pretokenize import ITER_FIELDS, IT_I, pieces_init, pieces_fill
    it = np.zeros(ITER_FIELDS, np.int64)
    ends = np.zeros(PIECE_BATCH, np.uint64)
    pieces_init(pt, s, np.int64(length), it)
    at = 0
    while it[IT_I] < length:
        c = pieces_fill(pt, s, np.int64(length), it, ends, PIECE_BATCH)
        if c == 0:
            break
        for e in ends[:c][::-1]:
            if int(e) < length:
                at = max(at, int(e))
                break
    return at


@export
def st_unstable_encode(u, text, length, specials, err):
    clear(err)
    if u is None or (text is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    enc = u.enc
    u.phase = PHASE_DONE  # until this text is done: nothing of the last one is handed out
    u.n_stable = u.u_len = 0
    u.out = []
    u.pending = u.started = 0
    u.suffix = 0
    cap = length if length else 1
    ids = np.zeros(cap, np.uint32)
    starts = np.zeros(cap, np.uint64)
    got = _Cell()
    if text is None:
        text = np.zeros(PAD, np.uint8)
    st = lookup("st_encode")(enc, text, length, specials, ST_OFFSETS_BYTES, ids, starts, cap, got, err)
    n = got.v if st == ST_OK else 0
    n_last = 0
    if st == ST_OK and n and not special_in_output(enc, specials, int(ids[n - 1])):
        first = n  # the first token after the last special token
        while first > 0 and not special_in_output(enc, specials, int(ids[first - 1])):
            first -= 1
        # the start of the last pre-tokenizer piece of the text after it
        seg = int(starts[first])
        at = _last_piece_start(enc.pt, text[seg:], length - seg)
        n_last = int(np.count_nonzero(starts[first:n] >= seg + at))
        # tiktoken's fix for unstable whitespace splits: a last piece starting with a token of
        # whitespace takes in the whitespace tokens before it
        if n_last > 0 and all_space(enc, int(ids[n - n_last])):
            while n_last < n and all_space(enc, int(ids[n - n_last - 1])):
                n_last += 1
    if st == ST_OK:
        v = enc.vocab
        u.n_stable = n - n_last
        u.stable = ids[:u.n_stable].copy()
        parts = []
        for k in range(n - n_last, n):
            s = _span(v, int(ids[k]))
            if s is not None:
                parts.append(v.bytes[s[0]:s[0] + s[1]].tobytes())
        u.unstable = b"".join(parts)
        u.u_len = len(u.unstable)
        u.phase = PHASE_TOKENS if u.u_len else PHASE_DONE
    return st


@export
def st_unstable_stable(u, ids, cap, n_ids, err):
    clear(err)
    if u is None or n_ids is None or (ids is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    n_ids.v = u.n_stable
    if cap < u.n_stable:
        return fail(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0)
    if u.n_stable:
        ids[:u.n_stable] = u.stable[:u.n_stable]
    return ST_OK


@export
def st_unstable_length(u):
    return u.u_len if u is not None else 0


@export
def st_unstable_next(u, ids, cap, lengths, max_completions, n_ids, n_completions, err):
    clear(err)
    if u is None or n_ids is None or n_completions is None or (ids is None and cap) or (
            lengths is None and max_completions):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0)
    n_ids.v = 0
    n_completions.v = 0
    while n_completions.v < max_completions:
        if not u.pending:
            st, found = next_completion(u, err)
            if st != ST_OK:
                return st
            if not found:
                break
            u.pending = 1
        out_n = len(u.out)
        if out_n > cap - n_ids.v:
            if n_completions.v:
                break  # the next call takes it
            n_ids.v = out_n
            return fail(err, ST_ERR_BUFFER_TOO_SMALL, ST_UNIT_NONE, 0)
        ids[n_ids.v:n_ids.v + out_n] = u.out
        n_ids.v += out_n
        lengths[n_completions.v] = out_n
        n_completions.v += 1
        u.pending = 0
    return ST_OK
