"""Text conversions shared by the package's modules (kept below __init__, which re-exports)."""


def utf8(text):
    """UTF-8 bytes of a str; a lone surrogate is a ValueError naming its index."""
    if not isinstance(text, str):
        raise TypeError("text must be str, not %s" % type(text).__name__)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError("text holds a lone surrogate U+%04X at index %d; it cannot be encoded as UTF-8"
                         % (ord(text[exc.start]), exc.start)) from None
