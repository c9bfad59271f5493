"""The Encoding API beyond the vectors: loading, images, model names, errors, batch, streaming."""
import hashlib
import lzma
import os
import random
import subprocess
import sys

import pytest

import supertok
from supertok import encoding as E

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def o200k(backend):
    return supertok.get_encoding("o200k_base")


def test_properties(backend):
    for name in E.list_encoding_names():
        enc = supertok.get_encoding(name)
        assert enc.name == name and enc.max_token_value == enc.n_vocab - 1
        assert enc.eot_token == enc._special_tokens["<|endoftext|>"]
        assert enc.special_tokens_set == set(enc._special_tokens)
        assert repr(enc) == "<Encoding %r>" % name


def test_encoding_for_model():
    assert supertok.encoding_for_model("gpt-4o").name == "o200k_base"
    assert supertok.encoding_for_model("gpt-4-0613").name == "cl100k_base"
    assert supertok.encoding_for_model("text-davinci-003").name == "p50k_base"
    with pytest.raises(KeyError, match="Could not automatically map"):
        supertok.encoding_for_model("no-such-model")
    # tiktoken 0.14's gpt-oss models use o200k_harmony, which supertok ships
    assert supertok.encoding_for_model("gpt-oss-120b").name == "o200k_harmony"
    assert supertok.encoding_for_model("gpt2").name == "gpt2"
    with pytest.raises(ValueError, match="Unknown encoding"):
        supertok.get_encoding("o300k_base")


def test_disallowed_special_raises_like_tiktoken(o200k):
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        o200k.encode("hi <|endoftext|>")
    # allowed, or the check disabled: no error, and different ids
    a = o200k.encode("hi <|endoftext|>", allowed_special="all")
    b = o200k.encode("hi <|endoftext|>", disallowed_special=())
    assert o200k.eot_token in a and o200k.eot_token not in b
    assert o200k.decode(a) == o200k.decode(b) == "hi <|endoftext|>"


def test_disallowed_special_fields(backend):
    """The error says where and which, as fields read from the core's report (kind, token, offset,
    length), not from its message: the string found, for an id with several strings too."""
    harmony = supertok.get_encoding("o200k_harmony")
    text = "é\n<|reserved_200018|> <|endofprompt|>"
    with pytest.raises(ValueError) as info:
        harmony.encode(text)
    assert (info.value.special, info.value.token, info.value.offset) == ("<|reserved_200018|>", 200018, 2)
    with pytest.raises(ValueError) as info:
        harmony.count(text, allowed_special={"<|reserved_200018|>"})
    assert (info.value.special, info.value.token, info.value.offset) == ("<|endofprompt|>", 200018, 22)
    # a surrogate pair counts as two characters of the text given, as in encode_with_offsets
    with pytest.raises(ValueError) as info:
        harmony.encode("\ud83d\ude00 <|endoftext|>")
    assert (info.value.special, info.value.token, info.value.offset) == ("<|endoftext|>", 199999, 3)
    # a batch: the offset is into the text holding it
    for threads in (1, 2):
        with pytest.raises(ValueError) as info:
            harmony.encode_batch(["é ok", "fine", "x <|endoftext|>", "y"], num_threads=threads)
        assert (info.value.special, info.value.token, info.value.offset) == ("<|endoftext|>", 199999, 2)
    # a disallowed string that is no special token: found in the text, with no id
    with pytest.raises(ValueError) as info:
        harmony.encode("ab <|x|>", disallowed_special={"<|x|>"})
    assert (info.value.special, info.value.token, info.value.offset) == ("<|x|>", None, 3)
    # the core's own report, as the backend raises it
    data = text.encode()
    with pytest.raises(supertok.SupertokError) as info:
        harmony._backend.encode(harmony._handle, data, [], special_flags=E._DISALLOW_REST)
    exc = info.value
    assert (exc.name, exc.kind, exc.token, exc.offset, exc.length) == (
        "ST_ERR_DISALLOWED_SPECIAL", "ST_KIND_DISALLOWED_SPECIAL", 200018, 3, 19)
    assert data[exc.offset:exc.offset + exc.length] == b"<|reserved_200018|>"


