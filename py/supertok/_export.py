"""Exports of supertok models to other libraries' formats (docs/design.md §7): a tiktoken rank file
and a HuggingFace tokenizers `tokenizer.json`.

Both formats are byte-level BPE over a regex pre-tokenizer, so only models that are exactly that
can go: the bytes alphabet (a UBE model's tokens are symbol sequences), no supermerges (neither
library joins pretokens), and no script-aware pre-tokenization (single-script chunks are no
regex). Anything else is refused with the reason (ExportError). The C core decides what goes and
writes the file (st_encoding_export, docs/formats/export.md); this module words its refusals and
checks what it wrote.

What goes out is what the model's tokens are; what comes back may still differ:
- tiktoken merges by rank (a pair merges when its concatenation is a token, lowest rank first),
  our models by rule (a pair merges only when it is one of the model's merges, lowest rule
  first). The two differ on some pieces (docs/design.md §7: rules `a b`, `c d`, `ab c`, `abc d`
  give `[ab, cd]` for `abcd`, ranks `[abcd]`).
- HuggingFace's BPE merges by rule too, but runs its own regex engine (Oniguruma, its own
  Unicode tables) on the pattern.
- Two merges can make tokens with the same bytes; both formats hold each byte string once (the
  first id keeps it), so the later id never comes back.
So every export is checked: the sample (the caller's texts, else SAMPLE below, many scripts) is
encoded by our encoding and by the exported one, built in-process from the written file with the
library itself (tiktoken.Encoding, tokenizers.Tokenizer.from_str), and every text where the ids
differ is reported: a warning (ExportWarning) listing them, and the ExportResult the caller checks.
"""
import base64
import warnings

FORMATS = ("tiktoken", "hf")

# A built-in sample for the check when the caller gives none: short texts in many scripts, with
# contractions, numbers, code, runs of spaces and newlines, and emoji (written for this file).
SAMPLE = [
    "The quick brown fox doesn't jump over the lazy dog; it's asleep.\n",
    "In 2024, about 8,100,000,000 people lived on Earth (roughly 1.3% more than in 2023).\n",
    "    def tokenize(self, text: str) -> list[int]:\n        return [ord(c) for c in text]\n",
    "Leading and trailing spaces   \t  and blank lines\n\n\n  matter too.  ",
    "Die Würde des Menschen ist unantastbar. Straße, Größe, Übermaß.\n",
    "Le cœur a ses raisons que la raison ne connaît point. Où est l'hôtel ?\n",
    "¿Dónde está la biblioteca? El niño comió piñas y jalapeños.\n",
    "Все люди рождаются свободными и равными в своём достоинстве и правах.\n",
    "Όλοι οι άνθρωποι γεννιούνται ελεύθεροι και ίσοι στην αξιοπρέπεια.\n",
    "يولد جميع الناس أحرارًا ومتساوين في الكرامة والحقوق.\n",
    "כל בני האדם נולדו בני חורין ושווים בערכם ובזכויותיהם.\n",
    "सभी मनुष्य जन्म से स्वतंत्र हैं और गरिमा तथा अधिकारों में समान हैं।\n",
    "人人生而自由，在尊严和权利上一律平等。他们赋有理性和良心。\n",
    "すべての人間は、生まれながらにして自由であり、かつ、尊厳と権利とについて平等である。\n",
    "모든 인간은 태어날 때부터 자유로우며 그 존엄과 권리에 있어 동등하다.\n",
    "มนุษย์ทั้งหลายเกิดมามีอิสระและเสมอภาคกันในเกียรติศักด์และสิทธิ\n",
    "Tokens 🙂🙂 and flags 🇫🇷 and families 👩‍👩‍👧 and ZWJ sequences.\n",
    "MiXeD CaSe, ALLCAPS, camelCaseIdentifiers and snake_case_names_here\n",
    "https://example.com/path?query=1&other=two#frag — an em dash, “quotes” and ‘apostrophes’\n",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1111111111111111111111 !!!!!!!!!!\n",
    "I'm, you're, he'll, we've, they'd, it's, DON'T, I'M\n",
]


class ExportError(ValueError):
    """A model that the format cannot express (the message says why), or a bad argument."""


class ExportWarning(UserWarning):
    """The exported tokenizer encodes some sample texts differently, or could not be checked."""


