"""The Python API around the pre-tokenizers: errors, options, backend selection."""
import os
import subprocess
import sys

import pytest

import oracle
import supertok

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_lone_surrogate_is_a_value_error_naming_its_index(backend):
    for text, idx in [("ab\ud800cd", 2), ("\udfff", 0), ("x" * 10 + "\udc80", 10)]:
        with pytest.raises(ValueError, match=r"index %d" % idx):
            supertok.pretokenize(text)
        with pytest.raises(ValueError, match=r"index %d" % idx):
            supertok.pretokenize_spans(text, "cl100k", script_aware=True)


def test_non_str_is_a_type_error(backend):
    with pytest.raises(TypeError):
        supertok.pretokenize(b"bytes")


def test_unknown_pattern(backend):
    with pytest.raises(ValueError, match="unknown pattern 'o300k'"):
        supertok.pretokenize("x", "o300k")


def test_unknown_script_is_named(backend):
    with pytest.raises(ValueError, match="unknown script name 'Klingon'"):
        supertok.pretokenize("x", script_aware=True, scripts=["Han", "Klingon"])
    with pytest.raises(ValueError):
        supertok.pretokenize("x", script_aware=True, scripts=["Han,Thai"])


def test_script_names_any_alias(backend):
    text = "abc德国"
    want = supertok.pretokenize(text, script_aware=True, scripts=["Han"])
    for alias in ["han", "HANI", "Hani"]:
        assert supertok.pretokenize(text, script_aware=True, scripts=[alias]) == want
    assert want == oracle.pretokenize(text, "o200k", True, ["Han"])
    assert supertok.pretokenize(text, script_aware=True, scripts=[]) == oracle.pretokenize(text, "o200k", True, [])
    assert supertok.pretokenize(text, script_aware=True, scripts="Latin") == \
        oracle.pretokenize(text, "o200k", True, ["Latin"])


def test_pattern_aliases_agree(backend):
    text = "I'LL go 12345 times!!\n"
    assert supertok.pretokenize(text, "r50k") == supertok.pretokenize(text, "p50k_base") == \
        supertok.pretokenize(text, "gpt2")
    assert supertok.pretokenize(text, "o200k_base") == supertok.pretokenize(text, "o200k")


def test_empty_and_spans(backend):
    assert supertok.pretokenize("") == []
    assert supertok.pretokenize_spans("") == []
    text = "héllo 𝐀 wörld"
    spans = supertok.pretokenize_spans(text)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert [text[a:b] for a, b in spans] == supertok.pretokenize(text)
    assert supertok.pretokenize_count(text) == len(spans)


def test_large_input(backend):
    if backend == "pywasm":
        pytest.skip("pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime")
    text = "lorem ipsum, dolor sit amet 12345\n" * 30000
    pieces = supertok.pretokenize(text)
    assert pieces == oracle.pretokenize(text)


def test_forced_backend_that_cannot_load_is_a_clear_error():
    code = "import supertok; supertok.pretokenize('x')"
    env = dict(os.environ, SUPERTOK_BACKEND="nonesuch")
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and "SUPERTOK_BACKEND='nonesuch' is not a backend" in r.stderr


@pytest.mark.parametrize("name", ["native", "wasmtime", "pywasm", "wasm"])
def test_forced_backend_is_used(name):
    if name != "wasm" and name not in supertok.backends.available():
        pytest.skip("backend %s does not load here" % name)
    code = "import supertok; print(supertok.backend()); print(supertok.pretokenize('a b'))"
    env = dict(os.environ, SUPERTOK_BACKEND=name)
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    got = r.stdout.split("\n")
    expect = {"wasm": ("wasmtime" if "wasmtime" in supertok.backends.available() else "pywasm")}.get(name, name)
    assert got[0] == expect and got[1] == "['a', ' b']"


def test_cli_pretokenize():
    r = subprocess.run([sys.executable, "-m", "supertok", "pretokenize", "--pattern", "cl100k"],
                       input="Hello, world!".encode(), capture_output=True)
    assert r.returncode == 0, r.stderr
    import json
    assert [json.loads(ln) for ln in r.stdout.decode().splitlines()] == oracle.pretokenize("Hello, world!", "cl100k")


