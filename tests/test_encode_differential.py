"""Differential tests of the encoder and decoder against tiktoken 0.14 (the pinned oracle, run
offline from the rank files in py/supertok/vocab/) on real text and on generated strings, for
r50k_base, p50k_base, cl100k_base and o200k_base. Zero mismatches allowed.

On real text (every ../shared/corpora/*.txt.xz file, read in blocks of whole lines of about
20,000 characters, and every UDHR translation) each encoding checks:
  encode_ordinary and encode(allowed_special="all") against tiktoken; count(); decode and
  decode_bytes give the text back; encode_with_offsets gives the same ids and, as starts,
  tiktoken's decode_with_offsets offsets of those ids.
tiktoken's encode(allowed_special="all") is only called for a block that holds the text of a
special token: without one it is encode_ordinary by construction. The oracle's results are
remembered as digests, so the second backend does not pay for tiktoken again.

Generated strings (hypothesis): arbitrary code points including lone surrogates and surrogate
pairs given as two code points, characters the patterns treat specially, special-token texts and
fragments of them, and long runs (up to 3,000 copies of a unit). Each is checked with
encode_ordinary, encode with allowed_special="all", with the defaults (same ids, or the same
ValueError with tiktoken's message), with disallowed_special=(); count; encode_with_offsets
against tiktoken's decode_with_offsets mapped back to the caller's indexing (a surrogate pair
counts two); decode of the ids. Generated id streams (valid ids, partial UTF-8 tokens, special
tokens, sometimes an invalid id) check decode_bytes, decode with errors replace/strict/ignore,
decode_tokens_bytes, decode_with_offsets and the incremental decoder at random split points
(oracle: CPython's incremental UTF-8 decoder fed tiktoken's bytes of each split).

native and wasmtime run these; pywasm (an interpreter) is left to the vectors.

CI runs a sample: the first 150,000 characters of each corpus file, the first 2,000 of each UDHR
translation, 300 generated examples per test. The full run:
    SUPERTOK_TEST_BACKENDS=native SUPERTOK_FULL_DIFF=1 SUPERTOK_HYPOTHESIS_EXAMPLES=100000 \\
        python -m pytest tests/test_encode_differential.py
"""
import codecs
import hashlib
import importlib.metadata
import json
import lzma
import os
from array import array

import pytest
import supertok
from conftest import CORPORA, corpus_path
from generate_encode import ENCODINGS, ORACLE_TIKTOKEN, tiktoken_offline
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FULL = bool(os.environ.get("SUPERTOK_FULL_DIFF"))
SAMPLE_CHARS = 150_000      # per corpus file in the sampled (CI) run
UDHR_SAMPLE_CHARS = 2_000   # per UDHR translation in the sampled run
BLOCK_CHARS = 20_000
EXAMPLES = int(os.environ.get("SUPERTOK_HYPOTHESIS_EXAMPLES", "300"))

CORPUS_FILES = sorted(f for f in (os.listdir(CORPORA) if os.path.isdir(CORPORA) else [])
                      if f.endswith(".txt.xz")) or ["en.txt.xz"]

tiktoken = pytest.importorskip("tiktoken", reason="tiktoken (the oracle) is not installed")


@pytest.fixture(scope="session")
def tk(tmp_path_factory):
    """tiktoken Encodings, offline: the shipped rank files in a temporary TIKTOKEN_CACHE_DIR."""
    have = importlib.metadata.version("tiktoken")
    if have != ORACLE_TIKTOKEN:
        pytest.fail("the oracle must be tiktoken==%s, found %s" % (ORACLE_TIKTOKEN, have))
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")))


def _skip_pywasm(backend):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the differential tests run on native and wasmtime")


def encoding_on(backend, name):
    """supertok's Encoding `name` on `backend` (the backend fixture's active backend):
    get_encoding loads each encoding once per backend."""
    return supertok.get_encoding(name)


# ---------------------------------------------------------------------------------------------
# Real text

def _digest(ids):
    return hashlib.blake2b(array("I", ids).tobytes(), digest_size=16).digest()


_oracle = {}   # (where, encoding, what) -> digest of tiktoken's answer


def _first_difference(text, tkenc, want, got):
    if len(want) == len(got) and want == got:
        return "equal"
    k = next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))
    at = len(tkenc.decode_bytes(want[:k]).decode("utf-8", "replace"))
    return ("first difference at token %d (near character %d: %r): tiktoken %r, supertok %r; "
            "tiktoken %d ids, supertok %d" % (k, at, text[max(0, at - 30):at + 30], want[k:k + 8],
                                               got[k:k + 8], len(want), len(got)))


