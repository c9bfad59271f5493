"""Regenerate the UBE golden vectors in vectors/ube/ from the oracle.

    python vectors/generate_ube.py           write vectors/ube/*.jsonl
    python vectors/generate_ube.py --check   regenerate in memory; exit 1 naming every stale file

The oracle (docs/design.md §6) is written here in plain Python and never calls supertok:

- routing: per character, a code point below U+0800 gives its UTF-8 bytes as symbols 0-255, any
  other its UTF-16LE bytes as symbols 256 + byte (a surrogate pair above U+FFFF), computed with
  bit arithmetic;
- decoding: the symbol stream split into maximal same-alphabet runs, each run's bytes decoded by
  CPython's codecs (`bytes.decode("utf-8" / "utf-16-le", errors)`), concatenated; under
  errors="strict" the error index is the first failing run's start + UnicodeDecodeError.start
  (one symbol is one byte, so the byte offset is the symbol offset);
- streaming: CPython's incremental decoders (`codecs.getincrementaldecoder(...)("replace")`)
  applied run by run: a change of alphabet finalizes the current decoder (`decode(b"", True)`)
  and starts a fresh one for the other alphabet; the end of the stream finalizes too. Output is
  as early as determined: bytes CPython holds that no continuation makes valid (ED A0..BF, an
  encoded surrogate) are emitted at once (see StreamOracle).

Texts come from the committed pre-tokenizer vectors (vectors/pretokenize/o200k.jsonl and
script_aware.jsonl, whose real text is UDHR lines), hand-written edge cases below, and further
UDHR lines from ../shared/corpora/udhr.jsonl.xz (the only corpus whose text may be committed),
read from the excerpts vendored in vectors/texts/udhr.jsonl, so this runs on a fresh clone. Random streams use
random.Random with fixed seeds. Output is byte-for-byte deterministic.
"""
import codecs
import itertools
import json
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
OUT_DIR = os.path.join(HERE, "ube")
PRETOK_DIR = os.path.join(HERE, "pretokenize")
GENERATED_BY = "python vectors/generate_ube.py"
CODECS = ("utf-8", "utf-16-le")

# ---------------------------------------------------------------------------------------------
# The oracle.


def route(text):
    """The routed base-symbol stream of text (bit arithmetic, no codecs). A lone surrogate is a
    ValueError naming its index."""
    out = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if 0xD800 <= cp <= 0xDFFF:
            raise ValueError("lone surrogate U+%04X at index %d" % (cp, i))
        if cp < 0x80:
            out.append(cp)
        elif cp < 0x800:
            out += [0xC0 | (cp >> 6), 0x80 | (cp & 0x3F)]
        elif cp < 0x10000:
            out += [256 + (cp & 0xFF), 256 + (cp >> 8)]
        else:
            v = cp - 0x10000
            hi, lo = 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF)
            out += [256 + (hi & 0xFF), 256 + (hi >> 8), 256 + (lo & 0xFF), 256 + (lo >> 8)]
    return out


def runs(symbols):
    """[(start index, alphabet 0 = UTF-8 / 1 = UTF-16, bytes)]: the maximal same-alphabet runs."""
    out = []
    i, n = 0, len(symbols)
    while i < n:
        a = 1 if symbols[i] >= 256 else 0
        j = i
        while j < n and (symbols[j] >= 256) == bool(a):
            j += 1
        out.append((i, a, bytes(s - 256 * a for s in symbols[i:j])))
        i = j
    return out


def check_symbols(symbols):
    """The index of the first symbol outside 0..511, or None."""
    for k, s in enumerate(symbols):
        if not 0 <= s <= 511:
            return k
    return None


def decode(symbols, errors="replace"):
    """The text of a valid-id symbol stream, each run decoded by CPython."""
    return "".join(b.decode(CODECS[a], errors) for _, a, b in runs(symbols))


def strict_error_index(symbols):
    """None when every run decodes strictly, else the symbol index where the first malformed
    sequence starts: its run's start + UnicodeDecodeError.start."""
    for start, a, b in runs(symbols):
        try:
            b.decode(CODECS[a], "strict")
        except UnicodeDecodeError as e:
            return start + e.start
    return None


