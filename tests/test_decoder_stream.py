"""The core's streaming id decoder (st_decoder_*) against CPython's incremental UTF-8 decoder.

Encoding.incremental_decoder() of a byte-level encoding must return, call by call, what
codecs.getincrementaldecoder("utf-8") returns for the same calls' bytes (CPython's chunking
included: a truncated surrogate, ED A0-BF, at the end of a call is held back), in "replace" mode
and, up to the first error, in "strict" mode; any split gives decode()'s text. Streams of the
single-byte tokens that make malformed text (lone leads, continuation bytes, ED/E0/F0/F4 and
their edge continuation bytes) with random splits. Also decode_with_offsets against tiktoken's
formula, in code points, and its errors.
"""
import codecs
import os
import random

import pytest

import supertok
from conftest import ROOT


def encoding_on(backend, name):
    if backend == "pywasm":
        pytest.skip("pywasm: too slow for these loops (the other backends run the same core)")
    return supertok.get_encoding(name)

BYTES = [0xED, 0xA0, 0xBF, 0x9F, 0x80, 0x8F, 0x90, 0xE0, 0xE5, 0xBE, 0xB7, 0xF0, 0xF4, 0xF5, 0xC2, 0xC0, 0xFF,
         0x61, 0x20]


def _byte_ids(enc):
    ids = {}
    for i in range(enc.n_vocab):
        if len(ids) == len(BYTES):
            break
        try:
            b = enc.decode_single_token_bytes(i)
        except (KeyError, ValueError):
            continue
        if len(b) == 1 and b[0] in BYTES:
            ids.setdefault(b[0], i)
    return list(ids.values())


@pytest.mark.parametrize("name", ["o200k_base", "r50k_base"])
def test_incremental_decoder_chunks_as_cpython(backend, name):
    enc = encoding_on(backend, name)
    pool = _byte_ids(enc) + enc.encode_ordinary("é 德 😀 x") + [enc.eot_token]
    rng = random.Random(8)
    for errors in ("replace", "strict"):
        for _ in range(400):
            ids = [rng.choice(pool) for _ in range(rng.randint(0, 12))]
            cuts = sorted(rng.randint(0, len(ids)) for _ in range(rng.randint(0, 6)))
            bounds = [0] + cuts + [len(ids)]
            calls = [ids[a:b] for a, b in zip(bounds, bounds[1:])]
            oracle = codecs.getincrementaldecoder("utf-8")(errors=errors)
            dec = enc.incremental_decoder(errors)
            for call in calls:
                try:
                    want = oracle.decode(enc.decode_bytes(call))
                except UnicodeDecodeError:
                    with pytest.raises(UnicodeDecodeError):
                        dec.add(call)
                    break
                assert dec.add(call) == want, (name, errors, calls, call)
            else:
                try:
                    want = oracle.decode(b"", final=True)
                except UnicodeDecodeError:
                    with pytest.raises(UnicodeDecodeError):
                        dec.flush()
                    continue
                assert dec.flush() == want, (name, errors, calls)
                if errors == "replace":
                    assert enc.decode(ids) == enc.decode_bytes(ids).decode("utf-8", "replace")


def _tiktoken_offsets(enc, ids):
    token_bytes = [enc.decode_single_token_bytes(t) for t in ids]
    text_len, offsets = 0, []
    for tb in token_bytes:
        offsets.append(max(0, text_len - (0x80 <= tb[0] < 0xC0)))
        text_len += sum(1 for c in tb if not 0x80 <= c < 0xC0)
    return b"".join(token_bytes).decode("utf-8", errors="strict"), offsets


def test_decode_with_offsets(backend):
    enc = encoding_on(backend, "o200k_base")
    pool = _byte_ids(enc) + enc.encode_ordinary("é 德国 😀👍🏽 x") + [enc.eot_token]
    rng = random.Random(9)
    for _ in range(500):
        ids = [rng.choice(pool) for _ in range(rng.randint(0, 10))]
        try:
            want = ("ok", _tiktoken_offsets(enc, ids))
        except UnicodeDecodeError:
            want = ("UnicodeDecodeError",)
        try:
            got = ("ok", enc.decode_with_offsets(ids))
        except UnicodeDecodeError:
            got = ("UnicodeDecodeError",)
        assert got == want, ids
    with pytest.raises(KeyError):
        enc.decode_with_offsets([15, 200100, 2 ** 32])  # a hole comes before the overflow, as in tiktoken
    with pytest.raises(OverflowError):
        enc.decode_with_offsets([15, 2 ** 32, 200100])


def test_other_error_handlers_byte_level_and_ube(backend):
    """A byte-level encoding's decoder takes CPython's other handlers, decoding with its codec call
    by call; a UBE model's refuses them (its decoder is the core's, "replace" or "strict" only)."""
    enc = supertok.get_encoding("o200k_base")
    byte = {b: enc.encode_single_token(bytes([b])) for b in (0xE5, 0xBE, 0xB7, 0x78)}
    # 德 (E5 BE B7) cut across calls, a lead byte cut off by "x", and a character left incomplete
    calls = [[byte[0xE5]], [byte[0xBE]], [byte[0xB7], byte[0xE5], byte[0x78]], enc.encode_ordinary("é 😀"),
             [byte[0xE5], byte[0xBE]]]
    for errors in ("ignore", "backslashreplace"):
        oracle = codecs.getincrementaldecoder("utf-8")(errors=errors)
        dec = enc.incremental_decoder(errors)
        got = [dec.add(c) for c in calls] + [dec.flush()]
        want = [oracle.decode(enc.decode_bytes(c)) for c in calls] + [oracle.decode(b"", final=True)]
        assert got == want, (errors, got, want)
    assert "".join(got) == "德\\xe5xé 😀\\xe5\\xbe"
    model = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.json"))
    with pytest.raises(ValueError, match="UBE model"):
        model.incremental_decoder("ignore")
    ids = model.encode("naïve café 德国")
    dec = model.incremental_decoder("replace")
    assert "".join(dec.add(i) for i in ids) + dec.flush() == model.decode(ids) == "naïve café 德国"


def test_incremental_decoder_ube(backend):
    """A UBE model streams through the core's decoder: any split of the ids gives decode's text,
    specials included; handlers other than replace and strict are refused (UBE text is no UTF-8
    byte stream a codec could decode)."""
    import os
    from conftest import ROOT
    enc = supertok.load_model(os.path.join(ROOT, "vectors", "models", "ube_small.stmodel"))
    assert enc.alphabet == "ube"
    text = "Привет, 世界! naïve 🙂 ok"
    ids = enc.encode(text)
    special = sorted(enc._special_token_values)[:1]
    ids = ids[:5] + special + ids[5:]
    whole = enc.decode(ids)
    assert whole.startswith("Привет") and whole.endswith("🙂 ok")
    for step in (1, 2, 3, len(ids)):
        for errors in ("replace", "strict"):
            d = enc.incremental_decoder(errors)
            out = "".join(d.add(ids[i:i + step]) for i in range(0, len(ids), step)) + d.flush()
            assert out == whole, (step, errors)
    for errors in ("ignore", "surrogateescape"):
        with pytest.raises(ValueError, match="UBE model decodes with errors='replace' or 'strict'"):
            enc.incremental_decoder(errors)
