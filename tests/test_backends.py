"""The backends as hosts: one protocol, exceptions instead of status
tuples, status names checked against the header, no leaks in the wasm module, backend state
below the package's __init__, and Encoding pickling on every backend."""
import gc
import inspect
import json
import multiprocessing
import os
import pickle
import re

import pytest

import supertok
from conftest import BACKENDS, ROOT, get_backend
from supertok import _status, backends
from supertok.backends.base import Backend

MODEL = os.path.join(ROOT, "vectors", "models", "bytes_small.json")
UBE_MODEL = os.path.join(ROOT, "vectors", "models", "ube_small.json")
_models = {}


def _load(path):
    """A model per backend, loaded once (pywasm takes ~20 s to build one)."""
    key = (path, supertok.backend())
    if key not in _models:
        _models[key] = supertok.load_model(path)
    return _models[key]


TEXT = "Hello, wörld! 1234 德国 <|endoftext|> ok\n\n  tabs\tand 'quotes' don't"


# ---- one protocol ----------------------------------------------------------------------------

def test_every_backend_implements_the_protocol(backend):
    b = supertok._get()
    assert isinstance(b, Backend)
    cls = type(b)
    assert not getattr(cls, "__abstractmethods__", None)
    for name in Backend.__abstractmethods__:
        # an ordinary method of the class (or a base below Backend), not attached at run time
        owner = next(k for k in cls.__mro__ if name in vars(k))
        assert owner is not Backend and inspect.isfunction(vars(owner)[name]), name


def test_no_methods_attached_at_run_time():
    for mod in ("c_api", "cffi_runtime", "wasm_runtime", "base"):
        with open(os.path.join(ROOT, "py", "supertok", "backends", mod + ".py"), encoding="utf-8") as f:
            assert "setattr(" not in f.read(), mod


def _backend_calls(module):
    """The attributes a module of the package takes from a backend object: `x.name` where x is
    a variable named backend / _backend / b, or self._backend."""
    with open(os.path.join(ROOT, "py", "supertok", module), encoding="utf-8") as f:
        src = f.read()
    return set(re.findall(r"(?<![\w.])(?:self\.)?_?backend\.(\w+)", src))


_PROPERTIES = {"name", "parallel", "prefers_image", "size_max", "takes_views"}


def test_encoding_and_training_call_nothing_outside_their_protocols():
    """supertok.Encoding, supertok.ube and the package's helpers call only EncodingBackend;
    supertok.train only TrainingBackend: a new backend implements the two and nothing else."""
    from supertok.backends.base import EncodingBackend, TrainingBackend
    encoding = set(EncodingBackend.__abstractmethods__) | _PROPERTIES
    training = set(TrainingBackend.__abstractmethods__) | _PROPERTIES
    for module in ("encoding.py", "ube.py", "__init__.py", "load.py", "cli.py", "_export.py"):
        calls = _backend_calls(module)
        assert calls <= encoding, (module, calls - encoding)
    calls = _backend_calls("_train.py")
    assert calls and calls <= training | {"pattern_from_regex"}, calls - training
    assert _backend_calls("encoding.py") >= {"encode", "decode_bytes", "encode_many_raw", "cuts"}  # the scan sees them


def test_encode_many_is_encode_in_one_call(backend):
    b = supertok._get()
    enc = _load(MODEL)
    texts = [t.encode() for t in ["", "a", TEXT, "x" * 100, "德国 ok"]]
    assert b.encode_many(enc._handle, texts, []) == [b.encode(enc._handle, t, []) for t in texts]
    assert b.encode_many(enc._handle, [], []) == []
    with pytest.raises(supertok.SupertokError) as ei:
        b.encode_many(enc._handle, [b"ok", b"a\xffb"], [])
    assert ei.value.name == "ST_ERR_INVALID_UTF8" and ei.value.offset == 3  # into the joined texts