def _utf8_proper_prefixes():
    """Every proper prefix of a well-formed UTF-8 sequence (Unicode Table 3-7), from CPython."""
    out = set()
    for cp in range(0x80, 0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        b = chr(cp).encode("utf-8")
        for k in range(1, len(b)):
            out.add(b[:k])
    return frozenset(out)


UTF8_PREFIXES = _utf8_proper_prefixes()


class StreamOracle:
    """CPython's incremental decoders applied run by run, emitting as early as is determined.

    CPython's UTF-8 incremental decoder holds back ED A0..BF (an encoded surrogate, for the
    sake of its surrogatepass handler) although no continuation makes them valid; the UBE
    decoder emits every character, U+FFFD included, as soon as it is complete (docs/design.md §6). So
    after each add, bytes still held that are not a proper prefix of any well-formed sequence
    are decoded now (as the one-shot decode would) and the decoder restarts."""

    def __init__(self, errors="replace"):
        self.errors = errors
        self.alphabet = 0
        self.dec = codecs.getincrementaldecoder(CODECS[0])(errors)

    def add(self, symbols):
        out = []
        for start, a, b in runs(symbols):
            if a != self.alphabet:
                out.append(self.dec.decode(b"", True))
                self.alphabet = a
                self.dec = codecs.getincrementaldecoder(CODECS[a])(self.errors)
            out.append(self.dec.decode(b))
        if self.alphabet == 0:
            held = self.dec.getstate()[0]
            if held and held not in UTF8_PREFIXES:
                out.append(held.decode("utf-8", self.errors))
                self.dec = codecs.getincrementaldecoder(CODECS[0])(self.errors)
        return "".join(out)

    def flush(self):
        out = self.dec.decode(b"", True)
        self.dec.reset()
        return out


def stream_outputs(symbols, splits):
    """(per-add outputs, final flush) when symbols are fed in the pieces the splits cut."""
    bounds = [0] + list(splits) + [len(symbols)]
    o = StreamOracle()
    outs = [o.add(symbols[a:b]) for a, b in zip(bounds, bounds[1:])]
    return outs, o.flush()


# ---------------------------------------------------------------------------------------------
# Texts.

EDGE_TEXTS = [
    "", "a", "\x00", "\x7f", "\x80", "\xff", "\u0100", "\u07ff", "\u0800", "\u0fff", "\u1000",
    "\u3042", "\ud7ff", "\ue000", "\ue0ff", "\ue100", "\ue101", "\ue1ff", "\ue200", "\uf8ff",
    "\ufeff", "\ufffd", "\ufffe", "\uffff", "\U00010000", "\U000103ff", "\U00010400",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\U000fffff", "\U00100000", "\U0010fffd", "\U0010ffff",
    # class boundaries next to each other, in both orders
    "\u007f\u0080", "\u07ff\u0800", "\u0800\u07ff", "\uffff\U00010000", "\U00010000\uffff",
    "a\u0800a", "\u0800a\u0800", "\u00e9\u4e2d\u00e9", "\u4e2d\u00e9\u4e2d", "a\U0010ffffa",
    "\U0010ffff\u07ff\U0010ffff", "\r\n", "line1\nline2\r\n\tend\x00",
    # raw input in the U+E100..U+E1FF export range is ordinary 3-byte text
    "\ue100\ue141\ue1ff", "a\ue100b", "\u4e2d\ue1d8\ue1dc",
    "".join(chr(c) for c in range(0xE100, 0xE200)),
    # the GPT-2 visible-byte forms are ordinary characters too
    "\u0120\u010a\u0100\u0143\u00a1\u00ff\u00ad", "\u0120hello\u010a",
    # noncharacters, private use, specials
    "\ufdd0\ufdef", "\U0001fffe\U0001ffff", "\U000f0000\U0010fffd", "\ufff9\ufffa\ufffb",
    # combining sequences spanning both paths
    "e\u0301", "\u0915\u094d\u0937", "\u05d1\u05bc\u05b0", "\u0627\u064e", "\u1100\u1161\u11a8",
    "\u0e01\u0e31", "a\u20dd", "\u0301\u4e2d",
    # emoji sequences
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466", "\U0001f1fa\U0001f1f3",
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", "#\ufe0f\u20e3",
    "\u263a\ufe0f", "\U0001f9d1\U0001f3ff\u200d\U0001f9b0",
    # mixed scripts in one word and sentence
    "na\u00efve\u4e2d\u6587\u0444\U0001f600x", "Привет 世界 مرحبا שלום नमस्ते ሰላም ᏣᎳᎩ ꆈꌠ",
]


def pretokenize_texts():
    """Unique texts of the committed pre-tokenizer vectors, in file order."""
    out = []
    for name in ("o200k.jsonl", "script_aware.jsonl"):
        path = os.path.join(PRETOK_DIR, name)
        if not os.path.exists(path):
            sys.exit("generate_ube.py: %s is missing; run python vectors/generate.py first" % path)
        with open(path, encoding="utf-8", newline="") as f:
            for k, line in enumerate(f):
                if k:
                    out.append(json.loads(line)["text"])
    return out


UDHR_MIN_LINE = 30
UDHR_MAX_LINE = 200


def udhr_extra_lines():
    """[(code, script, line)]: for each dominant script (`scripts[0][0]`), the last translation
    in file order with it (the pre-tokenizer vectors take the first), its first line of at least
    UDHR_MIN_LINE characters, cut to at most UDHR_MAX_LINE. The selection is made by
    vectors/vendor_udhr.py from ../shared/corpora/udhr.jsonl.xz; this reads its output,
    vectors/texts/udhr.jsonl."""
    sys.path.insert(0, HERE)
    import vendor_udhr
    assert (UDHR_MIN_LINE, UDHR_MAX_LINE) == (vendor_udhr.UBE_MIN_LINE, vendor_udhr.UBE_MAX_LINE)
    return vendor_udhr.excerpts("ube")


def _unique(items):
    return list(dict.fromkeys(items))


# ---------------------------------------------------------------------------------------------
# Symbol streams.

U = 256  # the UTF-16 alphabet's offset


def u16(*bs):
    return [U + b for b in bs]


# Hand-written streams: (note, symbols). Valid ones first, then each class of malformation.
HAND_STREAMS = [
    ("empty", []),
    ("ASCII", [0x41, 0x42, 0x0A]),
    ("2-byte UTF-8", [0xC3, 0xA9, 0xDF, 0xBF]),
    ("BMP UTF-16", u16(0x2D, 0x4E, 0x87, 0x65)),
    ("surrogate pair U+1F600", u16(0x3D, 0xD8, 0x00, 0xDE)),
    ("U+10FFFF", u16(0xFF, 0xDB, 0xFF, 0xDF)),
    ("alphabet changes at character boundaries", [0x61] + u16(0x2D, 0x4E) + [0xC3, 0xA9] + u16(0x3D, 0xD8, 0x00, 0xDE) + [0x62]),
    ("UTF-8 encoding of a 3-byte character is valid UTF-8 even though the encoder never emits it", [0xE4, 0xB8, 0xAD]),
    ("UTF-8 4-byte sequence", [0xF0, 0x9F, 0x98, 0x80]),
    ("UTF-16 code unit of a character below U+0800", u16(0x41, 0x00, 0xE9, 0x00)),
    ("NUL in both alphabets", [0x00] + u16(0x00, 0x00) + [0x00]),
    # UTF-8 malformations
    ("UTF-8 lone continuation byte", [0x80]),
    ("UTF-8 continuation bytes", [0x41, 0x80, 0xBF, 0x41]),
    ("UTF-8 overlong lead C0", [0xC0, 0x80]),
    ("UTF-8 overlong lead C1", [0xC1, 0xBF]),
    ("UTF-8 overlong 3-byte E0 80", [0xE0, 0x80, 0x80]),
    ("UTF-8 overlong 4-byte F0 80", [0xF0, 0x80, 0x80, 0x80]),
    ("UTF-8 encoded surrogate ED A0 80", [0xED, 0xA0, 0x80]),
    ("UTF-8 encoded surrogate pair", [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x80]),
    ("UTF-8 above U+10FFFF F4 90", [0xF4, 0x90, 0x80, 0x80]),
    ("UTF-8 lead F5", [0xF5, 0x80, 0x80, 0x80]),
    ("UTF-8 bytes FE FF", [0xFE, 0xFF]),
    ("UTF-8 truncated 2-byte at end", [0x41, 0xC3]),
    ("UTF-8 truncated 3-byte at end", [0x41, 0xE4, 0xB8]),
    ("UTF-8 truncated 4-byte at end", [0xF0, 0x9F, 0x98]),
    ("UTF-8 truncated then ASCII", [0xE4, 0xB8, 0x41]),
    ("UTF-8 truncated then a new lead", [0xE4, 0xC3, 0xA9]),
    ("UTF-8 truncated by an alphabet change", [0xE4, 0xB8] + u16(0x2D, 0x4E) + [0xAD]),
    ("UTF-8 truncated 4-byte by an alphabet change", [0xF0, 0x9F, 0x98] + u16(0x41, 0x00)),
    ("UTF-8 truncated before a special-token-like end", [0xC3]),
    ("UTF-8 ED 9F is a valid prefix, ED A0 is not", [0xED, 0x9F, 0xBF, 0xED, 0xA0]),
    # UTF-16 malformations
    ("UTF-16 dangling byte", u16(0x41)),
    ("UTF-16 dangling byte after a unit", u16(0x2D, 0x4E, 0x87)),
    ("UTF-16 dangling byte then UTF-8", u16(0x2D, 0x4E, 0x87) + [0x41]),
    ("UTF-16 lone high surrogate at end", u16(0x3D, 0xD8)),
    ("UTF-16 high surrogate and one dangling byte (one U+FFFD)", u16(0x3D, 0xD8, 0x00)),
    ("UTF-16 high surrogate and dangling byte then UTF-8", u16(0x3D, 0xD8, 0x00) + [0x41]),
    ("UTF-16 high surrogate then a BMP unit", u16(0x3D, 0xD8, 0x2D, 0x4E)),
    ("UTF-16 high surrogate then a high surrogate then a low one", u16(0x3D, 0xD8, 0x3D, 0xD8, 0x00, 0xDE)),
    ("UTF-16 lone low surrogate", u16(0x00, 0xDE)),
    ("UTF-16 low then high (reversed pair)", u16(0x00, 0xDE, 0x3D, 0xD8)),
    ("UTF-16 high surrogate cut by an alphabet change", u16(0x3D, 0xD8) + [0x41] + u16(0x00, 0xDE)),
    ("UTF-16 high surrogate and a byte cut by an alphabet change", u16(0x3D, 0xD8, 0x00) + [0x41] + u16(0xDE)),
    ("UTF-16 odd run between UTF-8 runs", [0x41] + u16(0x41) + [0x42] + u16(0x42, 0x00, 0x43) + [0x44]),
    ("UTF-16 surrogate boundaries D7FF DC00 DFFF E000", u16(0xFF, 0xD7, 0x00, 0xDC, 0xFF, 0xDF, 0x00, 0xE0)),
    ("UTF-16 DBFF DFFF pair then lone DBFF", u16(0xFF, 0xDB, 0xFF, 0xDF, 0xFF, 0xDB)),
    # both at once
    ("malformed runs in both alphabets", [0xFF] + u16(0x00) + [0xC3] + u16(0x00, 0xD8) + [0x80]),
    ("every run malformed, alternating", [0xC3] + u16(0x41) + [0xE4] + u16(0x00, 0xDC) + [0xF0, 0x90] + u16(0x00, 0xD8, 0x41)),
]

INVALID_STREAMS = [
    ("symbol 512", [0x41, 512]),
    ("symbol 513 first", [513, 0x41]),
    ("symbol 1000 after a valid UTF-16 run", u16(0x2D, 0x4E) + [1000]),
    ("symbol 65535 in a malformed stream", [0xC3, 0x80, 0xFF, 65535, 512]),
]

UTF16_SMALL = (0x00, 0x41, 0xD8, 0xDC)
UTF8_PAIR_BYTES = (0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF,
                   0xE0, 0xE1, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF4, 0xF5, 0xFF)
UTF8_LONG_SEQS = [  # 3- and 4-byte sequences around every boundary of the second-byte ranges
    (l, b2, b3) for l in (0xE0, 0xE1, 0xED, 0xEF) for b2 in (0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0)
    for b3 in (0x80, 0x41)
] + [
    (l, b2, 0x80, b4) for l in (0xF0, 0xF1, 0xF4) for b2 in (0x80, 0x8F, 0x90, 0xBF)
    for b4 in (0x80, 0x41)
]


def random_stream(rng, n):
    """A random stream favouring structure: valid characters of both paths, their fragments,
    and arbitrary symbols, so runs are often malformed in interesting ways."""
    out = []
    while len(out) < n:
        k = rng.randrange(8)
        if k == 0:
            out.append(rng.randrange(512))
        elif k == 1:
            out.append(rng.choice((0x80, 0xBF, 0xC3, 0xE4, 0xED, 0xF0, 0xF4, 0xFF)))
        elif k == 2:
            out.append(U + rng.choice((0x00, 0x41, 0xD8, 0xDB, 0xDC, 0xDF, 0x3D, 0x4E)))
        else:
            cp = rng.choice((rng.randrange(0x80), rng.randrange(0x80, 0x800),
                             rng.randrange(0x800, 0xD800), rng.randrange(0xE000, 0x10000),
                             rng.randrange(0x10000, 0x110000)))
            syms = route(chr(cp))
            if k == 3 and len(syms) > 1:
                syms = syms[:rng.randrange(1, len(syms))]
            out += syms
    return out[:n]


# ---------------------------------------------------------------------------------------------
# Records.

ROUTING_FIELDS = {
    "text": "input text (valid Unicode, no surrogates)",
    "symbols": "its routed base symbols: UTF-8 bytes (0-255) for code points below U+0800, "
               "256 + UTF-16LE bytes for U+0800 and above (surrogate pairs above U+FFFF)",
    "symbol_string": "the symbols in export form: GPT-2's visible byte for 0-255, U+E100 + byte "
                     "for 256-511",
    "source": "edge (hand-written in generate_ube.py), pretokenize (a text of "
              "vectors/pretokenize/), or udhr:<code> (a UDHR line)",
}
DECODE_FIELDS = {
    "note": "what the stream exercises",
    "symbols": "base-symbol stream",
    "text_replace": "its text under errors=\"replace\" (null when a symbol is outside 0..511)",
    "strict_error_index": "under errors=\"strict\": null when valid, else the symbol index where "
                          "the first malformed sequence starts (its run's start + CPython's "
                          "UnicodeDecodeError.start)",
    "invalid_symbol_index": "index of the first symbol outside 0..511 (the decode raises in "
                            "both modes), else null",
}
STREAM_FIELDS = {
    "note": "what the record exercises",
    "symbols": "base-symbol stream (valid symbols)",
    "splits": "increasing split points 0 < k < len(symbols): the stream is fed in "
              "len(splits) + 1 pieces",
    "outputs": "text returned by each add(), errors=\"replace\"",
    "flush": "text returned by the final flush",
}


def _gpt2_visible():
    vis = list(range(0x21, 0x7F)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    table, extra = {b: b for b in vis}, 0
    for b in range(256):
        if b not in table:
            table[b] = 256 + extra
            extra += 1
    return table


GPT2 = _gpt2_visible()


def symbol_string(symbols):
    return "".join(chr(GPT2[s]) if s < 256 else chr(0xE100 + s - 256) for s in symbols)


def build_routing():
    udhr = udhr_extra_lines()
    recs, seen = [], set()

    def add(text, source):
        if text not in seen:
            seen.add(text)
            syms = route(text)
            assert decode(syms, "strict") == text
            recs.append({"text": text, "symbols": syms, "symbol_string": symbol_string(syms),
                         "source": source})

    for t in EDGE_TEXTS:
        add(t, "edge")
    for t in pretokenize_texts():
        add(t, "pretokenize")
    for code, _, t in udhr:
        add(t, "udhr:" + code)
    return recs, sorted({c for c, _, _ in udhr})


def decode_record(note, symbols):
    bad = check_symbols(symbols)
    if bad is not None:
        return {"note": note, "symbols": symbols, "text_replace": None, "strict_error_index": None,
                "invalid_symbol_index": bad}
    return {"note": note, "symbols": symbols, "text_replace": decode(symbols),
            "strict_error_index": strict_error_index(symbols), "invalid_symbol_index": None}


def build_decode(routing):
    recs = [decode_record(n, s) for n, s in HAND_STREAMS]
    recs += [decode_record(n, s) for n, s in INVALID_STREAMS]
    for t in EDGE_TEXTS:
        recs.append(decode_record("encoder output of an edge text", route(t)))
    for length in range(1, 5):
        for seq in itertools.product(UTF16_SMALL, repeat=length):
            recs.append(decode_record("UTF-16 run over 00 41 D8 DC", u16(*seq)))
    for length in (1, 2):
        for seq in itertools.product(UTF8_PAIR_BYTES, repeat=length):
            recs.append(decode_record("UTF-8 run of %d bytes" % length, list(seq)))
    for seq in UTF8_LONG_SEQS:
        recs.append(decode_record("UTF-8 run around second-byte range boundaries", list(seq)))
    rng = random.Random(20240601)
    for k in range(300):
        recs.append(decode_record("random mixed stream (seed 20240601, #%d)" % k,
                                  random_stream(rng, rng.randrange(1, 40))))
    # real text, routed, then cut at random places and with an alphabet-changing symbol inserted
    rng = random.Random(20240602)
    real = [r for r in routing if r["source"] != "edge" and len(r["symbols"]) >= 8]
    for k in range(100):
        syms = list(rng.choice(real)["symbols"][:120])
        a = rng.randrange(len(syms))
        b = rng.randrange(a, len(syms) + 1)
        syms = syms[a:b] + [rng.choice((0x41, U + 0x41, 0x80, U + 0xD8))] + syms[b:]
        recs.append(decode_record("routed real text, cut and with a symbol inserted (seed "
                                  "20240602, #%d)" % k, syms))
    return recs


def build_stream(routing):
    recs = []

    def add(note, symbols, splits):
        outs, fl = stream_outputs(symbols, splits)
        recs.append({"note": note, "symbols": symbols, "splits": list(splits), "outputs": outs,
                     "flush": fl})

    for note, syms in HAND_STREAMS:
        n = len(syms)
        if n < 2:
            add(note + "; no split", syms, [])
            continue
        add(note + "; one symbol per add", syms, list(range(1, n)))
        for k in range(1, n):
            add(note + "; split at %d" % k, syms, [k])
    rng = random.Random(20240603)
    for k in range(150):
        syms = random_stream(rng, rng.randrange(2, 48))
        cuts = sorted(rng.sample(range(1, len(syms)), rng.randrange(0, min(8, len(syms) - 1) + 1)))
        add("random mixed stream, random splits (seed 20240603, #%d)" % k, syms, cuts)
    real = [r for r in routing if r["source"] != "edge" and len(r["symbols"]) >= 4]
    for k in range(100):
        syms = list(rng.choice(real)["symbols"][:160])
        cuts = sorted(rng.sample(range(1, len(syms)), rng.randrange(1, min(12, len(syms) - 1) + 1)))
        add("routed real text, random splits (seed 20240603, real #%d)" % k, syms, cuts)
    return recs


# ---------------------------------------------------------------------------------------------
# Output.

# Written as \u escapes (no tables, so the output does not depend on the Python version's
# Unicode data): controls, C1, invisible and space-like characters, line and paragraph
# separators, surrogates, private use (so the U+E100 export form stays visible), variation
# selectors, specials (U+FFFD included), tags and the supplementary private-use planes.
_ESC = re.compile("[\x00-\x1f\x7f-\xa0\xad\u034f\u061c\u115f\u1160\u1680\u180b-\u180f"
                  "\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\u3164\ud800-\udfff"
                  "\ue000-\uf8ff\ufe00-\ufe0f\ufeff\uffa0\ufff0-\uffff"
                  "\U0001bca0-\U0001bca3\U000e0000-\U000e0fff\U000f0000-\U0010ffff]")


def _esc(m):
    cp = ord(m.group())
    if cp > 0xFFFF:
        cp -= 0x10000
        return "\\u%04x\\u%04x" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF))
    return "\\u%04x" % cp


