"""tiktoken.registry's names: get_encoding, list_encoding_names, ENCODINGS, ENCODING_CONSTRUCTORS.

ENCODING_CONSTRUCTORS maps each name to a function returning tiktoken's constructor arguments
(name, pat_str, mergeable_ranks, special_tokens and, where tiktoken gives it, explicit_n_vocab),
read from the rank files supertok ships: `Encoding(**ENCODING_CONSTRUCTORS[name]())` builds the
encoding as tiktoken's code does (get_encoding is faster: the core reads the rank file itself).
"""
import functools
import json
import os

from . import _catalogue
from . import encoding as _enc
from .encoding import ENCODINGS, Encoding, get_encoding, list_encoding_names  # noqa: F401

__all__ = ["ENCODINGS", "ENCODING_CONSTRUCTORS", "get_encoding", "list_encoding_names"]


def _constructor_args(name):
    entry = _catalogue.ENCODINGS[name]
    base = entry["rank_file"]
    with open(os.path.join(_enc.VOCAB_DIR, base + ".json"), encoding="utf-8") as f:
        sha256 = json.load(f)["sha256"]
    from .load import load_tiktoken_bpe
    args = {"name": name, "pat_str": _catalogue.pat_str(entry["pattern"]),
            "mergeable_ranks": load_tiktoken_bpe(os.path.join(_enc.VOCAB_DIR, base + ".tiktoken"), sha256),
            "special_tokens": _catalogue.special_tokens(entry)}
    if "explicit_n_vocab" in entry:
        args["explicit_n_vocab"] = entry["explicit_n_vocab"]
    return args


ENCODING_CONSTRUCTORS = {name: functools.partial(_constructor_args, name) for name in list_encoding_names()}
