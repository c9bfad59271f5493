"""The numba backend against the native one on generated text: hypothesis draws text (any code
points, invalid UTF-8, the bytes of lone surrogates, special tokens' text, runs of one character)
and every call of the encoding protocol must give the same result on both, or the same error
fields. A differential fuzz harness of the port, seeded (derandomized), so a run is repeatable."""
import os

import pytest

pytest.importorskip("numba", reason="numba is not installed (pip install 'supertok[numba]')")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import ROOT, get_backend  # noqa: E402
from supertok import SupertokError  # noqa: E402

NAT, NB = get_backend("native"), get_backend("numba")
PATTERNS = {1: "gpt2", 2: "cl100k", 3: "o200k", 4: "superbpe", 5: "llama3", 6: "qwen2", 7: "deepseek_v3"}
SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"]
FUZZ = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))

# pieces that stress the scanners and the merges: case changes, contractions, digits, spaces,
# newlines, CJK, combining marks, emoji, surrogates' UTF-8, invalid bytes, specials' text
ATOMS = ["a", "A", "'s", "'LL", "123", "4567", " ", "  ", "\n", "\r\n", "\t", "你好", "日本語", "カタカナ",
         "Привет", "ﻼ", "é", "e\u0301", "\U0001F600", "\u200d", "ß", "İ", "!!", "...", "<|", "|>"] + SPECIALS
RAW = [b"\xff", b"\xc3", b"\xe4\xb8", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80"]

texts = st.lists(st.sampled_from(ATOMS) | st.text(max_size=6), max_size=40).map("".join)
raw_texts = st.lists(st.sampled_from([a.encode() for a in ATOMS] + RAW) | st.binary(max_size=4),
                     max_size=30).map(b"".join)
runs = st.tuples(st.sampled_from(ATOMS), st.integers(1, 3000)).map(lambda t: t[0] * t[1])

_handles = {}


def handles(name):
    """(native handle, numba handle) of an encoding or a model file."""
    if name not in _handles:
        if name.endswith(".stmodel"):
            with open(os.path.join(ROOT, "vectors", "models", name), "rb") as f:
                data = f.read()
            _handles[name] = (NAT.encoding_new_model(data)[0], NB.encoding_new_model(data)[0])
        else:
            import supertok.encoding as E
            from supertok import _set_backend
            pair = []
            for b in (NAT, NB):
                prev = _set_backend(b)
                try:
                    pair.append(E._load(name)._handle)
                finally:
                    _set_backend(prev)
            _handles[name] = tuple(pair)
    return _handles[name]


def outcome(fn, *args):
    """fn's result, or the error's class and fields."""
    try:
        return ("ok", fn(*args))
    except SupertokError as exc:
        return ("error", type(exc).__name__, exc.name, exc.offset, getattr(exc, "kind", None), str(exc))
    except (ValueError, KeyError, OverflowError, TypeError) as exc:
        return ("error", type(exc).__name__, str(exc))


def same(call, name, *args):
    a, b = handles(name)
    got_nat = outcome(getattr(NAT, call), a, *args)
    got_nb = outcome(getattr(NB, call), b, *args)
    assert got_nb == got_nat, (call, name, args[:1])


ENCODINGS = ["o200k_base", "cl100k_base", "r50k_base", "bytes_small.stmodel", "ube_small.stmodel",
             "super_bytes_small.stmodel", "super_ube_small.stmodel"]


@pytest.mark.parametrize("name", ENCODINGS)
@FUZZ
@given(text=texts, allowed=st.sets(st.sampled_from(SPECIALS)), flags=st.sampled_from([0, 1, 2]))
def test_encode_text(name, text, allowed, flags):
    data = text.encode("utf-8", "surrogatepass")
    same("encode", name, data, sorted(s.encode() for s in allowed), False, (), flags)
    same("encode", name, data, [], True)
    same("encode_count", name, data, [])


@pytest.mark.parametrize("name", ENCODINGS)
@FUZZ
@given(data=raw_texts)
def test_encode_bytes(name, data):
    same("encode", name, data, [], True)
    same("encode_piece", name, data)
    same("token_id", name, data)


@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "ube_small.stmodel", "super_bytes_small.stmodel"])
@FUZZ
@given(text=runs)
def test_runs(name, text):
    same("encode", name, text.encode("utf-8"), [], True)


@pytest.mark.parametrize("name", ["o200k_base", "ube_small.stmodel", "super_ube_small.stmodel"])
@FUZZ
@given(ids=st.lists(st.integers(0, 210_000) | st.sampled_from([0, 1, 255, 256, 511, 512, 199_999]), max_size=40))
def test_decode(name, ids):
    same("decode_with_offsets", name, ids)
    a, b = handles(name)
    for strict in (False, True):
        da, db = NAT.decoder_new(a, strict), NB.decoder_new(b, strict)
        half = len(ids) // 2
        for part, final in ((ids[:half], False), (ids[half:], True)):
            assert outcome(NB.decoder_feed, db, part, final) == outcome(NAT.decoder_feed, da, part, final)


@FUZZ
@given(data=raw_texts | texts.map(lambda t: t.encode("utf-8", "surrogatepass")),
       pattern=st.sampled_from(sorted(PATTERNS)), script_aware=st.booleans())
def test_pretokenize(data, pattern, script_aware):
    pa, pb = NAT.pretokenizer(pattern, int(script_aware), None), NB.pretokenizer(pattern, int(script_aware), None)
    for codepoints in (False, True):
        assert outcome(NB.pretokenize_ends, pb, data, codepoints) == outcome(NAT.pretokenize_ends, pa, data, codepoints)
    assert outcome(NB.utf8_validate, data) == outcome(NAT.utf8_validate, data)
    assert outcome(NB.ube_encode_symbols, data) == outcome(NAT.ube_encode_symbols, data)


@FUZZ
@given(text=texts, at=st.integers(0, 400))
def test_cut(text, at):
    data = text.encode("utf-8", "surrogatepass")
    same("cut", "o200k_base", data, min(at, len(data)))
