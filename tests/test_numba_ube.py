"""The Numba port's UTF-8 validation, UBE codec and id decoder (core_numba/text/utf8.py,
text/ube.py, encode/decoder.py) against the C core (native) and, where CPython has the answer,
against its codecs: real multilingual text (../shared/corpora; skipped with a message when
absent), invalid UTF-8, the bytes of lone surrogates, random symbol streams fed in random chunk
sizes, strict and replace, errors field by field (status, offset, token, message...), damaged
stream states, and 1 MB inputs (linear time).

The decoder runs over the tokens of real encodings (r50k, cl100k, o200k, the UBE test model)
built by the C core: their tokens are copied into a Vocab (formats/vocab.py) made here, which
holds all decoding reads (offsets, bytes, special_ids, alphabet), and, when the numba backend
can build the encoding itself, over that one too.

Until every module of the port exists the numba backend does not load whole (the host layer
looks up st_encode when it starts): these tests then drive the port through a runtime that
stubs the missing exports.
"""
import codecs
import glob
import lzma
import os
import random
import time

import pytest

import supertok
from conftest import CORPORA, ROOT

np = pytest.importorskip("numpy")
pytest.importorskip("numba")

from supertok import backends  # noqa: E402
from supertok.backends.c_api import CoreBackend  # noqa: E402
from supertok.backends.numba_runtime import NumbaRuntime  # noqa: E402

FINAL, STRICT = 1, 2  # ST_UBE_FINAL, ST_UBE_STRICT
CORPUS_BYTES = 200_000  # read of each corpus file


class _PartialRuntime(NumbaRuntime):
    """The numba runtime with the exports the port lacks stubbed (they raise when called)."""

    def fn(self, name):
        f = self._core.lookup(name)
        if f is None:
            def missing(*args, _name=name):
                raise NotImplementedError("the numba backend has no %s yet" % _name)
            return missing
        return f


@pytest.fixture(scope="module")
def nat():
    try:
        return backends.load("native")
    except backends.BackendUnavailable as exc:
        pytest.skip("no native backend to compare with: %s" % exc)


@pytest.fixture(scope="module")
def nb():
    try:
        return backends.load("numba")
    except NotImplementedError:
        return CoreBackend(_PartialRuntime())


def outcome(fn, *args):
    """fn's result, or the exception as (type, text, fields) for comparing errors field by field."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 (every field is compared)
        fields = {k: v for k, v in vars(exc).items() if not k.startswith("_")} if hasattr(exc, "__dict__") else {}
        return type(exc).__name__, str(exc), sorted(fields.items(), key=lambda kv: kv[0])


def corpus_texts():
    files = sorted(glob.glob(os.path.join(CORPORA, "*.txt.xz")))
    if not files:
        pytest.skip("corpus %s is absent (../shared/corpora, or set SUPERTOK_CORPORA): the corpus-based "
                    "tests need it; the vectors cover the spec without it" % "folder")
    out = []
    for path in files:
        with lzma.open(path, "rb") as fh:
            data = fh.read(CORPUS_BYTES)
        data = data[:len(data.decode("utf-8", "ignore").encode("utf-8"))]  # whole characters
        out.append((os.path.basename(path), data))
    return out


def cpython_validate(data):
    try:
        data.decode("utf-8")
        return None
    except UnicodeDecodeError as exc:
        return exc.start


def ube_reference(text):
    """The UBE symbols of text, from the definition (docs/design.md §6) through CPython's codecs."""
    out = []
    for ch in text:
        if ord(ch) < 0x800:
            out.extend(ch.encode("utf-8"))
        else:
            out.extend(256 + b for b in ch.encode("utf-16-le"))
    return out


def ube_decode_reference(symbols):
    """One-shot decode: each same-alphabet run as CPython's "replace" decoder."""
    out, run, alpha = [], [], None
    for s in list(symbols) + [None]:
        a = None if s is None else s >= 256
        if a != alpha and run:
            raw = bytes(x - 256 if alpha else x for x in run)
            out.append(raw.decode("utf-16-le" if alpha else "utf-8", "replace"))
            run = []
        alpha = a
        if s is not None:
            run.append(s)
    return "".join(out).encode("utf-8")


