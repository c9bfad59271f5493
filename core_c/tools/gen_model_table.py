#!/usr/bin/env python3
"""Rewrite the model tables of py/supertok/catalogue.json (model_to_encoding,
model_prefix_to_encoding: which encoding each OpenAI model name uses) from the pinned tiktoken
(tiktoken==0.14.0, tiktoken/model.py), so encoding_for_model agrees with it. The rest of the
catalogue is edited by hand and left as it is.

    python core_c/tools/gen_model_table.py           # rewrite
    python core_c/tools/gen_model_table.py --check   # exit 1 if stale
"""
import importlib.metadata
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "py", "supertok", "catalogue.json")


def render():
    if importlib.metadata.version("tiktoken") != "0.14.0":
        sys.exit("gen_model_table: needs tiktoken==0.14.0")
    import tiktoken.model as m
    with open(OUT, encoding="utf-8") as f:
        catalogue = json.load(f)
    catalogue["model_to_encoding"] = dict(m.MODEL_TO_ENCODING)
    catalogue["model_prefix_to_encoding"] = dict(m.MODEL_PREFIX_TO_ENCODING)
    # the catalogue's one layout (tests/test_catalogue.py checks the file keeps it)
    return json.dumps(catalogue, indent=1, ensure_ascii=False) + "\n"


def main():
    text = render()
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("py/supertok/catalogue.json's model tables are stale: run python core_c/tools/gen_model_table.py")
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
