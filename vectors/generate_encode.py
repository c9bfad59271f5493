"""Regenerate the golden encode and decode vectors (vectors/encode/, vectors/decode/) from tiktoken.

    python vectors/generate_encode.py           write vectors/encode/*.jsonl and vectors/decode/*.jsonl
    python vectors/generate_encode.py --check   regenerate in memory; exit 1 naming every stale file

The oracle is tiktoken==0.14.0, run offline: the rank files shipped in py/supertok/vocab/ are put
in a temporary TIKTOKEN_CACHE_DIR under the names tiktoken gives its downloads, and tiktoken's
downloader is replaced by one that raises, so nothing is fetched. The incremental-decoder
expectations come from CPython's codecs.getincrementaldecoder("utf-8")(errors="replace").
The generator refuses to run unless tiktoken==0.14.0 and regex==2024.11.6 (the pinned oracles;
regex also writes the JSON escapes shared with vectors/generate.py) are installed.

Texts: every text of vectors/pretokenize/o200k.jsonl (read from the committed file, so
regenerate these vectors after the pre-tokenizer vectors), special-token cases, lone-surrogate
cases (stored as UTF-16 code units, see `text_utf16_hex`), about 100 samples of
../shared/corpora/udhr.jsonl.xz (the only corpus whose text may be committed; read from the
excerpts vendored in vectors/texts/udhr.jsonl, so this runs on a fresh clone) and very long pieces.
Plus vectors/encode/o200k_harmony.jsonl (encode only): texts with o200k_harmony's special tokens
under option sets that treat the two strings of id 200018 each on its own. Output is deterministic.
"""
import codecs
import hashlib
import importlib.metadata
import json
import os
import random
import shutil
import sys
import tempfile

ORACLE_TIKTOKEN = "0.14.0"
ORACLE_REGEX = "2024.11.6"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB_DIR = os.path.join(ROOT, "py", "supertok", "vocab")
# the encoding catalogue the packages read (here: which rank file each encoding's ranks are)
with open(os.path.join(ROOT, "py", "supertok", "catalogue.json"), encoding="utf-8") as _f:
    CATALOGUE = json.load(_f)
ENCODE_DIR = os.path.join(HERE, "encode")
DECODE_DIR = os.path.join(HERE, "decode")
PRETOKENIZE_TEXTS = os.path.join(HERE, "pretokenize", "o200k.jsonl")

ENCODINGS = ("r50k_base", "p50k_base", "cl100k_base", "o200k_base")
# Encodings with encode vectors only (their ordinary tokens are another's, whose decode vectors
# cover them): o200k_harmony, o200k_base's ranks with 1,100 special tokens, one id of which has
# two strings (<|endofprompt|> and <|reserved_200018|> are both 200018).
HARMONY = "o200k_harmony"
ENCODE_FILES = ENCODINGS + (HARMONY,)
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/%s.tiktoken"

# The pywasm subset (tests/test_encode_vectors.py): counting records from 0 after the header,
# record i runs on pywasm when (i < PYWASM_HEAD or i % PYWASM_STRIDE == 0) and its text has at
# most PYWASM_MAX_CHARS characters. Written into every header so other runners can follow it.
PYWASM_HEAD = 200
PYWASM_STRIDE = 10
PYWASM_MAX_CHARS = 300
PYWASM_RULE = {
    "encode": "pywasm (an interpreter) runs record i, counted from 0 after this header, when "
              "(i < %d or i %% %d == 0) and the record's text has at most %d characters, checking "
              "encode() on each and count(), encode_with_offsets() and encode_ordinary() only "
              "when i < %d; every other runner runs every record with every call"
              % (PYWASM_HEAD, PYWASM_STRIDE, PYWASM_MAX_CHARS, PYWASM_HEAD),
    "decode": "pywasm (an interpreter) runs record i, counted from 0 after this header, when "
              "i < %d or i %% %d == 0; every other runner runs every record" % (PYWASM_HEAD, PYWASM_STRIDE),
}


# ---------------------------------------------------------------------------------------------
# tiktoken, offline