def test_failures_raise_instead_of_returning_statuses(backend):
    b = supertok._get()
    enc = _load(UBE_MODEL)
    with pytest.raises(KeyError, match="Invalid token for decoding: 99999"):
        b.decode_text(enc._handle, [97, 99999], 0)
    with pytest.raises(supertok.UbeDecodeError) as ei:
        b.decode_text(enc._handle, [97, 0xC3, 98], 2)  # a lone lead byte, strict
    assert ei.value.index == 1
    assert isinstance(b.decode_text(enc._handle, [97, 98], 0), bytes)
    state = b.ube_stream_new()
    assert b.ube_stream_feed(state, [104, 105], 0) == b"hi"
    with pytest.raises(supertok.UbeDecodeError) as ei:
        b.ube_stream_feed(b.ube_stream_new(), [0xC3, 0x41], 3)
    assert ei.value.index == 0
    assert b.prepare(enc._handle) is False  # a rules model never builds the backtracking tables
    with pytest.raises(KeyError):
        b.token_bytes(enc._handle, 10 ** 6)
    with pytest.raises(KeyError):
        b.token_symbols(enc._handle, 10 ** 6)


# ---- status names ----------------------------------------------------------------------------

def _header_statuses():
    with open(os.path.join(ROOT, "core_c", "include", "supertok.h"), encoding="utf-8") as f:
        text = f.read()
    block = re.search(r"typedef enum st_status \{(.*?)\} st_status;", text, re.S)
    assert block, "supertok.h has no st_status enum"
    body = re.sub(r"/\*.*?\*/", "", block.group(1), flags=re.S)
    return {name: int(num) for name, num in re.findall(r"\b(ST_\w+)\s*=\s*(\d+)", body)}


def test_status_table_is_the_headers_enum():
    header = _header_statuses()
    assert header == {name: num for num, name in _status.NAMES.items()}
    assert header == _status.BY_NAME
    for name, num in header.items():  # the module's constants: OK, INVALID_UTF8, ...
        short = name[len("ST_ERR_"):] if name.startswith("ST_ERR_") else name[len("ST_"):]
        assert getattr(_status, short) == num, name


def test_no_bare_status_numbers_in_the_package():
    """Statuses are compared by name (OK, BUFFER_TOO_SMALL, ...) everywhere in Python."""
    bare = re.compile(r"\b(st|status)\s*[!=]=\s*\d")
    found = []
    for dirpath, _, files in os.walk(os.path.join(ROOT, "py", "supertok")):
        for fn in files:
            if fn.endswith(".py"):
                with open(os.path.join(dirpath, fn), encoding="utf-8") as f:
                    for k, line in enumerate(f, 1):
                        if bare.search(line):
                            found.append("%s:%d: %s" % (fn, k, line.strip()))
    assert not found, found


def test_raise_for_status_maps_names():
    r = _status.raise_for_status
    assert r(_status.OK, "ok") is None
    with pytest.raises(KeyError, match="Invalid token for decoding: 7"):
        r(_status.INVALID_TOKEN, "m", 1, "ids", [5, 7])
    with pytest.raises(supertok.UbeDecodeError):
        r(_status.INVALID_UTF8, "m", 0, "symbols")
    with pytest.raises(MemoryError):
        r(_status.OUT_OF_MEMORY, "m", None, "prepare")
    with pytest.raises(supertok.SupertokError) as ei:
        r(_status.MALFORMED_MODEL, lambda st: "bad %d" % st, 4, "rank file")
    assert (ei.value.name, ei.value.offset, ei.value.message) == ("ST_ERR_MALFORMED_MODEL", 4, "bad 7")
    assert supertok.UbeDecodeError is supertok.ube.UbeDecodeError


# ---- backend state below __init__ --------------------------------------------------------------

def test_backend_state_lives_in_backends():
    assert supertok._get is backends.current and supertok._set_backend is backends.set_current
    prev = supertok._set_backend(get_backend(BACKENDS[0]))
    try:
        assert backends.current() is get_backend(BACKENDS[0]) and supertok.backend() == BACKENDS[0]
    finally:
        supertok._set_backend(prev)
    for mod in ("encoding.py", "ube.py", "backends/c_api.py", "backends/cffi_runtime.py", "backends/wasm_runtime.py",
                "backends/base.py"):
        with open(os.path.join(ROOT, "py", "supertok", mod), encoding="utf-8") as f:
            src = f.read()
        assert not re.search(r"from \.+ import (_get|_utf8|_set_backend)", src), mod