def test_invalid_ids(o200k):
    with pytest.raises(KeyError, match="Invalid token for decoding: 199998"):
        o200k.decode([1, 199998])
    with pytest.raises(KeyError) as info:
        o200k.decode([1, 2, 199998, 3])
    assert (info.value.index, info.value.token) == (2, 199998)
    with pytest.raises(KeyError):
        o200k.decode_single_token_bytes(10 ** 9)
    with pytest.raises(OverflowError):
        o200k.decode([-1])
    with pytest.raises(OverflowError):
        o200k.decode_single_token_bytes(2 ** 32)


def test_count_and_batch(o200k, backend):
    # one long piece; shorter on pywasm, where merging 1,000 x's takes seconds a call
    texts = ["hello world", "德国HYDAC电磁球阀", "", "x" * (100 if backend == "pywasm" else 1000), "I'm here!!\n\n"]
    want = [o200k.encode(t) for t in texts]
    assert [o200k.count(t) for t in texts] == [len(w) for w in want]
    assert o200k.encode_batch(texts, num_threads=2) == want
    assert o200k.encode_ordinary_batch(texts) == want
    assert o200k.decode_batch(want) == texts


def test_incremental_decoder_any_split(o200k):
    text = "héllo wörld 德国电磁球阀 😀👍🏽 end"
    ids = o200k.encode(text)
    pieces = [b for t in ids for b in [t]]
    rng = random.Random(5)
    for _ in range(20):
        dec = o200k.incremental_decoder()
        out, k = [], 0
        while k < len(pieces):
            step = rng.randint(1, 3)
            out.append(dec.add(pieces[k:k + step]))
            k += step
        out.append(dec.flush())
        assert "".join(out) == text


def test_incremental_decoder_emits_as_soon_as_complete(o200k):
    # a character cut across tokens appears with the token that completes it, not at flush
    ids = o200k.encode_ordinary("德")
    raw = [o200k.decode_single_token_bytes(t) for t in ids]
    dec = o200k.incremental_decoder()
    got = [dec.add(t) for t in ids]
    assert "".join(got) == "德" and dec.flush() == ""
    assert b"".join(raw) == "德".encode()


def test_vocab_images_are_fresh():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "core_c", "tools", "gen_vocab_images.py"), "--check"],
                       capture_output=True, text=True)
    if "native" not in supertok.backends.available():
        pytest.skip("the images are rebuilt with the native backend, which is not built here")
    assert r.returncode == 0, r.stdout + r.stderr


def test_model_table_is_fresh():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "core_c", "tools", "gen_model_table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _image(name):
    with lzma.open(os.path.join(E.VOCAB_DIR, name + ".stimg.xz")) as f:
        return f.read()


