"""supertok: a portable C tokenizer core driven from Python.

One C core (core_c/) runs here through one of several backends, all giving identical results:
the native cffi extension, the bundled supertok.wasm on wasmtime, or the same module on pywasm.
See backend() and the SUPERTOK_BACKEND environment variable.
"""
from ._status import SupertokError
from ._status import argument_error as _argument_error
from ._text import utf8 as _utf8
from .backends import BackendUnavailable
# the process's backend: its state lives in supertok.backends; these names stay for callers
from .backends import current as _get
from .backends import set_current as _set_backend  # noqa: F401

__all__ = ["ube_encode_symbols", "ube_decode_symbols", "UbeStreamDecoder", "UbeDecodeError", "get_encoding", "load_model", "encoding_for_model", "encoding_name_for_model", "list_encoding_names", "Encoding",
           "pretokenize", "pretokenize_spans", "backend", "version", "unicode_version",
           "script_names", "PATTERNS", "DEFAULT_SCRIPTS", "SupertokError", "BackendUnavailable", "train",
           "TrainProgress", "TrainWarning", "ExportError", "ExportWarning", "ExportResult", "evaluate",
           "count_pretokens", "Counts", "normalize_nfc"]

__version__ = "0.1.0"

from .encoding import (Encoding, encoding_for_model, encoding_name_for_model,  # noqa: E402
                       get_encoding, list_encoding_names, load_model)
from ._train import TrainProgress, TrainWarning, train  # noqa: E402
from ._counts import Counts, count_pretokens  # noqa: E402
from ._export import ExportError, ExportResult, ExportWarning  # noqa: E402
from .ube import UbeDecodeError, UbeStreamDecoder, ube_decode_symbols, ube_encode_symbols  # noqa: E402
# tiktoken's modules under the same names (tiktoken.core, .load, .model, .registry)
from . import core, load, model, registry  # noqa: E402,F401
# what a tokenizer costs each language (the UBE paper's premiums, Gini and tests): docs/evaluation.md
from .evaluation import evaluate  # noqa: E402

# Pattern names accepted by the pre-tokenizer, and the core's pattern ids for them; the scripts
# split one letter per piece in script-aware mode unless told otherwise (docs/design.md §5).
# Both are the catalogue's (catalogue.json).
from ._catalogue import DEFAULT_SCRIPTS, PATTERNS  # noqa: E402
from . import _pretokenizer  # noqa: E402

_OFFSETS_CODEPOINTS = 1


def backend():
    """The name of the backend in use: "native", "wasmtime" or "pywasm"."""
    return _get().name


def version():
    return _get().version()


def unicode_version():
    """The Unicode version of the core's property tables."""
    return _get().unicode_version()


def script_names():
    """Script names by id, as the core knows them (0 Unknown, 1 Common, 2 Inherited, ...)."""
    return _get().script_names()


def _handle(b, pattern, script_aware, scripts):
    """The backend's pre-tokenizer handle for the arguments (checked: _pretokenizer.options)."""
    pid, flags, spec = _pretokenizer.options(pattern, script_aware, scripts)
    try:
        return b.pretokenizer(pid, flags, spec)
    except SupertokError as exc:
        raise _pretokenizer.named_script_error(exc, spec) from None


def _pretokenize_cut(pattern="o200k", script_aware=False, scripts=None):
    """cut(data, frm): st_encoding_cut for pre-tokenizing alone, on an encoding of no merge and no
    special token over the pre-tokenizer: its cuts are places where the pieces of the parts are
    the pieces of the whole text (docs/design.md §7)."""
    b = _get()
    _handle(b, pattern, script_aware, scripts)  # the arguments' errors
    enc = b.encoding_new_merges(0, [], b"", *_pretokenizer.options(pattern, script_aware, scripts))
    return lambda data, frm: b.cut(enc, data, frm)


def pretokenize_spans(text, pattern="o200k", script_aware=False, scripts=None):
    """(start, end) character offsets of the pieces of `text`, as regex.findall(pat_str, text)
    would cut it for the pattern (`o200k`, `cl100k`, `gpt2`/`r50k`/`p50k`; `superbpe`, SuperBPE's
    Stage-2 pre-tokenizer, gives its regex's matches and the text between them, as HuggingFace's
    Split with behavior "isolated" does; `llama3`, `qwen2`/`qwen3` and `deepseek_v3` split as
    HuggingFace tokenizers does with those models' pre-tokenizers). With script_aware,
    the text is first cut into single-script chunks and the chunks of `scripts` (default
    DEFAULT_SCRIPTS) are split one letter per piece."""
    b = _get()
    data = _utf8(text)
    ends = b.pretokenize_ends(_handle(b, pattern, script_aware, scripts), data, True)
    return list(zip([0] + ends[:-1], ends))


# Separators for pretokenize: control characters that real text rarely holds.
_SEPARATORS = "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b"


def pretokenize(text, pattern="o200k", script_aware=False, scripts=None):
    """The pieces of `text` as a list of str; see pretokenize_spans."""
    b = _get()
    data = _utf8(text)
    h = _handle(b, pattern, script_aware, scripts)
    # The core writes the text with a separator the text lacks after each piece, and one
    # str.split builds every piece at C speed (slicing once per piece costs ~100 ns a piece).
    for sep in _SEPARATORS:
        if sep not in text:
            return b.pretokenize_join(h, data, ord(sep)).decode("utf-8").split(sep)[:-1]
    ends = b.pretokenize_ends(h, data, True)
    return [text[a:e] for a, e in zip([0] + ends[:-1], ends)]


def pretokenize_count(text, pattern="o200k", script_aware=False, scripts=None):
    """The number of pieces, counted in the core with no list built."""
    b = _get()
    data = _utf8(text)
    return b.pretokenize_count(_handle(b, pattern, script_aware, scripts), data)


def normalize_nfc(text):
    """Unicode NFC of `text`, exactly HuggingFace tokenizers' `NFC` normalizer (Unicode 9.0 data:
    characters added later pass unchanged; docs/design.md §4), computed in the core. A lone
    surrogate raises ValueError naming its index."""
    out, _ = _get().normalize_nfc(_utf8(text))
    return out.decode("utf-8")


# No native extension and no wasmtime: tell the user now, at import, that this process will run on
# pywasm (once; the first call would say it otherwise).
_backends_module = __import__("supertok.backends", fromlist=["warn_at_import"])
_backends_module.warn_at_import()