def _check_against(key, text, tkenc, got, oracle_call, what):
    """Compare got with tiktoken's answer (computed, or its digest from another backend's run)."""
    d = _oracle.get(key)
    if d is not None and d == _digest(got):
        return
    want = oracle_call()
    _oracle[key] = _digest(want)
    assert got == want, "%s %s: %s" % (key[0], what, _first_difference(text, tkenc, want, got))


def _check_real_text(tkenc, enc, text, where):
    name = tkenc.name
    specials = tkenc.special_tokens_set
    got = enc.encode_ordinary(text)
    _check_against((where, name, "ordinary"), text, tkenc, got,
                   lambda: tkenc.encode_ordinary(text), "%s encode_ordinary" % name)
    got_all = enc.encode(text, allowed_special="all")
    if any(s in text for s in specials):
        _check_against((where, name, "all"), text, tkenc, got_all,
                       lambda: tkenc.encode(text, allowed_special="all"), "%s encode(allowed_special='all')" % name)
    else:
        assert got_all == got, "%s %s encode(allowed_special='all') differs from encode_ordinary: %s" % (
            where, name, _first_difference(text, tkenc, got, got_all))
    n = enc.count(text, allowed_special="all")
    assert n == len(got_all), "%s %s count %d, expected %d" % (where, name, n, len(got_all))
    back = enc.decode_bytes(got)
    assert back == text.encode("utf-8"), "%s %s decode_bytes does not give the text back" % (where, name)
    assert enc.decode(got) == text, "%s %s decode does not give the text back" % (where, name)
    ids, starts = enc.encode_with_offsets(text, disallowed_special=())
    assert ids == got, "%s %s encode_with_offsets ids: %s" % (where, name, _first_difference(text, tkenc, got, ids))
    key = (where, name, "starts")
    d = _oracle.get(key)
    if d is None or d != _digest(starts):
        want = tkenc.decode_with_offsets(got)[1]
        _oracle[key] = _digest(want)
        if starts != want:
            k = next((k for k, (a, b) in enumerate(zip(want, starts)) if a != b), min(len(want), len(starts)))
            raise AssertionError("%s %s encode_with_offsets starts differ from tiktoken's decode_with_offsets "
                                 "at token %d: tiktoken %r, supertok %r" % (where, name, k, want[k:k + 8],
                                                                            list(starts[k:k + 8])))


def _blocks(path):
    """(index, text) blocks of whole lines of about BLOCK_CHARS characters; the first
    SAMPLE_CHARS characters of the file unless SUPERTOK_FULL_DIFF is set."""
    block, size, total, i = [], 0, 0, 0
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            block.append(line)
            size += len(line)
            total += len(line)
            if size >= BLOCK_CHARS:
                yield i, "".join(block)
                i += 1
                block, size = [], 0
            if not FULL and total >= SAMPLE_CHARS:
                break
    if block:
        yield i, "".join(block)


@pytest.mark.parametrize("name", CORPUS_FILES)
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_corpus(backend, name, tk, piece_cache):
    _skip_pywasm(backend)
    path = corpus_path(name)
    encs = [(tk[e], piece_cache(encoding_on(backend, e))) for e in ENCODINGS]
    for i, block in _blocks(path):
        for tkenc, enc in encs:
            _check_real_text(tkenc, enc, block, "%s block %d" % (name, i))


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_udhr_every_translation(backend, tk, piece_cache):
    _skip_pywasm(backend)
    path = corpus_path("udhr.jsonl.xz")
    encs = [(tk[e], piece_cache(encoding_on(backend, e))) for e in ENCODINGS]
    with lzma.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            text = rec["text"] if FULL else rec["text"][:UDHR_SAMPLE_CHARS]
            for tkenc, enc in encs:
                _check_real_text(tkenc, enc, text, "udhr %s" % rec["code"])


# ---------------------------------------------------------------------------------------------
# Generated strings

SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

# Characters the patterns and vocabularies treat specially.
ALPHABET = list(" \t\n\r\x0b\x0c\x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u3000"
                "\ufeff\u200b\u200d\x00\x7f"
                "'sSdDmMtTlLvVeErRſ’/!.,-_\"#<>|()[]{}:;?@\\`~^*+=&%$"
                "0123456789٣४¹½Ⅻ"
                "aAzZéÉǅʰªßİ\u0301\u0308\u064e\u05b7\u093f\u094d"
                "德国日本中文かなカナ한국ไทยမြန်မာខ្មែរລາວ"
                "ΑαΩωБбЖжאבعربيहिन्दी"
                "😀👍🏽👨🇫🇷𝐀𠀀\U000e0080\ue000\U0010ffff\uffff")
