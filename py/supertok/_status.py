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
