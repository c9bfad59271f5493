"""UBE, Universal Byte-Level Encoding: the routed 512-symbol alphabet (docs/design.md §6).

Symbols 0-255 are UTF-8 bytes (code points below U+0800); 256-511 are UTF-16LE bytes (U+0800
and above, surrogate pairs above U+FFFF). The routing and the decoders are the C core's.
"""
from ._status import UbeDecodeError  # noqa: F401  (defined with the other core errors; public here)
from ._text import utf8 as _utf8
from .backends import current as _get

_FINAL = 1
_STRICT = 2

# The two export forms of a symbol (docs/design.md §6): the GPT-2 visible-byte alphabet for 0-255 and
# U+E100 + byte for 256-511.
def _gpt2_bytes_to_unicode():
    visible = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = visible[:]
    extra = 0
    for b in range(256):
        if b not in visible:
            visible.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(visible, chars)}


_GPT2 = _gpt2_bytes_to_unicode()
_GPT2_INV = {c: b for b, c in _GPT2.items()}


def symbol_to_str(symbol):
    """The printable form of a base symbol: GPT-2's visible byte, or U+E100 + byte."""
    if 0 <= symbol < 256:
        return _GPT2[symbol]
    if 256 <= symbol < 512:
        return chr(0xE100 + symbol - 256)
    raise ValueError("not a UBE base symbol: %r" % (symbol,))


def str_to_symbol(ch):
    if ch in _GPT2_INV:
        return _GPT2_INV[ch]
    if 0xE100 <= ord(ch) <= 0xE1FF:
        return 256 + ord(ch) - 0xE100
    raise ValueError("not a UBE symbol character: %r" % (ch,))


def ube_encode_symbols(text):
    """The routed base-symbol stream of text (routing is per character, so pre-tokenization
    does not change it). A lone surrogate is a ValueError naming its index."""
    return _get().ube_encode_symbols(_utf8(text))


def _check_symbols(symbols):
    symbols = list(symbols)
    for k, s in enumerate(symbols):
        if not isinstance(s, int) or not 0 <= s <= 511:
            raise ValueError("invalid UBE symbol %r at index %d: symbols are 0-511" % (s, k))
    return symbols


def _feed(b, state, symbols, flags):
    return b.ube_stream_feed(state, symbols, flags).decode("utf-8")


def ube_decode_symbols(symbols, errors="replace"):
    """Text of a base-symbol stream. errors="replace": each same-alphabet run decodes as
    CPython's bytes.decode("utf-8"/"utf-16-le", "replace"); errors="strict": malformed input
    raises ValueError naming the symbol index where it starts."""
    if errors not in ("replace", "strict"):
        raise ValueError("errors must be 'replace' or 'strict', not %r" % (errors,))
    b = _get()
    return _feed(b, b.ube_stream_new(), _check_symbols(symbols), _FINAL | (_STRICT if errors == "strict" else 0))


class UbeStreamDecoder:
    """Streaming decoding of base symbols: add() returns every character completed so far;
    the state is the alphabet and the bytes of one incomplete character. special() marks a
    special token (a flush); flush() ends the stream. Any split gives the one-shot text."""

    def __init__(self, errors="replace"):
        if errors not in ("replace", "strict"):
            raise ValueError("errors must be 'replace' or 'strict', not %r" % (errors,))
        self._b = _get()
        self._state = self._b.ube_stream_new()
        self._flags = _STRICT if errors == "strict" else 0

    def add(self, symbols):
        if isinstance(symbols, int):
            symbols = [symbols]
        return _feed(self._b, self._state, _check_symbols(symbols), self._flags)

    def special(self):
        return _feed(self._b, self._state, [], self._flags | _FINAL)

    def flush(self):
        return _feed(self._b, self._state, [], self._flags | _FINAL)