def tiktoken_offline(cache_dir, names=ENCODINGS):
    """tiktoken Encodings for `names`, built from the rank files shipped in py/supertok/vocab/.

    Copies each <name>.tiktoken into cache_dir under the sha1 hex of its download URL (where
    tiktoken looks for a cached download), points TIKTOKEN_CACHE_DIR there while loading, and
    replaces tiktoken's downloader with one that raises for any URL (local paths are read, as
    tiktoken reads them), so no network is ever used. tiktoken
    checks each file against its published sha256. The caller may delete cache_dir afterwards.
    """
    import tiktoken
    import tiktoken.load

    def no_network(blobpath):
        if "://" not in blobpath:  # a local file (an exported rank file in the tests): read it
            with open(blobpath, "rb") as f:
                return f.read()
        raise RuntimeError("tiktoken tried to download %s; the vectors and tests run tiktoken "
                           "offline from py/supertok/vocab/ only" % blobpath)

    tiktoken.load.read_file = no_network
    os.makedirs(cache_dir, exist_ok=True)
    for name in names:
        base = CATALOGUE["encodings"][name]["rank_file"]
        url = TIKTOKEN_URL % base
        shutil.copyfile(os.path.join(VOCAB_DIR, base + ".tiktoken"),
                        os.path.join(cache_dir, hashlib.sha1(url.encode()).hexdigest()))
    prev = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = cache_dir
    try:
        return {name: tiktoken.get_encoding(name) for name in names}
    finally:
        if prev is None:
            del os.environ["TIKTOKEN_CACHE_DIR"]
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = prev


# ---------------------------------------------------------------------------------------------
# Record formats shared by the generator and the tests


def record_text(r):
    """The input str of an encode record: `text`; or `text_runs` [[unit, count], ...], each unit
    str repeated count times, in order; or the UTF-16-LE code units of `text_utf16_hex` (lone
    surrogates kept; a valid surrogate pair reads as its character)."""
    if "text" in r:
        return r["text"]
    if "text_runs" in r:
        return "".join(unit * count for unit, count in r["text_runs"])
    return bytes.fromhex(r["text_utf16_hex"]).decode("utf-16-le", "surrogatepass")


def expand_runs(runs):
    """ids of an `ids_runs` field: [[unit, count], ...] is unit repeated count times, in order."""
    out = []
    for unit, count in runs:
        out.extend(unit * count)
    return out


def record_ids(r):
    """Expected ids of an encode record (None for an error record)."""
    if "ids" in r:
        return r["ids"]
    if "ids_runs" in r:
        return expand_runs(r["ids_runs"])
    return None


def pywasm_runs(part, i, r):
    """Whether record i (from 0 after the header) of a `part` ("encode" or "decode") file is in
    the pywasm subset (PYWASM_RULE)."""
    if not (i < PYWASM_HEAD or i % PYWASM_STRIDE == 0):
        return False
    return part == "decode" or len(record_text(r)) <= PYWASM_MAX_CHARS


def _runs(ids, max_period=32, min_cover=8):
    """Compress ids into [[unit, count], ...]: a unit of up to max_period ids repeated count
    times where that covers at least min_cover ids, else literal stretches with count 1."""
    out, lit, i, n = [], [], 0, len(ids)
    while i < n:
        best_p, best_k = 0, 0
        for p in range(1, max_period + 1):
            if i + 2 * p > n:
                break
            unit, k = ids[i:i + p], 1
            while ids[i + k * p:i + (k + 1) * p] == unit:
                k += 1
            if k >= 2 and p * k > best_p * best_k:
                best_p, best_k = p, k
        if best_p * best_k >= min_cover:
            if lit:
                out.append([lit, 1])
                lit = []
            out.append([ids[i:i + best_p], best_k])
            i += best_p * best_k
        else:
            lit.append(ids[i])
            i += 1
    if lit:
        out.append([lit, 1])
    assert expand_runs(out) == ids
    return out


# ---------------------------------------------------------------------------------------------
# Encode case texts

NOT_SPECIAL = ["<|im_start|>", "<|im_end|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>",
               "<|endofprompt|>", "<|startoftext|>"]

PARTIAL_SPECIALS = [
    "<|", "|>", "<||>", "<|>", "<|endoftext", "endoftext|>", "<|endoftext|", "|endoftext|>",
    "<|endoftext|>>", "<<|endoftext|>", "<|endoftext|>|>", "<|endoftext||>", "<||endoftext|>",
    "<| endoftext|>", "<|endoftext |>", "< |endoftext|>", "<|ENDOFTEXT|>", "<|EndOfText|>",
    "<|endoftext|\n>", "<|end of text|>", "<|endoftext\u200b|>", "\uff1c|endoftext|\uff1e",
    "<|endoftext|endoftext|>", "<|endoftext<|endoftext|>", "<|endoftext|><|endoftext|",
    "<|<|endoftext|>|>", "endoftext", "<|endofprompt", "<|fim_", "<|fim_prefix|", "fim_middle|>",
]


