"""Evaluation corpora: the text of each language, cut into units (docs/evaluation.md).

Three file layouts and one Python form are read:

- aligned JSON lines: one {"lang", "id", "text"} record per unit; units are matched across
  languages by `id`, and only the ids every language has are kept (the others are counted as
  dropped, with the reason);
- a FLORES-200 style folder: one file per language, `{lang}.{split}` or `{lang}.txt`
  (compressed .gz/.xz/.bz2 too), line i of every file is unit i; lines past the shortest file
  are dropped;
- the UDHR JSON lines of ../shared/corpora: one {"code", "text"} record per translation; its
  units are the translation's nonempty lines, not aligned across languages, so the premiums are
  descriptive rather than content-matched (the UBE paper treats UDHR the same way);
- a mapping {lang: [unit text, ...]}: aligned by position, like a FLORES folder.

The package ships a parallel sample (the UDHR's 30 articles in 52 languages): `SAMPLE`.
"""
import collections
import json
import lzma
import os

from .._train import _COMPRESSED  # the same codecs, by the same extensions, as training reads

SAMPLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data", "udhr_sample.jsonl.gz")


class CorpusError(ValueError):
    """A corpus that cannot be read as one: the message names the file and, where there is one,
    the line (`path`, `line`)."""

    def __init__(self, message, path=None, line=None):
        super().__init__(message)
        self.path, self.line = path, line


class Corpus:
    """The units of each language: `units[lang]` is a list of str, `ids` the unit ids of an
    aligned corpus (the same for every language) or None, `languages` in the corpus's order."""

    def __init__(self, units, *, ids, aligned, layout, source, dropped=0, dropped_why=""):
        self.units = units
        self.languages = list(units)
        self.ids = ids
        self.aligned = aligned
        self.layout = layout
        self.source = source
        self.dropped = dropped
        self.dropped_why = dropped_why

    def describe(self):
        """What the report says about the corpus."""
        d = {"source": self.source, "layout": self.layout, "aligned": self.aligned,
             "languages": len(self.languages), "units": sum(len(u) for u in self.units.values()),
             "dropped_units": self.dropped}
        if self.aligned:
            d["units_per_language"] = len(self.ids)
        if self.dropped:
            d["dropped_why"] = self.dropped_why
        if not self.aligned:
            d["note"] = ("units are the nonempty lines of each text and are not aligned across languages: "
                         "premiums are descriptive corpus-level ratios, not content-matched")
        return d


def _opener(path):
    base, ext = os.path.splitext(path)
    opener = _COMPRESSED.get(ext.lower())
    return (opener, base) if opener else (open, path)


def _lines(path):
    """(line number, str) of a UTF-8 file, compressed or not; errors name the file and line."""
    opener, _ = _opener(path)
    try:
        f = opener(path, "rb")
    except OSError as exc:
        raise CorpusError("%s: cannot read: %s" % (path, exc.strerror or exc), path) from None
    with f:
        n = 0
        try:
            for n, raw in enumerate(f, 1):
                try:
                    yield n, raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise CorpusError("%s:%d: not UTF-8 (byte %d of the line: %s)"
                                      % (path, n, exc.start + 1, exc.reason), path, n) from None
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise CorpusError("%s: cannot read after line %d: %s" % (path, n, exc), path, n) from None


def _check_text(text, path, n, field="text"):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise CorpusError("%s:%d: the %s holds a lone surrogate (U+%04X at character %d): not text that "
                          "UTF-8 can carry" % (path, n, field, ord(text[exc.start]), exc.start + 1), path, n) from None
    return text


def _records(path):
    for n, line in _lines(path):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise CorpusError("%s:%d: not a JSON record (%s)" % (path, n, exc), path, n) from None
        if not isinstance(rec, dict):
            raise CorpusError("%s:%d: a record is a JSON object, this line holds %s" % (path, n, type(rec).__name__),
                              path, n)
        yield n, rec


def _field(rec, key, path, n, kinds=(str,)):
    value = rec.get(key)
    if not isinstance(value, kinds) or isinstance(value, bool):
        what = "missing" if key not in rec else "a %s" % type(value).__name__
        raise CorpusError("%s:%d: the field %r is %s, not %s" % (path, n, key, what,
                                                                   " or ".join(k.__name__ for k in kinds)), path, n)
    return value