class Mismatch:
    """One sample text where the export's ids differ from ours."""
    __slots__ = ("text", "ours", "theirs")

    def __init__(self, text, ours, theirs):
        self.text, self.ours, self.theirs = text, ours, theirs

    def __repr__(self):
        k = next((i for i, (a, b) in enumerate(zip(self.ours, self.theirs)) if a != b),
                 min(len(self.ours), len(self.theirs)))
        return "Mismatch(%r: ours %r..., theirs %r... from token %d)" % (
            self.text if len(self.text) <= 60 else self.text[:57] + "...", self.ours[k:k + 4], self.theirs[k:k + 4], k)


class ExportResult:
    """What export() wrote and what its check found.

    format, path; pat_str and special_tokens (a tiktoken rank file holds neither: build
    tiktoken.Encoding(name, pat_str=..., mergeable_ranks=load_tiktoken_bpe(path),
    special_tokens=...) with these); checked: True when the exported tokenizer was built and
    compared, else not_checked says why (the library is not installed); texts: how many sample
    texts were compared; mismatches: a Mismatch for each text where the ids differ; duplicates:
    (id, first id) for each token whose bytes an earlier token has (left out of the file, so the
    export never gives that id); ok: checked with no mismatch."""

    def __init__(self, format, path, pat_str, special_tokens):
        self.format, self.path = format, path
        self.pat_str, self.special_tokens = pat_str, special_tokens
        self.checked, self.not_checked, self.library = False, None, None
        self.texts, self.mismatches, self.duplicates = 0, [], []

    @property
    def ok(self):
        return self.checked and not self.mismatches

    def summary(self):
        """One line: what was written and what the check found."""
        what = "%s (%s format)" % (self.path, self.format)
        if not self.checked:
            return "wrote %s; not checked: %s" % (what, self.not_checked)
        if not self.mismatches:
            return "wrote %s; %s gives our ids on all %d sample texts" % (what, self.library, self.texts)
        return "wrote %s; %s gives other ids than ours on %d of %d sample texts" % (
            what, self.library, len(self.mismatches), self.texts)

    def __repr__(self):
        return "<ExportResult %s>" % self.summary()


# ---- what the core writes -------------------------------------------------------------------
# The core decides what can go and writes the file (st_encoding_export): the byte-level strings,
# which tokens go (a special sharing an ordinary id is that token too; gaps and duplicate byte
# strings stay out) and the JSON text. Here its refusals become messages.

_LIBRARY = {"tiktoken": "tiktoken", "hf": "HuggingFace tokenizers"}
_FORMAT_IDS = {"tiktoken": 1, "hf": 2}  # ST_EXPORT_TIKTOKEN, ST_EXPORT_HF_JSON


def _refusal(enc, format, kind):
    """The reason for the core's refusal of kind (an ST_KIND_EXPORT_* name), in this host's words."""
    library = _LIBRARY[format]
    if kind == "ST_KIND_EXPORT_UBE":
        return ("it is a UBE model: its tokens are sequences of UBE symbols, and %s tokenizers are byte-level"
                % library)
    if kind == "ST_KIND_EXPORT_SUPERMERGES":
        return ("it has %d supermerges (tokens across pretokens), which the BPE of %s cannot make: it merges "
                "inside each pre-tokenizer piece only" % (len(enc.supermerges), library))
    if kind == "ST_KIND_EXPORT_SCRIPT_AWARE":
        return ("its pre-tokenizer is script-aware (single-script chunks first, docs/design.md §5), which no "
                "regular expression expresses, so %s would split the text differently" % library)
    if kind == "ST_KIND_EXPORT_NO_RULES":
        return ("it is a tiktoken vocabulary (ranks, no merge rules): a HuggingFace BPE model needs the merges; "
                "export it with --format tiktoken")
    return None


def _written_by_core(enc, format):
    """(the file's bytes, [(id, first id), ...] of the tokens left out as duplicates), or
    ExportError with the reason the format cannot express enc."""
    from ._status import SupertokError
    try:
        data = enc._backend.encoding_export(enc._handle, _FORMAT_IDS[format])
    except SupertokError as exc:
        why = _refusal(enc, format, exc.kind)
        if why is None:
            raise
        raise ExportError("%s cannot be exported to the %s format: %s" % (enc.name, format, why)) from None
    return data, enc._backend.duplicate_tokens(enc._handle)


# ---- the check -----------------------------------------------------------------------------------

