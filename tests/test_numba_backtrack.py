"""The Numba port's backtracking encoder (py/supertok/core_numba/encode/backtrack.py, a port of
core_c/src/encode/backtrack.c) against the merge loop: native's st_encode_piece, which runs the
merge loops alone, gives the ids tiktoken's merging gives.

- every token of o200k_base and cl100k_base encodes as the merge loop encodes its bytes (itself,
  reachable or not: the whole-piece check);
- every distinct pre-tokenizer piece of the first bytes of each real-text corpus and of the whole
  UDHR corpus (skipped with a message when the shared corpora are absent), with and without the
  compatibility memo;
- adversarial pieces: runs of one character, of spaces, of random tokens joined, of characters of
  2, 3 and 4 bytes, digits, mixed scripts;
- 1 MB runs stay linear (the encoder's time for 1 MiB within a few times 4 times its time for
  256 KiB) and equal the merge loop;
- vocabularies the tables do not suit (a byte with no token, the same bytes twice) give ready 0;
- the Vocab of the port's own rank-file constructor gives the same tables;
- cut.py's st_encoding_cut equals native's (every pattern, plain and script-aware), and
  unstable.py's st_unstable_* equal native's through the host layer (encode_with_unstable).

Needs numba and the native backend; runs on neither pywasm nor wasmtime (the port is tested
against native).
"""
import base64
import lzma
import os
import random
import time

import numpy as np
import pytest

from conftest import CORPORA, ROOT

pytest.importorskip("numba")

from supertok import backends  # noqa: E402

try:
    NATIVE = backends.load("native")
except Exception as exc:  # noqa: BLE001
    pytest.skip("the native backend does not load: %s" % exc, allow_module_level=True)

from supertok.core_numba.encode import backtrack as B  # noqa: E402
from supertok.core_numba.formats.vocab import Vocab  # noqa: E402

VOCAB_DIR = os.path.join(ROOT, "py", "supertok", "vocab")
PATTERNS = {"o200k_base": 3, "cl100k_base": 2}
CORPUS_BYTES = 150_000


def _read_ranks(name):
    with open(os.path.join(VOCAB_DIR, name + ".tiktoken"), "rb") as f:
        return f.read()


def _vocab_of_ranks(data, specials=()):
    """A Vocab over a rank file's tokens (ids = ranks) and specials [(bytes, id)]: the fields
    backtrack.py reads (the lookups' hash table is left empty: the encoder needs none)."""
    toks = {}
    for line in data.splitlines():
        if line.strip():
            t, r = line.split()
            toks[int(r)] = base64.b64decode(t)
    for s, i in specials:
        toks[i] = s
    n = max(toks) + 1
    lens = np.array([len(toks.get(i, b"")) for i in range(n)], np.int64)
    offsets = np.zeros(n + 1, np.uint32)
    offsets[1:] = np.cumsum(lens)
    blob = b"".join(toks.get(i, b"") for i in range(n))
    by = np.zeros(len(blob) + 16, np.uint8)
    by[:len(blob)] = np.frombuffer(blob, np.uint8)
    byte_ids = np.full(256, 0xFFFFFFFF, np.uint32)
    special_ids = sorted(i for _, i in specials)
    for i, t in toks.items():
        if len(t) == 1 and i not in special_ids:
            byte_ids[t[0]] = i
    return Vocab(n, n - len(specials), len(specials), 0, len(blob), offsets, by, np.zeros(1, np.uint64),
                 np.array(special_ids, np.uint32), 0, np.zeros(0, np.uint32), byte_ids, np.zeros(0, np.uint32), 0)


