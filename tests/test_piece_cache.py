"""The piece cache that lasts across calls (docs/design.md §7; st_encoding_set_cache_size,
st_encoding_cache_info): hits give exactly the ids a fresh encoding gives, memory stays within the
set bound whatever the input, and it is off when asked. The vector and differential tests run with
it on and off too (the piece_cache fixture, tests/conftest.py); the C test test_threads shares one
encoding and its cache between threads under ASan and TSan."""
import os
import random
import subprocess
import sys
import threading

import pytest

import supertok
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "vectors"))
try:
    import tiktoken  # noqa: F401
    from generate_encode import tiktoken_offline
except ImportError:  # the oracle is optional: the tests then compare the cache against itself off
    tiktoken_offline = None

_tk = {}

TEXT = ("Unbelievable misunderstandings, Überraschungen und Kopfschmerzen. Привет, как дела? "
        "مرحبا بالعالم. 中华人民共和国成立于一九四九年。 def tokenize(self, text): return [] "
        "中华人民共和国成立于一九四九年十月一日首都北京天安门广场举行了盛大的开国大典。"  # a long piece (111 bytes)
        "東京都は日本の首都であり世界有数の大都市でもありますそして多くの人が住んでいます ") * 5


def _oracle(name, text, tmp_path):
    """tiktoken's ids (offline, from the shipped rank files), or None without tiktoken."""
    if tiktoken_offline is None:
        return None
    if not _tk:
        _tk.update(tiktoken_offline(str(tmp_path), names=("o200k_base",)))
    return _tk[name].encode(text)


@pytest.fixture
def fresh(backend):
    """A new o200k_base encoding of its own (not get_encoding's shared one): its figures start at 0."""
    if backend == "pywasm":
        pytest.skip("pywasm interprets ~0.2M instructions/s: large inputs run on native and wasmtime")
    from supertok.encoding import _load
    return _load("o200k_base")


def test_same_text_twice(fresh, tmp_path):
    info = fresh.cache_info()
    assert info["limit"] == int(os.environ.get("SUPERTOK_PIECE_CACHE") or 12 << 20)
    assert info["max_piece"] == 240
    fresh.set_cache_size(12 << 20)
    first = fresh.encode(TEXT)
    after_first = fresh.cache_info()
    second = fresh.encode(TEXT)
    after_second = fresh.cache_info()
    assert first == second
    want = _oracle("o200k_base", TEXT, tmp_path)
    if want is not None:
        assert first == want
    # the second call found every piece the first looked up (the text repeats 5 times: most of
    # the first call's lookups were hits already)
    looked_up = after_first["hits"] + after_first["misses"]
    assert looked_up > 0 and after_first["misses"] < looked_up
    assert after_second["hits"] - after_first["hits"] == looked_up
    assert after_second["misses"] == after_first["misses"]
    assert 0 < after_second["bytes"] <= after_second["limit"]
    # offsets replayed from the cache are the text's own
    ids, starts = fresh.encode_with_offsets("x " + TEXT)
    fresh.set_cache_size(0)
    assert fresh.encode_with_offsets("x " + TEXT) == (ids, starts)


def test_off(fresh):
    fresh.set_cache_size(0)
    a = fresh.encode(TEXT)
    info = fresh.cache_info()
    assert info["limit"] == 0 and info["bytes"] == 0 and info["hits"] == info["misses"] == 0
    assert fresh.encode(TEXT) == a
    assert fresh.cache_info()["hits"] == 0
    for bad in (-1, 1.5, "1", None, True):
        with pytest.raises((TypeError, ValueError)):
            fresh.set_cache_size(bad)


def test_adversarial_all_distinct_pieces(fresh):
    """Words that are all distinct and not one token each: every lookup misses and replaces an
    entry; memory never passes the bound, and the ids stay those of the cache off."""
    limit = 64 << 10
    fresh.set_cache_size(limit)
    rng = random.Random(12)
    letters = "bcdfghjklmnpqrstvwxz"
    han = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]
    texts = [" ".join("".join(rng.choice(letters) for _ in range(rng.randint(5, 12))) for _ in range(2000))
             + " " + " ".join("".join(rng.choice(han) for _ in range(rng.randint(20, 60))) for _ in range(200))
             for _ in range(10)]
    got = []
    for t in texts:
        got.append(fresh.encode(t))
        info = fresh.cache_info()
        assert 0 < info["bytes"] <= limit, info
    info = fresh.cache_info()
    assert info["misses"] > 15000 and info["bytes"] <= limit
    fresh.set_cache_size(0)
    assert fresh.cache_info()["bytes"] == 0
    assert [fresh.encode(t) for t in texts] == got
    # a long text of them too (a call of 8 KiB or more)
    fresh.set_cache_size(limit)
    big = " ".join(texts)
    ids = fresh.encode(big)
    assert fresh.cache_info()["bytes"] <= limit
    fresh.set_cache_size(0)
    assert fresh.encode(big) == ids


def test_models_twice():
    """Rule models (bytes and UBE) and superword models: a hit is the same ids as the merge."""
    for name in ("bytes_small", "ube_small", "super_bytes_small", "super_ube_small"):
        enc = supertok.load_model(os.path.join(ROOT, "vectors", "models", name + ".stmodel"))
        text = (TEXT + " the cat the cat. the the cat") * 3
        enc.set_cache_size(0)
        off = enc.encode_with_offsets(text)
        enc.set_cache_size(1 << 20)
        on1 = enc.encode_with_offsets(text)
        on2 = enc.encode_with_offsets(text)
        assert on1 == off and on2 == off, name
        assert enc.cache_info()["hits"] > 0, name


def test_threads_share_one_cache(fresh):
    """Threads sharing one encoding (more than its 4 tables), identical and different texts:
    every result is the one-thread result."""
    fresh.set_cache_size(256 << 10)
    texts = [TEXT, TEXT[7:], "x" * 9000 + TEXT, " ".join(TEXT.split()[::-1]) * 3]
    want = [fresh.encode(t) for t in texts]
    errors = []

    def work(k):
        for r in range(20):
            i = (k + r) % len(texts)
            if fresh.encode(texts[i]) != want[i]:
                errors.append((k, r))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert fresh.encode_batch(texts * 10, num_threads=6) == want * 10


def test_env_var(backend):
    code = ("import supertok; e = supertok.get_encoding('cl100k_base'); "
            "print(e.cache_info()['limit'], e.encode('hello world'))")
    for value, limit in (("0", 0), ("123456", 123456)):
        env = dict(os.environ, SUPERTOK_PIECE_CACHE=value, SUPERTOK_BACKEND=backend)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split()[0] == str(limit)
    env = dict(os.environ, SUPERTOK_PIECE_CACHE="lots", SUPERTOK_BACKEND=backend)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "SUPERTOK_PIECE_CACHE must be a number of bytes" in out.stderr
