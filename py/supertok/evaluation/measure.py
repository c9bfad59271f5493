"""Encoding a corpus with a tokenizer and counting what the report needs: tokens per unit, the
tokens used, the units that do not come back from decode. The encoding runs in the core, on
every core (encode_ordinary_batch); the rest stays a small fraction of its time."""
import collections
import time

# how many characters of a language the dominant-script count looks at (its first ones): the
# script is a property of the language, and a prefix this long decides it as the whole text does
# (on the 532 UDHR translations, the same script and floor for every one as their whole texts)
_SCRIPT_SAMPLE = 1_000
_COMMON = ("Unknown", "Common", "Inherited")


def language_facts(corpus, datas, backend):
    """{lang: {"units", "bytes", "chars", "script", "floor"}}: the dominant script is the core's
    script of most of the language's letters (Common, Inherited and Unknown characters do not
    count), and the encoding floor the UTF-8 length most of that script's characters have (1-4
    bytes; the UBE paper's encoding-floor groups, §3)."""
    names = backend.script_names()
    script_of = {}
    facts = collections.OrderedDict()
    for lang in corpus.languages:
        units = corpus.units[lang]
        nbytes = sum(map(len, datas[lang]))
        nchars = sum(map(len, units))
        head, n = [], 0
        for u in units:  # the first units, up to the sample's length
            head.append(u)
            n += len(u)
            if n >= _SCRIPT_SAMPLE:
                break
        seen = collections.Counter("".join(head)[:_SCRIPT_SAMPLE])
        by_script = collections.Counter()
        floors = collections.defaultdict(collections.Counter)
        for ch, n in seen.items():
            s = script_of.get(ch)
            if s is None:
                s = script_of[ch] = names[backend.script_of(ord(ch))]
            if s in _COMMON:
                continue
            by_script[s] += n
            floors[s][len(ch.encode("utf-8", "surrogatepass"))] += n
        script = max(sorted(by_script), key=by_script.__getitem__) if by_script else None
        floor = max(sorted(floors[script]), key=floors[script].__getitem__) if script else None
        facts[lang] = {"units": len(units), "bytes": nbytes, "chars": nchars, "script": script, "floor": floor}
    return facts


class Usage:
    """The token ids a tokenizer used, gathered as packed bytes or lists and counted once at
    the end (numpy's bincount when numpy is there, a set otherwise)."""

    def __init__(self):
        self._packed, self._lists = [], []

    def add_packed(self, packed):
        self._packed.append(packed)

    def add_lists(self, batch):
        self._lists.extend(batch)

    def used(self):
        """The set of ids used."""
        try:
            import numpy as np
        except ImportError:
            np = None
        if np is not None and self._packed:
            ids = np.frombuffer(b"".join(self._packed), "<u4")
            out = set(np.flatnonzero(np.bincount(ids)).tolist()) if len(ids) else set()
        else:
            from .tokenizers import _unpack
            out = set()
            for p in self._packed:
                out.update(_unpack(p))
        for ids in self._lists:
            out.update(ids)
        return out


class Counted:
    """One tokenizer on one corpus: tokens[lang] (a list, one count per unit), the token ids used,
    the round-trip failures, and the time spent encoding and auditing."""

    def __init__(self):
        self.tokens = collections.OrderedDict()
        self.used = None
        self.failures = []
        self.failed = 0
        self.seconds = 0.0


def _first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


FAILURES_LISTED = 100  # the report lists this many round-trip failures per tokenizer, and counts all


# texts go to the encoder in batches of about this many bytes (whole languages, several at once
# when they are small): one core call per batch keeps every thread busy on a corpus of many short
# languages, and progress still moves a few times a second
BATCH_BYTES = 1 << 20


def _batches(corpus, datas):
    batch, size = [], 0
    for lang in corpus.languages:
        batch.append(lang)
        size += sum(map(len, datas[lang]))
        if size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def count(tokenizer, corpus, datas, *, threads, progress=None):
    """Encode every unit of every language (datas[lang]: the units' UTF-8) and audit the round
    trip; `progress(lang, i, n)` after each batch, naming its last language."""
    out = Counted()
    ids_of = corpus.ids
    n_lang = len(corpus.languages)
    done = 0
    usage = Usage()
    t0 = time.perf_counter()
    for langs in _batches(corpus, datas):
        units = [u for lang in langs for u in corpus.units[lang]]
        raws = [d for lang in langs for d in datas[lang]]
        counts, bad = tokenizer.measure(units, raws, threads, usage)
        bad = set(bad)
        k = 0
        for lang in langs:
            n = len(datas[lang])
            out.tokens[lang] = counts[k:k + n]
            for i in range(n):
                if k + i not in bad:
                    continue
                out.failed += 1
                if len(out.failures) < FAILURES_LISTED:
                    raw = raws[k + i]
                    b = tokenizer.decode_many(tokenizer.encode_many([units[k + i]], 1), 1)[0]
                    at = _first_difference(raw, b)
                    out.failures.append({"lang": lang, "unit": ids_of[i] if ids_of is not None else i, "byte": at,
                                         "expected": raw[max(0, at - 8):at + 24].decode("utf-8", "replace"),
                                         "got": bytes(b[max(0, at - 8):at + 24]).decode("utf-8", "replace")})
            k += n
        done += len(langs)
        if progress is not None:
            progress(langs[-1], done, n_lang)
    out.used = usage.used()
    out.seconds = time.perf_counter() - t0
    return out
