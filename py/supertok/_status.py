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
}


class SupertokError(ValueError):
    """A failure reported by the core: `status` (number), `name`, `message`, and `offset`
    (byte offset of the failure in the input it concerns, or None)."""

    def __init__(self, status, message, offset=None, what=""):
        self.status = status
        self.name = NAMES.get(status, "ST_ERR_%d" % status)
        self.message = message
        self.offset = offset
        self.what = what
        where = "" if offset is None else " at byte %d" % offset
        super().__init__("%s%s%s (%s)" % (what + ": " if what else "", message, where, self.name))

# The number of each status name, for code that maps by name (raise_for_status).
BY_NAME = {name: num for num, name in NAMES.items()}


class UbeDecodeError(ValueError):
    """Malformed text under errors="strict". index: where the malformed sequence starts (a
    symbol index for symbol streams, an id index for token streams)."""
    __module__ = "supertok.ube"  # where users import it from (supertok.ube re-exports it)

    def __init__(self, message, index):
        super().__init__(message)
        self.index = index


def raise_for_status(status, message, offset=None, what="", items=None):
    """Raise the Python exception for a failed core call; return None for ST_OK.

    The one place that turns a core status into a Python exception: it maps by status NAME,
    and `what` names the input the call concerned ("ids", "symbols", "text", "rank file", ...).
    `message` is the core's st_status_str (a str, or a callable giving it, so that callers
    raising KeyError never pay for it); `items` is the input array `offset` indexes, where the
    message quotes the bad item (decoding: the bad id)."""
    name = NAMES.get(status, "ST_ERR_%d" % status)
    if name == "ST_OK":
        return None
    if what == "ids" and name == "ST_ERR_INVALID_TOKEN":
        # tiktoken's error and message for an id that is no token
        raise KeyError("Invalid token for decoding: %d" % items[offset])
    if what == "ids" and name == "ST_ERR_INVALID_UTF8":
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
    raise SupertokError(status, message, offset, what)