class Setup:
    def __init__(self, name):
        ranks = _read_ranks(name)
        self.native = NATIVE.encoding_new(ranks, b"", PATTERNS[name])
        self.pt = NATIVE.pretokenizer(PATTERNS[name], 0, None)
        self.vocab = _vocab_of_ranks(ranks)
        t0 = time.perf_counter()
        self.bt = B.backtrack_build(self.vocab)[1]
        self.build_seconds = time.perf_counter() - t0
        assert self.bt.ready == 1
        self.memo = B.new_memo()
        self.cap = 0
        self._grow(1 << 12)

    def _grow(self, n):
        if n > self.cap:
            self.cap = max(n, 2 * self.cap)
            self.tok = np.zeros(self.cap, np.uint32)
            self.start = np.zeros(self.cap, np.uint32)
            self.scratch = np.zeros(B.backtrack_scratch_size(self.cap) // 8, np.uint64)

    def encode(self, piece, memo=True):
        """The port's ids of piece (bytes), or None when it hands the piece to the merge loop."""
        n = len(piece)
        self._grow(n)
        p = np.zeros(n + 16, np.uint8)
        p[:n] = np.frombuffer(piece, np.uint8)
        m = B.backtrack_encode(self.bt, self.vocab, p, n, self.tok, self.start, self.scratch,
                               self.memo if memo else B.NO_MEMO)
        if not m:
            return None
        starts = self.start[:m].tolist()
        ids = self.tok[:m].tolist()
        assert starts[0] == 0 and all(a < b for a, b in zip(starts, starts[1:]))
        return ids

    def merge(self, piece):
        return NATIVE.encode_piece(self.native, piece)

    def check(self, piece, memo=True):
        got = self.encode(piece, memo)
        assert got is not None, piece[:80]
        assert got == self.merge(piece), piece[:80]


_SETUPS = {}


@pytest.fixture(scope="module", params=["o200k_base", "cl100k_base"])
def setup(request):
    if request.param not in _SETUPS:
        _SETUPS[request.param] = Setup(request.param)
    return _SETUPS[request.param]


def test_every_token_encodes_as_merging_its_bytes(setup):
    v = setup.vocab
    bad = []
    for i in range(v.n_ids):
        t = v.bytes[v.offsets[i]:v.offsets[i + 1]].tobytes()
        if not t:
            continue
        got = setup.encode(t)
        if got != setup.merge(t):
            bad.append((i, t, got))
        elif got != [i]:  # a token's bytes are taken whole
            bad.append((i, t, got))
    assert not bad, bad[:5]


def _corpora():
    if not os.path.isdir(CORPORA):
        return []
    return sorted(f for f in os.listdir(CORPORA) if f.endswith(".txt.xz") and f != "en_train.txt.xz")


def test_corpora_pieces(setup):
    files = _corpora()
    if not files:
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the corpus-based "
                    "tests need it; the vectors cover the spec without it" % "folder")
    total = 0
    for f in files:
        with lzma.open(os.path.join(CORPORA, f), "rb") as fh:
            data = fh.read(CORPUS_BYTES)
        data = data[:len(data.decode("utf-8", "ignore").encode("utf-8"))]  # whole characters
        ends = NATIVE.pretokenize_ends(setup.pt, data, False)
        seen = set()
        at = 0
        for e in ends:
            piece = data[at:e]
            at = e
            if piece in seen:
                continue
            seen.add(piece)
            setup.check(piece, memo=len(seen) % 2 == 0)
        total += len(seen)
    assert total > 1000


def test_udhr_pieces(setup):
    """Every distinct piece of the UDHR's 532 translations (448 languages, 40 scripts)."""
    path = os.path.join(CORPORA, "udhr.jsonl.xz")
    if not os.path.exists(path):
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the corpus-based "
                    "tests need it; the vectors cover the spec without it" % "udhr.jsonl.xz")
    import json
    seen = set()
    with lzma.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            data = json.loads(line)["text"].encode("utf-8")
            at = 0
            for e in NATIVE.pretokenize_ends(setup.pt, data, False):
                piece = data[at:e]
                at = e
                if piece not in seen:
                    seen.add(piece)
                    setup.check(piece)
    assert len(seen) > 100_000