# ---- UTF-8 validation ----

def _bad_texts(seed, n):
    rng = random.Random(seed)
    pool = [b"a", b"\xc3\xa9", b"\xe4\xb8\xad", b"\xf0\x9f\x98\x80", b"\xed\x9f\xbf", b"\xee\x80\x80",
            b"\xf4\x8f\xbf\xbf"]
    junk = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xe0\x9f\xbf", b"\xed\xa0\x80",
            b"\xed\xbf\xbf", b"\xf0\x8f\xbf\xbf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xff", b"\xfe",
            b"\xc3", b"\xe4\xb8", b"\xf0\x9f\x98", "\ud800".encode("utf-8", "surrogatepass"),
            "\udfff".encode("utf-8", "surrogatepass"), "\udbff\udc00".encode("utf-8", "surrogatepass")]
    for _ in range(n):
        parts = [b"x" * rng.randrange(9)]
        for _ in range(rng.randrange(1, 24)):
            parts.append(rng.choice(junk) if rng.random() < 0.15 else rng.choice(pool))
        yield b"".join(parts)


def test_utf8_validate_invalid_and_surrogates(nat, nb):
    for data in _bad_texts(1, 4000):
        want = cpython_validate(data)
        assert nb.utf8_validate(data) == want == nat.utf8_validate(data), data
        # the whole report (status, offset, message "truncated sequence" or none), through the encoder
        assert outcome(nb.ube_encode_symbols, data) == outcome(nat.ube_encode_symbols, data), data