SPECIAL_TEXTS = ["<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
                 "<|im_start|>", "<|", "|>", "<|endoftext", "endoftext|>", "<|endoftext|", "|endoftext|>",
                 "<|fim_", "endofprompt", "<||>", "<", "|", ">"]
SURROGATE_BITS = ["\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00", "\ud83d\ude00", "\udbff\udfff",
                  "\ude00\ud83d"]
RUN_UNITS = [" ", "  ", "\n", "\t", "\r\n", " \n", "a", "A", "ab", " x", "x ", "0", "7", "12", "!", ".",
             "-", "中", "あ", "😀", "é", "e\u0301", "'s", "\u0301", "\ufffd", "<|", "\ud800"]

any_char = st.characters(exclude_categories=())          # every code point, surrogates included
surrogate = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
runs = st.builds(lambda unit, n: unit * n,
                 st.one_of(st.sampled_from(RUN_UNITS), any_char),
                 st.one_of(st.integers(2, 64), st.integers(65, 3000)))
alphabet_text = st.text(st.sampled_from(ALPHABET), min_size=1, max_size=60)
plain_atoms = st.one_of(   # one_of picks a branch uniformly: listing one twice doubles its weight
    st.text(st.one_of(st.sampled_from(ALPHABET), any_char), max_size=30),
    alphabet_text, alphabet_text,
    st.sampled_from(SPECIAL_TEXTS),
    runs, runs,
)
atoms = st.one_of(plain_atoms, st.sampled_from(SURROGATE_BITS), surrogate)
# about half of the strings are built without the surrogate atoms, so most of those take the
# valid-UTF-8 path (any_char still yields a surrogate now and then)
texts = st.one_of(st.lists(plain_atoms, max_size=6), st.lists(atoms, max_size=6)).map("".join)


def _is_high(c):
    return "\ud800" <= c <= "\udbff"


def _is_low(c):
    return "\udc00" <= c <= "\udfff"


def _repaired(text):
    """(the text tiktoken encodes, caller index of each of its characters): tiktoken turns a
    str holding surrogates into text.encode("utf-16", "surrogatepass").decode("utf-16",
    "replace"), where a pair becomes its character and a lone surrogate U+FFFD."""
    try:
        text.encode("utf-8")
        return text, None
    except UnicodeEncodeError:
        pass
    repaired = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    index, i = [], 0
    while i < len(text):
        index.append(i)
        i += 2 if _is_high(text[i]) and i + 1 < len(text) and _is_low(text[i + 1]) else 1
    assert len(index) == len(repaired), "test bug: surrogate repair mapping"
    return repaired, index


def _outcome(call):
    try:
        return ("ok", call())
    except (ValueError, KeyError, OverflowError, UnicodeDecodeError) as exc:
        return (type(exc).__name__, str(exc) if not isinstance(exc, UnicodeDecodeError) else None)


def _check_generated(tkenc, enc, text):
    name = tkenc.name
    want = tkenc.encode_ordinary(text)
    got = enc.encode_ordinary(text)
    assert got == want, "%s encode_ordinary(%r): %s" % (name, text, _first_difference(text, tkenc, want, got))
    want_all = tkenc.encode(text, allowed_special="all")
    got_all = enc.encode(text, allowed_special="all")
    assert got_all == want_all, "%s encode(%r, allowed_special='all'): %s" % (
        name, text, _first_difference(text, tkenc, want_all, got_all))
    w, g = _outcome(lambda: tkenc.encode(text)), _outcome(lambda: enc.encode(text))
    assert g == w, "%s encode(%r) with the defaults: tiktoken %r, supertok %r" % (name, text, w, g)
    w = tkenc.encode(text, disallowed_special=())
    g = enc.encode(text, disallowed_special=())
    assert g == w, "%s encode(%r, disallowed_special=()): %s" % (name, text, _first_difference(text, tkenc, w, g))
    n = enc.count(text, allowed_special="all")
    assert n == len(want_all), "%s count(%r, allowed_special='all') = %d, expected %d" % (name, text, n, len(want_all))
    ids, starts = enc.encode_with_offsets(text, allowed_special="all")
    assert ids == want_all, "%s encode_with_offsets(%r) ids: %s" % (
        name, text, _first_difference(text, tkenc, want_all, ids))
    repaired, index = _repaired(text)
    tk_text, tk_starts = tkenc.decode_with_offsets(want_all)
    assert tk_text == repaired
    if index is not None:
        tk_starts = [index[s] if s < len(index) else len(text) for s in tk_starts]
    assert list(starts) == tk_starts, "%s encode_with_offsets(%r) starts: tiktoken %r, supertok %r" % (
        name, text, tk_starts, list(starts))
    assert enc.decode(want_all) == repaired, "%s decode(encode(%r)) is not the text" % (name, text)