def special_cases(specials):
    """[(text, [option sets])] for one encoding. Option sets are (allowed_special,
    disallowed_special) as recorded: "all" or a sorted list."""
    toks = [t for t, _ in sorted(specials.items(), key=lambda kv: kv[1])]
    eot, last = "<|endoftext|>", toks[-1]
    # every text gets the five basic option sets
    basic = [("all", "all"), ([], "all"), ([], []), ([eot], "all"), ([], [eot])]
    # some texts get more: a special that is allowed and disallowed at once (tiktoken checks
    # disallowed first), another special allowed alone, a string that is no special token of
    # the encoding allowed (ignored) or disallowed (still an error when present)
    extra = [("all", [eot]), ([last], "all"), (sorted({eot, "<|im_start|>"}), []),
             ([], ["<|im_start|>"]), (["<|im_start|>"], "all")]
    cases = []
    for s in toks:
        cases.append((s, basic + extra))
        for t in ["Hello " + s + " world", "a" + s + "b", s + "\n", "\n" + s, " " + s + " ",
                  s * 3, "x" + s + s + "y", "中文" + s + "中文", "'" + s + "'s", s + "12345",
                  "<|im_start|>" + s + "<|im_end|>", "\U0001f600" + s + "\U0001f600"]:
            cases.append((t, basic + extra))
        for t in [s[:-1], s + ">", "<" + s, s[1:], s[:-2] + s, s + s[:-1], s.upper(),
                  s[:2] + " " + s[2:], s[:-1] + " " + s, "<" + s + ">"]:
            cases.append((t, basic))
    for a in toks:                      # adjacent specials, every ordered pair
        for b in toks:
            if a != b:
                cases.append((a + b, basic))
    for t in PARTIAL_SPECIALS:
        cases.append((t, basic))
    for t in NOT_SPECIAL:
        if t not in specials:
            cases.append((t, basic + extra))
    joined = "Question?" + eot + "Answer: 42." + last + "\n\n" + "".join(toks)
    cases.append((joined, basic + extra))
    seen, out = set(), []
    for t, opts in cases:
        if t not in seen:
            seen.add(t)
            uniq = []
            for o in opts:
                if o not in uniq:
                    uniq.append(o)
            out.append((t, uniq))
    return out


# Strings with lone surrogates are not representable in JSON's UTF-8, so these records carry
# their UTF-16-LE code units in `text_utf16_hex` instead of `text`. A surrogate *pair* given as
# two separate code points of a Python str is the same as its character for every call checked
# here; tests/test_encode_differential.py covers that case.
SURROGATE_CASES = [
    "\ud800", "\udbff", "\udc00", "\udfff", "a\ud800b", "x\udc00", "\ud83dx", "\ude00\ud83d",
    "\ud800\ud800", "\udc00\udc00", "\ud800\udbff\udc00", "\U0001f600\ud83d", "\ud83d\U0001f600",
    "中\ud800文", " \ud800 ", "\ud800'\udc00s", "a\ud800a\ud800a\ud800", "123\udfff456",
    "don't\ud800", "\ud800\n\n", "  \udc00  x", "\ud800" * 40,
]
SURROGATE_SPECIAL_CASES = ["<|endoftext|>\ud800", "\ud800<|endoftext|>\udc00", "<|endoftext\ud800|>"]

LONG_UNITS = [
    ("one letter", "a"),
    ("ab", "ab"),
    ("a space then x", " x"),
    ("digits", "0123456789"),
    ("a Han character", "中"),
    ("an emoji", "\U0001f600"),
]
LONG_COUNTS = (5000, 50000)


