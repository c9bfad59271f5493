"""Hostile model sizes, and the UBE stream's caller-owned state.

A model file is a list of pairs, and the tokens the pairs spell can be far larger than the file:
30 rules that each join the last token to itself spell a gigabyte, and a chain of rules each a
byte longer than the last spells n^2 / 2 bytes. The core keeps memory proportional to the file
by a limit on a rules model's token bytes (docs/formats/model-format.md, Limits: 16 MiB + 256 bytes a
rule), checked from the pairs before any token is allocated, the same on every backend because
it is C. The trainer stops before a merge that would cross it, so every model it writes loads.

The harness below writes hostile files of every form the core reads (rules and ranks models,
superword models, the JSON model, the merges API, tiktoken rank files, binary and compact
images), loads each in a fresh process per backend, and asserts that the process's peak memory
grows by at most ALLOC_BASE + ALLOC_PER_BYTE bytes per byte of input; then a seeded random
generator goes over many shapes and checks every outcome against the limit computed here, in
Python, from the pairs.
"""
import base64
import json
import os
import random
import re
import struct
import subprocess
import sys

import pytest

import supertok
from supertok._model_format import ModelError
from conftest import BACKENDS, ROOT, get_backend

# The core's limit (supertok.h ST_RULES_TOKEN_BYTES_BASE, ST_RULES_TOKEN_BYTES_PER_RULE).
LIMIT_BASE = 16 << 20
LIMIT_PER_RULE = 256
# What a load may add to a process's peak memory: the tokens the limit allows a small file, the
# module's and the encoder's fixed tables and the Python objects around them; and per byte of
# input (a rule's line is 4 bytes or more, and may add 256 bytes of tokens and its tables).
ALLOC_BASE = 64 << 20
ALLOC_PER_BYTE = 256

PY = sys.executable
HERE = os.path.dirname(os.path.abspath(__file__))
# the supertok this test imported (PYTHONPATH), for the workers too
PKG_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(supertok.__file__)))
MEASURED = [b for b in BACKENDS if b in ("native", "wasmtime")]


def limit(n_rules):
    return LIMIT_BASE + LIMIT_PER_RULE * n_rules


# ---- model writers ----------------------------------------------------------------------------

def model_text(merges, supers=(), alphabet="bytes", name="hostile"):
    lines = ["supertok-model 1", "name " + name, "kind rules", "alphabet " + alphabet, "pattern o200k",
             "script-aware no", "merges %d" % len(merges)]
    lines += ["%d %d" % p for p in merges]
    if supers:
        lines.append("supermerges %d" % len(supers))
        lines += ["%d %d" % p for p in supers]
    lines += ["specials 0", "end"]
    return ("\n".join(lines) + "\n").encode("ascii")


def model_json(merges, alphabet="bytes", name="hostile"):
    return json.dumps({"format": "supertok-merges", "version": 1, "name": name, "alphabet": alphabet,
                       "pattern": "o200k", "merges": [list(p) for p in merges], "special_tokens": {}}).encode()


def ranks_model_text(tokens):
    lines = ["supertok-model 1", "name ranks", "kind ranks", "alphabet bytes", "pattern o200k", "script-aware no",
             "tokens %d" % len(tokens)]
    lines += ["%s %d" % (base64.b64encode(t).decode(), i) for i, t in enumerate(tokens)]
    lines += ["specials 0", "end"]
    return ("\n".join(lines) + "\n").encode("ascii")


def rank_file(tokens):
    return b"".join(base64.b64encode(t) + b" %d\n" % i for i, t in enumerate(tokens))


def first_crossing(merges, supers=(), alphabet="bytes"):
    """The index in merges + supers of the rule whose token takes the total past the limit, or
    None: the rule the core must name, computed here from the pairs."""
    base, unit = (512, 2) if alphabet == "ube" else (256, 1)
    lens = [1] * base
    lim = limit(len(merges) + len(supers))
    total = 0
    for i, (a, b) in enumerate(list(merges) + list(supers)):
        lens.append(lens[a] + lens[b])
        total += lens[-1] * unit
        if total > lim:
            return i
    return None


# ---- hostile shapes ---------------------------------------------------------------------------

