"""The trainer on real text: hf mode against HuggingFace tokenizers, determinism, save and load.

- hf mode equals tokenizers 0.23.3's BpeTrainer merge for merge on the first megabytes of
  ../shared/corpora (English, Chinese, Russian, Hindi, Arabic, Japanese, and a multilingual
  script-aware mix), o200k pattern, vocab sizes up to 32,768. HuggingFace sees exactly the
  pretokens of vectors/oracle.py (the regex-based reference pre-tokenizer; each document's
  pretokens joined with U+E000 and split on it, as vectors/generate_train.py does), so a
  difference is the trainer's; when one shows, the test says whether supertok's own
  pre-tokenizer disagrees with the oracle on those documents.
- threads=1, 2 and 4 give identical merges, from a list of documents and from a .txt file;
- native and wasmtime give identical merges;
- a saved model (Encoding.save) reloads with supertok.load_model to the same ids on held-out
  real text, and decodes back to the text;
- on 300 random small corpora (no shared corpora needed), hf mode equals tokenizers with special
  tokens and min_frequency, and paper mode over bytes and UBE equals the reference trainer; on
  200 more, hf mode equals tokenizers with special tokens that collide in HuggingFace's
  vocabulary (a byte's character, a merged token's string).

Documents are the corpus's lines, each with its '\\n' (how a .txt file is read), streamed from
the .xz file: only the first SUPERTOK_TRAIN_HF_SCALE (default 1) times the listed megabytes
are read. The default run takes about a minute or two; SUPERTOK_TRAIN_HF_SCALE=8 runs on
eight times as much. Without the corpora the tests skip (see tests/conftest.py).
"""
import lzma
import os

import pytest
import supertok
from conftest import corpus_path, get_backend

import generate_train
import oracle
import train_reference

SCALE = float(os.environ.get("SUPERTOK_TRAIN_HF_SCALE", "1"))
MB = 1 << 20

# (corpus file, megabytes read at scale 1, vocab_size)
HF_SLICES = [
    ("en_train.txt.xz", 4.0, 32768),
    ("zh.txt.xz", 1.0, 16384),
    ("ru.txt.xz", 1.0, 16384),
    ("hi.txt.xz", 0.5, 8192),
    ("ar.txt.xz", 1.0, 16384),
    ("ja.txt.xz", 1.0, 16384),
]
MIX = [("en_train.txt.xz", 0.5), ("zh.txt.xz", 0.25), ("ja.txt.xz", 0.25), ("th.txt.xz", 0.25),
       ("ru.txt.xz", 0.25)]


def head_documents(name, megabytes, skip_bytes=0):
    """The lines (each with its '\\n') of the first `megabytes` MiB of a corpus file, after
    skipping skip_bytes bytes of whole lines; read streaming, never the whole file."""
    path = corpus_path(name)
    docs, n, skipped, want = [], 0, 0, int(megabytes * SCALE * MB)
    with lzma.open(path, "rb") as f:
        for raw in f:  # binary lines end at b"\n" only, as a .txt source's documents do
            size = len(raw)
            if skipped < skip_bytes:
                skipped += size
                continue
            docs.append(raw.decode("utf-8"))
            n += size
            if n >= want:
                break
    return docs


def _train():
    train = getattr(supertok, "train", None)
    if train is None:
        pytest.fail("supertok.train does not exist: the Python training API is what these tests test")
    return train


def _merges(enc):
    return [tuple(m) for m in enc.merges]


def _pretoken_disagreement(docs, pattern, script_aware=False):
    """The first document where supertok's pre-tokenizer and the oracle disagree, or None."""
    for k, d in enumerate(docs):
        ours = supertok.pretokenize(d, pattern, script_aware)
        theirs = oracle.pretokenize(d, pattern, script_aware)
        if ours != theirs:
            return "document %d (%r...): supertok %r, oracle %r" % (k, d[:60], ours[:20], theirs[:20])
    return None


def _compare_with_hf(docs, vocab_size, pattern="o200k", script_aware=False, special_tokens=()):
    enc = _train()(iter(docs), vocab_size=vocab_size, mode="hf", alphabet="bytes", pattern=pattern,
                   script_aware=script_aware, special_tokens=tuple(special_tokens))
    ours = train_reference.merge_bytes(_merges(enc))
    seqs = generate_train.hf_sequences(docs, pattern, script_aware)
    theirs = generate_train.hf_train(seqs, vocab_size, special_tokens)
    diff = generate_train.first_difference(ours, theirs)
    if diff:
        pre = _pretoken_disagreement(docs, pattern, script_aware)
        raise AssertionError("hf mode differs from tokenizers %s (%d documents, vocab %d): %s%s" % (
            generate_train.ORACLE_TOKENIZERS, len(docs), vocab_size, diff,
            "; the pre-tokenizers disagree first on " + pre if pre else
            "; the pre-tokenizers agree on every document, so the trainer differs"))
    # counts are ours alone (HuggingFace reports none): positive and never increasing
    counts = [c for _, _, c in _merges(enc)]
    assert all(c > 0 for c in counts) and counts == sorted(counts, reverse=True)
    return len(ours)