@pytest.mark.parametrize("encoding", ENCODINGS)
@SETTINGS
@given(text=texts)
def test_generated_strings(backend, encoding, tk, text, piece_cache):
    _skip_pywasm(backend)
    _check_generated(tk[encoding], piece_cache(encoding_on(backend, encoding)), text)


_interesting = {}


def _interesting_ids(tkenc):
    """(valid ids worth drawing often, invalid ids) of one encoding."""
    if tkenc.name not in _interesting:
        byte_ids = [tkenc.encode_single_token(bytes([b])) for b in range(0x80, 0x100)]
        specials = sorted(tkenc.encode_single_token(s) for s in tkenc.special_tokens_set)
        partial, holes = [], []
        for i in range(tkenc.n_vocab):
            try:
                b = tkenc.decode_single_token_bytes(i)
            except KeyError:
                holes.append(i)
                continue
            if len(b) > 1 and i not in specials:
                try:
                    b.decode("utf-8")
                except UnicodeDecodeError:
                    partial.append(i)
        multibyte = tkenc.encode_ordinary("中文 日本語 한국어 😀👍🏽 नमस्ते Ελληνικά Русский عربي")
        valid = byte_ids + specials + partial[::max(1, len(partial) // 300)] + multibyte
        invalid = holes + [tkenc.n_vocab, tkenc.n_vocab + 1, 2 ** 32 - 1, 2 ** 32, -1]
        _interesting[tkenc.name] = (valid, invalid)
    return _interesting[tkenc.name]


@pytest.mark.parametrize("encoding", ENCODINGS)
@SETTINGS
@given(data=st.data())
def test_generated_id_streams(backend, encoding, tk, data):
    _skip_pywasm(backend)
    tkenc, enc = tk[encoding], encoding_on(backend, encoding)
    valid, invalid = _interesting_ids(tkenc)
    ids = data.draw(st.lists(st.one_of(st.integers(0, tkenc.n_vocab - 1), st.sampled_from(valid)), max_size=40))
    bad = data.draw(st.one_of(st.none(), st.none(), st.none(), st.sampled_from(invalid)))
    if bad is not None:
        ids.insert(data.draw(st.integers(0, len(ids))), bad)
    name = tkenc.name

    w, g = _outcome(lambda: tkenc.decode_bytes(ids)), _outcome(lambda: enc.decode_bytes(ids))
    assert g == w, "%s decode_bytes(%r): tiktoken %r, supertok %r" % (name, ids, w, g)
    valid_stream = w[0] == "ok"
    for errors in ("replace", "strict", "ignore"):
        w = _outcome(lambda errors=errors: tkenc.decode(ids, errors=errors))
        g = _outcome(lambda errors=errors: enc.decode(ids, errors=errors))
        assert g == w, "%s decode(%r, errors=%r): tiktoken %r, supertok %r" % (name, ids, errors, w, g)
    w, g = _outcome(lambda: tkenc.decode_tokens_bytes(ids)), _outcome(lambda: enc.decode_tokens_bytes(ids))
    assert g == w, "%s decode_tokens_bytes(%r): tiktoken %r, supertok %r" % (name, ids, w, g)
    w, g = _outcome(lambda: tkenc.decode_with_offsets(ids)), _outcome(lambda: enc.decode_with_offsets(ids))
    assert g == w, "%s decode_with_offsets(%r): tiktoken %r, supertok %r" % (name, ids, w, g)
    if not valid_stream:
        return
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=8)))
    bounds = [0] + cuts + [len(ids)]
    splits = [ids[a:b] for a, b in zip(bounds, bounds[1:])]
    oracle = codecs.getincrementaldecoder("utf-8")(errors="replace")
    want = [oracle.decode(tkenc.decode_bytes(s), final=False) for s in splits]
    want_final = oracle.decode(b"", final=True)
    assert "".join(want) + want_final == tkenc.decode(ids)
    dec = enc.incremental_decoder()
    got = [dec.add(s) for s in splits]
    got_final = dec.flush()
    assert (got, got_final) == (want, want_final), (
        "%s incremental decoder on %r: expected chunks %r final %r, got %r final %r"
        % (name, splits, want, want_final, got, got_final))
