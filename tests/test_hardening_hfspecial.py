"""hf training: a special token whose text is already a token's string shares that token's id.

HuggingFace's BpeTrainer adds the special tokens first and then skips every alphabet character
and merged string already in its vocabulary, so a special "a" and the byte-level token "a" are
one id and the vocabulary holds exactly vocab_size entries. An hf-trained model does the same:
the special takes the id of the token whose bytes it spells (n_vocab == vocab_size), the merges
stay HuggingFace's, and every consumer (encode, decode, special_tokens_set, save/load, export to
tiktoken and tokenizer.json) sees one id. Paper mode gives every special an id of its own.
"""
import json

import pytest

import supertok
import generate_train
import train_reference

pytestmark = pytest.mark.filterwarnings("ignore::supertok.TrainWarning")

DOCS = ["the cat sat at the mat, a hat at that cat; then the rat ate the oat\n"] * 12 + [
    "a bat and a gnat, the end\n"] * 5 + ["(the)(the)(the)\n"] * 4


def _hf(vocab_size, specials):
    return supertok.train(iter(DOCS), vocab_size=vocab_size, special_tokens=specials, mode="hf")


def _hf_oracle(vocab_size, specials):
    """HuggingFace's trainer on the same pretokens: (its merges as bytes, its vocabulary size)."""
    seqs = generate_train.hf_sequences(DOCS, "o200k")
    return generate_train.hf_train(seqs, vocab_size, specials)


CASES = [
    (258, ["a", "<|x|>"]),          # a byte's string
    (262, ["a"]),
    (264, ["<|endoftext|>", "the"]),  # a merge's string ("the" is merged by then)
    (262, ["the", "a", "<|pad|>"]),
]


@pytest.mark.slow_on_pywasm("specials1", "specials2", "specials3")  # a training each there: the fast lane takes one
@pytest.mark.parametrize("vocab_size,specials", CASES)
def test_colliding_special_shares_the_token_id(backend, vocab_size, specials):
    enc = _hf(vocab_size, specials)
    # HuggingFace's merges, merge for merge
    ours = train_reference.merge_bytes([tuple(m) for m in enc.merges])
    theirs = _hf_oracle(vocab_size, specials)
    assert generate_train.first_difference(ours, theirs) is None
    # as many ids as vocab_size, as HuggingFace's vocabulary
    assert enc.n_vocab == vocab_size
    assert enc.max_token_value == vocab_size - 1
    assert enc.special_tokens_set == set(specials)
    tokens = {}
    for k, (left, right) in enumerate(ours):
        tokens.setdefault(left + right, 256 + k)
    tokens.update((bytes([b]), b) for b in range(256))
    for s in specials:
        i = enc._special_tokens[s]
        assert enc.decode_single_token_bytes(i) == s.encode()
        # the id of the token it spells, if any; else one of the ids after the merges
        assert i == tokens[s.encode()] if s.encode() in tokens else i >= 256 + len(ours)
    # encode / decode: the special matches and gives the shared id
    text = "a cat at the mat" + "".join(s for s in specials if s.startswith("<"))
    ids = enc.encode(text, allowed_special="all")
    assert enc.decode(ids) == text
    if "a" in specials:
        assert ids[0] == 97
        assert enc.encode("a", allowed_special={"a"}) == [97]
        assert enc.encode_ordinary("a") == [97]
    # save and load: the same ids
    enc2 = supertok.load_model(enc._model_data)
    assert enc2.n_vocab == vocab_size and enc2._special_tokens == enc._special_tokens
    assert enc2.encode(text, allowed_special="all") == ids


def test_a_byte_special_shares_the_byte_id(backend):
    enc = _hf(258, ["a", "<|x|>"])
    assert enc.n_vocab == 258
    assert enc._special_tokens == {"a": 97, "<|x|>": 257}
    assert len(enc.merges) == 1
    assert b"specials 2\n97 a\n257 <|x|>\n" in enc._model_data


def test_merge_string_special_shares_the_merge_id(backend):
    enc = _hf(264, ["<|endoftext|>", "the"])
    merged = {}
    for k, (left, right) in enumerate(train_reference.merge_bytes([tuple(m) for m in enc.merges])):
        merged.setdefault(left + right, 256 + k)
    assert b"the" in merged
    assert enc._special_tokens["the"] == merged[b"the"]
    assert enc._special_tokens["<|endoftext|>"] == 256 + len(enc.merges)
    assert enc.n_vocab == 264


@pytest.mark.slow_on_pywasm("specials1", "specials2", "specials3")  # a training each there: the fast lane takes one
@pytest.mark.parametrize("vocab_size,specials", CASES)
def test_export_to_tokenizers_and_tiktoken_gives_equal_ids(backend, tmp_path, vocab_size, specials):
    from tokenizers import Tokenizer
    enc = _hf(vocab_size, specials)
    texts = ["a cat", "the mat at a hat", "ta" + "".join(specials) + " a", "then the rat"]
    for fmt in ("hf", "tiktoken"):
        res = enc.export(str(tmp_path / ("out." + fmt)), fmt, sample=texts)
        assert res.ok, supertok._export.describe(res)
        assert res.checked and not res.mismatches and not res.duplicates
    tok = Tokenizer.from_file(str(tmp_path / "out.hf"))
    assert tok.get_vocab_size() == vocab_size
    for t in texts:
        assert tok.encode(t, add_special_tokens=False).ids == enc.encode(t, allowed_special="all")
    data = json.loads((tmp_path / "out.hf").read_text("utf-8"))
    for s in specials:
        assert tok.token_to_id(s) == enc._special_tokens[s]
    if "a" in specials:
        assert data["model"]["vocab"]["a"] == 97


