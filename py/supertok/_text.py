"""Text conversions shared by the package's modules (kept below __init__, which re-exports)."""
import re

# a surrogate that is no half of a pair (a high one not followed by a low one, a low one not
# after a high one), and a pair
_LONE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")


def lone_surrogate(text):
    """The index of the first lone surrogate of text, or None."""
    m = _LONE.search(text)
    return m.start() if m else None


def utf8_joining_pairs(text):
    """UTF-8 bytes of a str whose surrogate pairs (a str built from UTF-16, e.g. by some JSON
    readers) are the characters they stand for, as encode() and tiktoken take them.
    UnicodeEncodeError (with .start, the index in text) for a lone surrogate."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        k = lone_surrogate(text)
        if k is not None:
            raise UnicodeEncodeError("utf-8", text, k, k + 1, "a lone surrogate") from None
        if exc.start is None:
            raise
    joined = _PAIR.sub(lambda m: chr(0x10000 + ((ord(m.group()[0]) - 0xD800) << 10) + ord(m.group()[1]) - 0xDC00), text)
    return joined.encode("utf-8")


def utf8(text):
    """UTF-8 bytes of a str; a lone surrogate is a ValueError naming its index."""
    if not isinstance(text, str):
        raise TypeError("text must be str, not %s" % type(text).__name__)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text holds a lone surrogate U+%04X at index %d; it cannot be encoded as UTF-8"
                         % (ord(text[exc.start]), exc.start)) from None