def _dump(obj):
    return _ESC.sub(_esc, json.dumps(obj, ensure_ascii=False, sort_keys=True)) + "\n"


def _meta(name, n, fields, **extra):
    meta = {
        "generated_by": GENERATED_BY,
        "oracle": "Python routing by bit arithmetic + CPython's codecs (utf-8, utf-16-le)",
        "part": "ube",
        "file": name,
        "records": n,
        "fields": fields,
        "alphabet": "symbols 0-255: UTF-8 bytes of code points below U+0800; 256-511: 256 + "
                    "UTF-16LE bytes of code points U+0800 and above (docs/design.md §6)",
    }
    meta.update(extra)
    return meta


def build():
    routing, udhr_codes = build_routing()
    decode_recs = build_decode(routing)
    stream_recs = build_stream(routing)
    files = {
        "routing.jsonl": [{"_meta": _meta(
            "routing.jsonl", len(routing), ROUTING_FIELDS,
            sources="hand-written edge texts in vectors/generate_ube.py; every text of "
                    "vectors/pretokenize/o200k.jsonl and script_aware.jsonl (hand-written cases "
                    "and UDHR lines); for each dominant script of ../shared/corpora/udhr.jsonl.xz "
                    "(MIT-licensed collection of public texts) the last translation in file "
                    "order, its first line of at least %d characters cut to %d"
                    % (UDHR_MIN_LINE, UDHR_MAX_LINE),
            udhr_codes=udhr_codes)}] + routing,
        "decode.jsonl": [{"_meta": _meta(
            "decode.jsonl", len(decode_recs), DECODE_FIELDS,
            decoding="each maximal same-alphabet run decoded by CPython's "
                     "bytes.decode('utf-8' | 'utf-16-le', errors), concatenated",
            sources="hand-written valid and malformed streams; streams with symbols above 511; "
                    "encoder output of the edge texts; every UTF-16 run of 1-4 bytes over "
                    "00 41 D8 DC; every UTF-8 run of 1-2 bytes over 23 bytes; 3- and 4-byte "
                    "UTF-8 runs around second-byte boundaries; random mixed streams; routed real "
                    "text cut and with one symbol inserted")}] + decode_recs,
        "stream.jsonl": [{"_meta": _meta(
            "stream.jsonl", len(stream_recs), STREAM_FIELDS,
            streaming="CPython's incremental decoders ('replace') applied run by run: a change "
                      "of alphabet finalizes the current decoder and starts one for the other "
                      "alphabet; flush finalizes; held UTF-8 bytes that no continuation can make "
                      "valid (CPython holds ED A0..BF) are emitted at once. The concatenation of "
                      "outputs and flush is the one-shot text",
            sources="every hand-written stream of decode.jsonl split at every point (one split "
                    "per record, and one symbol per add); random mixed streams and routed real "
                    "text with random splits")}] + stream_recs,
    }
    for name, rs in files.items():
        if name == "stream.jsonl":
            for r in rs[1:]:
                assert "".join(r["outputs"]) + r["flush"] == decode(r["symbols"])
    return {name: "".join(_dump(r) for r in rs) for name, rs in files.items()}


def main(argv=None):
    from generator_io import check_flag, write_or_check
    return write_or_check(build(), OUT_DIR, "generate_ube.py", check_flag(__doc__, argv))


if __name__ == "__main__":
    sys.exit(main())