# ---- no leaks ------------------------------------------------------------------------------------

def _model():
    with open(MODEL, encoding="utf-8") as f:
        return json.load(f)


def test_wasmtime_frees_what_it_creates():
    """1,000 encodings created and dropped: the module's memory stops growing (it never shrinks,
    so a leak shows as growth). Today's small rules model holds ~0.4 MB in the module."""
    if "wasmtime" not in BACKENDS:
        pytest.skip("wasmtime is not among the backends tested here")
    b = backends.load("wasmtime")  # the process's module: the test watches its memory grow or not
    prev = supertok._set_backend(b)
    try:
        model = _model()
        sizes = []
        for i in range(1000):
            enc = supertok.load_model(model)
            assert enc.encode("hello world") == [104, 101, 273, 111, 32, 119, 111, 114, 108, 100]
            del enc
            if i % 100 == 99:
                gc.collect()
                sizes.append(b.memory_size())
        assert sizes[-1] == sizes[0], sizes
        # explicit close frees at once; twice is harmless
        enc = supertok.load_model(model)
        b.encoding_free(enc._handle)
        b.encoding_free(enc._handle)
        # vocabulary images: the image block goes after its encoding
        import lzma
        with lzma.open(os.path.join(os.path.dirname(supertok.__file__), "vocab", "r50k_base.stimg.xz")) as f:
            image = f.read()
        sizes = []
        for i in range(30):
            h = b.encoding_from_image(image)
            assert b.encode(h, b"hello world", []) == [31373, 995]
            del h
            sizes.append(b.memory_size())
        assert sizes[-1] == sizes[2], sizes
        # pre-tokenizers (a bounded cache; evicted handles are freed) and UBE stream states
        sizes = []
        for i in range(600):
            h = b.pretokenizer(3, 1, ("Han," * (i % 300) + "Thai").encode())
            b.pretokenize_count(h, "德国 ok".encode())
            s = b.ube_stream_new()
            b.ube_stream_feed(s, [104, 105], 1)
            del h, s
            if i % 100 == 99:
                gc.collect()
                sizes.append(b.memory_size())
        assert sizes[-1] == sizes[2], sizes
    finally:
        supertok._set_backend(prev)


def test_pywasm_frees_what_it_creates():
    """pywasm builds an encoding in ~20 s (an interpreter), so 1,000 encodings are wasmtime's
    test; here the same handles free UBE stream states and pre-tokenizers."""
    if "pywasm" not in BACKENDS:
        pytest.skip("pywasm is not among the backends tested here")
    b = backends.load("pywasm")
    sizes = []
    for i in range(120):
        s = b.ube_stream_new()
        assert b.ube_stream_feed(s, [104, 105], 1) == b"hi"
        del s
        if i % 40 == 39:
            gc.collect()
            sizes.append(b.memory_size())
    assert sizes[-1] == sizes[0], sizes


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_native_frees_what_it_creates():
    if "native" not in BACKENDS:
        pytest.skip("native is not among the backends tested here")
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("no /proc/self/statm to read the resident size from")
    prev = supertok._set_backend(get_backend("native"))
    try:
        model = _model()
        for _ in range(100):
            supertok.load_model(model)
        gc.collect()
        before = _rss()
        for _ in range(1000):
            enc = supertok.load_model(model)
            del enc
        gc.collect()
        # each encoding of this model holds ~0.3 MB natively: a leak would be ~300 MB
        assert _rss() - before < 40 << 20
    finally:
        supertok._set_backend(prev)


# ---- pickling --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", supertok.list_encoding_names())
def test_shipped_encodings_pickle_by_name(backend, name):
    enc = supertok.get_encoding(name)
    data = pickle.dumps(enc)
    assert len(data) < 200  # by name, not by contents
    back = pickle.loads(data)
    assert back.name == name and back.encode(TEXT, allowed_special="all") == enc.encode(TEXT, allowed_special="all")


