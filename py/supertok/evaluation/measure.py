"""Encoding a corpus with a tokenizer and counting what the report needs: tokens per unit, the
tokens used, the units that do not come back from decode. The encoding runs in the core, on
every core (encode_ordinary_batch); the rest stays a small fraction of its time."""
import collections
import time

# how many characters of a language the dominant-script count looks at: the script is a property
# of the language, and a prefix this long decides it as well as the whole text
_SCRIPT_SAMPLE = 200_000
_COMMON = ("Unknown", "Common", "Inherited")


def language_facts(corpus, backend):
    """{lang: {"units", "bytes", "chars", "script", "floor"}}: the dominant script is the core's
    script of most of the language's letters (Common, Inherited and Unknown characters do not
    count), and the encoding floor the UTF-8 length most of that script's characters have (1-4
    bytes; the UBE paper's encoding-floor groups, §3)."""
    names = backend.script_names()
    script_of = {}
    facts = collections.OrderedDict()
    for lang in corpus.languages:
        units = corpus.units[lang]
        nbytes = sum(len(u.encode("utf-8", "surrogatepass")) for u in units)
        nchars = sum(len(u) for u in units)
        seen = collections.Counter()
        taken = 0
        for u in units:
            seen.update(u if taken + len(u) <= _SCRIPT_SAMPLE else u[:_SCRIPT_SAMPLE - taken])
            taken += len(u)
            if taken >= _SCRIPT_SAMPLE:
                break
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


class Counted:
    """One tokenizer on one corpus: tokens[lang] (a list, one count per unit), the token ids used
    with their counts, the round-trip failures, and the time spent encoding."""

    def __init__(self):
        self.tokens = collections.OrderedDict()
        self.used = set()
        self.failures = []
        self.failed = 0
        self.encode_seconds = 0.0
        self.encode_cpu = 0.0
        self.other_seconds = 0.0


def _first_difference(a, b):
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


FAILURES_LISTED = 100  # the report lists this many round-trip failures per tokenizer, and counts all


def count(tokenizer, corpus, *, threads, progress=None):
    """Encode every unit of every language; `progress(lang, i, n)` after each language."""
    out = Counted()
    ids_of = corpus.ids
    n_lang = len(corpus.languages)
    for k, lang in enumerate(corpus.languages):
        units = corpus.units[lang]
        t0, c0 = time.perf_counter(), time.process_time()
        batch = tokenizer.encode_many(units, threads)
        t1, c1 = time.perf_counter(), time.process_time()
        out.encode_seconds += t1 - t0
        out.encode_cpu += c1 - c0
        out.tokens[lang] = [len(ids) for ids in batch]
        raws = [u.encode("utf-8", "surrogatepass") for u in units]
        bad = tokenizer.round_trip(batch, raws, out.used, threads)
        for i in bad:
            out.failed += 1
            if len(out.failures) < FAILURES_LISTED:
                raw, b = raws[i], tokenizer.decode_many([batch[i]], 1)[0]
                at = _first_difference(raw, b)
                out.failures.append({"lang": lang, "unit": ids_of[i] if ids_of is not None else i, "byte": at,
                                     "expected": raw[max(0, at - 8):at + 24].decode("utf-8", "replace"),
                                     "got": bytes(b[max(0, at - 8):at + 24]).decode("utf-8", "replace")})
        out.other_seconds += time.perf_counter() - t1
        if progress is not None:
            progress(lang, k + 1, n_lang)
    return out
