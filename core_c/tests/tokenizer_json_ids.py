"""The ids test_tokenizer_json.c expects, from tokenizers (0.23.3): builds the file its make_json
builds (the 256 bytes in GPT-2's alphabet with id = the byte, five merges, "xyz" no merge makes,
<s> special and <n> not) and prints, for ignore_merges false then true, encode(TEXT,
add_special_tokens=False).ids and the same with encode_special_tokens=True, as C initializers.

    /work/venv/bin/python core_c/tests/tokenizer_json_ids.py
"""
import json

import tokenizers

TEXT = "xyz abc the\nxyz<s>x<n>ab thexyz <s"
MERGES = [("a", "b"), ("ab", "c"), ("\u0120", "t"), ("h", "e"), ("\u0120t", "he")]


def byte_char(b):
    keep = lambda x: 33 <= x <= 126 or 161 <= x <= 172 or x >= 174
    return chr(b) if keep(b) else chr(256 + sum(1 for x in range(b) if not keep(x)))


def make_json(ignore_merges):
    vocab = {byte_char(b): b for b in range(256)}
    for k, (l, r) in enumerate(MERGES):
        vocab[l + r] = 256 + k
    vocab["xyz"] = 261
    added = [{"id": 262, "content": "<s>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": True},
             {"id": 263, "content": "<n>", "single_word": False, "lstrip": False, "rstrip": False, "normalized": False, "special": False}]
    bl = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return json.dumps({"version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
                       "pre_tokenizer": bl, "post_processor": None, "decoder": dict(bl, add_prefix_space=True),
                       "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                                 "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                                 "ignore_merges": ignore_merges, "vocab": vocab, "merges": [list(m) for m in MERGES]}})


def main():
    rows, ns = [], []
    for ign in (False, True):
        tk = tokenizers.Tokenizer.from_str(make_json(ign))
        row, n = [], []
        for as_text in (False, True):
            tk.encode_special_tokens = as_text
            ids = tk.encode(TEXT, add_special_tokens=False).ids
            assert tk.decode(ids, skip_special_tokens=False) == TEXT
            row.append("{" + ", ".join(map(str, ids)) + "}")
            n.append(str(len(ids)))
        rows.append("{" + ", ".join(row) + "}")
        ns.append("{" + ", ".join(n) + "}")
    print("tokenizers " + tokenizers.__version__)
    print(",\n".join(rows))
    print(", ".join(ns))


if __name__ == "__main__":
    main()