@pytest.mark.parametrize("path", [MODEL, UBE_MODEL])
def test_models_pickle(backend, path):
    if backend == "pywasm" and path == UBE_MODEL:
        pytest.skip("pywasm builds a model in ~20 s: it round-trips the bytes model only")
    enc = _load(path)
    back = pickle.loads(pickle.dumps(enc))
    assert back is not enc and back.name == enc.name and back.alphabet == enc.alphabet
    assert back.encode(TEXT, allowed_special="all") == enc.encode(TEXT, allowed_special="all")
    ids = enc.encode(TEXT, allowed_special="all")
    assert back.decode(ids) == enc.decode(ids)
    assert back.special_tokens_set == enc.special_tokens_set and back.n_vocab == enc.n_vocab


def test_custom_rank_files_pickle_by_their_bytes(backend, tmp_path):
    import base64
    ranks = b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256))
    ranks += base64.b64encode(b"he") + b" 256\n" + base64.b64encode(b"ll") + b" 257\n"
    path = tmp_path / "tiny.tiktoken"
    path.write_bytes(ranks)
    gpt2 = supertok.get_encoding("r50k_base")._pat_str  # the pre-tokenizer: tiktoken's r50k pattern
    enc = supertok.Encoding("tiny", pat_str=gpt2, special_tokens={"<|end|>": 258}, pattern_id=1, ranks_file=str(path))
    data = pickle.dumps(enc)
    path.unlink()  # the pickle carries the bytes: the file is not needed to unpickle
    back = pickle.loads(data)
    assert back.encode("hello <|end|>", allowed_special="all") == enc.encode("hello <|end|>", allowed_special="all")
    assert pickle.loads(pickle.dumps(back)).encode("hello") == enc.encode("hello")
    path.write_bytes(ranks.replace(b" 257\n", b" 258\n"))  # changed since: refused, not silently different
    enc2 = supertok.Encoding("tiny", pat_str=gpt2, special_tokens={}, pattern_id=1, ranks_file=str(path))
    path.write_bytes(ranks)
    with pytest.raises(ValueError, match="sha256"):
        pickle.dumps(enc2)


def test_multiprocessing_pool_encodes(tmp_path):
    """A real Pool(2) with the spawn start method: the Encoding travels by pickle."""
    enc = supertok.get_encoding("cl100k_base")
    texts = ["hello world", TEXT, "德国 ok", ""] * 2
    ctx = multiprocessing.get_context("spawn")
    env = os.environ.get("SUPERTOK_BACKEND")
    os.environ["SUPERTOK_BACKEND"] = supertok.backend()  # the children use this process's backend
    try:
        with ctx.Pool(2) as pool:
            got = pool.map(enc.encode_ordinary, texts)
    finally:
        if env is None:
            del os.environ["SUPERTOK_BACKEND"]
        else:
            os.environ["SUPERTOK_BACKEND"] = env
    assert got == [enc.encode_ordinary(t) for t in texts]


def test_utf8_view_is_the_strs_utf8():
    """_lists.utf8_view (the native backend's text bytes, no copy): the str's UTF-8, exactly; a lone
    surrogate refused (encode then repairs it as tiktoken does); only a str."""
    from supertok.backends import utf8_view
    if utf8_view is None:
        pytest.skip("supertok._lists is not built here (no C compiler at install time)")
    for text in ("", "ascii only", "héllo wörld", "中文字符", "🙂 and 𝔘", "a\x00b", "é" * 10000):
        assert bytes(utf8_view(text)) == text.encode("utf-8")
        assert utf8_view(text).readonly
    with pytest.raises(UnicodeEncodeError):
        utf8_view("lone \ud800 surrogate")
    with pytest.raises(TypeError):
        utf8_view(b"bytes")
    enc = supertok.get_encoding("o200k_base")
    assert enc.encode("lone \ud800 surrogate") == enc.encode("lone \ufffd surrogate")