def _adversarial(v, rng):
    out = [b" " * k for k in (1, 2, 3, 7, 8, 9, 31, 64, 65, 127, 128, 1000, 4097)]
    out += [c * k for c in (b"a", b"0", b"\n", b"\t", "é".encode(), "日".encode(), "😀".encode(), b"=", b"-")
            for k in (1, 2, 3, 5, 17, 100, 333)]
    out += ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randrange(1, 200))).encode()
            for _ in range(300)]
    out += ["".join(rng.choice("日本語中文한국어ไทยहिन्दीالعربيةΕλληνικάРусский😀🎉𝔘") for _ in range(rng.randrange(1, 80)))
            .encode() for _ in range(300)]
    out += ["".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 50))).encode() for _ in range(100)]
    n_ord = v.n_ids
    for _ in range(2000):  # random tokens joined: the longest-match walk meets many dead ends
        parts = []
        for _ in range(rng.randrange(2, 8)):
            i = rng.randrange(n_ord)
            parts.append(v.bytes[v.offsets[i]:v.offsets[i + 1]].tobytes())
        s = b"".join(parts)
        try:
            s.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if s:
            out.append(s)
    return out


def test_adversarial_pieces(setup):
    rng = random.Random(20261205)
    for piece in _adversarial(setup.vocab, rng):
        setup.check(piece)
        setup.check(piece, memo=False)


@pytest.mark.parametrize("unit", [" ", "a", "ab", "日本", "😀", "0", "ab "])
def test_one_mb_runs_are_linear(setup, unit):
    big = (unit * (1 << 20)).encode()[:1 << 20]
    big = big[:len(big.decode("utf-8", "ignore").encode("utf-8"))]
    small = big[:len(big) // 4]
    small = small[:len(small.decode("utf-8", "ignore").encode("utf-8"))]
    setup.encode(small)  # compiled, scratch grown

    def best(p):
        t = []
        for _ in range(3):
            t0 = time.perf_counter()
            got = setup.encode(p)
            t.append(time.perf_counter() - t0)
        return got, min(t)

    got_small, t_small = best(small)
    got_big, t_big = best(big)
    assert got_big == setup.merge(big)
    assert got_small == setup.merge(small)
    # linear: 4x the bytes, about 4x the time (a quadratic walk would take 16x)
    assert t_big < 10 * max(t_small, 1e-3), (unit, t_small, t_big)


def test_build_is_quick(setup):
    setup.bt = B.backtrack_build(setup.vocab)[1]  # warm: the kernels are compiled
    t0 = time.perf_counter()
    B.backtrack_build(setup.vocab)
    assert time.perf_counter() - t0 < 10


def test_unsuitable_vocabularies():
    ranks = _read_ranks("cl100k_base")
    v = _vocab_of_ranks(ranks)
    no_byte = v._replace(byte_ids=np.where(np.arange(256) == 7, np.uint32(0xFFFFFFFF), v.byte_ids).astype(np.uint32))
    st, bt = B.backtrack_build(no_byte)
    assert st == 0 and bt.ready == 0
    # the same bytes twice: token 300 spelled as token 301
    toks = [v.bytes[v.offsets[i]:v.offsets[i + 1]].tobytes() for i in range(v.n_ids)]
    toks[300] = toks[301]
    lines = b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(toks))
    assert B.backtrack_build(_vocab_of_ranks(lines))[1].ready == 0
    assert B.backtrack_build(v)[1].ready == 1


def test_tables_of_the_ports_rank_file_vocabulary():
    """The Vocab the port's own rank-file constructor makes (st_encoding_new_tiktoken) gives the
    same tables as the one made here."""
    from supertok.core_numba import lookup
    from supertok.core_numba.base.common import Err
    from supertok.backends.numba_runtime import Cell, padded
    new, new_pt = lookup("st_encoding_new_tiktoken"), lookup("st_pretokenizer_new")
    ranks = _read_ranks("cl100k_base")
    specials = base64.b64encode(b"<|endoftext|>") + b" 100257\n"
    pt, out, err = Cell(None), Cell(None), Err()
    assert new_pt(2, 0, None, 0, None, pt, err) == 0
    assert new(padded(ranks), len(ranks), padded(specials), len(specials), pt.v, None, out, err) == 0, err.message
    theirs = B.backtrack_build(out.v.vocab)[1]
    ours = B.backtrack_build(_vocab_of_ranks(ranks, [(b"<|endoftext|>", 100257)]))[1]
    for f in B.Backtrack._fields:
        a, b = getattr(theirs, f), getattr(ours, f)
        assert (np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b), f


