"""Status codes of the C core (core_c/include/supertok.h), pinned, and the error they raise."""

OK = 0
INVALID_ARGUMENT = 1
OUT_OF_MEMORY = 2
INVALID_UTF8 = 3
BUFFER_TOO_SMALL = 4
UNKNOWN_PATTERN = 5
UNKNOWN_SCRIPT = 6
MALFORMED_MODEL = 7
INVALID_TOKEN = 8
NOT_ENCODABLE = 9
DISALLOWED_SPECIAL = 10
UNSUPPORTED_PATTERN = 11

NAMES = {
    OK: "ST_OK",
    INVALID_ARGUMENT: "ST_ERR_INVALID_ARGUMENT",
    OUT_OF_MEMORY: "ST_ERR_OUT_OF_MEMORY",
    INVALID_UTF8: "ST_ERR_INVALID_UTF8",
    BUFFER_TOO_SMALL: "ST_ERR_BUFFER_TOO_SMALL",
    UNKNOWN_PATTERN: "ST_ERR_UNKNOWN_PATTERN",
    UNKNOWN_SCRIPT: "ST_ERR_UNKNOWN_SCRIPT",
    MALFORMED_MODEL: "ST_ERR_MALFORMED_MODEL",
    INVALID_TOKEN: "ST_ERR_INVALID_TOKEN",
    NOT_ENCODABLE: "ST_ERR_NOT_ENCODABLE",
    DISALLOWED_SPECIAL: "ST_ERR_DISALLOWED_SPECIAL",
    UNSUPPORTED_PATTERN: "ST_ERR_UNSUPPORTED_PATTERN",
}


class SupertokError(ValueError):
    """A failure reported by the core: `status` (number), `name` (the header's, from
    st_status_name), `message`, `offset` (where it went wrong, in `unit`: an st_unit, 1 bytes of
    the input, 4 an index into an input array; None when no position applies), and from the
    core's st_error where it gives them: `line` (1-based, in a text input), `input` (0 the main
    input, 1 the special tokens, ...), `token` (the id concerned), `kind` (what was wrong, an
    st_error_kind name such as "ST_KIND_ID_REPEATED"; "ST_KIND_NONE" when the status says it),
    `length` (of what starts at offset, in unit; 0 if not known) and `detail` (the core's own
    message, for people: code reads the other fields)."""

    def __init__(self, status, message, offset=None, what="", name=None, token=None, line=None, input=0, unit=1,
                 kind="ST_KIND_NONE", length=0, detail=""):
        self.status = status
        self.name = name or NAMES.get(status, "ST_ERR_%d" % status)
        self.message = message
        self.offset = offset
        self.what = what
        self.token = token
        self.line = line
        self.input = input
        self.unit = unit
        self.kind = kind
        self.length = length
        self.detail = detail
        if line and unit != 4:  # a text input: its line first, the byte offset for tools
            where = " at line %d" % line + ("" if offset is None else " (byte %d)" % offset)
        else:
            where = "" if offset is None else (" at index %d" if unit == 4 else " at byte %d") % offset
            if line:
                where += " (line %d)" % line
        super().__init__("%s%s%s (%s)" % (what + ": " if what else "", message, where, self.name))

# The number of each status name, for code that maps by name (raise_for_status).
BY_NAME = {name: num for num, name in NAMES.items()}

# What was wrong beyond the status (st_error_kind, pinned numbers): hosts word these cases in
# their own terms from the report's fields, never from its message. tests/test_c_api.py checks
# the names against st_error_kind_name.
KINDS = {
    0: "ST_KIND_NONE",
    1: "ST_KIND_DISALLOWED_SPECIAL",
    2: "ST_KIND_ID_REPEATED",
    3: "ST_KIND_ID_TAKEN",
    4: "ST_KIND_EMPTY_TOKEN",
    5: "ST_KIND_ID_TOO_LARGE",
    6: "ST_KIND_OUT_OF_ORDER",
    7: "ST_KIND_EXPORT_UBE",
    8: "ST_KIND_EXPORT_SUPERMERGES",
    9: "ST_KIND_EXPORT_SCRIPT_AWARE",
    10: "ST_KIND_EXPORT_NO_RULES",
}


def argument_error(argument, message, cls=ValueError):
    """An error about one argument of a call, which it names in `argument` (the command line
    names its option instead)."""
    exc = cls(message)
    exc.argument = argument
    return exc