def test_same_vocabulary_as_huggingface(backend):
    """HuggingFace's own tokenizer after BpeTrainer: the same strings, as many ids."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    specials = ["a", "<|x|>", "the"]
    vocab_size = 262
    enc = _hf(vocab_size, specials)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(generate_train.HF_DELIM, behavior="removed"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=specials, show_progress=False)
    tok.train_from_iterator(generate_train.hf_sequences(DOCS, "o200k"), trainer)
    assert tok.get_vocab_size() == vocab_size == enc.n_vocab
    chars = _gpt2_byte_chars()
    ours = {"".join(chars[x] for x in enc.decode_single_token_bytes(i)) for i in range(enc.n_vocab)
            if i not in enc._special_token_values or i in enc._shared_special_ids}
    ours |= set(specials)
    assert ours == set(tok.get_vocab())


def _gpt2_byte_chars():
    """GPT-2's bytes_to_unicode (openai/gpt-2, src/encoder.py), which HuggingFace's ByteLevel uses:
    the character standing for each byte, by byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = dict(zip(bs, cs))
    return [chr(table[b]) for b in range(256)]


def test_mergeable_ranks_keep_the_shared_token(backend):
    enc = _hf(258, ["a", "<|x|>"])
    ranks = enc._mergeable_ranks
    assert ranks[b"a"] == 97 and len(ranks) == 257


def test_paper_mode_special_keeps_its_own_id(backend):
    enc = supertok.train(iter(DOCS), vocab_size=250, special_tokens=["a"], mode="paper")
    assert enc._special_tokens["a"] == 256 + len(enc.merges)
    assert enc.encode("a", allowed_special="all") == [256 + len(enc.merges)]
    assert enc.encode_ordinary("a") == [97]


def _model(specials_lines, alphabet="bytes"):
    n = len(specials_lines)
    return ("supertok-model 1\nname m\nkind rules\nalphabet %s\npattern o200k\nscript-aware no\n"
            "merges 2\n97 98\n256 99\nspecials %d\n%send\n" % (alphabet, n, "".join(l + "\n" for l in specials_lines))
            ).encode()


def test_model_file_shared_special(backend):
    enc = supertok.load_model(_model(["97 a", "257 abc", "258 <|x|>"]))
    assert enc.n_vocab == 259 and enc._special_tokens == {"a": 97, "abc": 257, "<|x|>": 258}
    assert enc.encode("xabc a", allowed_special="all") == [120, 257, 32, 97]
    assert enc.encode_ordinary("abc") == [257]
    assert enc.decode([257, 97]) == "abca"


@pytest.mark.parametrize("line,why", [
    ("97 b", "specials[0]: id 97 is an ordinary token's, and the text is not its bytes"),
    ("257 abd", "specials[0]: id 257 is an ordinary token's, and the text is not its bytes"),
    ("257 ab", "specials[0]: id 257 is an ordinary token's, and the text is not its bytes"),
])
def test_model_file_special_must_spell_the_token_it_shares(backend, line, why):
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        supertok.load_model(_model([line]))


def test_ube_model_special_cannot_share(backend):
    data = _model(["97 a"], alphabet="ube").replace(b"256 99", b"512 99")
    with pytest.raises(ValueError, match="is an ordinary token's id"):
        supertok.load_model(data)


def test_merges_constructor_checks_shared_special(backend):
    pat = supertok.get_encoding("gpt2")._pat_str
    enc = supertok.Encoding(name="m", pat_str=pat, merges=[(97, 98)], special_tokens={"ab": 256, "<|x|>": 257})
    assert enc.n_vocab == 258 and enc.encode("ab", allowed_special="all") == [256]
    with pytest.raises(ValueError, match="not its bytes"):
        supertok.Encoding(name="m", pat_str=pat, merges=[(97, 98)], special_tokens={"ba": 256})


@pytest.mark.parametrize("special,byte", [("é", 0xE9), ("Ġ", 0x20)])
def test_byte_level_only_collision_keeps_its_own_id(backend, special, byte):
    """HuggingFace's vocabulary puts "é" at the byte 0xE9's id (its byte-level character), but
    the special's bytes are C3 A9: it cannot be that token, so it keeps an id of its own (the
    documented exception: one id more than vocab_size), and the merges stay HuggingFace's."""
    enc = _hf(262, [special])
    ours = train_reference.merge_bytes([tuple(m) for m in enc.merges])
    assert generate_train.first_difference(ours, _hf_oracle(262, [special])) is None
    assert enc.n_vocab == 263
    assert enc._special_tokens[special] == 256 + len(enc.merges)
    assert enc.decode(enc.encode(special + " a", allowed_special="all")) == special + " a"
    assert enc.decode_single_token_bytes(byte) == bytes([byte])
