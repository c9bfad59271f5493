"""The reference pre-tokenizer: regex.findall with tiktoken 0.14's own pattern strings (for
superbpe, llama3 and qwen2, the regex split "isolated" as HuggingFace's Split does: its matches,
found by regex.finditer, and each nonempty stretch of text between them; for deepseek_v3, its
three regexes (the catalogue's pat_strs) split "isolated" one after the other, each on every
piece the one before gave), plus a short script chunker implementing
docs/design.md §5's rules. Written for clarity, not speed; it is
what vectors/generate.py and the differential tests compare the core against.

Needs the pinned oracle regex==2024.11.6 (docs/design.md §4)."""
import json
import os

import regex
from regex import _regex

HERE = os.path.dirname(os.path.abspath(__file__))
# the encoding catalogue the packages read: its patterns and default scripts
CATALOGUE = os.path.join(HERE, "..", "py", "supertok", "catalogue.json")
with open(CATALOGUE, encoding="utf-8") as _f:
    _catalogue = json.load(_f)

PATTERNS = {name: p["pat_str"] for name, p in _catalogue["patterns"].items()}
# patterns whose pieces are the matches and the text between them (HuggingFace's Split "isolated")
ISOLATED = {name for name, p in _catalogue["patterns"].items() if p.get("split") == "isolated"}

# Faster Superword paper, Appendix A: the first two (word) branches replaced by  ?\p{L}\p{M}*
SCRIPT_SPECIFIC = r" ?\p{L}\p{M}*|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
DEFAULT_SCRIPTS = tuple(_catalogue["default_scripts"])

# patterns that are a sequence of isolated splits (HuggingFace's Sequence of Splits): the regexes
# in order (the last is PATTERNS[name])
SEQUENCES = {name: p["pat_strs"] for name, p in _catalogue["patterns"].items() if "pat_strs" in p}

_compiled = {k: regex.compile(v) for k, v in PATTERNS.items()}
_compiled_seq = {k: [regex.compile(r) for r in v] for k, v in SEQUENCES.items()}
_script_specific = regex.compile(SCRIPT_SPECIFIC)


def _script_values():
    """Map every code point to the upper-case name of its Script value, asking regex."""
    names = {}
    for alias, v in _regex.get_properties()["SCRIPT"][1].items():
        names.setdefault(v, []).append(alias)
    everything = "".join(map(chr, range(0x110000)))
    table = ["UNKNOWN"] * 0x110000
    for v, aliases in names.items():
        name = max(aliases, key=len)
        for m in regex.finditer(r"\p{Script=%s}+" % aliases[0], everything):
            for cp in range(m.start(), m.end()):
                table[cp] = name
    return table


_scripts = None


def script_of(ch):
    global _scripts
    if _scripts is None:
        _scripts = _script_values()
    return _scripts[ord(ch)]


_canonical = {}


def canonical_script(name):
    """Upper-case regex name for a user's script name ("Han" -> "HAN")."""
    if name not in _canonical:
        m = regex.search(r"\p{Script=%s}" % name, "".join(map(chr, range(0x110000))))
        if not m:
            raise ValueError(name)
        _canonical[name] = script_of(m.group())
    return _canonical[name]


def chunks(text):
    """Single-script chunks of text as (start, end, script) by docs/design.md §5's rules."""
    out = []
    start, cur, common_start = 0, None, None
    for i, ch in enumerate(text):
        sc = script_of(ch)
        if sc in ("COMMON", "UNKNOWN"):
            if common_start is None:
                common_start = i
        elif sc == "INHERITED":
            pass  # stays with the preceding character
        elif cur is None:
            cur, common_start = sc, None
        elif sc == cur:
            common_start = None
        else:
            cut = common_start if common_start is not None else i
            out.append((start, cut, cur))
            start, cur, common_start = cut, sc, None
    if start < len(text) or not out:
        out.append((start, len(text), cur or "COMMON"))
    return [c for c in out if c[0] < c[1]]


def isolated(rx, text):
    """HuggingFace's Split(rx, "isolated"): each match, and each nonempty stretch between two."""
    out, pos = [], 0
    for m in rx.finditer(text):
        if m.start() > pos:
            out.append(text[pos:m.start()])
        out.append(m.group())
        pos = m.end()
    if pos < len(text):
        out.append(text[pos:])
    return out


def _split(pattern, text):
    if pattern in SEQUENCES:
        pieces = [text]
        for rx in _compiled_seq[pattern]:
            pieces = [q for p in pieces for q in isolated(rx, p)]
        return pieces
    if pattern in ISOLATED:
        return isolated(_compiled[pattern], text)
    return _compiled[pattern].findall(text)


def pretokenize(text, pattern="o200k", script_aware=False, scripts=None):
    if not script_aware:
        return _split(pattern, text)
    chosen = {canonical_script(s) for s in (DEFAULT_SCRIPTS if scripts is None else scripts)}
    pieces = []
    for a, b, sc in chunks(text):
        pieces += _script_specific.findall(text[a:b]) if sc in chosen else _split(pattern, text[a:b])
    return pieces
