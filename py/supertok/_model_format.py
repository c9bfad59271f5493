"""The JSON models of merge rules (format "supertok-merges", version 1) as model files in the
text format the core parses (docs/formats/model-format.md).

json_to_text(model) gives the canonical text, written by the core (st_model_write_rules): its
st_model_write writes the same bytes back (tests/test_model_format.py checks it). The JSON's
structure is checked here, with the messages load_model always gave ("merges[3] must be a pair
..."); what the rules mean (a part not below its rule's id, a pair twice, a special on an
ordinary id) is checked by the core, whose message names the same field ("merges[3]: right id
...").
"""
from ._status import ModelError, SupertokError  # noqa: F401  (ModelError: where callers have found it)

MAGIC = b"supertok-model"
JSON_FORMAT = "supertok-merges"
ALPHABETS = ("bytes", "ube")
PATTERNS = ("gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3")


class ModelFormatError(ValueError):
    """A JSON model that cannot be converted: field names the JSON field."""

    def __init__(self, field, why):
        self.field = field
        super().__init__("%s %s" % (field, why))


def is_text_model(data):
    """True if data (bytes) is a model file in the text format."""
    return data.startswith(MAGIC + b" ") or data.startswith(MAGIC + b"\n")


_ALPHABET_IDS = {"bytes": 0, "ube": 1}  # ST_ALPHABET_*
_PATTERN_IDS = {"gpt2": 1, "cl100k": 2, "o200k": 3, "superbpe": 4, "llama3": 5, "qwen2": 6,
                "deepseek_v3": 7}  # st_pattern
_U32_MAX = (1 << 32) - 1


def json_to_text(model, comments=()):
    """The text model file (bytes, canonical) of a parsed JSON model dict. comments: lines
    written as "comment ..." (e.g. how the file was generated). The JSON's structure and types are
    checked here; the core writes the text (st_model_write_rules), refusing a name or a comment
    that is no line of the format."""
    from .backends import current
    if not isinstance(model, dict):
        raise ModelFormatError("model", "must be a JSON object")
    if model.get("format") != JSON_FORMAT:
        raise ModelFormatError("format", "must be %r, not %r" % (JSON_FORMAT, model.get("format")))
    if type(model.get("version")) is not int or model.get("version") != 1:  # true and 1.0 are not 1
        raise ModelFormatError("version", "must be 1, not %r" % (model.get("version"),))
    alphabet = model.get("alphabet")
    if alphabet not in ALPHABETS:
        raise ModelFormatError("alphabet", "must be 'bytes' or 'ube', not %r" % (alphabet,))
    pattern = model.get("pattern")
    if pattern not in PATTERNS:
        raise ModelFormatError("pattern", "must be one of %s, not %r" % (", ".join(sorted(PATTERNS)), pattern))
    merges = model.get("merges")
    if not isinstance(merges, list):
        raise ModelFormatError("merges", "must be a list of [left, right] pairs")
    flat = []
    for i, m in enumerate(merges):
        if (not isinstance(m, (list, tuple)) or len(m) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in m)):
            raise ModelFormatError("merges[%d]" % i, "must be a pair of non-negative ids, not %r" % (m,))
        for side, x in zip(("left", "right"), m):
            if x > _U32_MAX:  # the core's ids are uint32
                raise ModelFormatError("merges[%d]" % i, "has a %s id too large for the core's ids (%d is above "
                                       "2**32 - 1)" % (side, x))
        flat += m
    specials = model.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in specials.items()):
        raise ModelFormatError("special_tokens", "must map text to non-negative ids")
    for k, v in specials.items():
        if v > _U32_MAX:
            raise ModelFormatError("special_tokens", "has an id too large for the core's ids (%r: %d is above "
                                   "2**32 - 1)" % (k, v))
    name = model.get("name", "model")
    if not isinstance(name, str):
        raise ModelFormatError("name", "must be 1 to 128 printable ASCII characters without spaces, not %r" % name)
    comments = list(comments)
    for c in comments:
        if not isinstance(c, str):
            raise TypeError("comment %r: a str" % (c,))
    try:  # the name's bytes as they are: the core refuses anything but printable ASCII
        return current().model_write_rules(name.encode("utf-8", "surrogatepass"), _ALPHABET_IDS[alphabet], _PATTERN_IDS[pattern], flat,
                                           [(t.encode("utf-8"), i) for t, i in specials.items()],
                                           [c.encode("utf-8") for c in comments])
    except SupertokError as exc:
        if exc.input == 1:
            raise ModelFormatError("name", "must be 1 to 128 printable ASCII characters without spaces, not %r"
                                   % name) from None
        if exc.input == 4 and exc.offset is not None:
            raise ValueError("comment %r: one line of printable text" % (comments[exc.offset],)) from None
        raise