def test_cli_rejects_invalid_utf8():
    r = subprocess.run([sys.executable, "-m", "supertok", "pretokenize"], input=b"ab\xffcd", capture_output=True)
    assert r.returncode == 2 and b"not valid UTF-8 at byte 2" in r.stderr


def test_backend_errors_carry_status_and_offset(backend):
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.pretokenize_ends(b.pretokenizer(3, 0, None), b"ok\xe2\x82", True)
    assert ei.value.name == "ST_ERR_INVALID_UTF8" and ei.value.offset == 2 and ei.value.status == 3
    assert b.utf8_validate(b"\xed\xa0\x80") == 0 and b.utf8_validate("é".encode()) is None


def test_status_codes_match_the_header(backend):
    """The pinned numbers in supertok.h, their names in Python, and st_status_str agree."""
    import re

    from supertok import _status
    with open(os.path.join(ROOT, "core_c", "include", "supertok.h")) as f:
        header = dict((name, int(num)) for name, num in re.findall(r"\b(ST_(?:OK|ERR_\w+)) = (\d+)", f.read()))
    assert header == {name: num for num, name in _status.NAMES.items()}
    b = supertok._get()
    for num in header.values():
        assert b.status_str(num) not in ("", "unknown status")
    assert b.status_str(999) == "unknown status"


def test_error_kinds_match_the_header():
    """The st_error_kind numbers in supertok.h and their names in Python (hosts read the kind
    field by these names)."""
    import re

    from supertok import _status
    with open(os.path.join(ROOT, "core_c", "include", "supertok.h")) as f:
        header = dict((name, int(num)) for name, num in re.findall(r"\b(ST_KIND_\w+) = (\d+)", f.read()))
    assert header == {name: num for num, name in _status.KINDS.items()}


def test_load_errors_carry_their_kind(backend):
    """What was wrong with a rank file or the special tokens, as the report's kind and token: the
    message is built from them in the caller's terms (its special token, its id)."""
    pat = supertok.get_encoding("r50k_base")._pat_str
    ranks = {bytes([i]): i for i in range(256)}
    cases = [(dict(mergeable_ranks=ranks, special_tokens={"<|a|>": 5}), "ST_KIND_ID_TAKEN", 5,
              "special token '<|a|>' (id 5): id 5 is taken by an ordinary token"),
             (dict(mergeable_ranks={**ranks, b"ab": 7}, special_tokens={}), "ST_KIND_ID_REPEATED", 7,
              "mergeable_ranks: token b'ab' (rank 7): id 7 is taken by another token"),
             (dict(mergeable_ranks=ranks, special_tokens={"": 300}), "ST_KIND_EMPTY_TOKEN", None,
              "special token '' (id 300): the token is empty"),
             (dict(mergeable_ranks=ranks, special_tokens={"<|x|>": 1 << 31}), "ST_KIND_ID_TOO_LARGE", None,
              "special token '<|x|>' (id 2147483648): id above 2^31 - 1"),
             (dict(merges=[(97, 98)], special_tokens={"<|x|>": 300, "<|y|>": 300}), "ST_KIND_ID_REPEATED", 300,
              "special token '<|y|>' (id 300): id 300 is given to another special token too")]
    for kw, kind, token, message in cases:
        with pytest.raises(supertok.SupertokError) as info:
            supertok.Encoding("t", pat_str=pat, **kw)
        assert (info.value.kind, info.value.name) == (kind, "ST_ERR_MALFORMED_MODEL"), kw
        if token is not None:
            assert info.value.token == token
        assert str(info.value).startswith(message), str(info.value)


def test_pretokenize_when_the_text_holds_every_separator(backend):
    """pretokenize joins pieces with a control character the text lacks; a text holding all
    of them takes the slicing path, with the same result."""
    seps = supertok._SEPARATORS
    text = "Hello " + seps + " world\x00x 12345 \x01\x02 德国"
    assert all(s in text for s in seps)
    for pattern in ("gpt2", "cl100k", "o200k"):
        assert supertok.pretokenize(text, pattern) == oracle.pretokenize(text, pattern)
        assert supertok.pretokenize(text[6:], pattern, script_aware=True) == \
            oracle.pretokenize(text[6:], pattern, True)