def test_utf8_validate_corpora(nat, nb):
    for name, data in corpus_texts():
        assert nb.utf8_validate(data) is None, name
        # a stray byte at several places, each in a different block position
        for at in (0, 1, 7, len(data) // 3, len(data) // 2 + 5, len(data) - 1):
            for junk in (b"\x80", b"\xed\xa0\x80", b"\xf8", b"\xe0\x80"):
                bad = data[:at] + junk + data[at:]
                assert nb.utf8_validate(bad) == nat.utf8_validate(bad) == cpython_validate(bad), (name, at, junk)


# ---- UBE encoding and decoding ----

def test_ube_encode_corpora(nat, nb):
    for name, data in corpus_texts():
        syms = nb.ube_encode_symbols(data)
        assert syms == nat.ube_encode_symbols(data), name
        assert syms == ube_reference(data.decode("utf-8")), name
        assert outcome(nb.ube_stream_feed, nb.ube_stream_new(), syms, FINAL) == data, name


def _feed_all(be, symbols, chunks, flags):
    st = be.ube_stream_new()
    out, i = [], 0
    for c in chunks:
        out.append(outcome(be.ube_stream_feed, st, symbols[i:i + c], flags))
        i += c
    out.append(outcome(be.ube_stream_feed, st, [], flags | FINAL))
    return out


def test_ube_stream_random_symbols(nat, nb):
    rng = random.Random(5)
    for _ in range(2500):
        pool = [rng.randrange(512) for _ in range(6)] + [0x41, 0xC3, 0xA9, 0xE4, 0xB8, 0xAD, 0xED, 0xA0, 0xF0, 0x9F]
        pool += [0x80, 0xF4, 256, 256 + 0xD8, 256 + 0xDC, 256 + 0xDB, 256 + 0x41]
        syms = [rng.choice(pool) for _ in range(rng.randrange(48))]
        if rng.random() < 0.03:
            syms.insert(rng.randrange(len(syms) + 1), rng.choice((512, 600, 0xFFFF)))
        chunks, k = [], 0
        while k < len(syms):
            c = rng.randrange(1, 7)
            chunks.append(c)
            k += c
        for flags in (0, STRICT):
            got = _feed_all(nb, syms, chunks, flags)
            assert got == _feed_all(nat, syms, chunks, flags), (syms, chunks, flags)
            if flags == 0 and all(s < 512 for s in syms):
                assert b"".join(got) == ube_decode_reference(syms), syms


def test_ube_stream_damaged_state(nat, nb):
    """A state no feed can leave: ST_ERR_INVALID_ARGUMENT naming the field, as C."""
    base = bytes(8) + (3).to_bytes(8, "little") + (5).to_bytes(8, "little")
    states = [bytes([2, 0]) + base[2:], bytes([0, 4]) + base[2:], bytes([0, 2, 0xE4, 0xB8, 0, 0]) + base[6:],
              bytes([0, 1, 0xE4, 0, 0, 0]) + base[6:], bytes([0, 2, 0xE0, 0x80, 0, 0]) + bytes(2) + (3).to_bytes(
                  8, "little") + (5).to_bytes(8, "little"), bytes([1, 2, 0x41, 0x00, 0, 0]) + bytes(2) +
              (3).to_bytes(8, "little") + (5).to_bytes(8, "little"), bytes([1, 2, 0x00, 0xD8, 0, 0]) + bytes(2) +
              (3).to_bytes(8, "little") + (5).to_bytes(8, "little"), bytes([0, 1, 0x80, 0, 0, 0]) + bytes(2) +
              (4).to_bytes(8, "little") + (5).to_bytes(8, "little")]
    for raw in states:
        outs = []
        for be in (nat, nb):
            st = be.ube_stream_new()
            be._rt.write(st.ptr, raw)
            outs.append([outcome(be.ube_stream_feed, st, [0x41, 0x80], 0), outcome(be.ube_stream_feed, st, [], FINAL)])
        assert outs[0] == outs[1], raw


# ---- the id decoder ----

class _Handle:
    def __init__(self, ptr):
        self.ptr = ptr


def mirror(nat, handle):
    """A numba encoding holding the tokens of a native one (all a decoder reads)."""
    from supertok.core_numba.encode.encoding import Encoding, Lazy
    from supertok.core_numba.formats.vocab import Vocab
    n = nat.n_vocab(handle)
    offsets = np.zeros(n + 1, np.uint32)
    parts, at = [], 0
    for i in range(n):
        try:
            b = nat.token_bytes(handle, i)
        except KeyError:
            b = b""
        parts.append(b)
        at += len(b)
        offsets[i + 1] = at
    data = b"".join(parts)
    vb = np.zeros(len(data) + 16, np.uint8)
    vb[:len(data)] = np.frombuffer(data, np.uint8)
    special = np.array(sorted(nat.special_ids(handle)), np.uint32)
    vocab = Vocab(n, n - len(special), len(special), 0, len(data), offsets, vb, np.zeros(1, np.uint64), special, 0,
                  np.zeros(0, np.uint32), np.full(256, 0xFFFFFFFF, np.uint32), np.zeros(0, np.uint32),
                  nat.alphabet(handle))
    return _Handle(Encoding(0, vocab, None, None, None, Lazy(0)))


_ENCODINGS = ("r50k_base", "cl100k_base", "o200k_base", "ube_small")


@pytest.fixture(scope="module")
def encodings(nat, nb):
    """name -> (native handle, [numba handles]): the mirror, and numba's own where it builds one."""
    prev = supertok._set_backend(nat)
    out = {}
    try:
        for name in _ENCODINGS:
            if name == "ube_small":
                enc = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.stmodel"))
            else:
                enc = supertok.get_encoding(name)
            out[name] = (enc, [mirror(nat, enc._handle)])
    finally:
        supertok._set_backend(prev)
    try:
        prev = supertok._set_backend(nb)
        for name in _ENCODINGS:
            if name == "ube_small":
                enc = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.stmodel"))
            else:
                enc = supertok.get_encoding(name)
            out[name][1].append(enc._handle)
    except NotImplementedError:
        pass  # the vocabulary module of the port is not there yet: the mirrors only
    finally:
        supertok._set_backend(prev)
    return {k: (v[0]._handle, v[1]) for k, v in out.items()}


def _pool(nat, h, rng):
    nv = nat.n_vocab(h)
    more = [rng.randrange(600, nv) for _ in range(50)] if nv > 600 else []
    return list(range(min(nv, 600))) + nat.special_ids(h) + more + [nv + 5]


@pytest.mark.parametrize("name", _ENCODINGS)
def test_decoder_random_splits(nat, nb, encodings, name):
    hn, hbs = encodings[name]
    rng = random.Random(11)
    pool = _pool(nat, hn, rng)
    for hb in hbs:
        for _ in range(700):
            ids = [rng.choice(pool) for _ in range(rng.randrange(14))]
            if nat.alphabet(hn) == 0:
                assert outcome(nb.decode_with_offsets, hb, ids) == outcome(nat.decode_with_offsets, hn, ids), ids
            for strict in (False, True):
                dn, db = nat.decoder_new(hn, strict), nb.decoder_new(hb, strict)
                k = 0
                while k <= len(ids):
                    c = rng.randrange(0, 4)
                    final = rng.random() < 0.2
                    a = outcome(nat.decoder_feed, dn, ids[k:k + c], final)
                    assert outcome(nb.decoder_feed, db, ids[k:k + c], final) == a, (strict, ids, k, c)
                    if isinstance(a, bytes) or rng.random() < 0.5:
                        k += max(c, 1)
                    if rng.random() < 0.03:
                        nat.decoder_reset(dn)
                        nb.decoder_reset(db)


def _token_bytes(hb, i):
    v = hb.ptr.vocab
    return bytes(v.bytes[v.offsets[i]:v.offsets[i + 1]])


def test_decoder_byte_level_as_cpython(nb, encodings):
    """Call by call, what CPython's incremental UTF-8 decoder returns (truncated surrogates held)."""
    hb = encodings["r50k_base"][1][0]  # the mirror: its vocabulary is readable here
    want_bytes = (0xED, 0xA0, 0xBF, 0x80, 0x9F, 0xE0, 0xF0, 0xF4, 0x8F, 0x90, 0xC2, 0xC0, 0xFF, 0x61)
    by_byte = {}
    for i in range(hb.ptr.vocab.n_ids):
        b = _token_bytes(hb, i)
        if len(b) == 1 and b[0] in want_bytes:
            by_byte.setdefault(b[0], i)
    pool = sorted(by_byte.values())
    rng = random.Random(4)
    for strict in (False, True):
        for _ in range(400):
            ids = [rng.choice(pool) for _ in range(rng.randrange(1, 14))]
            data = [_token_bytes(hb, i) for i in ids]
            dec = codecs.getincrementaldecoder("utf-8")("strict" if strict else "replace")
            d = nb.decoder_new(hb, strict)
            k = 0
            while k < len(ids):
                c = rng.randrange(1, 4)
                try:
                    want = dec.decode(b"".join(data[k:k + c])).encode("utf-8")
                except UnicodeDecodeError:
                    with pytest.raises(ValueError):
                        nb.decoder_feed(d, ids[k:k + c])
                    break
                assert nb.decoder_feed(d, ids[k:k + c]) == want, (ids, k)
                k += c
            else:
                try:
                    want = dec.decode(b"", True).encode("utf-8")
                except UnicodeDecodeError:
                    with pytest.raises(ValueError):
                        nb.decoder_feed(d, [], True)
                    continue
                assert nb.decoder_feed(d, [], True) == want


def test_decode_corpora(nat, nb, encodings):
    texts = corpus_texts()
    prev = supertok._set_backend(nat)
    try:
        for name in ("cl100k_base", "o200k_base"):
            enc = supertok.get_encoding(name)
            hn, hbs = encodings[name]
            for fname, data in texts:
                text = data[:40_000].decode("utf-8", "ignore")  # whole characters
                data = text.encode("utf-8")
                ids = enc.encode_ordinary(text)
                for hb in hbs:
                    want = outcome(nat.decode_with_offsets, hn, ids)
                    assert outcome(nb.decode_with_offsets, hb, ids) == want, (name, fname)
                    d = nb.decoder_new(hb, True)
                    got = [nb.decoder_feed(d, ids[k:k + 7]) for k in range(0, len(ids), 7)]
                    got.append(nb.decoder_feed(d, [], True))
                    assert b"".join(got) == data, (name, fname)
    finally:
        supertok._set_backend(prev)


def test_decode_corpora_ube_model(nat, nb, encodings):
    """A UBE model's ids of real text, fed in random splits: native's text, call by call."""
    texts = corpus_texts()
    prev = supertok._set_backend(nat)
    try:
        enc = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.stmodel"))
        rng = random.Random(2)
        hn, hbs = encodings["ube_small"]
        for fname, data in texts:
            text = data[:4_000].decode("utf-8", "ignore")
            ids = enc.encode_ordinary(text) + [rng.choice(nat.special_ids(hn))] + enc.encode_ordinary(text[:500])
            for hb in hbs:
                for strict in (False, True):
                    dn, db = nat.decoder_new(hn, strict), nb.decoder_new(hb, strict)
                    k = 0
                    while k < len(ids):
                        c = rng.randrange(1, 9)
                        assert nb.decoder_feed(db, ids[k:k + c]) == nat.decoder_feed(dn, ids[k:k + c]), (fname, k)
                        k += c
                    assert nb.decoder_feed(db, [], True) == nat.decoder_feed(dn, [], True)
    finally:
        supertok._set_backend(prev)


# ---- linear time on 1 MB inputs ----

def _timed(fn, *args):
    best = None
    for _ in range(3):
        t = time.perf_counter()
        fn(*args)
        dt = time.perf_counter() - t
        best = dt if best is None else min(best, dt)
    return best


def test_one_megabyte_linear(nat, nb, encodings):
    unit = "Grüße, мир, 世界, नमस्ते, 😀 and ASCII text. ".encode("utf-8")
    mb = (unit * (1_000_000 // len(unit) + 1))[:1_000_000]
    mb = mb[:len(mb.decode("utf-8", "ignore").encode("utf-8"))]
    two = mb + mb
    nb.utf8_validate(b"warm")
    assert nb.utf8_validate(mb) is None and nb.utf8_validate(two) is None
    assert _timed(nb.utf8_validate, two) < 3 * _timed(nb.utf8_validate, mb) + 0.01
    assert nb.utf8_validate(mb + b"\xed\xa0\x80") == len(mb)
    syms = nb.ube_encode_symbols(mb)
    assert syms == nat.ube_encode_symbols(mb)
    st = nb.ube_stream_new()
    assert nb.ube_stream_feed(st, syms, FINAL) == mb
    t1 = _timed(nb.ube_encode_symbols, mb)
    t2 = _timed(nb.ube_encode_symbols, two)
    assert t2 < 3 * t1 + 0.05
    hn, hbs = encodings["o200k_base"]
    prev = supertok._set_backend(nat)
    try:
        ids = supertok.get_encoding("o200k_base").encode_ordinary(mb.decode("utf-8"))
    finally:
        supertok._set_backend(prev)
    for hb in hbs:
        d = nb.decoder_new(hb, True)
        assert nb.decoder_feed(d, ids, True) == mb
        text, offs = nb.decode_with_offsets(hb, ids)
        assert (text, offs) == nat.decode_with_offsets(hn, ids)
        f1 = _timed(nb.decoder_feed, d, ids, True)
        f2 = _timed(nb.decoder_feed, d, ids + ids, True)
        assert f2 < 3 * f1 + 0.05


# ---- the exports' whole st_error (the host layer keeps only some fields of a few errors) ----

def raw(be, name, make_args):
    """(status, the st_error tuple, the Cell/out values read by read(f)) of one export call:
    make_args(f) -> (args, read) with read(f) reading the outputs after the call."""
    with be._rt.frame() as f:
        args, read = make_args(f)
        st = be._fn(name)(*args)
        err = f.error()
        return st, tuple(err[:8]) + (bytes(err[8]).split(b"\0", 1)[0],), read(f)


def test_raw_errors_utf8_and_ube(nat, nb):
    rng = random.Random(9)
    for data in _bad_texts(2, 600):
        def validate(f, data=data):
            return (f.bytes(data), len(data), f.err), lambda f: None
        assert raw(nb, "st_utf8_validate", validate) == raw(nat, "st_utf8_validate", validate), data
    for _ in range(1500):
        syms = [rng.choice((0x41, 0xC3, 0xA9, 0xE4, 0xB8, 0xED, 0xA0, 0x80, 0xF0, 0x9F, 256, 256 + 0xD8,
                            256 + 0xDC, 256 + 0x4E, rng.randrange(520))) for _ in range(rng.randrange(12))]
        cap = rng.choice((0, 1, 3, 3 * len(syms) + 3))
        flags = rng.choice((0, STRICT))

        def decode(f, syms=syms, cap=cap, flags=flags):
            out = f.out("uint8_t", cap)
            return ((f.array("uint16_t", syms), len(syms), flags, out, cap, f.n, f.err),
                    lambda f: (f.get(f.n), f.read_bytes(out, min(cap, f.get(f.n)))))
        assert raw(nb, "st_ube_decode_symbols", decode) == raw(nat, "st_ube_decode_symbols", decode), (syms, cap)


@pytest.mark.parametrize("name", ("o200k_base", "ube_small"))
def test_raw_errors_decoder(nat, nb, encodings, name):
    hn, hbs = encodings[name]
    rng = random.Random(21)
    pool = _pool(nat, hn, rng)
    for hb in hbs:
        for _ in range(400):
            ids = [rng.choice(pool) for _ in range(rng.randrange(8))]
            cap = rng.choice((0, 2, 5, 64))
            flags = rng.choice((0, FINAL))
            strict = rng.random() < 0.5
            dn, db = nat.decoder_new(hn, strict), nb.decoder_new(hb, strict)
            for be, d, h in ((nat, dn, hn), (nb, db, hb)):
                be.decoder_feed(d, [pool[0]])  # a stream that has begun

            def feed(f, ids=ids, cap=cap, flags=flags, d=None):
                out = f.out("uint8_t", cap)
                return ((d.ptr, f.array("uint32_t", ids), len(ids), flags, out, cap, f.n, f.err),
                        lambda f: (f.get(f.n), f.read_bytes(out, min(cap, f.get(f.n)))))
            a = raw(nat, "st_decoder_feed", lambda f: feed(f, d=dn))
            assert raw(nb, "st_decoder_feed", lambda f: feed(f, d=db)) == a, (ids, cap, flags, strict)
            if nat.alphabet(hn) == 0 or rng.random() < 0.1:
                for unit in (2, 3, 1):  # ST_UNIT_CODEPOINT, ST_UNIT_UTF16, and a wrong one
                    def offsets(f, be, h, ids=ids, cap=cap, unit=unit):
                        out = f.out("uint8_t", cap)
                        offs = f.out("size_t", len(ids))
                        return ((h.ptr, f.array("uint32_t", ids), len(ids), unit, out if cap else be._null, cap, f.n,
                                 offs, f.err),
                                lambda f: (f.get(f.n), f.read_bytes(out, min(cap, f.get(f.n))),
                                           f.read("size_t", offs, len(ids))))
                    a = raw(nat, "st_decode_with_offsets", lambda f: offsets(f, nat, hn))
                    b = raw(nb, "st_decode_with_offsets", lambda f: offsets(f, nb, hb))
                    if a[0] not in (0, 4):  # offsets are written on ST_OK and ST_ERR_BUFFER_TOO_SMALL only
                        a, b = a[:2], b[:2]
                    assert b == a, (ids, cap, unit)
