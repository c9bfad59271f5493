"""Regenerate the trainer's golden vectors in vectors/train/ from the naive reference trainer.

    python vectors/generate_train.py           write vectors/train/corpora.jsonl and merges.jsonl
    python vectors/generate_train.py --check   regenerate in memory; exit 1 naming every stale file

The expected merges come from vectors/train_reference.py (docs/design.md §8, written for clarity:
every pair recounted from scratch at every step). Every `hf` case is also trained by HuggingFace
tokenizers itself (the pinned oracle, tokenizers==0.23.3) on exactly the reference's pretokens,
and the generator stops, naming the case and the first differing merge, on any difference; so
the hf vectors are HuggingFace's merges (their counts are the reference's: HuggingFace does not
report counts).

How HuggingFace is made to see our pretokens: each document's pretokens (vectors/oracle.py, the
regex-based reference pre-tokenizer) are joined with U+E000, which no corpus here contains (the
generator checks), and the document is one training sequence for a tokenizer whose
pre-tokenizer splits on U+E000 (removing it) and then maps bytes to byte-level characters
(ByteLevel with add_prefix_space=False, use_regex=False); no normalizer. BpeTrainer gets
vocab_size, initial_alphabet=ByteLevel.alphabet(), special_tokens, min_frequency and
show_progress=False. Its merges (byte-level strings) are mapped back to bytes and compared with
the reference's.

Superword cases (paper mode; HuggingFace has no superwords): vectors/train_reference.py's
train_superwords gives the kept merges and the supermerges (BoundlessBPE, SuperBPE(r, s), with or
without the n-gram split). For every BoundlessBPE case without the split the generator also runs
SuperBPE with the s it ended with, stops if the two differ (the invariant of docs/design.md §8),
and writes that case too.

Corpora: lines of the UDHR excerpts vendored in vectors/texts/udhr.jsonl (real text in several
scripts; each line one document, its '\\n' kept, as a .txt file is read) and hand-written
engineered corpora (runs, ties, cross-script words, UBE-routed text, empty and one-document
corpora, CRLF, special tokens in the text; for superwords repeated words, runs cut by digits and
punctuation, tied candidates, Han words, single-letter pretokens and a seeded corpus of recurring
phrases). Output is byte-for-byte deterministic.
"""
import importlib.metadata
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "train")
GENERATED_BY = "python vectors/generate_train.py"
ORACLE_TOKENIZERS = "0.23.3"
ORACLE_REGEX = "2024.11.6"

sys.path.insert(0, HERE)
import oracle  # noqa: E402
import train_reference as ref  # noqa: E402
from generate_ube import _dump  # noqa: E402  (the escapes shared by every vector file)

# ---------------------------------------------------------------------------------------------
# The HuggingFace oracle.

HF_DELIM = "\ue000"  # joins a document's pretokens; no corpus may contain it
_UNCHAR = {cp: b for b, cp in ref.GPT2_CHAR.items()}


def require_tokenizers():
    """tokenizers, if it is the pinned version; else exit naming what is installed."""
    try:
        have = importlib.metadata.version("tokenizers")
    except importlib.metadata.PackageNotFoundError:
        have = None
    if have != ORACLE_TOKENIZERS:
        sys.exit("generate_train.py: needs tokenizers==%s (the pinned oracle for hf mode), found %s;"
                 " pip install tokenizers==%s" % (ORACLE_TOKENIZERS, have, ORACLE_TOKENIZERS))
    import tokenizers
    return tokenizers


def hf_sequences(documents, pattern="o200k", script_aware=False, scripts=None, split=None):
    """One training sequence per document: its pretokens joined with HF_DELIM. split (a
    function text -> pretokens) replaces vectors/oracle.py's pre-tokenizer when given."""
    out = []
    for k, doc in enumerate(documents):
        if HF_DELIM in doc:
            raise ValueError("document %d contains U+E000, the separator the HuggingFace check "
                             "joins pretokens with" % k)
        pieces = split(doc) if split else oracle.pretokenize(doc, pattern, script_aware, scripts)
        out.append(HF_DELIM.join(pieces))
    return out


