"""Mirrors core_c/src/base/common.c (and the constants of include/supertok.h and
base/internal.h): statuses and their names, the version, and the error report.

Kernels cannot build strings, so a kernel that fails reports through an int64 array of
ERR_FIELDS (status, unit, offset, line, token, input, kind, length), made by new_report() and
filled by report_set(); the export copies it into the Err with Err.take() and words the message
in Python, as the C file's appenders do.
"""
import numpy as np
from numba import njit

from .. import export

ST_VERSION_MAJOR, ST_VERSION_MINOR, ST_VERSION_PATCH = 0, 1, 0

ST_OK = 0
ST_ERR_INVALID_ARGUMENT = 1
ST_ERR_OUT_OF_MEMORY = 2
ST_ERR_INVALID_UTF8 = 3
ST_ERR_BUFFER_TOO_SMALL = 4
ST_ERR_UNKNOWN_PATTERN = 5
ST_ERR_UNKNOWN_SCRIPT = 6
ST_ERR_MALFORMED_MODEL = 7
ST_ERR_INVALID_TOKEN = 8
ST_ERR_NOT_ENCODABLE = 9
ST_ERR_DISALLOWED_SPECIAL = 10
ST_ERR_UNSUPPORTED_PATTERN = 11

ST_UNIT_NONE, ST_UNIT_BYTE, ST_UNIT_CODEPOINT, ST_UNIT_UTF16, ST_UNIT_INDEX = 0, 1, 2, 3, 4

ST_KIND_NONE = 0
ST_KIND_DISALLOWED_SPECIAL = 1
ST_KIND_ID_REPEATED = 2
ST_KIND_ID_TAKEN = 3
ST_KIND_EMPTY_TOKEN = 4
ST_KIND_ID_TOO_LARGE = 5
ST_KIND_OUT_OF_ORDER = 6
ST_KIND_EXPORT_UBE = 7
ST_KIND_EXPORT_SUPERMERGES = 8
ST_KIND_EXPORT_SCRIPT_AWARE = 9
ST_KIND_EXPORT_NO_RULES = 10

ST_NO_TOKEN = 0xFFFFFFFF
SIZE_MAX = (1 << 64) - 1

_STATUS_TEXT = ("ok", "invalid argument", "out of memory", "invalid UTF-8", "output buffer too small",
                "unknown pre-tokenizer pattern", "unknown script name", "malformed model file", "invalid token id",
                "a byte has no token in this vocabulary", "the text holds a disallowed special token",
                "no pre-tokenizer implements this pattern")
_STATUS_NAMES = ("ST_OK", "ST_ERR_INVALID_ARGUMENT", "ST_ERR_OUT_OF_MEMORY", "ST_ERR_INVALID_UTF8",
                 "ST_ERR_BUFFER_TOO_SMALL", "ST_ERR_UNKNOWN_PATTERN", "ST_ERR_UNKNOWN_SCRIPT",
                 "ST_ERR_MALFORMED_MODEL", "ST_ERR_INVALID_TOKEN", "ST_ERR_NOT_ENCODABLE",
                 "ST_ERR_DISALLOWED_SPECIAL", "ST_ERR_UNSUPPORTED_PATTERN")
_KIND_NAMES = ("ST_KIND_NONE", "ST_KIND_DISALLOWED_SPECIAL", "ST_KIND_ID_REPEATED", "ST_KIND_ID_TAKEN",
               "ST_KIND_EMPTY_TOKEN", "ST_KIND_ID_TOO_LARGE", "ST_KIND_OUT_OF_ORDER", "ST_KIND_EXPORT_UBE",
               "ST_KIND_EXPORT_SUPERMERGES", "ST_KIND_EXPORT_SCRIPT_AWARE", "ST_KIND_EXPORT_NO_RULES")
MESSAGE_SIZE = 120  # st_error.message, NUL included