@pytest.mark.parametrize("name,megabytes,vocab_size", HF_SLICES,
                         ids=[s[0].split(".")[0] for s in HF_SLICES])
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_hf_mode_equals_tokenizers(name, megabytes, vocab_size):
    docs = head_documents(name, megabytes)
    n = _compare_with_hf(docs, vocab_size)
    assert n > vocab_size // 4, "only %d merges: too little text to mean much" % n


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_hf_mode_equals_tokenizers_multilingual_script_aware():
    docs = []
    for name, mb in MIX:
        docs += head_documents(name, mb)
    _compare_with_hf(docs, 32768, script_aware=True, special_tokens=("<|endoftext|>",))


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_hf_mode_equals_tokenizers_other_patterns():
    docs = head_documents("en_train.txt.xz", 0.5) + head_documents("ru.txt.xz", 0.25)
    for pattern in ("gpt2", "cl100k"):
        _compare_with_hf(docs, 8192, pattern=pattern)


MODES = [("paper", "bytes", False), ("hf", "bytes", False), ("paper", "ube", True)]


@pytest.mark.parametrize("mode,alphabet,script_aware", MODES, ids=["paper-bytes", "hf-bytes", "paper-ube-sa"])
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_thread_counts_give_identical_models(mode, alphabet, script_aware, tmp_path):
    docs = head_documents("en_train.txt.xz", 0.75) + head_documents("zh.txt.xz", 0.25)
    path = tmp_path / "slice.txt"
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("".join(docs))
    opts = dict(vocab_size=4096, mode=mode, alphabet=alphabet, script_aware=script_aware)
    train = _train()
    want = _merges(train(iter(docs), threads=1, **opts))
    assert len(want) > 1000
    for threads in (1, 2, 4):
        got = _merges(train(iter(docs), threads=threads, **opts))
        assert got == want, "threads=%d differs from threads=1 (list of documents)" % threads
        got = _merges(train(str(path), threads=threads, **opts))
        assert got == want, ("threads=%d on the .txt file differs from the list of its lines"
                             % threads)


@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_native_and_wasm_give_identical_models():
    native, wasm = get_backend("native"), get_backend("wasmtime")
    docs = (head_documents("en_train.txt.xz", 0.25) + head_documents("zh.txt.xz", 0.125)
            + head_documents("ar.txt.xz", 0.125))
    results = {}
    for name, b in (("native", native), ("wasmtime", wasm)):
        prev = supertok._set_backend(b)
        try:
            train = _train()
            results[name] = [
                _merges(train(iter(docs), vocab_size=3000, mode="paper", alphabet="bytes")),
                _merges(train(iter(docs), vocab_size=3000, mode="hf", alphabet="bytes")),
                _merges(train(iter(docs), vocab_size=3000, mode="paper", alphabet="ube",
                              script_aware=True, scripts=["Han", "Arabic"])),
            ]
        finally:
            supertok._set_backend(prev)
    for k, what in enumerate(("paper/bytes", "hf/bytes", "paper/ube script-aware")):
        assert results["native"][k] == results["wasmtime"][k], "%s: native and wasmtime differ" % what
        assert len(results["native"][k]) > 500, what


@pytest.mark.parametrize("alphabet", ["bytes", "ube"])
@pytest.mark.slow  # a corpus run (../shared/corpora, absent from a fresh clone)
def test_saved_model_reloads_to_the_same_ids(alphabet, tmp_path):
    train_docs = (head_documents("en_train.txt.xz", 0.5) + head_documents("zh.txt.xz", 0.25)
                  + head_documents("hi.txt.xz", 0.1))
    held_out = (head_documents("en_train.txt.xz", 0.05, skip_bytes=int(0.5 * SCALE * MB))
                + head_documents("zh.txt.xz", 0.05, skip_bytes=int(0.25 * SCALE * MB))
                + head_documents("ja.txt.xz", 0.05))
    enc = _train()(iter(train_docs), vocab_size=6000, alphabet=alphabet,
                   special_tokens=("<|endoftext|>", "<|pad|>"))
    path = tmp_path / ("model_%s.stmodel" % alphabet)
    enc.save(str(path))
    again = supertok.load_model(str(path))
    if hasattr(again, "merges"):  # a loaded rules model lists its merges too
        assert [tuple(m) for m in again.merges] == _merges(enc)
    n_tokens = 0
    for line in held_out:
        ids = enc.encode_ordinary(line)
        assert again.encode_ordinary(line) == ids, "the reloaded model encodes %r differently" % line[:80]
        assert again.decode(ids) == line
        n_tokens += len(ids)
    assert n_tokens > 1000
    text = "<|endoftext|>" + held_out[0] + "<|pad|>"
    assert again.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert again.encode(text, allowed_special="all")[0] == enc.encode_single_token("<|endoftext|>")