def _read_jsonl(path):
    """An aligned JSON-lines corpus ({"lang","id","text"}) or a UDHR one ({"code","text"}): the
    first record says which."""
    aligned = collections.OrderedDict()
    udhr = collections.OrderedDict()
    layout = None
    for n, rec in _records(path):
        if layout is None:
            layout = "jsonl" if "lang" in rec else "udhr" if "code" in rec else None
            if layout is None:
                raise CorpusError("%s:%d: a record of an aligned corpus has \"lang\", \"id\" and \"text\"; a UDHR "
                                  "record has \"code\" and \"text\"; this one has %s"
                                  % (path, n, ", ".join(map(repr, rec)) or "no field"), path, n)
        if layout == "jsonl":
            lang = _field(rec, "lang", path, n)
            uid = _field(rec, "id", path, n, (str, int))
            text = _check_text(_field(rec, "text", path, n), path, n)
            units = aligned.setdefault(lang, {})
            if uid in units:
                raise CorpusError("%s:%d: the unit %r of %r appears twice (first on line %d)"
                                  % (path, n, uid, lang, units[uid][0]), path, n)
            units[uid] = (n, text)
        else:
            code = _field(rec, "code", path, n)
            text = _check_text(_field(rec, "text", path, n), path, n)
            if code in udhr:
                raise CorpusError("%s:%d: the language %r appears twice" % (path, n, code), path, n)
            udhr[code] = [line for line in text.split("\n") if line.strip()]
    if layout is None:
        raise CorpusError("%s: holds no record" % path, path)
    if layout == "udhr":
        return Corpus(udhr, ids=None, aligned=False, layout="udhr", source=path)
    # the ids of the first language, in its order, that every language has
    first = next(iter(aligned.values()))
    common = [uid for uid in first if all(uid in u for u in aligned.values())]
    every = set().union(*aligned.values())
    dropped = sum(len(u) for u in aligned.values()) - len(common) * len(aligned)
    why = ""
    if dropped:
        missing = collections.Counter()
        for uid in every:
            missing[sum(uid not in u for u in aligned.values())] += 1
        why = "%d unit ids are missing from some language (%s)" % (
            len(every) - len(common), ", ".join("%d ids missing from %d language%s" % (c, k, "" if k == 1 else "s")
                                                for k, c in sorted(missing.items()) if k))
    if not common:
        raise CorpusError("%s: no unit id is present in every language (%d languages): nothing is aligned"
                          % (path, len(aligned)), path)
    units = collections.OrderedDict((lang, [u[uid][1] for uid in common]) for lang, u in aligned.items())
    return Corpus(units, ids=common, aligned=True, layout="jsonl", source=path, dropped=dropped, dropped_why=why)


def _flores_name(name):
    """(lang, split) of a FLORES-style file name (compression extension removed first)."""
    _, base = _opener(name)
    lang, dot, split = base.rpartition(".")
    if not dot or not lang:
        return None
    return lang, split


def _read_folder(path, split=None):
    names = sorted(n for n in os.listdir(path) if not n.startswith(".") and os.path.isfile(os.path.join(path, n)))
    files = {}
    for name in names:
        parsed = _flores_name(name)
        if parsed is None:
            continue
        lang, s = parsed
        if split is not None and s != split:
            continue
        files.setdefault(s, {})[lang] = os.path.join(path, name)
    if not files:
        raise CorpusError("%s: no language file: a FLORES-style folder holds one file per language named "
                          "{lang}.{split} or {lang}.txt%s" % (path, "" if split is None else " (split %r)" % split), path)
    if len(files) > 1:
        raise CorpusError("%s: the files are of several splits (%s): choose one (split=..., --split)"
                          % (path, ", ".join(sorted(files))), path)
    (s, by_lang), = files.items()
    units = collections.OrderedDict()
    for lang, file in by_lang.items():
        units[lang] = [line.rstrip("\r\n") for _, line in _lines(file)]
    return _aligned_by_position(units, "flores", path)


def _aligned_by_position(units, layout, source):
    if not units:
        raise CorpusError("%s: no language" % source, source)
    n = min(len(u) for u in units.values())
    dropped = sum(len(u) - n for u in units.values())
    why = ""
    if dropped:
        longest = max(units, key=lambda k: len(units[k]))
        shortest = min(units, key=lambda k: len(units[k]))
        why = ("the languages have different numbers of units (%s has %d, %s %d): units past %d are not in every "
               "language" % (shortest, len(units[shortest]), longest, len(units[longest]), n))
    if n == 0:
        raise CorpusError("%s: a language has no unit (%s)" % (source, min(units, key=lambda k: len(units[k]))), source)
    return Corpus(collections.OrderedDict((k, list(v[:n])) for k, v in units.items()), ids=list(range(n)),
                  aligned=True, layout=layout, source=source, dropped=dropped, dropped_why=why)


def load_corpus(corpus=None, *, split=None):
    """A Corpus from a path (aligned or UDHR JSON lines, compressed or not; a FLORES-style
    folder), a mapping {lang: [units]}, a Corpus, or None for the shipped sample."""
    if isinstance(corpus, Corpus):
        return corpus
    if corpus is None:
        c = _read_jsonl(SAMPLE)
        c.source = "supertok's sample (the UDHR's 30 articles in %d languages)" % len(c.languages)
        return c
    if isinstance(corpus, dict):
        units = collections.OrderedDict()
        for lang, texts in corpus.items():
            if not isinstance(lang, str):
                raise TypeError("a corpus mapping's keys are language names (str), not %s" % type(lang).__name__)
            if isinstance(texts, str):
                raise TypeError("the units of %r are a list of str, not one str" % lang)
            texts = list(texts)
            for i, t in enumerate(texts):
                if not isinstance(t, str):
                    raise TypeError("unit %d of %r is %s, not str" % (i, lang, type(t).__name__))
                _check_text(t, lang, i + 1, "unit")
            units[lang] = texts
        return _aligned_by_position(units, "mapping", "mapping")
    if not isinstance(corpus, (str, os.PathLike)):
        raise TypeError("a corpus is a path, a mapping {lang: [units]} or None (the shipped sample), not %s"
                        % type(corpus).__name__)
    path = os.fsdecode(os.fspath(corpus))
    if os.path.isdir(path):
        return _read_folder(path, split)
    if not os.path.exists(path):
        raise CorpusError("%s: no such file or folder" % path, path)
    return _read_jsonl(path)