# ---- cut.py: st_encoding_cut against native's, on the corpora and generated text ----

def _cut_texts():
    rng = random.Random(7)
    atoms = list("aZéßжΩ中文のカกعह ") + [" ", "\n", "\r\n", "\t", "\u3000", "'s", "0", "😀", "<|endoftext|>"]
    texts = ["".join(rng.choice(atoms) for _ in range(600)).encode() for _ in range(4)]
    for f in _corpora()[:8]:
        with lzma.open(os.path.join(CORPORA, f), "rb") as fh:
            texts.append(fh.read(6000))
    return texts


@pytest.mark.parametrize("pattern", [1, 2, 3])
@pytest.mark.parametrize("flags", [0, 1])
def test_cut_matches_native(pattern, flags):
    from supertok.core_numba.encode import cut as C
    from supertok.core_numba.encode.encoding import Encoding, Lazy
    from supertok.core_numba.text.pretokenize import pretokenizer_init
    from supertok.core_numba.base.common import Err
    from supertok.backends.numba_runtime import Cell, padded
    ranks = _read_ranks("o200k_base")
    specials = base64.b64encode(b"<|endoftext|>") + b" 199999\n"
    nat = NATIVE.encoding_new(ranks, specials, pattern, flags, None)
    st, pt = pretokenizer_init(pattern, flags)
    assert st == 0
    enc = Encoding(0, _vocab_of_ranks(ranks, [(b"<|endoftext|>", 199999)]), None, None, pt, Lazy(0))
    rng = random.Random(pattern * 2 + flags)
    for t in _cut_texts():
        buf = padded(t)
        for frm in list(range(0, min(len(t), 200))) + rng.sample(range(len(t)), min(len(t), 200)) + [len(t), 1 << 63]:
            at, err = Cell(), Err()
            assert C.st_encoding_cut(enc, buf, len(t), frm, at, err) == 0
            assert at.v == NATIVE.cut(nat, t, frm), (frm, t[max(0, frm - 20):frm + 20])


# ---- unstable.py: the st_unstable_* exports against native's (needs the port's st_encode) ----

def test_unstable_matches_native():
    nb = backends.load("numba")
    ranks = _read_ranks("cl100k_base")
    specials = base64.b64encode(b"<|endoftext|>") + b" 100257\n"
    a = NATIVE.encoding_new(ranks, specials, 2)
    b = nb.encoding_new(ranks, specials, 2)
    texts = ["hello wor", "hello world  ", "日本語のテ", "x\n\t ", "a <|endoftext|> b", "a <|endoftext|>", "", " ",
             "multiple   spaces\n\n", "é", "caf", "Ελληνικ"]
    for t in texts:
        for allowed in ([], [b"<|endoftext|>"]):
            d = t.encode()
            try:
                want = NATIVE.encode_with_unstable(a, d, allowed)
            except Exception as exc:  # noqa: BLE001
                with pytest.raises(type(exc)):
                    nb.encode_with_unstable(b, d, allowed)
                continue
            assert nb.encode_with_unstable(b, d, allowed) == want, (t, allowed)


def test_pipeline_with_the_tables_built():
    """The port's encode (pipeline.py) with the tables built (st_encoding_prepare) gives native's
    ids on the corpora and on long runs."""
    from supertok.core_numba.encode.encoding import BT_READY
    nb = backends.load("numba")
    ranks = _read_ranks("o200k_base")
    a = NATIVE.encoding_new(ranks, b"", 3)
    b = nb.encoding_new(ranks, b"", 3)
    assert nb.prepare(b) and b.ptr.lazy.bt_state == BT_READY
    texts = [(u * 100_000).encode() for u in (" ", "日本", "😀", "ab", "\n\n")]
    for f in _corpora()[:10]:
        with lzma.open(os.path.join(CORPORA, f), "rb") as fh:
            d = fh.read(200_000)
        texts.append(d[:len(d.decode("utf-8", "ignore").encode("utf-8"))])
    for d in texts:
        assert nb.encode(b, d, []) == NATIVE.encode(a, d, []), d[:40]