def long_cases():
    """(text_runs, description): 5,000 and 50,000 copies of each unit (digits: the first 5,000
    or 50,000 characters of 0123456789 repeated), then that many spaces followed by x."""
    out = []
    for desc, unit in LONG_UNITS:
        for n in LONG_COUNTS:
            if unit == "0123456789":
                out.append(([[unit, n // len(unit)]], "%d digits (0123456789 repeated)" % n))
            else:
                out.append(([[unit, n]], "%d copies of %s (%r)" % (n, desc, unit)))
    for n in LONG_COUNTS:
        out.append(([[" ", n], ["x", 1]], "%d spaces then x" % n))
    return out


def pretokenize_texts():
    with open(PRETOKENIZE_TEXTS, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["text"] for r in rows[1:]]


UDHR_SAMPLES = 100
UDHR_SAMPLE_CHARS = 500


def udhr_samples():
    """[(code, script, text)]: UDHR_SAMPLES translations chosen round-robin over dominant scripts
    (`scripts[0]`, in order of first appearance; each round takes the next translation in file
    order of every script that has one left), and from each, the lines starting at a third of
    the text, joined while they fit in UDHR_SAMPLE_CHARS characters (a longer first line is cut
    at its last space before the limit). The selection is made by vectors/vendor_udhr.py from
    ../shared/corpora/udhr.jsonl.xz; this reads its output, vectors/texts/udhr.jsonl."""
    sys.path.insert(0, HERE)
    import vendor_udhr
    assert (UDHR_SAMPLES, UDHR_SAMPLE_CHARS) == (vendor_udhr.ENC_SAMPLES, vendor_udhr.ENC_SAMPLE_CHARS)
    return vendor_udhr.excerpts("encode")


# ---------------------------------------------------------------------------------------------
# Encode records


def _opt(v):
    return "all" if v == "all" else sorted(v)


def _call_opt(v):
    return "all" if v == "all" else set(v)


def encode_record(tk, name, text, allowed, disallowed, utf16=False, runs=None):
    r = {"encoding": name, "allowed_special": _opt(allowed), "disallowed_special": _opt(disallowed)}
    if runs is not None:
        r["text_runs"] = runs
        assert record_text(r) == text
    elif utf16:
        r["text_utf16_hex"] = text.encode("utf-16-le", "surrogatepass").hex()
    else:
        r["text"] = text
    try:
        ids = tk.encode(text, allowed_special=_call_opt(allowed), disallowed_special=_call_opt(disallowed))
    except ValueError:
        r["error"] = "ValueError"
        return r
    if runs is not None:
        r["ids_runs"] = _runs(ids)
    else:
        r["ids"] = ids
        if not utf16:
            r["starts"] = tk.decode_with_offsets(ids)[1]
    return r


ENCODE_FIELDS = {
    "encoding": "the encoding's name",
    "text": "input str (valid Unicode); exactly one of text, text_runs, text_utf16_hex is given",
    "text_runs": "instead of text, for the very long pieces: [[unit, count], ...], the text is "
                 "each unit str repeated count times, in order",
    "text_utf16_hex": "instead of text, for strings with lone surrogates: the str's UTF-16-LE "
                      "code units as hex (Python: bytes.fromhex(h).decode('utf-16-le', "
                      "'surrogatepass'))",
    "allowed_special": "\"all\" or the list of strings passed as allowed_special",
    "disallowed_special": "\"all\" or the list of strings passed as disallowed_special "
                          "([] is tiktoken's disallowed_special=())",
    "ids": "expected encode(text, allowed_special=..., disallowed_special=...)",
    "ids_runs": "instead of ids, for the very long pieces: [[unit, count], ...], the ids are "
                "each unit list repeated count times, in order",
    "starts": "with ids and text: expected encode_with_offsets' character offsets (code point "
              "indexes into text) where each token starts, tiktoken's decode_with_offsets rule",
    "error": "instead of ids: the exception tiktoken raises (\"ValueError\": disallowed special "
             "token in the text)",
}


def build_encode(tk, name, pre_texts, udhr, meta_common):
    enc = tk[name]
    specials = {t: enc.encode_single_token(t) for t in enc.special_tokens_set}
    recs = []
    for text, opts in special_cases(specials):
        for allowed, disallowed in opts:
            recs.append(encode_record(enc, name, text, allowed, disallowed))
    for text in SURROGATE_CASES:
        recs.append(encode_record(enc, name, text, [], "all", utf16=True))
    for text in SURROGATE_SPECIAL_CASES:
        for allowed, disallowed in (("all", "all"), ([], "all"), ([], [])):
            recs.append(encode_record(enc, name, text, allowed, disallowed, utf16=True))
    for text in pre_texts:
        recs.append(encode_record(enc, name, text, [], "all"))
    for _, _, text in udhr:
        recs.append(encode_record(enc, name, text, [], "all"))
    longs = long_cases()
    for runs, _ in longs:
        text = "".join(unit * count for unit, count in runs)
        recs.append(encode_record(enc, name, text, [], "all", runs=runs))
    for r in recs:
        assert not isinstance(record_text(r), bytes)
    meta = dict(meta_common)
    meta.update({
        "part": "encode",
        "pywasm_subset": PYWASM_RULE["encode"],
        "file": name + ".jsonl",
        "encoding": name,
        "n_vocab": enc.n_vocab,
        "special_tokens": specials,
        "records": len(recs),
        "fields": ENCODE_FIELDS,
        "call": "encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special); "
                "\"all\" is passed as \"all\", a list as a set",
        "sources": (
            "in this order: special-token cases (each special token alone, inside text, "
            "repeated, adjacent to another, partial or damaged, strings that are no special "
            "token of this encoding) under several allowed/disallowed option sets; strings with "
            "lone surrogates (text_utf16_hex); every text of vectors/pretokenize/o200k.jsonl; "
            "%d samples of ../shared/corpora/udhr.jsonl.xz (translations round-robin over "
            "dominant scripts, from each the lines starting at a third of the text, at most %d "
            "characters); very long pieces (text_runs, ids_runs): %s"
            % (len(udhr), UDHR_SAMPLE_CHARS, "; ".join(d for _, d in longs))),
        "udhr_codes": [c for c, _, _ in udhr],
    })
    return [{"_meta": meta}] + recs


# ---------------------------------------------------------------------------------------------
# o200k_harmony: a special id with two strings. tiktoken's policy names strings, so the two
# strings of 200018 may be allowed, disallowed or neither each on its own.

HARMONY_E, HARMONY_R = "<|endofprompt|>", "<|reserved_200018|>"
HARMONY_TEXTS = [
    HARMONY_E, HARMONY_R, "hello <|endofprompt|> world", "hello <|reserved_200018|> world",
    HARMONY_E + HARMONY_R, HARMONY_R + HARMONY_E, HARMONY_R + HARMONY_R + "x" + HARMONY_E * 2,
    "a<|reserved_200018|>b<|endofprompt|>c<|reserved_200500|>",
    "<|endoftext|><|reserved_200018|><|constrain|>",
    "<|start|>user<|message|>hi<|end|><|start|>assistant<|channel|>final<|message|>ok<|return|>",
    "<|start|>system<|message|>x<|endofprompt|><|end|><|call|><|reserved_200018|>",
    "<|reserved_200018|", "<|reserved_20001|>", "<|reserved_2000188|>", "<<|reserved_200018|>>",
    "<|endofprompt|reserved_200018|>", "<|reserved_200019|><|reserved_200017|>", "<|reserved_201087|>",
    "中文<|reserved_200018|>中文\U0001f600<|endofprompt|>\U0001f600", "'<|endofprompt|>'s <|reserved_200018|>12345\n",
    "no specials here, 你好 \U0001f600",
]
HARMONY_OPTIONS = [
    ("all", "all"), ([], "all"), ([], []), ([HARMONY_R], "all"), ([HARMONY_E], "all"),
    ([HARMONY_R], []), ([HARMONY_E], []), ([], [HARMONY_R]), ([], [HARMONY_E]), ([HARMONY_R], [HARMONY_E]),
    ([HARMONY_E], [HARMONY_R]), ([HARMONY_E, HARMONY_R], []), ([HARMONY_E, HARMONY_R], "all"),
    ("all", [HARMONY_R]), ("all", [HARMONY_E]), ([HARMONY_R], [HARMONY_R]),
    (["<|start|>", "<|message|>", "<|end|>"], "all"), (["<|start|>", HARMONY_R], ["<|end|>"]),
    (["<|reserved_200500|>", HARMONY_R], []), (["<|im_start|>"], [HARMONY_E, "<|im_end|>"]),
]


def build_harmony_encode(tk, meta_common):
    enc = tk[HARMONY]
    specials = dict(enc._special_tokens)  # in tiktoken's order: <|endofprompt|> before <|reserved_200018|>
    assert specials[HARMONY_E] == specials[HARMONY_R] == 200018
    recs = [encode_record(enc, HARMONY, text, allowed, disallowed)
            for text in HARMONY_TEXTS for allowed, disallowed in HARMONY_OPTIONS]
    for r in recs:
        # tiktoken's decode_with_offsets gives offsets into the decoded text, which spells 200018
        # <|endofprompt|> even where the text held <|reserved_200018|>: then they are no offsets
        # into the text, and tiktoken has no oracle for encode_with_offsets' starts
        if "starts" in r and enc.decode(r["ids"]) != r["text"]:
            del r["starts"]
    meta = dict(meta_common)
    meta.update({
        "part": "encode",
        "pywasm_subset": PYWASM_RULE["encode"],
        "file": HARMONY + ".jsonl",
        "encoding": HARMONY,
        "n_vocab": enc.n_vocab,
        "special_tokens": specials,
        "decode_200018": enc.decode_single_token_bytes(200018).decode("utf-8"),
        "records": len(recs),
        "fields": ENCODE_FIELDS,
        "call": "encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special); "
                "\"all\" is passed as \"all\", a list as a set",
        "sources": ("%d texts with o200k_harmony's special tokens, the two strings of id 200018 (%s, %s) "
                    "among them, alone, adjacent, damaged and inside text, each under %d option sets that "
                    "allow, disallow or leave out each string on its own (decode_200018: the string "
                    "tiktoken's decode_single_token_bytes(200018) gives); starts only where the ids decode to the "
                    "text (tiktoken's decode_with_offsets counts in the decoded text)"
                    % (len(HARMONY_TEXTS), HARMONY_E, HARMONY_R, len(HARMONY_OPTIONS))),
    })
    return [{"_meta": meta}] + recs


# ---------------------------------------------------------------------------------------------
# Decode records

DECODE_TEXTS = [
    "héllo wörld", "中文字符测试", "日本語のテキスト、カタカナ", "한국어 텍스트", "नमस्ते दुनिया",
    "Привет, мир", "مرحبا بالعالم", "Ἐν ἀρχῇ ἦν ὁ λόγος", "ẹ̀ ọ́ Yorùbá",
    "\U0001f600\U0001f44d\U0001f3fd\U0001f468\u200d\U0001f469\u200d\U0001f467\U0001f1eb\U0001f1f7",
    "\U0001d400\U0001d401 \U00020000\U00020001", "£€¥₹ ©®™", "ᐊᓂᔑᓈᐯᒧᐎᓐ", "ⴰⵣⵓⵍ ⴰⵎⴰⵣⵉⵖ", "ᎣᏏᏲ ᏣᎳᎩ",
    "བོད་ཡིག", "မြန်မာစာ", "ភាសាខ្មែរ", "ສະບາຍດີ", "ქართული", "Հայերեն", "አማርኛ",
    "a\x00b\x7fc", "\u0301\u0301x", "\ue000\U0010fffd", "don't stop", "  \n\n\t x",
]

# Byte strings spelled with single-byte tokens, one token per byte.
BYTE_PATTERNS = [
    b"\x80", b"\xbf", b"\xc3", b"\xe4", b"\xf0", b"\xc3\xa9", b"\xe4\xb8", b"\xe4\xb8\xad",
    b"\xf0\x9f\x98", b"\xf0\x9f\x98\x80", b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80",
    b"\xe0\x9f\xbf", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xed\x9f\xbf", b"\xf4\x90\x80\x80",
    b"\xf4\x8f\xbf\xbf", b"\xf5\x80\x80\x80", b"\xf8\x88\x80\x80\x80", b"\xfe", b"\xff",
    b"\xe4A", b"\xf0\x9f\x98A", b"\xe4\xb8\xe4\xb8\xad", b"\x80\x80\x80", b"a\xffb",
    b"\xf0\x9f\xe4\xb8\xad", b"\xc3\xc3\xa9", b"\xe4\xb8\xad\xad", b"\xf0\x9f\x98\x80\x80",
    bytes(range(256)), bytes(range(255, 127, -1)),
]

INCREMENTAL_SEED = 20240601
INCREMENTAL_MAX_IDS = 64


def _incremental_record(tk, ids, splits):
    dec = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks = [dec.decode(tk.decode_bytes(s), final=False) for s in splits]
    final = dec.decode(b"", final=True)
    assert "".join(chunks) + final == tk.decode(ids)
    return {"kind": "incremental", "ids": ids, "splits": splits, "chunks": chunks, "final": final}


DECODE_FIELDS = {
    "kind": "\"bytes\": one-shot decoding; \"incremental\": the incremental decoder; "
            "\"error\": decoding raises",
    "ids": "the token id stream",
    "bytes_hex": "bytes: expected decode_bytes(ids) as hex",
    "text_replace": "bytes: expected decode(ids) (errors=\"replace\")",
    "splits": "incremental: ids cut into consecutive lists (an empty list is allowed), fed to "
              "add() one list per call",
    "chunks": "incremental: the expected str returned by each add(), from CPython's "
              "codecs.getincrementaldecoder('utf-8')(errors='replace') fed each list's bytes",
    "final": "incremental: the expected str returned by flush() at the end (U+FFFD for an "
             "incomplete character left over); \"\".join(chunks) + final == decode(ids)",
    "error": "error: the exception tiktoken raises (KeyError: no token has that id; "
             "OverflowError: the id is not an unsigned 32-bit integer)",
}


def build_decode(tk, name, udhr, meta_common):
    enc = tk[name]
    byte_id = {b: enc.encode_single_token(bytes([b])) for b in range(256)}
    specials = sorted(enc.encode_single_token(t) for t in enc.special_tokens_set)
    eot = enc.eot_token

    streams = []   # id lists, in record order
    texts = DECODE_TEXTS + [t[:120] for _, _, t in udhr[:40:3]]
    for text in texts:
        ids = enc.encode_ordinary(text)
        streams.extend((ids, ids[1:], ids[:-1], ids[1:-1], ids[::-1]))
    for pat in BYTE_PATTERNS:
        streams.append([byte_id[b] for b in pat])
    # tokens of the vocabulary whose bytes are not valid UTF-8 on their own
    partial = []
    for i in range(enc.n_vocab):
        try:
            b = enc.decode_single_token_bytes(i)
        except KeyError:
            continue
        if len(b) > 1 and i not in specials:
            try:
                b.decode("utf-8")
            except UnicodeDecodeError:
                partial.append(i)
    picks = partial[::max(1, len(partial) // 24)][:24]
    for i in picks:
        streams.append([i])
    for a, b in zip(picks[0::2], picks[1::2]):
        streams.append([a, b])
    streams.append(picks)
    hello, zh = enc.encode_ordinary("Hello"), enc.encode_ordinary("中文")
    streams += [[], [eot], hello + [eot] + zh, specials, [byte_id[0xE4], eot, byte_id[0xB8], byte_id[0xAD]],
                zh[:1] + specials + zh[1:]]
    uniq, seen = [], set()
    for s in streams:
        if tuple(s) not in seen:
            seen.add(tuple(s))
            uniq.append(s)

    recs = []
    for ids in uniq:
        recs.append({"kind": "bytes", "ids": ids, "bytes_hex": enc.decode_bytes(ids).hex(),
                     "text_replace": enc.decode(ids)})
    rng = random.Random(INCREMENTAL_SEED)
    for ids in uniq:
        if not ids or len(ids) > INCREMENTAL_MAX_IDS:
            continue
        recs.append(_incremental_record(enc, ids, [[i] for i in ids]))
        cuts = sorted(rng.sample(range(1, len(ids)), min(len(ids) - 1, max(1, len(ids) // 3)))) \
            if len(ids) > 1 else []
        bounds = [0] + cuts + [len(ids)]
        splits = [[]] + [ids[a:b] for a, b in zip(bounds, bounds[1:])]
        recs.append(_incremental_record(enc, ids, splits))
    # invalid ids
    holes = []
    for i in range(enc.n_vocab):
        try:
            enc.decode_single_token_bytes(i)
        except KeyError:
            holes.append(i)
    bad = [[enc.n_vocab], [enc.n_vocab + 1000], hello + [enc.n_vocab], [-1], [2 ** 32], [2 ** 40],
           hello + [-1]] + [[h] for h in holes[:2]] + [[h, byte_id[0x41]] for h in holes[-1:]]
    for ids in bad:
        try:
            enc.decode_bytes(ids)
            raise AssertionError("tiktoken decoded %r" % ids)
        except (KeyError, OverflowError) as exc:
            err = type(exc).__name__
        try:
            enc.decode(ids)
            raise AssertionError("tiktoken decoded %r" % ids)
        except (KeyError, OverflowError) as exc:
            assert type(exc).__name__ == err
        recs.append({"kind": "error", "ids": ids, "error": err})

    meta = dict(meta_common)
    meta.update({
        "part": "decode",
        "pywasm_subset": PYWASM_RULE["decode"],
        "file": name + ".jsonl",
        "encoding": name,
        "n_vocab": enc.n_vocab,
        "records": len(recs),
        "fields": DECODE_FIELDS,
        "oracle_incremental": "CPython codecs.getincrementaldecoder('utf-8')(errors='replace')",
        "sources": (
            "id streams: the ids of short multi-script texts and of the first 120 characters of "
            "some UDHR samples, each whole, without its first token, without its last, without "
            "both, and reversed; byte strings spelled one single-byte token per byte (truncated, "
            "overlong, surrogate, out-of-range and stray bytes; all 256 bytes); vocabulary "
            "tokens that are not valid UTF-8 alone, singly, in pairs and all together; special "
            "tokens, alone and between partial characters; the empty stream. Then every "
            "non-empty stream of at most %d ids again as incremental records, once one id per add() and once cut "
            "at random points (seed %d) after an empty first add(). Then invalid ids "
            "(kind error), including ids in the gaps of the id space."
            % (INCREMENTAL_MAX_IDS, INCREMENTAL_SEED)),
        "id_gaps": holes,
    })
    return [{"_meta": meta}] + recs


# ---------------------------------------------------------------------------------------------


def _dumper():
    sys.path.insert(0, HERE)
    from generator_io import escaper as _escaper  # the escapes of the pre-tokenizer vectors (README)
    esc = _escaper()

    def dump(obj):
        return esc(json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))) + "\n"
    return dump


def build():
    pre_texts = pretokenize_texts()
    udhr = udhr_samples()
    with tempfile.TemporaryDirectory(prefix="supertok-tiktoken-") as cache:
        tk = tiktoken_offline(cache, ENCODE_FILES)
    meta_common = {
        "generated_by": "python vectors/generate_encode.py",
        "oracle": "tiktoken==" + ORACLE_TIKTOKEN,
        "rank_file_sha256": None,
    }
    dump = _dumper()
    files = {}
    for name in ENCODINGS:
        with open(os.path.join(VOCAB_DIR, name + ".json"), encoding="utf-8") as f:
            meta_common["rank_file_sha256"] = json.load(f)["sha256"]
        recs = build_encode(tk, name, pre_texts, udhr, meta_common)
        files["encode/" + name + ".jsonl"] = "".join(dump(r) for r in recs)
        recs = build_decode(tk, name, udhr, meta_common)
        files["decode/" + name + ".jsonl"] = "".join(dump(r) for r in recs)
    with open(os.path.join(VOCAB_DIR, "o200k_base.json"), encoding="utf-8") as f:
        meta_common["rank_file_sha256"] = json.load(f)["sha256"]
    recs = build_harmony_encode(tk, meta_common)
    files["encode/" + HARMONY + ".jsonl"] = "".join(dump(r) for r in recs)
    return files


def _versions_ok():
    ok = True
    for pkg, want in (("tiktoken", ORACLE_TIKTOKEN), ("regex", ORACLE_REGEX)):
        try:
            have = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            have = None
        if have != want:
            sys.stderr.write("generate_encode.py: the oracle must be %s==%s, found %s; pip install %s==%s\n"
                             % (pkg, want, have, pkg, want))
            ok = False
    return ok


def main(argv=None):
    from generator_io import check_flag
    check = check_flag(__doc__, argv)
    if not _versions_ok():
        return 2

    files = build()
    if check:
        stale = []
        for rel, text in sorted(files.items()):
            try:
                with open(os.path.join(HERE, rel), "rb") as f:
                    old = f.read()
            except OSError:
                stale.append(rel + " (missing)")
                continue
            if old != text.encode("utf-8"):
                stale.append(rel + " (differs)")
        for d in ("encode", "decode"):
            path = os.path.join(HERE, d)
            for n in sorted(os.listdir(path)) if os.path.isdir(path) else []:
                if n.endswith(".jsonl") and d + "/" + n not in files:
                    stale.append(d + "/" + n + " (not generated by generate_encode.py)")
        if stale:
            sys.stderr.write("generate_encode.py --check: stale vectors: %s\n"
                             "run: python vectors/generate_encode.py\n"
                             % ", ".join("vectors/" + s for s in stale))
            return 1
        print("generate_encode.py --check: %d files up to date" % len(files))
        return 0

    for d in (ENCODE_DIR, DECODE_DIR):
        os.makedirs(d, exist_ok=True)
    for rel, text in sorted(files.items()):
        with open(os.path.join(HERE, rel), "wb") as f:
            f.write(text.encode("utf-8"))
        print("wrote vectors/%s (%d records, %d bytes)" % (rel, text.count("\n") - 1, len(text.encode("utf-8"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