def hf_train(sequences, vocab_size, special_tokens=(), min_frequency=0):
    """HuggingFace BpeTrainer's merges on sequences made by hf_sequences, as (left bytes,
    right bytes) in order."""
    tk = require_tokenizers()
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(HF_DELIM, behavior="removed"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    trainer = trainers.BpeTrainer(vocab_size=vocab_size,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=list(special_tokens), min_frequency=min_frequency,
                                  show_progress=False)
    tok.train_from_iterator(sequences, trainer)
    assert tk.__version__ == ORACLE_TOKENIZERS
    merges = json.loads(tok.to_str())["model"]["merges"]
    out = []
    for m in merges:
        left, right = m.split(" ") if isinstance(m, str) else m
        out.append((bytes(_UNCHAR[ord(c)] for c in left), bytes(_UNCHAR[ord(c)] for c in right)))
    return out


def hf_special_collision(merges, special_tokens):
    """Whether a special token's text is, in HuggingFace's vocabulary, the string of a byte
    (its byte-level character) or of one of these merges: then HuggingFace's vocabulary counts
    it once, and it makes one more merge than vocab_size - 256 - len(special_tokens)."""
    strings = {ref.byte_level(bytes([b])) for b in range(256)}
    strings.update(ref.byte_level(l + r) for l, r in ref.merge_bytes(merges))
    return any(s in strings for s in special_tokens)


def first_difference(a, b):
    """A line naming the first index where two merge lists differ, or None."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return "merge %d: reference %r, HuggingFace %r" % (i, x, y)
    if len(a) != len(b):
        return "lengths differ: reference %d merges, HuggingFace %d" % (len(a), len(b))
    return None


# ---------------------------------------------------------------------------------------------
# Corpora.

# Scripts taken from the UDHR excerpts: (corpus name, the excerpts' dominant script)
UDHR_SCRIPTS = [("udhr_latin", "Latin"), ("udhr_cyrillic", "Cyrillic"), ("udhr_greek", "Greek"),
                ("udhr_arabic", "Arabic"), ("udhr_devanagari", "Devanagari"), ("udhr_han", "Han"),
                ("udhr_japanese", "Hiragana"), ("udhr_thai", "Thai"), ("udhr_hangul", "Hangul")]
UDHR_PER_SCRIPT = 2  # translations per script corpus (the first ones of vectors/texts/udhr.jsonl)


def txt_documents(text):
    """The documents of a .txt file holding text: each line with its '\n' (only '\n' ends a
    line; a last line without one is a document too)."""
    lines = text.split("\n")
    return [line + "\n" for line in lines[:-1]] + ([lines[-1]] if lines[-1] else [])


def udhr_corpora():
    """{name: documents} and the UDHR codes used: from the `encode` excerpts (about 450
    characters each, article 13 of each translation), the first UDHR_PER_SCRIPT translations of
    each script, one document per line; udhr_mixed holds the first of each script."""
    import vendor_udhr
    by_script = {}
    for code, script, text in vendor_udhr.excerpts("encode"):
        by_script.setdefault(script, []).append((code, text))
    out, codes = {}, []
    mixed = []
    for name, script in UDHR_SCRIPTS:
        chosen = by_script[script][:UDHR_PER_SCRIPT]
        docs = []
        for code, text in chosen:
            docs += txt_documents(text)
            codes.append(code)
        out[name] = docs
        mixed += txt_documents(chosen[0][1])
    out["udhr_mixed"] = mixed
    return out, sorted(set(codes))


ENGINEERED = {
    # identical symbols: (a, a) counts floor(k/2) per run in paper mode, k-1 in hf mode
    "runs": ["aaaaa", "aaaa aaa", "aaa", "a aa aaa aaaa aaaaa aaaaaa aaaaaaa", "bbbbbbbbb b bb",
             "abababab aabbaabb", "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"],
    # every pair equally often: only the tie rule decides
    "ties": ["ab cd ef gh", "ba dc fe hg", "xy yx", "\u00e9a a\u00e9", "!a a!", "ZZ zz",
             "\u4e2d\u6587 \u6587\u4e2d", "~a a~"],
    # words mixing scripts in one pretoken, and scripts next to each other
    "cross_script": ["na\u00efve\u4e2d\u6587\u0444x na\u00efve\u4e2d\u6587\u0444x",
                     "abc\u0434\u0435\u0436 abc\u0434\u0435\u0436 \u03a9mega \u03a9mega",
                     "\u6771\u4eactower \u6771\u4eactower kilo\u7c73 kilo\u7c73",
                     "\u0645\u0631\u062d\u0628\u0627world \u0928\u092e\u0938\u094dte",
                     "\u30c6\u30b9\u30c8test\u30c6\u30b9\u30c8 \u0e44\u0e17\u0e22abc"],
    # text routed to UTF-16 in UBE: CJK, Devanagari, kana, emoji (surrogate pairs)
    "ube_text": ["\u4e2d\u6587\u4e2d\u6587 \u4f60\u597d\u4f60\u597d \u4e16\u754c",
                 "\u0928\u092e\u0938\u094d\u0924\u0947 \u0928\u092e\u0938\u094d\u0924\u0947 "
                 "\u0939\u093f\u0928\u094d\u0926\u0940",
                 "\U0001f642\U0001f642\U0001f642 \U0001f44d\U0001f3fd\U0001f44d\U0001f3fd "
                 "\U0001f600\U0001f600",
                 "\u3072\u3089\u304c\u306a \u30ab\u30bf\u30ab\u30ca \u3072\u3089\u304c\u306a",
                 "\ud55c\uad6d\uc5b4 \ud55c\uad6d\uc5b4 \u0440\u0443\u0441\u0441\u043a\u0438\u0439"],
    "empty": [],
    "empty_documents": ["", "", ""],
    "one_document": ["the cat sat on the mat; the cat had the hat, and the hat sat on the cat."],
    # '\r\n' line ends: pretokens over \r\n, and a document per line as a .txt file gives them
    "crlf": ["line one\r\n", "line two\r\n", "\r\n", "x\r\n\r\ny and z\r\n", "tail\r"],
    # special tokens' text counted as ordinary text
    "specials_in_text": ["hello <|endoftext|> world<|endoftext|>",
                         "<|endoftext|><|endoftext|> the end",
                         "the the the <|pad|> then the"],
    # a small piece of code: digits, punctuation runs, indentation
    "code": ["def f(x):\n", "    return x + 1  # 123456\n", "for (int i = 0; i < n; ++i) {\n",
             "\tsum += a[i];\n", "}\n", "x = [1, 22, 333, 4444]\n"],
}

# Corpora for the superword cases only (phase 2): runs of eligible pretokens.
SUPER_CORPORA = {
    # identical adjacent tokens in a candidate: (" the", " the") counts floor(k/2) per run
    "repeats": ["the the the", " the the the the", "go go go go go go go", "la la", "no no no",
                "the the the the the the the the the", "la la la la la", "go go go",
                "the the the", " the the the the", "go go go go go go go", "la la"],
    # runs cut by documents, digits, punctuation and newlines: only the parts are candidates
    "cuts": ["the cat sat on the mat", "the cat 42 sat on the mat", "the cat, sat on the. mat",
             "the cat sat\non the mat", "on the mat", "the cat", "sat 7 on 7 the 7 mat",
             "the cat sat on the mat!", "the cat sat on the mat", "the (cat) sat on the mat"],
    # candidate pairs with equal counts: the tie rule orders the supermerges
    "super_ties": ["x y", "y x", "p q", "q p", "x y", "y x", "p q", "q p", "b a", "a b", "b a",
                   "a b"],
    # Han text: script-aware, each Han character is a pretoken of its own
    "han_words": ["\u4e2d\u56fd\u4eba\u6c11", "\u4e2d\u56fd\u4eba\u6c11 \u4e2d\u56fd",
                  "\u6211\u4eec\u7684\u4e2d\u56fd", "\u4eba\u6c11\u7684\u4e16\u754c",
                  "\u4e16\u754c\u4eba\u6c11", "\u4e2d\u56fd\u4eba\u6c11\uff0c\u4e16\u754c",
                  "\u6211\u4eec\u7684\u4e16\u754c", "\u4e2d\u56fd\u4eba\u6c11\u7684"] * 2,
    # o200k cuts "aB" into "a", "B": runs of single-letter pretokens (base symbols, eligible
    # even with no merge)
    "single_letters": ["aB", "aB", "aB", "xY", "xY", "qQ", "aBaB", "aB xY"],
}


# Words and frequent phrases the "phrases" corpus is drawn from (a seeded random.Random): long
# runs of eligible pretokens, each document's run unique, holding phrases that recur more than
# 15 times, so the n-gram split (c_min = 15) cuts the runs into them.
PHRASE_WORDS = ["cat", "dog", "house", "river", "green", "small", "walks", "sees", "runs", "old",
                "tree", "light"]
PHRASES = ["of the", "in the", "at the end of the", "in order to", "as well as", "on top of"]


def phrases_corpus():
    import random
    rng = random.Random(11)
    docs = []
    for k in range(60):
        parts = []
        for _ in range(rng.randint(3, 7)):
            parts.append(rng.choice(PHRASES) if rng.random() < 0.5 else rng.choice(PHRASE_WORDS))
        text = " ".join(parts)
        if k % 7 == 3:  # a digit or a comma cuts the run
            words = text.split(" ")
            cut = len(words) // 2
            text = " ".join(words[:cut]) + (" 12 " if k % 2 else ", ") + " ".join(words[cut:])
        docs.append(text + "\n")
    return docs


SUPER_CORPORA["phrases"] = phrases_corpus()


# Corpora for the extension cases only (SuperBPE Stage 2): Stage-2 chunks span words, so recurring
# lines make multi-word tokens; the cap of four words and the colon-space block must stop some.
EXTEND_CORPORA = {
    "colon_lines": (["Name: Alice Smith\n", "Date: the first of May\n", "at the end of the day we go home\n",
                     "Note: at the end of the day\n", "key:value and key: value\n",
                     "one two three four five six\n", "a b c d e f g h\n"] * 6
                    + ["Name: Bob Jones\n", "time: 12:30 or 13:45\n", "  spaces   before\n"] * 3),
}


def build_corpora():
    udhr, codes = udhr_corpora()
    corpora = dict(udhr)
    corpora.update(ENGINEERED)
    corpora.update(SUPER_CORPORA)
    corpora.update(EXTEND_CORPORA)
    return corpora, codes


# ---------------------------------------------------------------------------------------------
# Cases.

MERGES = 48  # merges wanted in an ordinary case (the vocabulary is the alphabet + specials + this)


def _case(corpus, mode="paper", alphabet="bytes", pattern="o200k", script_aware=False,
          scripts=None, special_tokens=(), min_frequency=0, merges=MERGES, vocab_size=None,
          name=None, algorithm="bpe", supermerges=None, ngram_split=False):
    return dict(corpus=corpus, mode=mode, alphabet=alphabet, pattern=pattern,
                script_aware=script_aware, scripts=scripts, special_tokens=list(special_tokens),
                min_frequency=min_frequency, merges_wanted=merges, vocab_size=vocab_size,
                name=name, algorithm=algorithm, supermerges=supermerges, ngram_split=ngram_split)


UDHR_NAMES = [n for n, _ in UDHR_SCRIPTS]
ENDOFTEXT = "<|endoftext|>"


def case_list():
    out = []
    # every mode x alphabet on every corpus (hf with bytes only)
    for corpus in UDHR_NAMES + ["udhr_mixed"] + list(ENGINEERED):
        out.append(_case(corpus, "paper", "bytes"))
        out.append(_case(corpus, "hf", "bytes"))
        out.append(_case(corpus, "paper", "ube"))
    # the other patterns
    for corpus in ("udhr_mixed", "udhr_latin", "runs", "crlf", "code", "ties"):
        for pattern in ("gpt2", "cl100k"):
            out.append(_case(corpus, "paper", "bytes", pattern))
            out.append(_case(corpus, "hf", "bytes", pattern))
        out.append(_case(corpus, "paper", "ube", "gpt2"))
    # script-aware, default scripts and custom lists
    for corpus in ("udhr_mixed", "udhr_japanese", "udhr_thai", "udhr_han", "cross_script",
                   "ube_text"):
        for scripts in (None, ["Han"], ["Latin", "Greek"], []):
            out.append(_case(corpus, "paper", "bytes", script_aware=True, scripts=scripts))
            out.append(_case(corpus, "paper", "ube", script_aware=True, scripts=scripts))
        out.append(_case(corpus, "hf", "bytes", script_aware=True))
        out.append(_case(corpus, "hf", "bytes", "cl100k", script_aware=True, scripts=["Han"]))
    # min_frequency stops training before the vocabulary is full
    for mode, alphabet in (("paper", "bytes"), ("hf", "bytes"), ("paper", "ube")):
        for corpus, mf in (("udhr_mixed", 3), ("runs", 2), ("one_document", 2), ("udhr_han", 5)):
            out.append(_case(corpus, mode, alphabet, min_frequency=mf, merges=400))
    # training until no pair is left
    for mode, alphabet in (("paper", "bytes"), ("hf", "bytes"), ("paper", "ube")):
        for corpus in ("runs", "one_document", "ties", "crlf"):
            out.append(_case(corpus, mode, alphabet, merges=1000,
                             name="%s/%s-%s/until-no-pair" % (corpus, mode, alphabet)))
    # vocab_size exactly the alphabet (+ specials): no merge
    for mode, alphabet in (("paper", "bytes"), ("hf", "bytes"), ("paper", "ube")):
        out.append(_case("udhr_latin", mode, alphabet, merges=0))
        out.append(_case("udhr_latin", mode, alphabet, merges=0, special_tokens=[ENDOFTEXT]))
        out.append(_case("udhr_latin", mode, alphabet, merges=1))
    # special tokens: present in the text (counted as text), several, absent
    for mode, alphabet in (("paper", "bytes"), ("hf", "bytes"), ("paper", "ube")):
        out.append(_case("specials_in_text", mode, alphabet, special_tokens=[ENDOFTEXT]))
        out.append(_case("specials_in_text", mode, alphabet,
                         special_tokens=[ENDOFTEXT, "<|pad|>", "<|fim_prefix|>"]))
        out.append(_case("udhr_mixed", mode, alphabet, special_tokens=[ENDOFTEXT, "<|pad|>"]))
    # hf: a special whose text is a merged token's string (HuggingFace reuses the special's id
    # and its vocabulary does not grow: one more merge) or one byte-level character (it takes
    # the special's id, which orders it first in ties)
    for specials in (["the"], ["then", "he"], ["a"], ["\u00e9"], ["\u0120"], [ENDOFTEXT, "the"]):
        out.append(_case("one_document", "hf", "bytes", special_tokens=specials, merges=6))
        out.append(_case("one_document", "paper", "bytes", special_tokens=specials, merges=6))
    out.append(_case("specials_in_text", "hf", "bytes", special_tokens=["the", ENDOFTEXT],
                     merges=12))
    return out


def superword_case_list():
    """The phase-2 cases (paper mode only: HuggingFace has no superwords). Every BoundlessBPE case
    without the n-gram split is followed by SuperBPE(r, s) with the s it ended with (the
    invariant: the same merges and supermerges; build() asserts it)."""
    out = []

    def both(corpus, supermerges=(), **kw):
        out.append(_case(corpus, algorithm="boundless", **kw))
        for s in supermerges:
            out.append(_case(corpus, algorithm="superbpe", supermerges=s, **kw))

    # byte alphabet, o200k, every corpus: a small and a larger vocabulary (later regular merges
    # have small counts, so frequent candidates win more often in the larger one)
    for corpus in (UDHR_NAMES + ["udhr_mixed"] + list(ENGINEERED) + list(SUPER_CORPORA)):
        both(corpus, (5,))
        if corpus not in ("empty", "empty_documents"):
            both(corpus, (20,), merges=150)
    # UBE alphabet
    for corpus in ("udhr_latin", "udhr_cyrillic", "udhr_mixed", "one_document", "ube_text",
                   "phrases", "repeats", "cross_script", "udhr_han", "han_words"):
        both(corpus, (5,), alphabet="ube", merges=150)
    # script-aware: single Han (kana, Thai) characters are pretokens that form superwords
    for corpus in ("udhr_han", "udhr_japanese", "udhr_thai", "han_words", "ube_text",
                   "cross_script", "udhr_mixed"):
        for alphabet in ("bytes", "ube"):
            both(corpus, (10,), alphabet=alphabet, merges=150, script_aware=True)
        both(corpus, (), alphabet="ube", merges=150, script_aware=True, scripts=["Han"])
    # other patterns
    for corpus in ("udhr_latin", "one_document", "phrases", "code", "crlf"):
        for pattern in ("gpt2", "cl100k"):
            both(corpus, (), pattern=pattern, merges=100)
    # min_frequency: phase 1 stops early, supermerges need the count too
    for corpus, mf in (("udhr_mixed", 3), ("phrases", 4), ("one_document", 2), ("repeats", 2),
                       ("han_words", 3)):
        both(corpus, (10, 400), merges=400, min_frequency=mf)
        both(corpus, (), alphabet="ube", merges=400, min_frequency=mf,
             script_aware=corpus == "han_words")
    # until no pair is left (phase 1 ends early), then supermerges fill the vocabulary until no
    # candidate pair is left; SuperBPE asking for more supermerges than the candidates allow
    for corpus in ("one_document", "repeats", "cuts", "super_ties", "phrases", "han_words"):
        both(corpus, (3, 40, 900), merges=1000, script_aware=corpus == "han_words")
    # special tokens (their text is ordinary text)
    both("specials_in_text", (4,), special_tokens=[ENDOFTEXT, "<|pad|>"], merges=60)
    both("udhr_mixed", (), special_tokens=[ENDOFTEXT], alphabet="ube", merges=150)
    # SuperBPE edge cases: no supermerge wanted; every merge a supermerge (r = 0: the eligible
    # pretokens are single base symbols)
    out.append(_case("one_document", algorithm="superbpe", supermerges=0, merges=48))
    out.append(_case("single_letters", algorithm="superbpe", supermerges=48, merges=48))
    out.append(_case("udhr_latin", algorithm="superbpe", supermerges=48, merges=48,
                     script_aware=True, scripts=["Latin", "Greek"]))
    # script-aware with Latin chosen: every letter is a pretoken, so supermerges spell words
    both("udhr_latin", (10,), merges=100, script_aware=True, scripts=["Latin", "Greek"])
    both("single_letters", (), merges=48)
    # the n-gram split (Appendix B): c_min = max(last merge count, 15)
    for corpus, merges in (("phrases", 1000), ("phrases", 150), ("phrases", 40), ("phrases", 12),
                           ("repeats", 1000), ("udhr_latin", 150), ("udhr_mixed", 400),
                           ("one_document", 1000), ("han_words", 1000), ("cuts", 1000)):
        for alphabet in ("bytes", "ube"):
            kw = dict(alphabet=alphabet, merges=merges, ngram_split=True,
                      script_aware=corpus == "han_words")
            out.append(_case(corpus, algorithm="boundless", **kw))
            out.append(_case(corpus, algorithm="superbpe", supermerges=10, **kw))
    out.append(_case("phrases", algorithm="boundless", merges=1000, ngram_split=True,
                     min_frequency=2))
    return out


def extend_case_list():
    """Extension cases (SuperBPE Stage 2, paper mode): a base trained on the corpus (o200k, paper
    mode, base_merges merges), its first seed_merges merges replayed, then `merges` more."""
    out = []

    def case(corpus, alphabet="bytes", pattern=EXTEND_PATTERN, base_merges=40, seed_merges=None, merges=60,
             min_count=1, min_frequency=2):
        out.append(dict(corpus=corpus, alphabet=alphabet, pattern=pattern, base_merges=base_merges,
                        seed_merges=base_merges if seed_merges is None else seed_merges,
                        merges_wanted=merges, min_count=min_count, min_frequency=min_frequency))

    for corpus in ("colon_lines", "phrases", "udhr_latin", "udhr_mixed", "one_document", "crlf", "code"):
        for alphabet in ("bytes", "ube"):
            case(corpus, alphabet)
    for corpus in ("colon_lines", "phrases"):
        for alphabet in ("bytes", "ube"):
            case(corpus, alphabet, min_count=5, merges=400)  # until no allowed pair is left
            case(corpus, alphabet, seed_merges=0)
            case(corpus, alphabet, seed_merges=15, min_count=2)
            case(corpus, alphabet, min_frequency=0)
        case(corpus, pattern="o200k")  # the base's own pre-tokenizer: the constraints never bind
    case("udhr_cyrillic", "ube", min_count=2, merges=100)
    case("empty", "bytes")
    case("colon_lines", base_merges=0)
    return out


EXTEND_PATTERN = "superbpe"  # SuperBPE's Stage-2 pre-tokenizer


def extend_case_name(c):
    return "%s/extend-%s/%s/base%d-seeds%d/min-count-%d/min-frequency-%d/v%d" % (
        c["corpus"], c["alphabet"], c["pattern"], c["base_merges"], c["seed_merges"], c["min_count"],
        c["min_frequency"], c["vocab_size"])


def run_extend_case(c, corpora):
    docs = corpora[c["corpus"]]
    alpha = len(ref.alphabet_symbols("paper", c["alphabet"]))
    base = ref.train(docs, alpha + c["base_merges"], alphabet=c["alphabet"], pattern="o200k")
    c["seed_merges"] = min(c["seed_merges"], len(base))  # a small corpus gives fewer merges than asked
    c["vocab_size"] = alpha + c["seed_merges"] + c["merges_wanted"]
    seeds = [(l, r) for l, r, _ in base[:c["seed_merges"]]]
    merges = ref.train_extension(docs, c["vocab_size"], seeds, alphabet=c["alphabet"], pattern=c["pattern"],
                                 min_count=c["min_count"], min_frequency=c["min_frequency"])
    sym = {i: (i,) for i in range(ref.BASE[c["alphabet"]])}
    for i, (l, r, _) in enumerate(merges):
        sym[ref.BASE[c["alphabet"]] + i] = sym[l] + sym[r]
        if i >= len(seeds) and ref.breaks_constraints(sym[l] + sym[r], 4, True):
            raise SystemExit("generate_train.py: case %s: merge %d breaks the constraints" % (extend_case_name(c), i))
    return {"case": extend_case_name(c), "corpus": c["corpus"], "alphabet": c["alphabet"], "pattern": c["pattern"],
            "base_merges": [[l, r] for l, r, _ in base], "seed_merges": c["seed_merges"],
            "vocab_size": c["vocab_size"], "min_count": c["min_count"], "min_frequency": c["min_frequency"],
            "max_words": 4, "colon_space": True, "alphabet_size": alpha,
            "merges": [list(m) for m in merges]}


def case_name(c):
    if c["name"]:
        return c["name"]
    parts = [c["corpus"], "%s-%s" % (c["mode"], c["alphabet"]), c["pattern"]]
    if c["script_aware"]:
        parts.append("script-aware" + ("" if c["scripts"] is None
                                       else "[%s]" % ",".join(c["scripts"])))
    if c["min_frequency"]:
        parts.append("min-frequency-%d" % c["min_frequency"])
    if c["special_tokens"]:
        parts.append("specials-%s" % ",".join(c["special_tokens"]))
    parts.append("v%d" % c["vocab_size"])
    if c["algorithm"] == "boundless":
        parts.append("boundless")
    elif c["algorithm"] == "superbpe":
        parts.append("superbpe-s%d" % c["supermerges"])
    if c["ngram_split"]:
        parts.append("ngram")
    return "/".join(parts)


def run_case(c, corpora):
    """The record of one case: the reference's merges, checked against HuggingFace in hf mode."""
    docs = corpora[c["corpus"]]
    alpha = len(ref.alphabet_symbols(c["mode"], c["alphabet"]))
    if c["vocab_size"] is None:
        c["vocab_size"] = alpha + len(c["special_tokens"]) + c["merges_wanted"]
    opts = dict(vocab_size=c["vocab_size"], mode=c["mode"], alphabet=c["alphabet"],
                pattern=c["pattern"], script_aware=c["script_aware"], scripts=c["scripts"],
                special_tokens=c["special_tokens"], min_frequency=c["min_frequency"])
    supermerges = []
    if c["algorithm"] == "bpe":
        merges = ref.train(docs, **opts)
    else:
        key = (c["corpus"],) + tuple(repr(v) for v in opts.values())
        if key not in _phase1:
            _phase1[key] = ref.train(docs, **opts)
        merges, supermerges = ref.train_superwords(
            docs, algorithm=c["algorithm"], supermerges=c["supermerges"],
            ngram_split=c["ngram_split"], phase1=_phase1[key], **opts)
        if c["algorithm"] == "boundless" and not c["ngram_split"]:
            # the invariant: BoundlessBPE ending with r regular merges and s supermerges is
            # SuperBPE(r, s) on the same corpus and vocab_size
            again = ref.train_superwords(docs, algorithm="superbpe", supermerges=len(supermerges),
                                         phase1=_phase1[key], **opts)
            if again != (merges, supermerges):
                raise SystemExit("generate_train.py: case %s: BoundlessBPE (%d merges, %d "
                                 "supermerges) differs from SuperBPE with s = %d"
                                 % (case_name(c), len(merges), len(supermerges), len(supermerges)))
    name = case_name(c)
    if c["mode"] == "hf" and hf_special_collision(merges, c["special_tokens"]):
        name += "/special-collision"
    if c["mode"] == "hf":
        seqs = hf_sequences(docs, c["pattern"], c["script_aware"], c["scripts"])
        theirs = hf_train(seqs, c["vocab_size"], c["special_tokens"], c["min_frequency"])
        diff = first_difference(ref.merge_bytes(merges), theirs)
        if diff:
            raise SystemExit("generate_train.py: case %s: the reference differs from HuggingFace "
                             "tokenizers %s: %s" % (name, ORACLE_TOKENIZERS, diff))
    rec = {"case": name, "corpus": c["corpus"], "mode": c["mode"], "alphabet": c["alphabet"],
           "pattern": c["pattern"], "script_aware": c["script_aware"], "scripts": c["scripts"],
           "vocab_size": c["vocab_size"], "min_frequency": c["min_frequency"],
           "special_tokens": c["special_tokens"], "merges": [list(m) for m in merges],
           "alphabet_size": alpha, "algorithm": c["algorithm"],
           "supermerges_arg": c["supermerges"], "ngram_split": c["ngram_split"],
           "supermerges": [list(m) for m in supermerges]}
    return rec


_phase1 = {}  # phase-1 merges by (corpus, options): the superword cases share them


# ---------------------------------------------------------------------------------------------
# Output.

CORPUS_FIELDS = {
    "corpus": "the corpus name cases refer to",
    "documents": "its documents, in order: train on the list of str, each pre-tokenized on its own",
}
MERGES_FIELDS = {
    "case": "a unique name: corpus/mode-alphabet/pattern/options/v<vocab_size>, then "
            "/boundless or /superbpe-s<S> and /ngram for superword cases, and "
            "/special-collision for hf cases where a special token's text is a byte-level "
            "character or a merged token's string in HuggingFace's vocabulary",
    "corpus": "the corpus (a record of corpora.jsonl)",
    "mode": "\"paper\" (the paper's reference semantics) or \"hf\" (HuggingFace tokenizers' "
            "BpeTrainer), docs/design.md §8",
    "alphabet": "\"bytes\" (base ids 0-255, merges from 256) or \"ube\" (base ids 0-511, merges "
                "from 512)",
    "pattern": "the pre-tokenizer pattern: gpt2, cl100k or o200k",
    "script_aware": "whether the script-aware pre-tokenizer is used (docs/design.md §5)",
    "scripts": "null for the default script set, else the chosen Script names",
    "vocab_size": "the vocab_size argument: alphabet_size + len(special_tokens) + merges wanted "
                  "(in hf mode a special token whose text equals a byte-level character or a "
                  "merged token's string lets HuggingFace make one more merge: "
                  "vectors/train_reference.py)",
    "min_frequency": "the min_frequency argument (training stops when the best count is below)",
    "special_tokens": "the special_tokens argument (ids after the merges; their text is counted "
                      "as ordinary text)",
    "merges": "the expected (kept) regular merges in order: [left_id, right_id, count]; merge i "
              "makes id A + i (A = 256 bytes, 512 ube)",
    "alphabet_size": "the base symbols vocab_size counts: 243 (paper, bytes), 256 (hf), the "
                     "reachable UBE symbols (paper, ube)",
    "algorithm": "\"bpe\" (phase 1 only), \"boundless\" (BoundlessBPE, Algorithm 1) or "
                 "\"superbpe\" (SuperBPE(r, s)), docs/design.md §8; superword cases are paper mode",
    "supermerges_arg": "the supermerges argument s for superbpe, else null",
    "ngram_split": "whether the candidates are split into frequent n-grams first (Appendix B: "
                   "c_min = max(count of the last phase-1 merge, 15), at most 30 pretokens)",
    "supermerges": "the expected supermerges in order: [left_id, right_id, count]; supermerge k "
                   "makes id A + len(merges) + k and its parts are given in these final ids "
                   "([] for bpe)",
}


EXTEND_FIELDS = {
    "case": "a unique name: corpus/extend-alphabet/pattern/base<B>-seeds<K>/min-count-<C>/min-frequency-<F>/v<V>",
    "corpus": "the corpus (a record of corpora.jsonl)",
    "alphabet": "\"bytes\" or \"ube\": the base model's and the extension's",
    "pattern": "the extension's pre-tokenizer (superbpe: SuperBPE's Stage 2; o200k: the base's own)",
    "base_merges": "the base model: [left_id, right_id] merges of paper-mode BPE trained on the corpus with o200k",
    "seed_merges": "how many of the base's merges are replayed first (train's seed_merges)",
    "vocab_size": "the vocab_size argument: alphabet_size + seed_merges + the new merges wanted",
    "min_count": "pretokens (Stage-2 chunks) counted fewer times are dropped before training",
    "min_frequency": "training stops when the best allowed pair's count is below it",
    "max_words": "no new token holds more words (runs of symbols other than ' ')",
    "colon_space": "no new token holds ':' then ' '",
    "alphabet_size": "the base symbols vocab_size counts (paper mode)",
    "merges": "the expected merges: the seed merges (count at replay, 0 when absent) then the new ones, "
              "[left_id, right_id, count]",
}


def _meta(name, n, fields, **extra):
    meta = {"generated_by": GENERATED_BY, "part": "train", "file": name, "records": n,
            "fields": fields,
            "oracle": "vectors/train_reference.py (naive: every pair recounted at every step); "
                      "hf cases also checked merge for merge against tokenizers==%s "
                      "BpeTrainer" % ORACLE_TOKENIZERS,
            "tokenizers": ORACLE_TOKENIZERS, "regex": ORACLE_REGEX}
    meta.update(extra)
    return meta


def check_versions():
    have = importlib.metadata.version("regex")
    if have != ORACLE_REGEX:
        sys.exit("generate_train.py: needs regex==%s (the pinned pre-tokenizer oracle), found %s"
                 % (ORACLE_REGEX, have))
    require_tokenizers()


def build():
    check_versions()
    corpora, codes = build_corpora()
    for name, docs in corpora.items():
        for d in docs:
            if HF_DELIM in d:
                raise SystemExit("generate_train.py: corpus %s contains U+E000" % name)
    cases = []
    by_name = {}

    def add(rec):
        if rec["case"] in by_name:  # an invariant case also listed: it must be the same
            if by_name[rec["case"]] != rec:
                raise SystemExit("generate_train.py: two different cases named %s" % rec["case"])
            return
        by_name[rec["case"]] = rec
        cases.append(rec)

    for c in case_list() + superword_case_list():
        rec = run_case(c, corpora)
        add(rec)
        if c["algorithm"] == "boundless" and not c["ngram_split"]:
            # SuperBPE(r, s) with the s BoundlessBPE ended with: the invariant as a vector
            add(run_case(dict(c, algorithm="superbpe", supermerges=len(rec["supermerges"])),
                         corpora))
    names = [r["case"] for r in cases]
    missing = [n for n in PYWASM_CASES if n not in names]
    if missing:
        raise SystemExit("generate_train.py: PYWASM_CASES names no case: %s" % missing)
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit("generate_train.py: duplicate case names: %s" % sorted(dup))
    alpha = {"paper/bytes": len(ref.alphabet_symbols("paper", "bytes")),
             "hf/bytes": len(ref.alphabet_symbols("hf", "bytes")),
             "paper/ube": len(ref.alphabet_symbols("paper", "ube"))}
    extend_cases = [run_extend_case(c, corpora) for c in extend_case_list()]
    names = [r["case"] for r in extend_cases]
    if len(set(names)) != len(names):
        raise SystemExit("generate_train.py: duplicate extension case names")
    corpus_recs = [{"corpus": n, "documents": d} for n, d in corpora.items()]
    n_hf = sum(1 for r in cases if r["mode"] == "hf")
    files = {
        "corpora.jsonl": [{"_meta": _meta(
            "corpora.jsonl", len(corpus_recs), CORPUS_FIELDS,
            sources="udhr_*: lines of the UDHR excerpts vendored in vectors/texts/udhr.jsonl "
                    "(use \"encode\": article 13 of each translation), the first %d "
                    "translations of each script (udhr_mixed: the first of each), one document "
                    "per line with its '\\n'; the others are hand-written in "
                    "vectors/generate_train.py" % UDHR_PER_SCRIPT,
            udhr_codes=codes)}] + corpus_recs,
        "merges.jsonl": [{"_meta": _meta(
            "merges.jsonl", len(cases), MERGES_FIELDS, alphabet_sizes=alpha,
            hf_cases_checked=n_hf,
            hf_check="each hf case trained by tokenizers' BpeTrainer(vocab_size, "
                     "initial_alphabet=ByteLevel.alphabet(), special_tokens, min_frequency) on "
                     "the reference's pretokens (joined with U+E000 per document, split on it, "
                     "ByteLevel(add_prefix_space=False, use_regex=False)); merges equal",
            pywasm_subset="pywasm trains only the cases listed in pywasm_cases (an interpreter: "
                          "one training, however small, takes it about a minute and a half)",
            pywasm_cases=PYWASM_CASES)}] + cases,
        "extend.jsonl": [{"_meta": _meta(
            "extend.jsonl", len(extend_cases), EXTEND_FIELDS,
            oracle="vectors/train_reference.py train_extension (naive: seeds replayed word by word, every "
                   "pair recounted at every step, constraints checked on each candidate token)")}] + extend_cases,
    }
    return {name: "".join(_dump(r) for r in rs) for name, rs in files.items()}


# pywasm interprets the module: even a tiny training takes it about 90 s (most of it in creating
# the counter and the trainer), so it trains only these cases, one per mode and alphabet.
# One case of each kind (about 3 s each under pywasm): modes, alphabets, patterns, script-aware,
# ties, '\r\n', specials in the text, an empty corpus, real multilingual text.
PYWASM_CASES = ["runs/paper-bytes/o200k/v291", "runs/hf-bytes/o200k/v304",
                "runs/paper-ube/o200k/v526", "ties/hf-bytes/cl100k/v304", "crlf/paper-bytes/gpt2/v291",
                "specials_in_text/hf-bytes/o200k/v304", "empty/paper-ube/o200k/v526",
                "udhr_mixed/paper-ube/o200k/script-aware[Han]/v526", "udhr_japanese/paper-ube/o200k/v526",
                "one_document/hf-bytes/o200k/specials-the/v263/special-collision",
                # superwords: BoundlessBPE with tied supermerges; the n-gram split on UBE;
                # script-aware Han characters forming SuperBPE supermerges
                "super_ties/paper-bytes/o200k/v291/boundless",
                "repeats/paper-ube/o200k/v1478/boundless/ngram",
                "han_words/paper-bytes/o200k/script-aware/v1243/superbpe-s3"]


def main(argv=None):
    from generator_io import check_flag, write_or_check
    return write_or_check(build(), OUT_DIR, "generate_train.py", check_flag(__doc__, argv))


if __name__ == "__main__":
    sys.exit(main())
