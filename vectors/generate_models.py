"""Regenerate the merge-rules model vectors in vectors/models/ from a reference written here.

    python vectors/generate_models.py           write vectors/models/*.json, *.stmodel and *.jsonl
    python vectors/generate_models.py --check   regenerate in memory; exit 1 naming stale files

The models are small and hand-written below (UBE ones exercise routing, both alphabets in one
token, surrogate pairs, and the rules-versus-ranks difference of docs/design.md §7); until the
trainer exists they are how the encoder's rules mode and the UBE decode paths are pinned.

The reference never calls supertok and is written for clarity, not speed:

- special tokens: at each position the longest allowed special that matches is taken;
- the text between them is pre-tokenized by vectors/oracle.py (regex==2024.11.6);
- each piece becomes base symbols: its UTF-8 bytes (alphabet "bytes") or its UBE routing
  (vectors/generate_ube.py: route), each symbol remembering the character it came from;
- merging: while some adjacent pair is a rule, join the pair whose rule comes first (the
  leftmost of equal pairs); a token starts at the character of its first symbol;
- decoding: each token expanded to base symbols through the rules; specials cut the stream;
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


MODELS = [ube_small(), bytes_small()]


# ---------------------------------------------------------------------------------------------
# The reference.

class Reference:
    def __init__(self, model):
        self.model = model
        self.base = BASE[model["alphabet"]]
        self.rules = {(l, r): self.base + i for i, (l, r) in enumerate(model["merges"])}
        self.special_ids = model["special_tokens"]
        self.special_text = {v: k for k, v in self.special_ids.items()}
        self.expansion = [[s] for s in range(self.base)]
        for l, r in model["merges"]:
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
            for piece in oracle.pretokenize(text[seg:i], self.model["pattern"]):
                symbols, owner = [], []
                for c, ch in enumerate(piece):
                    syms = self.char_symbols(ch)
                    symbols += syms
                    owner += [pos + c] * len(syms)
                for tok, first in self.merge(symbols):
                    ids.append(tok)
                    starts.append(owner[first])
                pos += len(piece)
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


def build_encode(model, ref):
    recs = []
    specials = list(model["special_tokens"])
    for k, text in enumerate(dict.fromkeys(texts_for(model))):
        allowed = specials if k % 3 != 1 else []
        ids, starts = ref.encode(text, allowed)
        recs.append({"model": model["name"], "text": text, "allowed": allowed, "ids": ids, "starts": starts})
    return recs


def build_decode(model, ref, encode_recs):
    recs = []
    n = ref.base + len(model["merges"])
    all_ids = list(range(n)) + sorted(model["special_tokens"].values())
    rng = random.Random(1729)
    streams = [r["ids"] for r in encode_recs[:60] if r["ids"]]
    streams += [[t] for t in all_ids]  # every id alone
    for _ in range(300):  # random streams of valid ids, specials included
        streams.append([rng.choice(all_ids) for _ in range(rng.randint(1, 12))])
    for r in encode_recs[:40]:  # encoder output cut or with one id inserted
        ids = r["ids"]
        if len(ids) > 2:
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
    """The model in the text model format (docs/model-format.md), canonical form, written here
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

    lines = ["supertok-model 1", "name " + model["name"],
             "comment generated by %s (edit the model there, not this file)" % GENERATED_BY,
             "kind rules", "alphabet " + model["alphabet"], "pattern " + model["pattern"], "script-aware no",
             "merges %d" % len(model["merges"])]
    lines += ["%d %d" % (a, b) for a, b in model["merges"]]
    specials = sorted(model["special_tokens"].items(), key=lambda kv: kv[1])
    lines.append("specials %d" % len(specials))
    lines += ["%d %s" % (i, esc(t)) for t, i in specials]
    return "\n".join(lines + ["end"]) + "\n"


def build():
    files = {}
    enc_all, dec_all = [], []
    for model in MODELS:
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
    from generate import check_flag, write_or_check
    return write_or_check(build(), OUT_DIR, "generate_models.py", check_flag(__doc__, argv))


if __name__ == "__main__":
    sys.exit(main())
