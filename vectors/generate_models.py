"""Regenerate the merge-rules model vectors in vectors/models/ from a reference written here.

    python vectors/generate_models.py           write vectors/models/*.json, *.stmodel and *.jsonl
    python vectors/generate_models.py --check   regenerate in memory; exit 1 naming stale files

The models are small and hand-written below (UBE ones exercise routing, both alphabets in one
token, surrogate pairs, and the rules-versus-ranks difference of docs/design.md §7); they pin the
encoder's rules mode and the UBE decode paths. The superword models (super_bytes_small,
super_ube_small) are trained by the naive reference trainer (vectors/train_reference.py, phase 2)
on corpora of vectors/train/ and written as model files only (format version 2, with the
`training` line; the JSON form has no supermerges).

The reference never calls supertok and is written for clarity, not speed:

- special tokens: at each position the longest allowed special that matches is taken;
- the text between them is pre-tokenized by vectors/oracle.py (regex==2024.11.6);
- each piece becomes base symbols: its UTF-8 bytes (alphabet "bytes") or its UBE routing
  (vectors/generate_ube.py: route), each symbol remembering the character it came from;
- merging: while some adjacent pair is a rule, join the pair whose rule comes first (the
  leftmost of equal pairs); a token starts at the character of its first symbol;
- superwords (models with supermerges, docs/design.md §7): over each maximal run of two or more
  adjacent pieces between specials that each became exactly one token and whose text holds a
  letter (\\p{L}), while some adjacent pair is a supermerge, join the pair whose supermerge comes
  first (the leftmost of equal pairs); a superword starts where its first piece starts;
- decoding: each token expanded to base symbols through the rules and supermerges; specials cut the stream;
  each stretch decoded run by run with CPython's codecs (generate_ube.py: decode), a special
  adding its own text; under errors="strict" the error names the id where the first malformed
  run starts (generate_ube.py: strict_error_index, mapped from symbols to ids); streaming
  outputs by feeding the generate_ube.py StreamOracle one token at a time.

Output is byte-for-byte deterministic.
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import oracle  # noqa: E402
from train_reference import has_letter  # noqa: E402  (\p{L} as the pinned regex says)
from generate_ube import (EDGE_TEXTS, StreamOracle, _dump, decode, pretokenize_texts, route,  # noqa: E402
                          strict_error_index, udhr_extra_lines)

OUT_DIR = os.path.join(HERE, "models")
GENERATED_BY = "python vectors/generate_models.py"
BASE = {"bytes": 256, "ube": 512}


# ---------------------------------------------------------------------------------------------
# The hand-written models.

class ModelBuilder:
    """Rules written as pairs of existing tokens, each named by its text (routed, or its UTF-8
    bytes for the byte alphabet) or by a tuple of base symbols."""

    def __init__(self, name, alphabet, pattern):
        self.name, self.alphabet, self.pattern = name, alphabet, pattern
        self.base = BASE[alphabet]
        self.symbols = {(s,): s for s in range(self.base)}  # symbol sequence -> id
        self.merges = []

    def seq(self, t):
        if isinstance(t, tuple):
            return t
        return tuple(route(t)) if self.alphabet == "ube" else tuple(t.encode("utf-8"))

    def rule(self, left, right):
        a, b = self.seq(left), self.seq(right)
        for part in (a, b):
            if part not in self.symbols:
                raise ValueError("%s: %r is no token yet" % (self.name, part))
        new = a + b
        if new in self.symbols:
            raise ValueError("%s: %r is a token already" % (self.name, new))
        self.symbols[new] = self.base + len(self.merges)
        self.merges.append([self.symbols[a], self.symbols[b]])

    def word(self, text):
        """Rules joining text left to right, character by character (each character made
        first: for UBE from its UTF-16 bytes where it is not already a token)."""
        chars = list(text)
        for ch in chars:
            self.char(ch)
        acc = chars[0]
        for ch in chars[1:]:
            if self.seq(acc + ch) not in self.symbols:
                self.rule(acc, ch)
            acc += ch

    def char(self, ch):
        s = self.seq(ch)
        if s in self.symbols:
            return
        if len(s) == 2:
            self.rule((s[0],), (s[1],))
        elif len(s) == 3:  # 3-byte UTF-8 (byte alphabet)
            if s[:2] not in self.symbols:
                self.rule((s[0],), (s[1],))
            self.rule(s[:2], (s[2],))
        elif len(s) == 4:  # a surrogate pair (UBE), or 4-byte UTF-8
            for h in (s[:2], s[2:]):
                if h not in self.symbols:
                    self.rule((h[0],), (h[1],))
            self.rule(s[:2], s[2:])

    def model(self, specials):
        first = self.base + len(self.merges)
        return {"format": "supertok-merges", "version": 1, "name": self.name, "alphabet": self.alphabet,
                "pattern": self.pattern, "merges": self.merges,
                "special_tokens": {t: first + k for k, t in enumerate(specials)}}


def ube_small():
    m = ModelBuilder("ube_small", "ube", "o200k")
    # first, a rule across characters: the high byte of U+4E2D (中) with the low byte of the
    # next 中, so "中中" splits a character between tokens
    m.rule((256 + 0x4E,), (256 + 0x2D,))
    # docs/design.md §7's example: by rules "abcd" is [ab, cd]; by ranks it would be [abcd]
    m.rule("a", "b"); m.rule("c", "d"); m.rule("ab", "c"); m.rule("abc", "d")
    for w in ("th", "the", " the", "in", "ing", "er", " a", "an", "and", " and"):
        m.word(w)
    # Han, kana, Hangul: characters from their two UTF-16 bytes, then words
    for w in ("中国", "我们", "你好", "世界", "人民", "的", "是", "一", "不"):
        m.word(w)
    for w in ("です", "ます", "の", "に", "は"):
        m.word(w)
    for w in ("한국", "한국어", "사람"):
        m.word(w)
    # across the alphabets: a space (UTF-8) joined with a Han token (UTF-16)
    m.rule(" ", "中国"); m.rule(" ", "世界")
    # Cyrillic and Greek stay on the UTF-8 path: two-byte characters, then words
    for w in ("при", "вет", "при" + "вет", "αβ", "ου"):
        m.word(w)
    # astral characters: two surrogates, each from its bytes, then the pair
    m.char("\U0001f600"); m.char("\U0001f44d")
    return m.model(["<|endoftext|>", "<|pad|>"])


def bytes_small():
    m = ModelBuilder("bytes_small", "bytes", "gpt2")
    m.rule("a", "b"); m.rule("c", "d"); m.rule("ab", "c"); m.rule("abc", "d")
    for w in ("th", "the", " the", "in", "ing", " a", "an", "and", " and", "'s", "ll"):
        m.word(w)
    for w in ("中国", "世界", "привет", "é"):
        m.word(w)
    m.rule(" ", "中国")
    return m.model(["<|endoftext|>"])


# ---------------------------------------------------------------------------------------------
# Superword models, trained by the naive reference trainer (vectors/train_reference.py, phase 2)
# on small corpora of vectors/train/ (generate_train.py builds them from the vendored UDHR lines
# and its hand-written corpora), so supermerges apply in the test texts below.

SUPER_MODELS = [
    # (name, alphabet, pattern, script_aware, scripts, algorithm, supermerges, merges wanted,
    #  special tokens, training corpora)
    ("super_bytes_small", "bytes", "o200k", False, None, "boundless", None, 200, ["<|endoftext|>"],
     ["phrases", "cuts", "repeats", "one_document", "udhr_latin", "single_letters"]),
    ("super_ube_small", "ube", "o200k", True, None, "superbpe", 40, 260, ["<|endoftext|>", "<|pad|>"],
     ["han_words", "udhr_han", "udhr_japanese", "phrases", "repeats"]),
]


def super_model(name, alphabet, pattern, script_aware, scripts, algorithm, supermerges, wanted,
                specials, corpora):
    import generate_train
    import train_reference
    all_corpora, _ = generate_train.build_corpora()
    docs = [d for c in corpora for d in all_corpora[c]]
    vocab_size = len(train_reference.alphabet_symbols("paper", alphabet)) + len(specials) + wanted
    merges, supers = train_reference.train_superwords(
        docs, vocab_size, algorithm=algorithm, supermerges=supermerges, alphabet=alphabet,
        pattern=pattern, script_aware=script_aware, scripts=scripts, special_tokens=specials)
    first = BASE[alphabet] + len(merges) + len(supers)
    training = {"algorithm": algorithm, "mode": "paper", "vocab_size": vocab_size, "min_frequency": 0,
                "supermerges": supermerges, "ngram_split": False}
    return {"format": "supertok-merges", "version": 2, "name": name, "alphabet": alphabet,
            "pattern": pattern, "script_aware": script_aware, "scripts": scripts,
            "merges": [[l, r] for l, r, _ in merges], "merge_counts": [c for _, _, c in merges],
            "supermerges": [[l, r] for l, r, _ in supers], "supermerge_counts": [c for _, _, c in supers],
            "special_tokens": {t: first + k for k, t in enumerate(specials)}, "training": training,
            "corpora": corpora}


MODELS = [ube_small(), bytes_small()]  # the hand-written ones; build() trains the superword models


def model_from_text(text):
    """The dict the Reference takes, read back from a model file as model_text writes it (rules,
    canonical form; the tests load the superword models this way instead of training them)."""
    lines = text.split("\n")
    assert lines[-1] == "" and lines[-2] == "end"
    m = {"format": "supertok-merges", "version": int(lines[0].split(" ")[1]), "script_aware": False,
         "scripts": None, "special_tokens": {}}
    k = 1
    while lines[k] != "end":
        key, _, value = lines[k].partition(" ")
        k += 1
        if key in ("name", "alphabet", "pattern"):
            m[key] = value
        elif key == "script-aware":
            m["script_aware"] = value == "yes"
        elif key == "scripts":
            m["scripts"] = None if value == "default" else [] if value == "none" else value.split(",")
        elif key == "training":
            t = dict(kv.split("=") for kv in value.split(" "))
            m["training"] = {k: (v == "yes" if k == "ngram_split" else int(v) if v.isdigit() else v)
                             for k, v in t.items()}
            m["training"].setdefault("supermerges", None)
        elif key in ("merges", "supermerges"):
            n = int(value.split(" ")[0])
            rows = [[int(x) for x in line.split(" ")] for line in lines[k:k + n]]
            m[key] = [row[:2] for row in rows]
            if value.endswith(" counts"):
                m[key[:-1] + "_counts"] = [row[2] for row in rows]
            k += n
        elif key == "specials":
            n = int(value)
            for line in lines[k:k + n]:
                i, _, t = line.partition(" ")
                m["special_tokens"][t] = int(i)  # (model_text escapes none of these specials)
            k += n
    return m


# ---------------------------------------------------------------------------------------------
# The reference.

class Reference:
    def __init__(self, model):
        self.model = model
        self.base = BASE[model["alphabet"]]
        self.rules = {(l, r): self.base + i for i, (l, r) in enumerate(model["merges"])}
        first_super = self.base + len(model["merges"])
        self.supers = {(l, r): first_super + i for i, (l, r) in enumerate(model.get("supermerges", []))}
        self.script_aware = model.get("script_aware", False)
        self.scripts = model.get("scripts")
        self.special_ids = model["special_tokens"]
        self.special_text = {v: k for k, v in self.special_ids.items()}
        self.expansion = [[s] for s in range(self.base)]
        for l, r in model["merges"] + model.get("supermerges", []):
            self.expansion.append(self.expansion[l] + self.expansion[r])

    def char_symbols(self, ch):
        return route(ch) if self.model["alphabet"] == "ube" else list(ch.encode("utf-8"))

    def merge(self, symbols):
        """Apply the rules to one piece's symbols: (tokens, index of each token's first symbol)."""
        parts = [(s, k) for k, s in enumerate(symbols)]
        while True:
            best = None
            for k in range(len(parts) - 1):
                r = self.rules.get((parts[k][0], parts[k + 1][0]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, k)
            if best is None:
                return parts
            r, k = best
            parts[k:k + 2] = [(r, parts[k][1])]

    def token_eligible(self, tok):
        """Whether a regular token may join a superword: its bytes (UBE: its symbols) decode
        strictly to text containing a letter."""
        syms = self.expansion[tok]
        return strict_error_index(syms) is None and has_letter(decode(syms))

    def supermerge(self, run):
        """Apply the supermerges to one run of (token, start) pairs: while some adjacent pair is a
        supermerge, join the pair whose supermerge comes first (the leftmost of equal pairs)."""
        run = list(run)
        while True:
            best = None
            for k in range(len(run) - 1):
                r = self.supers.get((run[k][0], run[k + 1][0]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, k)
            if best is None:
                return run
            r, k = best
            run[k:k + 2] = [(r, run[k][1])]

    def encode(self, text, allowed=()):
        """(ids, char offset where each token starts)."""
        ids, starts = [], []
        seg, i = 0, 0
        while i <= len(text):
            match = None
            if i < len(text):
                for s in allowed:
                    if text.startswith(s, i) and (match is None or len(s) > len(match)):
                        match = s
            if match is None and i < len(text):
                i += 1
                continue
            pos = seg
            pieces = []  # per piece: [(token, start)] and whether it may join a superword
            for piece in oracle.pretokenize(text[seg:i], self.model["pattern"], self.script_aware,
                                            self.scripts):
                symbols, owner = [], []
                for c, ch in enumerate(piece):
                    syms = self.char_symbols(ch)
                    symbols += syms
                    owner += [pos + c] * len(syms)
                toks = [(tok, owner[first]) for tok, first in self.merge(symbols)]
                # eligible: the piece became exactly one token, and its text holds a letter (the
                # same as docs/design.md §7's bit per token: its bytes are text with a letter)
                eligible = len(toks) == 1 and has_letter(piece)
                assert not self.supers or len(toks) != 1 or eligible == self.token_eligible(toks[0][0])
                pieces.append((toks, eligible))
                pos += len(piece)
            # superwords: each maximal run of two or more eligible pieces (the segment between
            # specials, so a run never crosses one), lowest supermerge first, repeatedly
            k = 0
            while k < len(pieces):
                e = k
                while e < len(pieces) and pieces[e][1]:
                    e += 1
                if e - k >= 2:
                    out = self.supermerge([p[0][0] for p in pieces[k:e]])
                    k = e
                else:
                    out = pieces[k][0]
                    k += 1
                for tok, start in out:
                    ids.append(tok)
                    starts.append(start)
            if match is None:
                break
            ids.append(self.special_ids[match])
            starts.append(i)
            i += len(match)
            seg = i
        return ids, starts

    def stretches(self, ids):
        """[(first id index, symbols) | (id index, special text)] in order."""
        out, cur, first = [], [], 0
        for k, t in enumerate(ids):
            if t in self.special_text:
                out.append((first, cur))
                out.append((k, self.special_text[t]))
                cur, first = [], k + 1
            else:
                cur = cur + self.expansion[t]
        out.append((first, cur))
        return out

    def decode(self, ids, errors="replace"):
        return "".join(x if isinstance(x, str) else decode(x, errors) for _, x in self.stretches(ids))

    def strict_error(self, ids):
        """The index of the id where the first malformed run starts, or None."""
        for first, x in self.stretches(ids):
            if isinstance(x, str):
                continue
            at = strict_error_index(x)
            if at is not None:
                k, seen = first, 0
                while seen + len(self.expansion[ids[k]]) <= at:
                    seen += len(self.expansion[ids[k]])
                    k += 1
                return k
        return None

    def stream(self, ids):
        """The output after each id and the final flush, one id per add."""
        o, outs = StreamOracle(), []
        for t in ids:
            if t in self.special_text:
                outs.append(o.flush() + self.special_text[t])
            else:
                outs.append(o.add(self.expansion[t]))
        return outs, o.flush()


# ---------------------------------------------------------------------------------------------
# Records.

ENCODE_FIELDS = {
    "model": "the model's name (vectors/models/<name>.json)",
    "text": "the input",
    "allowed": "special tokens recognised in the text (others are ordinary text)",
    "ids": "the expected ids",
    "starts": "for each id, the character offset where its token starts (a token starting "
              "inside a character gets that character's offset)",
}
DECODE_FIELDS = {
    "model": "the model's name",
    "ids": "valid ids (any stream, not only encoder output)",
    "text": "decode(ids, errors='replace')",
    "strict_error": "with errors='strict': null if it decodes, else the index of the id where the "
                    "first malformed run starts",
    "stream": "the text returned after adding each id to an incremental decoder",
    "flush": "the text its flush returns",
}


def texts_for(model):
    specials = list(model["special_tokens"])
    hand = ["abcd", "abc", "abcdabcd", "the and thing", " the thing and", "中国 世界 我们的", " 中国人民",
            "你好，世界！", "これはペンです。ますます", "한국어 사람", "привет мир", "αβ ου", "😀👍😀",
            "naïve é", "中" * 5, "a" * 40, "  \n\t x", "",
            "x%sy" % specials[0], "%s中国%s" % (specials[0], specials[0]), specials[0] * 2,
            "中%s国" % specials[-1], "😀%s😀" % specials[0]]
    return hand + EDGE_TEXTS + pretokenize_texts() + [line for _, _, line in udhr_extra_lines()]


def long_text(words, n, seed):
    """n words drawn (seeded) from words, concatenated: one long run of eligible pieces."""
    rng = random.Random(seed)
    return "".join(rng.choice(words) for _ in range(n))


def superword_texts(model):
    """Texts where the superword models' supermerges apply: their phrases, runs cut by specials,
    digits, punctuation and newlines, identical adjacent words, Han and kana characters (one
    pretoken each, script-aware), and long runs of eligible words (2,000 words)."""
    sp = list(model["special_tokens"])[0]
    hand = ["as well as of the", " at the end of the river", "the cat sat on the mat", "the the the the the",
            " the the the", "in order to%s in order to" % sp, "of%s the" % sp, "of the %s of the" % sp,
            "of the 12 of the", "of the, of the", "of the\nof the", "of the\n of the", "Of The of THE",
            "at the end of the end of the", "go go go go go go go", "la la la", " on top of of the",
            " tê dirêtu di téla", "Tudu nguê tê dirêtu di", "the cat 42 sat on the mat", "the cat sat on the mat!",
            "中国人民的世界", "すべて人は権利を有する", "中国人民%s中国人民" % sp, "的自由 and 自由", "中国人民 中国人民",
            "権利を有する。権利を有する", "有权有权有权", "第十 of the 第十", "中 国", "中国" * 20,
            "as well as" * 3, "of the" + " of the" * 30, "\u00a0of the", "of the\u3000of the", "ofthe of the",
            "aB", "aBaB", "aB xY", "xY of the", "qQaB"]
    words = ["of", "the", "as", "well", "in", "order", "to", "at", "end", "on", "top", "cat", "sat", "mat",
             "go", "la", "river", "dog", "old"]
    long_words = long_text([" " + w for w in words] + [" of the", " as well as", " in order to"], 2000, 5)
    long_han = long_text(["中国", "人民", "的", "自由", "権利", "を", "有する", "すべて", "人は", "世界", "第十",
                          " of the", "国家"], 2000, 6)
    return hand + [long_words.lstrip(), long_han, sp.join([long_words[:3000]] * 3)]


def build_encode(model, ref):
    recs = []
    specials = list(model["special_tokens"])
    texts = texts_for(model)
    if model.get("supermerges"):
        texts = superword_texts(model) + texts
    for k, text in enumerate(dict.fromkeys(texts)):
        allowed = specials if k % 3 != 1 else []
        ids, starts = ref.encode(text, allowed)
        recs.append({"model": model["name"], "text": text, "allowed": allowed, "ids": ids, "starts": starts})
    return recs


def build_decode(model, ref, encode_recs):
    recs = []
    n = ref.base + len(model["merges"]) + len(model.get("supermerges", []))
    all_ids = list(range(n)) + sorted(model["special_tokens"].values())
    rng = random.Random(1729)
    streams = [r["ids"] for r in encode_recs[:60] if r["ids"] and len(r["ids"]) <= 400]  # not the long texts
    streams += [[t] for t in all_ids]  # every id alone
    for _ in range(300):  # random streams of valid ids, specials included
        streams.append([rng.choice(all_ids) for _ in range(rng.randint(1, 12))])
    for r in encode_recs[:40]:  # encoder output cut or with one id inserted
        ids = r["ids"]
        if 2 < len(ids) <= 400:
            streams.append(ids[1:-1])
            k = rng.randrange(len(ids))
            streams.append(ids[:k] + [rng.choice(all_ids)] + ids[k:])
    for ids in streams:
        outs, flush = ref.stream(ids)
        text = ref.decode(ids)
        assert "".join(outs) + flush == text
        recs.append({"model": model["name"], "ids": ids, "text": text, "strict_error": ref.strict_error(ids),
                     "stream": outs, "flush": flush})
    return recs


def _meta(name, n, fields, **extra):
    meta = {"generated_by": GENERATED_BY, "part": "models", "file": name, "records": n, "fields": fields,
            "oracle": "the reference in vectors/generate_models.py: vectors/oracle.py (regex==2024.11.6) "
                      "pieces, UBE routing by bit arithmetic, rules applied lowest first, CPython's codecs "
                      "for decoding"}
    meta.update(extra)
    return meta


def model_text(model):
    """The model in the text model format (docs/formats/model-format.md), canonical form, written here
    from the spec (tests/test_model_format.py checks supertok's converter and the core's writer
    give the same bytes)."""
    def esc(text):  # \\ \n \r \t, \xHH for other controls and a space at either end
        b = text.encode("utf-8")
        out = bytearray()
        for k, c in enumerate(b):
            named = {0x5C: b"\\\\", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t"}.get(c)
            if named:
                out += named
            elif c < 0x20 or c == 0x7F or (c == 0x20 and k in (0, len(b) - 1)):
                out += b"\\x%02X" % c
            else:
                out.append(c)
        return out.decode("utf-8")

    training = model.get("training")
    lines = ["supertok-model %d" % (2 if training else 1), "name " + model["name"],
             "comment generated by %s (edit the model there, not this file)" % GENERATED_BY]
    if training:  # format version 2: how the model was trained, keys in this order
        t = training
        line = "training algorithm=%s mode=%s vocab_size=%d min_frequency=%d" % (
            t["algorithm"], t["mode"], t["vocab_size"], t["min_frequency"])
        if t["algorithm"] == "superbpe":
            line += " supermerges=%d" % t["supermerges"]
        line += " ngram_split=%s" % ("yes c_min=%d max_len=%d" % (t["c_min"], t["max_len"])
                                     if t["ngram_split"] else "no")
        lines.append(line)
    lines += ["kind rules", "alphabet " + model["alphabet"], "pattern " + model["pattern"]]
    if model.get("script_aware"):
        scripts = model.get("scripts")
        lines += ["script-aware yes", "scripts " + ("default" if scripts is None else
                                                     ",".join(scripts) if scripts else "none")]
    else:
        lines.append("script-aware no")

    def section(name, pairs, counts):
        if counts is None:
            return ["%s %d" % (name, len(pairs))] + ["%d %d" % (a, b) for a, b in pairs]
        return ["%s %d counts" % (name, len(pairs))] + ["%d %d %d" % (a, b, c) for (a, b), c in zip(pairs, counts)]

    lines += section("merges", model["merges"], model.get("merge_counts"))
    if model.get("supermerges"):  # the canonical form omits an empty section
        lines += section("supermerges", model["supermerges"], model.get("supermerge_counts"))
    specials = sorted(model["special_tokens"].items(), key=lambda kv: kv[1])
    lines.append("specials %d" % len(specials))
    lines += ["%d %s" % (i, esc(t)) for t, i in specials]
    return "\n".join(lines + ["end"]) + "\n"


def build():
    files = {}
    enc_all, dec_all = [], []
    for model in MODELS + [super_model(*m) for m in SUPER_MODELS]:
        back = model_from_text(model_text(model))
        for key in ("merges", "special_tokens", "script_aware", "scripts", "alphabet", "pattern", "training"):
            assert back.get(key) == model.get(key, {"script_aware": False}.get(key)), (model["name"], key)
        assert back.get("supermerges", []) == model.get("supermerges", [])
        if model["version"] == 1:  # the superword models are model files only (format version 2)
            files[model["name"] + ".json"] = json.dumps(model, ensure_ascii=False, sort_keys=True) + "\n"
        files[model["name"] + ".stmodel"] = model_text(model)
        ref = Reference(model)
        enc = build_encode(model, ref)
        for r in enc:  # the encoder's output decodes back to its text
            assert ref.decode(r["ids"]) == r["text"], r["text"]
        enc_all += enc
        dec_all += build_decode(model, ref, enc)
    files["encode.jsonl"] = "".join(_dump(r) for r in [{"_meta": _meta(
        "encode.jsonl", len(enc_all), ENCODE_FIELDS,
        sources="hand-written texts in vectors/generate_models.py; the edge texts of "
                "vectors/generate_ube.py; every text of vectors/pretokenize/o200k.jsonl and "
                "script_aware.jsonl; one UDHR line per dominant script (as generate_ube.py "
                "takes them)")}] + enc_all)
    files["decode.jsonl"] = "".join(_dump(r) for r in [{"_meta": _meta(
        "decode.jsonl", len(dec_all), DECODE_FIELDS,
        sources="encoder output; every id alone; random streams of valid ids (seed 1729); encoder "
                "output cut at both ends or with one random id inserted")}] + dec_all)
    return files


def main(argv=None):
    from generator_io import check_flag, write_or_check
    return write_or_check(build(), OUT_DIR, "generate_models.py", check_flag(__doc__, argv))


if __name__ == "__main__":
    sys.exit(main())
