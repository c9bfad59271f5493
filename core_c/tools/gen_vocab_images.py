#!/usr/bin/env python3
"""Generate the binary vocabulary images shipped for the wasm backends:
py/supertok/vocab/<encoding>.stimg.xz and py/supertok/vocab/images.json (sha256 of each raw image).

    python core_c/tools/gen_vocab_images.py           # rewrite
    python core_c/tools/gen_vocab_images.py --check   # exit 1 if any image differs from a rebuild

Each image is what st_encoding_save_image writes after the core parsed the shipped rank file
(native backend). pywasm loads the image instead of parsing: the host writes it into the
module's memory and st_encoding_from_image reads only its header. xz keeps the package small;
Python's lzma unpacks it before it is written into the module.
"""
import hashlib
import json
import lzma
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.join(HERE, "..", "..", "py", "supertok", "vocab")


def build():
    """Images made by the installed supertok (its native backend) from the repository's rank files."""
    import supertok
    from supertok import _catalogue
    from supertok import encoding as E
    supertok._set_backend("native")
    out = {}
    for name in E.list_encoding_names():
        if _catalogue.ENCODINGS[name]["image"] != name:  # another encoding's image (gpt2: r50k_base's)
            continue
        enc = E._load(name)
        out[name] = enc._backend.save_image(enc._handle)
    return out


def main():
    images = build()
    manifest = {name: {"sha256": hashlib.sha256(img).hexdigest(), "size": len(img)}
                for name, img in sorted(images.items())}
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    path = os.path.join(VOCAB, "images.json")
    if "--check" in sys.argv:
        bad = []
        with open(path) as f:
            if f.read() != text:
                bad.append("images.json")
        for name, img in images.items():
            try:
                with lzma.open(os.path.join(VOCAB, name + ".stimg.xz")) as f:
                    if f.read() != img:
                        bad.append(name)
            except OSError:
                bad.append(name)
        if bad:
            print("stale vocabulary images: %s: run python core_c/tools/gen_vocab_images.py" % ", ".join(bad))
            return 1
        print("vocabulary images are up to date")
        return 0
    for name, img in images.items():
        with open(os.path.join(VOCAB, name + ".stimg.xz"), "wb") as f:
            f.write(lzma.compress(img, preset=9 | lzma.PRESET_EXTREME))
    with open(path, "w") as f:
        f.write(text)
    print("wrote %d images" % len(images))
    return 0


if __name__ == "__main__":
    sys.exit(main())