@export
def st_status_str(status):
    return _STATUS_TEXT[status].encode() if 0 <= status < len(_STATUS_TEXT) else b"unknown status"


@export
def st_status_name(status):
    return _STATUS_NAMES[status].encode() if 0 <= status < len(_STATUS_NAMES) else None


@export
def st_error_kind_name(kind):
    return _KIND_NAMES[kind].encode() if 0 <= kind < len(_KIND_NAMES) else None


@export
def st_version():
    return (ST_VERSION_MAJOR << 16) | (ST_VERSION_MINOR << 8) | ST_VERSION_PATCH


@export
def st_version_str():
    return b"%d.%d.%d" % (ST_VERSION_MAJOR, ST_VERSION_MINOR, ST_VERSION_PATCH)


def quoted(p):
    """st__error_append_quoted: token bytes as one line of ASCII."""
    out = ['"']
    for c in bytes(p):
        out.append(chr(c) if 0x20 <= c < 0x7F and c not in (0x22, 0x5C) else "\\x%02x" % c)
    out.append('"')
    return "".join(out)


class Err:
    """The st_error of a call (the runtime's frame makes one; NULL is None). Cleared at entry
    by clear(); fail() fills it and returns the status, for `return err.fail(...)`."""
    __slots__ = ("status", "unit", "offset", "line", "token", "input", "kind", "length", "message")

    def __init__(self):
        self.clear()

    def clear(self):
        self.status = self.unit = self.offset = self.line = self.input = self.kind = self.length = 0
        self.token = ST_NO_TOKEN
        self.message = b""

    def fail(self, status, unit=ST_UNIT_NONE, offset=0, message="", *, line=None, token=None, input=None,
             kind=ST_KIND_NONE, length=0):
        """st__error_set, then the fields given."""
        self.status = status
        self.unit = unit
        self.offset = 0 if unit == ST_UNIT_NONE else offset
        self.kind = kind
        self.length = length
        if line is not None:
            self.line = line
        if token is not None:
            self.token = token
        if input is not None:
            self.input = input
        m = message.encode("utf-8") if isinstance(message, str) else bytes(message)
        self.message = m[:MESSAGE_SIZE - 1]
        return status

    def take(self, report, message=""):
        """Fill from a kernel's report array (new_report); returns the status."""
        self.status, self.unit, self.offset, self.line, tok, self.input, self.kind, self.length = (
            int(x) for x in report)
        self.token = tok & 0xFFFFFFFF
        if self.unit == ST_UNIT_NONE:
            self.offset = 0
        m = message.encode("utf-8") if isinstance(message, str) else bytes(message)
        self.message = m[:MESSAGE_SIZE - 1]
        return self.status

    def as_tuple(self):
        return (self.status, self.unit, self.offset, self.line, self.token, self.input, self.kind, self.length,
                self.message)


def clear(err):
    """st__error_clear (err may be None)."""
    if err is not None:
        err.clear()


def fail(err, status, unit=ST_UNIT_NONE, offset=0, message="", **fields):
    """st__error_set on an Err that may be None; returns status."""
    if err is not None:
        err.fail(status, unit, offset, message, **fields)
    return status


# -- a kernel's error report: an int64 array of these fields --
R_STATUS, R_UNIT, R_OFFSET, R_LINE, R_TOKEN, R_INPUT, R_KIND, R_LENGTH = range(8)
ERR_FIELDS = 8


def new_report():
    r = np.zeros(ERR_FIELDS, np.int64)
    r[R_TOKEN] = ST_NO_TOKEN
    return r


@njit(cache=True, nogil=True)
def report_set(r, status, unit, offset):
    """st__error_set for a kernel: returns status."""
    r[R_STATUS] = status
    r[R_UNIT] = unit
    r[R_OFFSET] = offset if unit != ST_UNIT_NONE else 0
    r[R_KIND] = ST_KIND_NONE
    r[R_LENGTH] = 0
    return status
