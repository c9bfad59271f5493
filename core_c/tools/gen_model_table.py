#!/usr/bin/env python3
"""Generate py/supertok/_models.py: which encoding each OpenAI model name uses, taken from the
pinned tiktoken (tiktoken==0.14.0, tiktoken/model.py), so encoding_for_model agrees with it.

    python core_c/tools/gen_model_table.py           # rewrite
    python core_c/tools/gen_model_table.py --check   # exit 1 if stale
"""
import importlib.metadata
import os
import pprint
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "py", "supertok", "_models.py")


def render():
    if importlib.metadata.version("tiktoken") != "0.14.0":
        sys.exit("gen_model_table: needs tiktoken==0.14.0")
    import tiktoken.model as m
    return (
        '"""GENERATED FILE - DO NOT EDIT. Made by: python core_c/tools/gen_model_table.py\n'
        'Model name -> encoding name, as tiktoken 0.14.0 maps them (exact names, then prefixes)."""\n\n'
        "MODEL_TO_ENCODING = %s\n\nMODEL_PREFIX_TO_ENCODING = %s\n"
        % (pprint.pformat(dict(m.MODEL_TO_ENCODING), sort_dicts=False),
           pprint.pformat(dict(m.MODEL_PREFIX_TO_ENCODING), sort_dicts=False)))


def main():
    text = render()
    if "--check" in sys.argv:
        with open(OUT, encoding="utf-8") as f:
            if f.read() != text:
                print("py/supertok/_models.py is stale: run python core_c/tools/gen_model_table.py")
                return 1
        return 0
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