def _random_corpus(rng):
    """A few short documents over a small alphabet (so pairs repeat, runs and ties abound),
    with spaces, newlines and a 3-byte and a 4-byte character."""
    alphabet = rng.choice(["ab ", "abc \n", "a\u00e9 b", "a\u4e2d b\U0001f642", "aaab  "])
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
            for _ in range(rng.randrange(0, 8))]


def _random_specials(rng, docs, colliding):
    """Special tokens. colliding: some are, in HuggingFace's vocabulary, the byte-level string of
    a piece of the text (a merged token's string, or a byte's character) or one character of it;
    else they are texts like <|endoftext|> that no token's string equals."""
    out = []
    text = "".join(docs).encode("utf-8") or b"a"
    for _ in range(rng.randrange(1 if colliding else 0, 3)):
        if colliding:
            i = rng.randrange(len(text))
            piece = text[i:i + rng.randrange(1, 4)]
            out.append(rng.choice([train_reference.byte_level(piece),
                                   piece.decode("utf-8", "ignore") or "a"]))
        else:
            out.append(rng.choice(["<|endoftext|>", "<|pad|>", "<|fim_prefix|>"]))
    return tuple(dict.fromkeys(out))


def _check_random_corpora(seed, trials, colliding, paper):
    import random
    rng = random.Random(seed)
    train = _train()
    for trial in range(trials):
        docs = _random_corpus(rng)
        specials = _random_specials(rng, docs, colliding)
        mf = rng.choice([0, 0, 0, 2, 3])
        extra = rng.randrange(0, 25)
        vocab = 256 + len(specials) + extra
        enc = train(iter(docs), vocab_size=vocab, mode="hf", special_tokens=specials,
                    min_frequency=mf)
        theirs = generate_train.hf_train(generate_train.hf_sequences(docs), vocab, specials, mf)
        diff = generate_train.first_difference(train_reference.merge_bytes(_merges(enc)), theirs)
        assert diff is None, "trial %d, hf, documents %r, specials %r, min_frequency %d: %s" % (
            trial, docs, specials, mf, diff)
        if not paper:
            continue
        for alphabet in ("bytes", "ube"):
            alpha = len(train_reference.alphabet_symbols("paper", alphabet))
            opts = dict(vocab_size=alpha + len(specials) + extra, mode="paper", alphabet=alphabet,
                        special_tokens=specials, min_frequency=mf)
            want = [tuple(m) for m in train_reference.train(docs, **opts)]
            assert _merges(train(iter(docs), **opts)) == want, (
                "trial %d, paper/%s, documents %r, specials %r, min_frequency %d" % (
                    trial, alphabet, docs, specials, mf))


def test_random_small_corpora():
    """300 random small corpora: hf mode against tokenizers (with special tokens and
    min_frequency), paper mode over bytes and UBE against the reference trainer."""
    _check_random_corpora(20261201, 300, colliding=False, paper=True)


def test_random_small_corpora_special_collisions():
    """hf mode against tokenizers with special tokens that collide in HuggingFace's vocabulary:
    a special whose text is a byte's byte-level character takes that byte's place (its id
    orders it first in ties), one whose text is a merged token's string makes that merge take
    the special's id without growing the vocabulary; either way HuggingFace makes one merge
    more (vectors/train_reference.py; the .../special-collision cases of the vectors)."""
    _check_random_corpora(20261202, 200, colliding=True, paper=False)


def test_target_past_the_id_limit_stays_capped_after_the_specials(backend):
    """hf mode: a vocab_size past the rules model's id limit (2^21 - 1 ids) is capped by
    st_trainer_new, and setting the special tokens (which recomputes the target from HuggingFace's
    vocabulary) keeps it capped: every merge takes an id of the written model."""
    b = get_backend(backend)
    c = b.counter_new(3, 0, None)
    t = None
    try:
        b.counter_add(c, b"a tiny text to count\n", 1)
        t = b.trainer_new(c, 1, 0, 1 << 40, 0, 2)  # ST_TRAIN_HF, ST_ALPHABET_BYTES
        b.trainer_set_specials(t, [b"a", b"<|b|>"])  # "a" takes byte a's place: HF's vocabulary is 257
        assert b.trainer_stat(t, 1) == (1 << 21) - 2 - 256 - 2  # ST_TRAINER_TARGET
    finally:
        if t is not None:
            b.trainer_free(t)
        b.counter_free(c)
