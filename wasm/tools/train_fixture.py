"""Write wasm/test/fixtures/train_models.json: model files made by Python's supertok.train, which
wasm/test/train.test.mjs checks JavaScript's train() reproduces byte for byte.

    python wasm/tools/train_fixture.py           (from the repository's root; any backend)
    python wasm/tools/train_fixture.py --check   (exit 1 when the committed file differs)

Each case trains on one corpus of vectors/train/corpora.jsonl (its documents copied into the
fixture, so the test reads one file) with the options given, in Python's names; the record holds
the model file's text as train() returned it (Encoding._model_data)."""
import json
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "wasm", "test", "fixtures", "train_models.json")
CORPORA = os.path.join(ROOT, "vectors", "train", "corpora.jsonl")

CASES = [
    ("bpe", "phrases", dict(vocab_size=400)),
    ("bpe_ube_specials", "udhr_mixed", dict(vocab_size=700, alphabet="ube", special_tokens=["<|endoftext|>"])),
    ("bpe_hf", "udhr_latin", dict(vocab_size=300, mode="hf", special_tokens=["<s>", "e"])),
    ("boundless", "phrases", dict(vocab_size=400, algorithm="boundless")),
    ("superbpe", "phrases", dict(vocab_size=400, algorithm="superbpe", supermerges=40)),
    ("boundless_ngram_split", "phrases", dict(vocab_size=400, algorithm="boundless", ngram_split=True)),
    ("superbpe_ngram_split", "phrases", dict(vocab_size=420, algorithm="superbpe", supermerges=60, ngram_split=True,
                                             min_frequency=2)),
]


def main():
    try:  # the supertok the caller runs (an installed one, or PYTHONPATH); else this checkout's
        import supertok
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, "py"))
        import supertok
    corpora = {}
    with open(CORPORA, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if "corpus" in r:
                corpora[r["corpus"]] = r["documents"]
    cases = []
    for name, corpus, opts in CASES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", supertok.TrainWarning)
            enc = supertok.train(iter(corpora[corpus]), progress=False, **opts)
        cases.append({"case": name, "corpus": corpus, "options": opts, "supermerges_made": len(enc.supermerges),
                      "model": enc._model_data.decode("utf-8")})
    data = {"generated_by": "python wasm/tools/train_fixture.py",
            "corpora": {c: corpora[c] for c in sorted({c for _, c, _ in CASES})},
            "cases": cases}
    text = json.dumps(data, ensure_ascii=False, indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("%s is stale: run python wasm/tools/train_fixture.py" % os.path.relpath(OUT, ROOT))
                sys.exit(1)
        print("%s is current (%d cases)" % (os.path.relpath(OUT, ROOT), len(cases)))
        return
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(text)
    print("wrote %s (%d cases)" % (os.path.relpath(OUT, ROOT), len(cases)))


if __name__ == "__main__":
    main()