def _written(path, data):
    """The export as the check reads it: read back from the file at path, or data when given (the
    output was a device or a pipe, which cannot be read back)."""
    if data is not None:
        return data
    with open(path, "rb") as f:
        return f.read()


def _tiktoken_encoder(enc, path, data=None):
    """encode_batch of a tiktoken.Encoding built from the rank file at path (read back from disk and
    parsed as tiktoken.load.load_tiktoken_bpe parses it; that function caches by path in a temp
    folder, which would hand back an older file of the same name)."""
    import tiktoken
    ranks = {}
    for line in _written(path, data).splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    tenc = tiktoken.Encoding("supertok-export-check", pat_str=enc._pat_str, mergeable_ranks=ranks,
                             special_tokens=dict(enc._special_tokens))
    return (lambda texts: tenc.encode_batch(texts, allowed_special="all")), "tiktoken %s" % _version("tiktoken")


def _hf_encoder(enc, path, data=None):
    from tokenizers import Tokenizer
    tok = Tokenizer.from_str(_written(path, data).decode("utf-8"))
    return (lambda texts: [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]), \
        "tokenizers %s" % _version("tokenizers")


def _version(dist):
    try:
        from importlib.metadata import version
        return version(dist)
    except Exception:
        return "(version unknown)"


def _texts(sample):
    if sample is None:
        return list(SAMPLE)
    if isinstance(sample, str):
        return [sample]
    out = []
    for k, t in enumerate(sample):
        if not isinstance(t, str):
            raise TypeError("sample[%d] is %s, not a str" % (k, type(t).__name__))
        out.append(t)
    return out


def _check(enc, format, path, texts, result, batch=1000, data=None):
    try:
        theirs_fn, result.library = (_tiktoken_encoder if format == "tiktoken" else _hf_encoder)(enc, path, data)
    except ImportError as exc:
        result.not_checked = "%s is not installed (%s): pip install %s" % (
            _LIBRARY[format], exc, "tiktoken" if format == "tiktoken" else "tokenizers")
        return
    for a in range(0, len(texts), batch):
        part = texts[a:a + batch]
        ours = enc.encode_batch(part, allowed_special="all")
        for t, o, th in zip(part, ours, theirs_fn(part)):
            if list(o) != list(th):
                result.mismatches.append(Mismatch(t, list(o), list(th)))
    result.texts = len(texts)
    result.checked = True


def export(enc, path, format, sample=None, check=True, warn=True, inputs=()):
    """Write enc as a tiktoken rank file (format "tiktoken") or a HuggingFace tokenizer.json
    ("hf") at path (supertok._output.write: a file through a temporary file, renamed; a device or a
    pipe straight), check it on the sample (an iterable of str; None: SAMPLE, a few lines in many
    scripts) and return the ExportResult. ExportError for a model the format cannot express. The
    model file enc was loaded from, and inputs (more paths), are refused as path (SameFileError).
    With warn, an ExportWarning lists the texts that encode differently (or says the check could
    not run)."""
    from ._output import STREAM, check as check_output, write
    if format not in FORMATS:
        raise ExportError("format must be one of %s, not %r" % (", ".join(repr(f) for f in FORMATS), format))
    data, dups = _written_by_core(enc, format)  # a refusal first, before the path is looked at
    inputs = tuple(enc._inputs()) + tuple(inputs)
    check_output(path, inputs)  # before the sample is read
    texts = _texts(sample)
    written = write(path, data, inputs)
    result = ExportResult(format, str(path), enc._pat_str, dict(enc._special_tokens))
    result.duplicates = dups
    if check:
        _check(enc, format, path, texts, result, data=data if written.kind == STREAM else None)
    else:
        result.not_checked = "check=False"
    if warn and check and not result.ok:
        warnings.warn(describe(result), ExportWarning, stacklevel=3)
    return result


def describe(result, limit=10):
    """The summary, and the first `limit` mismatching texts with where their ids part."""
    lines = [result.summary()]
    if result.duplicates:
        lines.append("%d token(s) repeat the bytes of an earlier one and are left out (id, first id): %s" % (
            len(result.duplicates), ", ".join("%d=%d" % d for d in result.duplicates[:limit])))
    for m in result.mismatches[:limit]:
        lines.append("  %r" % (m,))
    if len(result.mismatches) > limit:
        lines.append("  ... and %d more" % (len(result.mismatches) - limit))
    return "\n".join(lines)
