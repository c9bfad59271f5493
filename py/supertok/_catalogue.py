"""The encoding catalogue, read from catalogue.json beside this file (the one copy the Python
package, the JavaScript module and the vector generators share; its "fields" say what each part
means). Read once at import; the names below are the catalogue in the shapes Python code uses.
"""
import json
import os

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogue.json")


def read(path=PATH):
    """The catalogue file parsed, as it is written (tests and tools read other copies with this)."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def special_tokens(entry):
    """{string: id} of one catalogue encoding, in its order: its special_tokens, then each
    special_token_ranges rule's tokens in id order."""
    specials = dict(entry["special_tokens"])
    for rule in entry.get("special_token_ranges", ()):
        for i in range(rule["first"], rule["last"] + 1):
            specials[rule["template"].replace("{id}", str(i))] = i
    return specials


_data = read()

#: pattern name (and alias) -> the core's pattern id, each name followed by its aliases
PATTERNS = {}
#: the core's pattern id -> {"name", "pat_str", "split"} (split: None for tiktoken's patterns, whose
#: pieces are the regex's matches; "isolated" when the text between matches is a piece too)
PATTERN_BY_ID = {}
for _name, _p in _data["patterns"].items():
    for _n in [_name] + _p["aliases"]:
        PATTERNS[_n] = _p["id"]
    PATTERN_BY_ID[_p["id"]] = {"name": _name, "pat_str": _p["pat_str"], "split": _p.get("split")}



def pat_str(pattern):
    """tiktoken's regex for a pattern name (or alias) of the catalogue."""
    return PATTERN_BY_ID[PATTERNS[pattern]]["pat_str"]


DEFAULT_SCRIPTS = tuple(_data["default_scripts"])

#: encoding name -> its catalogue entry (tiktoken's list_encoding_names order)
ENCODINGS = _data["encodings"]

MODEL_TO_ENCODING = dict(_data["model_to_encoding"])
MODEL_PREFIX_TO_ENCODING = dict(_data["model_prefix_to_encoding"])