def test_damaged_images_are_errors_not_crashes(backend):
    b = supertok._get()
    img = _image("r50k_base")
    bad = [b"", img[:10], b"XXXXXXXX" + img[8:], img[:8] + b"\x02" + img[9:], img[:len(img) // 2],
           img[:28] + b"\x05\x00\x00\x00" + img[32:]]
    for damaged in bad:
        with pytest.raises(supertok.SupertokError) as ei:
            b.encoding_from_image(damaged)
        assert ei.value.name in ("ST_ERR_MALFORMED_MODEL", "ST_ERR_INVALID_ARGUMENT")


def test_corrupted_image_contents_never_crash(backend):
    """Flip bytes anywhere past the header: ids may be wrong, but the core must not crash,
    hang or read out of bounds (the image is trusted for nothing)."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: this loop runs on native and wasmtime")
    b = supertok._get()
    img = bytearray(_image("r50k_base"))
    rng = random.Random(7)
    text = "Hello, wörld! 1234 德国 <|endoftext|> " * 20
    for _ in range(30):
        damaged = bytearray(img)
        for _ in range(200):
            damaged[rng.randrange(64, len(damaged))] = rng.randrange(256)
        h = b.encoding_from_image(bytes(damaged))
        try:
            ids = b.encode(h, text.encode(), [b"<|endoftext|>"])
            b.decode_bytes(h, ids)
        except (supertok.SupertokError, KeyError):
            pass


def test_damaged_rank_files_name_the_line(backend):
    b = supertok._get()
    good = b"IQ== 0\nIg== 1\n"
    for data, offset in [(b"IQ== 0\nnot base64! 1\n", 7), (b"IQ== 0\nIg==\n", 7), (b"IQ== x\n", 0),
                         (b"IQ== 0\nIQ== 1\n", 7), (b"IQ== 0\nIg== 0\n", 7), (b"", 0), (b"IQ== 99999999999\n", 0)]:
        with pytest.raises(supertok.SupertokError) as ei:
            b.encoding_new(data, b"", 3)
        assert ei.value.name == "ST_ERR_MALFORMED_MODEL" and ei.value.offset == offset, (data, ei.value)
    with pytest.raises(supertok.SupertokError, match="special tokens"):
        b.encoding_new(good, b"junk\n", 3)
    h = b.encoding_new(good, b"", 3)
    assert b.encode(h, b"!\"!", []) == [0, 1, 0]
    with pytest.raises(supertok.SupertokError) as ei:
        b.encode(h, b"!x", [])
    assert ei.value.name == "ST_ERR_NOT_ENCODABLE" and ei.value.offset == 1


def test_shipped_rank_files_match_their_sha256():
    import json
    for name in ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]:
        with open(os.path.join(E.VOCAB_DIR, name + ".json")) as f:
            meta = json.load(f)
        with open(os.path.join(E.VOCAB_DIR, name + ".tiktoken"), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == meta["sha256"]


def test_cli_encode_decode_round_trip():
    import json
    text = "Hello world, it's 2024! 德国HYDAC电磁球阀\n"
    r = subprocess.run([sys.executable, "-m", "supertok", "encode", "--encoding", "cl100k_base"],
                       input=text.encode(), capture_output=True)
    assert r.returncode == 0, r.stderr
    ids = json.loads(r.stdout)
    assert ids == supertok.get_encoding("cl100k_base").encode(text)
    r = subprocess.run([sys.executable, "-m", "supertok", "decode", "--encoding", "cl100k_base"],
                       input=r.stdout, capture_output=True)
    assert r.returncode == 0 and r.stdout.decode() == text


def test_cli_errors_are_clear():
    r = subprocess.run([sys.executable, "-m", "supertok", "encode"], input=b"x <|endoftext|>", capture_output=True)
    assert r.returncode == 2 and b"disallowed special token" in r.stderr
    r = subprocess.run([sys.executable, "-m", "supertok", "decode"], input=b"[1, 99999999]", capture_output=True)
    assert r.returncode == 2 and b"Invalid token for decoding: 99999999" in r.stderr
    r = subprocess.run([sys.executable, "-m", "supertok", "decode"], input=b"not json", capture_output=True)
    assert r.returncode == 2 and b"cannot decode" in r.stderr


def test_image_counts_that_wrap_a_32_bit_size_are_rejected(backend):
    """Section offsets computed from the header's counts must not wrap on wasm32: a header
    whose offsets are consistent modulo 2^32 is still too large for its bytes."""
    import struct as S

    def image(n_ids, mask):
        header = bytearray(64)
        header[0:8] = b"STVOCAB1"
        S.pack_into("<7I", header, 8, 1, 3, n_ids, 0, 0, mask, 0)
        offs = [64]                                           # byte_ids
        offs.append(offs[-1] + 1024)                          # offsets
        offs.append((offs[-1] + ((n_ids + 1) * 4 + 7) // 8 * 8) % 2 ** 32)  # table
        offs.append((offs[-1] + (mask + 1) * 8) % 2 ** 32)    # specials
        offs.append(offs[-1])                                 # pairs
        offs.append(offs[-1] + 65536 * 4)                     # bytes
        S.pack_into("<6I", header, 40, *offs)
        return bytes(header) + bytes(offs[-1] + 8 - 64)

    b = supertok._get()
    for n_ids, mask in [(0x40000000, 0), (300, 0x1FFFFFFF)]:
        img = image(n_ids, mask)
        if len(img) > 1 << 22:
            continue
        with pytest.raises(supertok.SupertokError) as ei:
            b.encoding_from_image(img)
        assert ei.value.name == "ST_ERR_MALFORMED_MODEL"
