"""The JSON models of merge rules (format "supertok-merges", version 1) as model files in the
text format the core parses (docs/formats/model-format.md).

json_to_text(model) gives the canonical text: the core's st_model_write writes the same bytes
back (tests/test_model_format.py checks it). The JSON's structure is checked here, with the
messages load_model always gave ("merges[3] must be a pair ..."); what the rules mean (a part
not below its rule's id, a pair twice, a special on an ordinary id) is checked by the core, whose
message names the same field ("merges[3]: right id ...").
"""
from ._status import SupertokError

MAGIC = b"supertok-model"
JSON_FORMAT = "supertok-merges"
ALPHABETS = ("bytes", "ube")
PATTERNS = ("gpt2", "cl100k", "o200k")


class ModelError(SupertokError):
    """A model file the core refused: `line` (1-based line of the file, 0 if none), `offset` (byte
    offset in the file), `detail` (the core's message, naming the field)."""

    def __init__(self, status, status_text, detail, line, offset, what="model"):
        SupertokError.__init__(self, status, detail or status_text, offset, what)
        self.line = line
        self.detail = detail
        where = "line %d: " % line if line else ""
        ValueError.__init__(self, "%s: %s%s (%s)" % (what, where, detail or status_text, self.name))


class ModelFormatError(ValueError):
    """A JSON model that cannot be converted: field names the JSON field."""

    def __init__(self, field, why):
        self.field = field
        super().__init__("%s %s" % (field, why))


def is_text_model(data):
    """True if data (bytes) is a model file in the text format."""
    return data.startswith(MAGIC + b" ") or data.startswith(MAGIC + b"\n")


def escape_special(text):
    """A special token's text as the format writes it (the writer's escapes, exactly)."""
    b = text.encode("utf-8")
    out = bytearray()
    for k, c in enumerate(b):
        if c == 0x5C:
            out += b"\\\\"
        elif c == 0x0A:
            out += b"\\n"
        elif c == 0x0D:
            out += b"\\r"
        elif c == 0x09:
            out += b"\\t"
        elif c < 0x20 or c == 0x7F or (c == 0x20 and (k == 0 or k == len(b) - 1)):
            out += b"\\x%02X" % c
        else:
            out.append(c)
    return bytes(out)


def json_to_text(model, comments=()):
    """The text model file (bytes, canonical) of a parsed JSON model dict. comments: lines
    written as "comment ..." (e.g. how the file was generated)."""
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
    for i, m in enumerate(merges):
        if (not isinstance(m, (list, tuple)) or len(m) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in m)):
            raise ModelFormatError("merges[%d]" % i, "must be a pair of non-negative ids, not %r" % (m,))
    specials = model.get("special_tokens", {})
    if not isinstance(specials, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in specials.items()):
        raise ModelFormatError("special_tokens", "must map text to non-negative ids")
    name = model.get("name", "model")
    if not isinstance(name, str) or not name or len(name) > 128 or not all("!" <= ch <= "~" for ch in name):
        raise ModelFormatError("name", "must be 1 to 128 printable ASCII characters without spaces, not %r" % name)
    lines = [b"supertok-model 1", b"name " + name.encode("ascii")]
    for c in comments:
        if not c or "\n" in c or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in c):
            raise ValueError("comment %r: one line of printable text" % (c,))
        lines.append(b"comment " + c.encode("utf-8"))
    lines += [b"kind rules", b"alphabet " + alphabet.encode(), b"pattern " + pattern.encode(),
              b"script-aware no", b"merges %d" % len(merges)]
    lines += [b"%d %d" % (left, right) for left, right in merges]
    lines.append(b"specials %d" % len(specials))
    for text, i in sorted(specials.items(), key=lambda kv: kv[1]):
        lines.append(b"%d " % i + escape_special(text))
    lines.append(b"end")
    return b"\n".join(lines) + b"\n"