class UbeDecodeError(ValueError):
    """Malformed text under errors="strict". index: where the malformed sequence starts (a
    symbol index for symbol streams, an id index for token streams)."""
    __module__ = "supertok.ube"  # where users import it from (supertok.ube re-exports it)

    def __init__(self, message, index):
        super().__init__(message)
        self.index = index


def raise_for_status(status, message, offset=None, what="", items=None, *, token=None, line=None, input=0,
                     unit=1, detail="", kind="ST_KIND_NONE", length=0):
    """Raise the Python exception for a failed core call; return None for ST_OK.

    The one place that turns a core status into a Python exception: it maps by status NAME,
    and `what` names the input the call concerned ("ids", "symbols", "text", "rank file", ...).
    `message` is the core's st_status_str (a str, or a callable giving it, so that callers
    raising KeyError never pay for it); `items` is the input array `offset` indexes, where the
    message quotes the bad item (decoding: the bad id). token, line, input, unit, kind, length and
    detail (the core's message) are the rest of the core's st_error report, kept on the
    SupertokError."""
    name = NAMES.get(status, "ST_ERR_%d" % status)
    if name == "ST_OK":
        return None
    if what == "ids" and name == "ST_ERR_INVALID_TOKEN":
        # tiktoken's error and message for an id that is no token; where it is, for callers that
        # say so (the command line names the item): index into the ids, token the id
        exc = KeyError("Invalid token for decoding: %d" % (items[offset] if items is not None else token))
        exc.index = offset
        exc.token = items[offset] if items is not None else token
        raise exc
    if what == "ids" and name == "ST_ERR_INVALID_UTF8" and items is not None and offset < len(items):
        raise UbeDecodeError("malformed UBE text: the ill-formed sequence starting in token %d (index %d) "
                             "does not decode (errors='strict')" % (items[offset], offset), offset)
    if what == "symbols" and name == "ST_ERR_INVALID_UTF8":
        raise UbeDecodeError("malformed UBE symbol stream: the ill-formed sequence starting at symbol %d "
                             "does not decode (errors='strict')" % offset, offset)
    if what == "token" and name in ("ST_ERR_INVALID_TOKEN", "ST_ERR_INVALID_ARGUMENT"):
        # token_bytes / token_symbols of an id that is no (such) token: a mapping miss
        raise KeyError(str(items))
    if what == "prepare" and name == "ST_ERR_OUT_OF_MEMORY":
        raise MemoryError("out of memory building the encoder's tables (the encoding still works without them)")
    if callable(message):
        message = message(status)
    if name == "ST_ERR_MALFORMED_MODEL" and what in _NOT_MODEL_FILES and detail:
        message = ""  # the status's text says "model file"; the input is not one: the detail says it all
    if what in ("model", "tokenizer.json") and name == "ST_ERR_MALFORMED_MODEL":
        raise ModelError(status, message, detail, line or 0, offset, what)
    raise SupertokError(status, message + (": " if message and detail else "") + detail, offset, what, name=name, token=token,
                        line=line, input=input, unit=unit, kind=kind, length=length, detail=detail)


# inputs that the core parses with its model-file parser but that are no model file
_NOT_MODEL_FILES = ("rank file", "special tokens", "merge rules")


def raise_error(err, message, what="", items=None):
    """raise_for_status from a core st_error report given as a tuple (status, unit, offset,
    line, token, input, kind, length, message bytes): the offset is None when no unit applies,
    token None when the report names none, kind the st_error_kind's name."""
    status, unit, offset, line, token, inp, kind, length, msg = err
    if isinstance(msg, (bytes, bytearray)):
        msg = bytes(msg).split(b"\0", 1)[0].decode("utf-8", "replace")
    raise_for_status(status, message, offset if unit else None, what, items, token=None if token == 0xFFFFFFFF else token,
                     line=line or None, input=inp, unit=unit, detail=msg, kind=KINDS.get(kind, "ST_KIND_%d" % kind),
                     length=length)


class ModelError(SupertokError):
    """A model file the core refused: `line` (1-based line of the file, 0 if none), `offset` (byte
    offset in the file), `detail` (the core's message, naming the field)."""

    def __init__(self, status, status_text, detail, line, offset, what="model"):
        SupertokError.__init__(self, status, detail or status_text, offset, what)
        self.line = line
        self.detail = detail
        where = "line %d: " % line if line else ""
        ValueError.__init__(self, "%s: %s%s (%s)" % (what, where, detail or status_text, self.name))
