#!/usr/bin/env python3
"""Generate the compact vocabularies the JavaScript package downloads:
wasm/compact/<encoding>.stvc and wasm/compact/manifest.json (size and sha256 of each, with the
pattern and special tokens of py/supertok/catalogue.json: one small file and one image
is all the JavaScript module fetches for an encoding).

    python core_c/tools/gen_compact_vocab.py           # rewrite
    python core_c/tools/gen_compact_vocab.py --check   # exit 1 if any file differs from a rebuild

Each .stvc is what the core's st_encoding_save_compact writes for the encoding the core
parsed from the shipped rank file (native backend): the ordinary tokens' lengths and bytes, no
table and no base64 (the format is described in core_c/include/supertok.h and core_c/src/formats/vocab.c).
st_encoding_new_compact rebuilds the tables at load. Only the four rank files have one: gpt2,
p50k_edit and o200k_harmony load their base's with their own special tokens, as from the
rank files. The files are generated: edit this script or the core, never the files.
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "..", "wasm", "compact")
VOCAB = os.path.join(HERE, "..", "..", "py", "supertok", "vocab")
RANK_FILES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
COMMAND = "python core_c/tools/gen_compact_vocab.py"


def build():
    """Compact images written by the installed supertok's native backend from the rank files."""
    import supertok
    from supertok import encoding as E
    supertok._set_backend("native")
    b = supertok._get()
    out = {}
    for name in RANK_FILES:
        enc = E._load(name)
        out[name] = b.save_compact(enc._handle)
    return out


def manifest(images):
    from supertok import _catalogue
    m = {"generated_by": COMMAND,
         "format": "STVC 1 (st_encoding_save_compact / st_encoding_new_compact, core_c/include/supertok.h)"}
    for name, img in sorted(images.items()):
        with open(os.path.join(VOCAB, name + ".json")) as f:
            meta = json.load(f)
        entry = _catalogue.ENCODINGS[name]
        m[name] = {"file": name + ".stvc", "sha256": hashlib.sha256(img).hexdigest(), "size": len(img),
                   "pat_str": _catalogue.pat_str(entry["pattern"]), "special_tokens": _catalogue.special_tokens(entry),
                   "rank_file_sha256": meta["sha256"]}
    return json.dumps(m, indent=1) + "\n"


def main():
    images = build()
    text = manifest(images)
    path = os.path.join(OUT, "manifest.json")
    if "--check" in sys.argv:
        bad = []
        try:
            with open(path) as f:
                if f.read() != text:
                    bad.append("manifest.json")
        except OSError:
            bad.append("manifest.json")
        for name, img in images.items():
            try:
                with open(os.path.join(OUT, name + ".stvc"), "rb") as f:
                    if f.read() != img:
                        bad.append(name + ".stvc")
            except OSError:
                bad.append(name + ".stvc")
        if bad:
            print("stale compact vocabularies: %s: run %s" % (", ".join(bad), COMMAND))
            return 1
        print("compact vocabularies are up to date")
        return 0
    os.makedirs(OUT, exist_ok=True)
    for name, img in images.items():
        with open(os.path.join(OUT, name + ".stvc"), "wb") as f:
            f.write(img)
    with open(path, "w") as f:
        f.write(text)
    print("wrote %d compact vocabularies to wasm/compact/" % len(images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
