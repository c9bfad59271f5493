"""In the core: the special-token policy and tiktoken's error from the core's report,
encode_single_token by bytes (st_token_id), pat_str refused when no scanner implements it, and
errors mapped by status name. Against tiktoken where it is installed."""
import itertools

import pytest

import supertok
from generate_encode import tiktoken_offline
from supertok import encoding as E

tiktoken = pytest.importorskip("tiktoken")


@pytest.fixture(scope="module")
def tks(tmp_path_factory):
    """tiktoken Encodings by name, offline (the shipped rank files)."""
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")))

TEXTS = ["plain text", "a<|endoftext|>b", "x<|endofprompt|>y<|endoftext|>z", "<|endoftext|><|endofprompt|>",
         "<|endoftext", "hello world <|fim_prefix|>", "caf\u00e9 <|endoftext|> \ud83d\ude00"]


def _outcome(fn):
    try:
        return ("ids", fn())
    except ValueError as exc:
        return ("error", str(exc))


@pytest.mark.slow_on_pywasm("cl100k_base")  # 630 calls: pywasm's fast lane takes one encoding
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base"])
def test_special_policy_matches_tiktoken(backend, tks, name):
    enc, tk = supertok.get_encoding(name), tks[name]
    specials = sorted(tk.special_tokens_set)[:3]
    allowed_sets = ["all", set(), {specials[0]}, set(specials), {"<|not a special|>"}]
    disallowed_sets = ["all", (), {specials[-1]}, {"<|endoftext|>"}, {"world"}, set(specials) | {"b<"}]
    for text, allowed, disallowed in itertools.product(TEXTS, allowed_sets, disallowed_sets):
        kw = dict(allowed_special=allowed, disallowed_special=disallowed)
        want = _outcome(lambda: tk.encode(text, **kw))
        assert _outcome(lambda: enc.encode(text, **kw)) == want, (text, kw)
        if want[0] == "ids":
            assert enc.count(text, **kw) == len(want[1])
        assert _outcome(lambda: enc.encode_batch([text, text], **kw)) == _outcome(
            lambda: tk.encode_batch([text, text], **kw)), (text, kw)


def test_disallowed_special_is_the_cores_report(backend):
    enc = supertok.get_encoding("o200k_base")
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.encode(enc._handle, "ab<|endofprompt|>".encode(), [], disallowed=[], special_flags=2)
    e = ei.value
    assert e.name == "ST_ERR_DISALLOWED_SPECIAL" and e.offset == 2 and e.token == 200018, e


@pytest.mark.slow_on_pywasm("o200k_base", "cl100k_base")  # pywasm's fast lane takes the smallest vocabulary
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_encode_single_token_any_bytes(backend, tks, name):
    enc, tk = supertok.get_encoding(name), tks[name]
    # every token whose bytes are not valid UTF-8, and a sample of the rest
    for i in list(range(0, enc.n_vocab, 97)) + [161, 3413, 3914]:
        try:
            b = tk.decode_single_token_bytes(i)
        except KeyError:
            continue
        assert enc.encode_single_token(b) == tk.encode_single_token(b), (i, b)
    assert enc.encode_single_token(b"\xe5") == tk.encode_single_token(b"\xe5")
    for s in tk.special_tokens_set:
        assert enc.encode_single_token(s) == tk.encode_single_token(s)
    with pytest.raises(KeyError):
        enc.encode_single_token(b"no such token, surely")


def test_unknown_pat_str_is_refused(backend):
    with pytest.raises(ValueError, match="pat_str"):
        E.Encoding("custom", pat_str=r"\s+|\w+", mergeable_ranks={bytes([i]): i for i in range(256)}, special_tokens={})
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.pattern_from_regex(rb"\w+")
    assert ei.value.name == "ST_ERR_UNSUPPORTED_PATTERN"
    import json
    import os
    for name, pid in [("r50k_base", 1), ("p50k_base", 1), ("cl100k_base", 2), ("o200k_base", 3)]:
        with open(os.path.join(E.VOCAB_DIR, name + ".json")) as f:
            assert b.pattern_from_regex(json.load(f)["pat_str"].encode()) == pid


def test_rank_file_errors_name_line_and_input(backend):
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.encoding_new(b"IQ== 0\nIg== 1\nIw==2\n", b"", 3)
    e = ei.value
    assert e.name == "ST_ERR_MALFORMED_MODEL" and e.offset == 14 and e.line == 3 and e.input == 0, e
    with pytest.raises(supertok.SupertokError) as ei:
        b.encoding_new(b"IQ== 0\n", b"PHg+ 5\n/w== 6\n", 3)
    e = ei.value
    assert e.input == 1 and e.line == 2 and "special tokens" in str(e) and "\\xff" in str(e), e


def test_disallowed_strings_are_the_cores_search(backend, tks):
    """A disallowed string that is no special token is found by the core, in the text as a
    whole, and reported with no id; an empty one is found at the start of any text."""
    enc, tk = supertok.get_encoding("o200k_base"), tks["o200k_base"]
    for text, disallowed in [("abc", {""}), ("", {""}), ("ab <|x|> <|endoftext|>", {"<|x|>", "<|endoftext|>"}),
                             ("ab <|endoftext|> <|x|>", {"<|x|>", "<|endoftext|>"}), ("no match", {"zz", "<|x|>"})]:
        kw = dict(disallowed_special=disallowed)
        assert _outcome(lambda: enc.encode(text, **kw)) == _outcome(lambda: tk.encode(text, **kw)), (text, kw)
    with pytest.raises(ValueError) as info:
        enc.encode("ab <|x|>", disallowed_special={"<|x|>", "<|x|"})  # overlapping at one place: the longest
    assert (info.value.special, info.value.offset, info.value.token) == ("<|x|>", 3, None)
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.encode(enc._handle, "caf\u00e9 zz".encode(), [], disallowed=[b"zz", b"<|endoftext|>"])
    e = ei.value
    assert (e.kind, e.offset, e.length, e.token) == ("ST_KIND_DISALLOWED_SPECIAL", 6, 2, None)


def test_disallowed_string_across_parts_of_a_long_text(backend):
    """A long text encoded in parts (on the backends that cut one: native; the others take it in
    one call, where the same must hold): a disallowed string that is no special token and lies
    across a place where the text can be cut is still found, where it is."""
    enc = supertok.get_encoding("o200k_base")
    lines = 1000 if backend == "pywasm" else 20000  # pywasm interprets: a tenth of the text is minutes
    text = "".join("Line %d.\n" % i for i in range(lines))
    data = text.encode()
    cut = enc._backend.cut(enc._handle, data, len(data) // 4)  # the first cut of four parts'
    assert 0 < cut < len(data)
    across = text[cut - 6:cut + 6]
    assert text.index(across) == cut - 6  # once in the text
    prev = E.set_parallel(4, force=True, min_bytes=1)
    try:
        with pytest.raises(ValueError) as info:
            enc.encode(text, disallowed_special={across})
        assert (info.value.special, info.value.offset) == (across, cut - 6)
        with pytest.raises(ValueError):
            enc.count(text, disallowed_special={across})
        assert enc.count(text, disallowed_special={"nothing here"}) == len(enc.encode_ordinary(text))
    finally:
        E.set_parallel(prev[0], force=prev[1], min_bytes=prev[2])