def doubling(n, first=256, sym=97):
    """rule 0 joins a symbol to itself, each next one the last token to itself: 2^(i+1) symbols."""
    return [(sym, sym)] + [(first + i, first + i) for i in range(n - 1)]


def chain(n, first=256, sym=97):
    """each rule the last token and a symbol: a byte longer each time, n^2 / 2 in all."""
    return [(sym, sym)] + [(first + i, sym) for i in range(n - 1)]


def longest_chain_within(alphabet="bytes"):
    """The longest chain that the limit still allows (its tokens about 16 MiB)."""
    unit = 2 if alphabet == "ube" else 1
    n, total = 0, 0
    while total + (n + 2) * unit <= limit(n + 1):
        total += (n + 2) * unit
        n += 1
    return n


def fanout(k, width):
    """a token of 2^k bytes by doubling, then `width` (up to 512) rules joining it to a byte, on
    either side."""
    m = doubling(k)
    big = 256 + k - 1
    return m + [(big, j // 2) if j % 2 == 0 else (j // 2, big) for j in range(width)]


def super_doubling(n):
    """UBE: one merge, then supermerges that each join the last token to itself."""
    return [(97, 97)], [(512 + i, 512 + i) for i in range(n)]


def super_chain(n):
    return [(97, 97), (98, 98)], [(512, 513)] + [(514 + i, 513) for i in range(n - 1)]


def image_from(backend_name, mutate):
    """A binary vocabulary image of a tiny rank vocabulary, its header changed by mutate."""
    b = get_backend(backend_name)
    enc = b.encoding_new(rank_file([bytes([i]) for i in range(256)]), b"", 3)
    img = bytearray(b.save_image(enc))
    mutate(img)
    return bytes(img)


def compact(n_ids, bytes_len, body=b""):
    return b"STVC" + struct.pack("<III", 1, n_ids, bytes_len) + body


def put32(img, at, value):
    img[at:at + 4] = struct.pack("<I", value)


# name -> (kind, bytes maker, expected outcome: True accepted, False refused, "any" either way,
#          must the refusal name the limit?)
def hostile_cases():
    dbl = doubling(30)
    ch89 = chain(89000)
    within = chain(longest_chain_within())
    sd_m, sd_s = super_doubling(28)
    sc_m, sc_s = super_chain(60000)
    return {
        # two hostile files: 346 bytes that spell a gigabyte, 0.9 MB that spell 3.6 GB
        "doubling": ("model", lambda: model_text(dbl), False, True),
        "chain_89k": ("model", lambda: model_text(ch89), False, True),
        "chain_within": ("model", lambda: model_text(within), True, False),
        "chain_one_more": ("model", lambda: model_text(chain(longest_chain_within() + 1)), False, True),
        "doubling_ube": ("model", lambda: model_text([(97, 97)] + [(512 + i, 512 + i) for i in range(29)],
                                                     alphabet="ube"), False, True),
        "fanout": ("model", lambda: model_text(fanout(16, 512)), False, True),
        "fanout_within": ("model", lambda: model_text(fanout(12, 512)), True, False),
        "super_doubling": ("model", lambda: model_text(sd_m, sd_s, alphabet="ube"), False, True),
        "super_chain": ("model", lambda: model_text(sc_m, sc_s, alphabet="ube"), False, True),
        "json_doubling": ("model", lambda: model_json(dbl), False, True),
        "json_chain": ("model", lambda: model_json(chain(20000)), False, True),
        "merges_api_doubling": ("merges", lambda: struct.pack("<%dI" % (2 * len(dbl)), *[x for p in dbl for x in p]),
                                False, True),
        # forms whose tokens are in the file: memory follows the file without a limit
        "ranks_model_long_token": ("model", lambda: ranks_model_text([b"a" * (3 << 20), b"b"]), True, False),
        "rank_file_long_token": ("ranks", lambda: rank_file([bytes([i]) for i in range(256)] + [b"ab" * (2 << 20)]),
                                 True, False),
        "rank_file_sparse": ("ranks", lambda: rank_file([b"a"]) + b"Yg== 2000000000\n", False, False),
        "compact_huge_count": ("compact", lambda: compact(0xFFFFFFFF, 0xFFFFFFF0, b"\x01a"), False, False),
        "compact_huge_len": ("compact", lambda: compact(1, 0xFFFFFFF0, b"\xf0\xff\xff\xff\x0fa"), False, False),
    }


def image_cases():
    return {
        "image_huge_ids": lambda b: image_from(b, lambda img: put32(img, 16, 0x40000000)),
        "image_huge_table": lambda b: image_from(b, lambda img: put32(img, 28, 0x3FFFFFFF)),
        "image_huge_bytes": lambda b: image_from(b, lambda img: put32(img, 32, 0xFFFFFFF0)),
    }


# ---- the worker (a fresh process per load) ----------------------------------------------------

WORKER = r"""
import json, os, sys
sys.path.insert(0, %(py)r)
import supertok
from supertok import backends
from supertok._model_format import ModelError

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM:", "VmRSS:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out

def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False

name, kind, path = sys.argv[1:4]
b = backends.load(name)
supertok._set_backend(b)
data = open(path, "rb").read()
# warm up what every load needs (the module, the pattern tables, a pre-tokenizer)
supertok.load_model(os.path.join(%(root)r, "vectors", "models", "bytes_small.stmodel")).encode("warm up")
mem0 = b.memory_size()
exact = reset_peak()
before = status()
res = {"ok": False, "error": None}
try:
    if kind == "model":
        enc = supertok.load_model(data)
        last = enc.n_vocab - 1
        res["longest"] = len(enc.decode_single_token_bytes(last)) if enc.alphabet == "bytes" else None
    elif kind == "merges":
        n = len(data) // 4
        flat = list(__import__("struct").unpack("<%%dI" %% n, data))
        b.encoding_new_merges(0, flat, b"", 3)
    elif kind == "ranks":
        b.encoding_new(data, b"", 3)
    elif kind == "image":
        b.encoding_from_image(data)
    elif kind == "compact":
        rt = b._rt  # through the one host layer, as every runtime runs it
        ip = rt.alloc(len(data))
        try:
            rt.write(ip, data)
            h = b._new_handle("st_encoding_new_compact", (ip, len(data), rt.NULL, 0, b.pretokenizer(3, 0, None).ptr,
                                                          rt.NULL), "compact vocabulary", "st_encoding_free",
                              ctype="st_encoding *")
            rt.release(h)
        finally:
            rt.free(ip)
    res["ok"] = True
except Exception as exc:
    res["error"] = "%%s: %%s" %% (type(exc).__name__, exc)
after = status()
res["growth"] = after["VmHWM"] - before["VmRSS"] if exact else None
res["mem_growth"] = b.memory_size() - mem0 if mem0 is not None else None
print(json.dumps(res))
"""


def run_worker(backend, kind, data, tmp_path, timeout=300):
    path = tmp_path / ("input-%s-%d" % (backend, len(data)))
    path.write_bytes(data)
    code = WORKER % {"py": PKG_ROOT, "root": ROOT}
    proc = subprocess.run([PY, "-c", code, backend, kind, str(path)], capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, "the worker died (%d):\n%s" % (proc.returncode, proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def check_bounded(res, size, what):
    bound = ALLOC_BASE + ALLOC_PER_BYTE * size
    if res["growth"] is not None:
        assert res["growth"] <= bound, "%s: the load raised the peak by %d bytes for %d bytes of input (bound %d)" % (
            what, res["growth"], size, bound)
    if res["mem_growth"] is not None:
        assert res["mem_growth"] <= bound, "%s: the wasm memory grew by %d bytes for %d bytes of input (bound %d)" % (
            what, res["mem_growth"], size, bound)


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"),
                                reason="peak memory per load is read from /proc (Linux)")


@needs_proc
@pytest.mark.parametrize("backend_name", MEASURED)
@pytest.mark.parametrize("case", sorted(hostile_cases()))
def test_hostile_model_memory(backend_name, case, tmp_path):
    kind, make, accepted, names_limit = hostile_cases()[case]
    data = make()
    res = run_worker(backend_name, kind, data, tmp_path)
    assert res["ok"] == accepted, "%s on %s: %s" % (case, backend_name, res)
    if names_limit:
        assert "over the limit" in res["error"] and "16 MiB + 256 bytes a rule" in res["error"], res["error"]
    check_bounded(res, len(data), "%s on %s" % (case, backend_name))


@needs_proc
@pytest.mark.parametrize("backend_name", MEASURED)
@pytest.mark.parametrize("case", sorted(image_cases()))
def test_hostile_image_memory(backend_name, case, tmp_path):
    data = image_cases()[case](backend_name)
    res = run_worker(backend_name, "image", data, tmp_path)
    assert not res["ok"] and "image" in res["error"], res
    check_bounded(res, len(data), "%s on %s" % (case, backend_name))


def test_doubling_and_chain_files_refused_with_the_rule_named(backend):
    """The error names the line and the rule that crossed the limit, the same on every backend."""
    with pytest.raises(ModelError) as ei:
        supertok.load_model(model_text(doubling(30)))
    # rule i spells 2^(i+1) bytes, 2^(i+2) - 4 in all: rule 23 is the first past 16 MiB + 7680
    assert ei.value.line == 7 + 1 + 23
    assert "merges[23]: the tokens reach 33554430 bytes here, over the limit 16784896" in str(ei.value)
    if backend != "pywasm":  # parsing 89,000 lines in an interpreter takes minutes
        with pytest.raises(ModelError) as ei:
            supertok.load_model(model_text(chain(89000)))
        assert "merges[%d]:" % first_crossing(chain(89000)) in str(ei.value)
    # a supermerge is named as such, at its own line
    m, s = super_doubling(28)
    with pytest.raises(ModelError) as ei:
        supertok.load_model(model_text(m, s, alphabet="ube"))
    k = first_crossing(m, s, alphabet="ube") - len(m)
    assert "supermerges[%d]:" % k in str(ei.value) and ei.value.line == 7 + len(m) + 2 + k


def test_pywasm_refuses_small_hostile_files():
    """pywasm (an interpreter) on the files small enough for it: the same refusal, from the same C."""
    if "pywasm" not in BACKENDS:
        pytest.skip("pywasm not among the test backends")
    b = get_backend("pywasm")
    prev = supertok._set_backend(b)
    try:
        for data in (model_text(doubling(30)), model_text(*super_doubling(28), alphabet="ube")):
            before = b.memory_size()
            with pytest.raises(ModelError, match="over the limit"):
                supertok.load_model(data)
            assert b.memory_size() - before <= ALLOC_BASE
    finally:
        supertok._set_backend(prev)


# ---- random shapes ----------------------------------------------------------------------------

def random_model(rng):
    """(merges, supers, alphabet) of a random shape: chains, doublings, fan-outs and mixtures,
    near the limit as often as not; sometimes the later rules are supermerges."""
    alphabet = rng.choice(["bytes", "ube"])
    base = 512 if alphabet == "ube" else 256
    merges, supers = [], []
    lens = [1] * base
    shape = rng.choice(["doubling", "chain", "fanout", "mixed", "plain"])
    n = rng.choice([10, 50, 300, 2000, 6000])
    supers_from = rng.choice([None, None, n // 2, 1])  # rule index where the supermerges start
    sym = rng.randrange(base)
    used = set()
    last = longest = None
    for i in range(n):
        kind = shape if shape != "mixed" else rng.choice(["doubling", "chain", "fanout", "plain"])
        if last is None:
            pair = (sym, sym)
        elif kind == "doubling":
            pair = (last, last)
        elif kind == "chain":
            pair = (last, rng.randrange(base))
        elif kind == "fanout":
            other = rng.randrange(len(lens))
            pair = (longest, other) if rng.random() < 0.5 else (other, longest)
        else:
            pair = (rng.randrange(len(lens)), rng.randrange(len(lens)))
        if pair in used:
            continue
        used.add(pair)
        (supers if supers_from is not None and i >= supers_from else merges).append(pair)
        lens.append(lens[pair[0]] + lens[pair[1]])
        last = len(lens) - 1
        if longest is None or lens[last] >= lens[longest]:
            longest = last
        if sum(lens[base:]) > 4 * limit(len(lens) - base):  # far past the limit: enough
            break
    return merges, supers, alphabet


def test_random_hostile_models(tmp_path):
    """Seeded random shapes, each loaded on every measured backend in one process: the outcome
    is what the limit computed here says, a refusal names the crossing rule, and no load raises
    the peak past the bound."""
    rng = random.Random(2024)
    cases = []
    for k in range(24):
        merges, supers, alphabet = random_model(rng)
        data = model_text(merges, supers, alphabet=alphabet, name="r%d" % k)
        crossing = first_crossing(merges, supers, alphabet)
        cases.append((data, crossing, len(merges)))
    assert any(c[1] is None for c in cases) and any(c[1] is not None for c in cases)
    files = []
    for k, (data, _, _) in enumerate(cases):
        p = tmp_path / ("r%d.stmodel" % k)
        p.write_bytes(data)
        files.append(str(p))
    script = RANDOM_WORKER % {"py": PKG_ROOT}
    for name in MEASURED:
        proc = subprocess.run([PY, "-c", script, name] + files, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results = [json.loads(line) for line in proc.stdout.strip().splitlines()]
        assert len(results) == len(cases)
        for (data, crossing, n_merges), res in zip(cases, results):
            if crossing is None:
                assert res["ok"], res
            else:
                assert not res["ok"]
                section, idx = ("merges", crossing) if crossing < n_merges else ("supermerges", crossing - n_merges)
                assert "%s[%d]: the tokens reach" % (section, idx) in res["error"], (crossing, res["error"])
            check_bounded(res, len(data), "random model on %s" % name)


RANDOM_WORKER = r"""
import json, sys
sys.path.insert(0, %(py)r)
import supertok
from supertok import backends
from supertok._model_format import ModelError
def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmHWM:", "VmRSS:")):
                out[line.split(":")[0]] = int(line.split()[1]) * 1024
    return out
b = backends.load(sys.argv[1])
supertok._set_backend(b)
exact = True
for path in sys.argv[2:]:
    data = open(path, "rb").read()
    try:
        open("/proc/self/clear_refs", "w").write("5")
    except OSError:
        exact = False
    before = status()
    mem0 = b.memory_size()
    res = {"ok": False, "error": None}
    try:
        enc = supertok.load_model(data)
        enc.encode("hello world")
        del enc
        res["ok"] = True
    except ModelError as exc:
        res["error"] = str(exc)
    res["growth"] = status()["VmHWM"] - before["VmRSS"] if exact else None
    res["mem_growth"] = b.memory_size() - mem0 if mem0 is not None else None
    print(json.dumps(res), flush=True)
"""


# ---- the trainer stops at the limit -----------------------------------------------------------

def token_bytes_total(enc):
    return sum(len(enc.decode_single_token_bytes(i)) for i in range(256, enc.n_vocab))


def test_trainer_stops_at_the_limit_on_one_byte(backend):
    """hf mode on 17 MB of one byte makes doubling tokens; the trainer stops before the token
    that would take its model past the limit, so the model it writes loads again."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: training on a 17 MB corpus runs on native and wasmtime")
    n = 17_000_000
    with pytest.warns(supertok.TrainWarning) as rec:
        enc = supertok.train(iter(["a" * n]), vocab_size=300, mode="hf", progress=False)
    assert [(w.message.reason, w.message.phase) for w in rec] == [("token_bytes", "merge")]
    assert "16 MiB + 256 bytes a merge" in str(rec[0].message)
    assert "the next token would pass the limit" in enc._model_data.decode()  # the model's comment
    rules = enc.n_vocab - 256
    total = token_bytes_total(enc)
    assert total <= limit(rules), (total, limit(rules))
    assert max(len(enc.decode_single_token_bytes(i)) for i in range(enc.n_vocab)) == 1 << 23
    again = supertok.load_model(enc._model_data)
    assert again.n_vocab == enc.n_vocab
    assert again.encode("a" * 1000) == enc.encode("a" * 1000)


@pytest.mark.parametrize("algorithm", ["boundless", "superbpe"])
def test_trainer_stops_at_the_limit_in_phase_two(backend, algorithm):
    """Supermerges over a line of one long word repeated double like merges do: phase 2 stops
    at the limit too (counting only the regular merges the model keeps)."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: training on an 8 MB corpus runs on native and wasmtime")
    rng = random.Random(1)
    word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(2000))
    kw = {"supermerges": 40} if algorithm == "superbpe" else {}
    with pytest.warns(supertok.TrainWarning) as rec:
        enc = supertok.train(iter([(" " + word) * 4200]), vocab_size=1750 if algorithm == "superbpe" else 3000,
                             algorithm=algorithm, progress=False, **kw)
    assert ("token_bytes", "supermerge") in [(w.message.reason, w.message.phase) for w in rec]
    rules = enc.n_vocab - 256
    total = token_bytes_total(enc)
    assert total <= limit(rules), (total, limit(rules))
    assert enc._supermerges, "no supermerge was learned"
    assert supertok.load_model(enc._model_data).n_vocab == enc.n_vocab


# ---- the UBE stream's state -------------------------------------------------------------------

def _damage(b, backend, state, **fields):
    """Write fields of a stream state as a caller (or anything else in wasm memory) could."""
    offs = {"alphabet": (0, "B"), "n_pending": (1, "B"), "pending": (2, "4B")}
    for k, v in fields.items():
        at, fmt = offs[k]
        data = struct.pack("<" + fmt, *(v if isinstance(v, (list, tuple)) else [v]))
        if backend == "native":
            from supertok.backends.cffi_runtime import ffi
            ffi.memmove(ffi.cast("uint8_t *", state.ptr) + at, data, len(data))
        elif backend == "numba":  # the state block is a uint8 array (numba_runtime.py's alloc)
            state.ptr[at:at + len(data)] = list(data)
        else:
            b._rt.write(state.ptr + at, data)


@pytest.mark.parametrize("fields,why", [
    ({"n_pending": 9, "alphabet": 1}, "n_pending is above 3"),      # would write past pending[] in UTF-16 mode
    ({"n_pending": 200, "alphabet": 0}, "n_pending is above 3"),    # ... and in UTF-8 mode
    ({"n_pending": 4, "alphabet": 1}, "n_pending is above 3"),
    ({"alphabet": 7}, "alphabet is neither 0"),
    ({"n_pending": 1}, "run_start is not base - n_pending"),       # the stream left 2 pending
    # two pending symbols, as the stream left, but not the start of a sequence they could finish
    ({"n_pending": 2, "alphabet": 0, "pending": [0x41, 0xB8, 0, 0]}, "pending holds no incomplete UTF-8 sequence"),
    ({"n_pending": 2, "alphabet": 0, "pending": [0xE4, 0x41, 0, 0]}, "pending holds no incomplete UTF-8 sequence"),
    ({"n_pending": 2, "alphabet": 1, "pending": [0x41, 0x00, 0, 0]}, "pending holds no high surrogate"),
])
def test_ube_stream_refuses_a_damaged_state(backend, fields, why):
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the damaged stream states (the same C) run on native and wasmtime")
    b = get_backend(backend)
    state = b.ube_stream_new()
    b.ube_stream_feed(state, [0xE4, 0xB8], 0)  # a valid stream: two bytes of a 3-byte character pending
    _damage(b, backend, state, **fields)
    with pytest.raises(supertok.SupertokError, match="damaged stream state: " + re.escape(why)) as ei:
        b.ube_stream_feed(state, [0x41, 256 + 0x3D, 256 + 0xD8, 256 + 0x00, 256 + 0xDC] * 4, 0)
    assert "INVALID_ARGUMENT" in str(ei.value) or "invalid argument" in str(ei.value).lower()


def test_ube_stream_state_fuzz(backend):
    """Random damage to any field of a state a valid stream left, then random symbols: every
    call either refuses the state or decodes to valid UTF-8, never more than 3 n + 3 bytes."""
    if backend == "pywasm":
        pytest.skip("pywasm is an interpreter: the stream-state fuzz (the same C) runs on native and wasmtime")
    b = get_backend(backend)
    rng = random.Random(7)
    refused = decoded = 0
    for _ in range(400):
        state = b.ube_stream_new()
        b.ube_stream_feed(state, [rng.randrange(512) for _ in range(rng.randrange(6))], 0)
        field = rng.choice(["alphabet", "n_pending", "pending"])
        value = [rng.randrange(256) for _ in range(4)] if field == "pending" else rng.randrange(256)
        _damage(b, backend, state, **{field: value})
        syms = [rng.randrange(512) for _ in range(rng.randrange(1, 30))]
        try:
            out = b.ube_stream_feed(state, syms, rng.choice([0, 1]))
        except supertok.SupertokError as exc:
            assert "damaged stream state" in str(exc), exc
            refused += 1
            continue
        out.decode("utf-8")
        assert len(out) <= 3 * len(syms) + 3
        decoded += 1
    assert refused > 50 and decoded > 50, (refused, decoded)
