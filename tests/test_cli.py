"""The command line (supertok/cli.py) run as a user runs it: `python -m supertok ...` in a
subprocess, once per backend present (SUPERTOK_BACKEND forced), ids compared with tiktoken.

pywasm interprets the module, so it gets tiny inputs only; the tests that need a large input
(a closed pipe mid-output) run on native and wasmtime. The fast lane (-m "not slow") runs the
encode and model tests on every backend and the others on the first backend only."""
import json
import os
import subprocess
import sys
import threading

import pytest

from conftest import BACKENDS, ROOT

import supertok
from supertok import cli

tiktoken = pytest.importorskip("tiktoken")

MODELS = os.path.join(ROOT, "vectors", "models")
SAMPLE = ("Hello world, it's 2024!\r\n  德国HYDAC电磁球阀 naïve café\n\n\tcode: x = f(y) // done\n"
          "Привет мир 🙂 don't WE'LL 12345 abc\n")
SPECIAL = "a <|endoftext|> b\nc <|endofprompt|> d\n"


@pytest.fixture(scope="module")
def tks(tmp_path_factory):
    from generate_encode import tiktoken_offline
    return tiktoken_offline(str(tmp_path_factory.mktemp("tiktoken-cache")))


def _backend_params(every_backend_fast):
    """BACKENDS as fixture params. Each CLI run starts a Python process that loads its backend (a
    second or more for the wasm runtimes, pywasm parsing the module in Python), so the fast lane
    runs most CLI tests on the first backend only and the others under the slow marker."""
    return [b if every_backend_fast or b == BACKENDS[0] else pytest.param(b, marks=pytest.mark.slow)
            for b in BACKENDS]


@pytest.fixture(params=_backend_params(False))
def be(request):
    """The backend a CLI test forces: the fast lane takes the first of BACKENDS."""
    return request.param


@pytest.fixture(params=_backend_params(True))
def every_be(request):
    """The backend a CLI test forces, every one of them in the fast lane too."""
    return request.param


def run(backend, *args, input=b"", env=None, **kw):
    e = dict(os.environ, SUPERTOK_BACKEND=backend)
    e.pop("SUPERTOK_TRACEBACK", None)
    e.update(env or {})
    if isinstance(input, str):
        input = input.encode("utf-8")
    return subprocess.run([sys.executable, "-m", "supertok"] + list(args), input=input, capture_output=True,
                          env=e, timeout=600, **kw)


def ok(r):
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    assert r.stderr == b"", r.stderr
    return r.stdout.decode("utf-8")


def fails(r, *needles, status=2):
    """One line `supertok: ...` on stderr naming each needle, no trace, the exit status."""
    err = r.stderr.decode("utf-8")
    assert r.returncode == status, (r.returncode, err)
    assert err.startswith("supertok: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, (n, err)
    return err


def text_for(backend, text):
    return text[:40] if backend == "pywasm" else text


# ---- encode / count / decode against tiktoken ------------------------------------------------

@pytest.mark.slow_on_pywasm("cl100k_base", "r50k_base")
@pytest.mark.parametrize("name", ["o200k_base", "cl100k_base", "r50k_base"])
def test_encode_matches_tiktoken(every_be, tks, tmp_path, name):
    be = every_be
    text = text_for(be, SAMPLE)
    want = tks[name].encode(text)
    assert json.loads(ok(run(be, "encode", "--encoding", name, input=text))) == want
    f = tmp_path / "in.txt"
    f.write_bytes(text.encode())
    assert json.loads(ok(run(be, "encode", str(f), "--encoding", name))) == want
    assert json.loads(ok(run(be, "encode", "-", "--encoding", name, input=text))) == want  # - is stdin
    assert ok(run(be, "count", "--encoding", name, input=text)) == "%d\n" % len(want)


def test_encode_default_is_o200k_and_empty_input(be, tks):
    assert json.loads(ok(run(be, "encode", input="hello world"))) == tks["o200k_base"].encode("hello world")
    assert json.loads(ok(run(be, "encode", input=""))) == []
    assert ok(run(be, "count", input="")) == "0\n"


def test_chunked_encode_is_exact_and_not_one_line(be, tks):
    """Small chunks: the output has a line per chunk and the ids are the whole text's."""
    text = text_for(be, SAMPLE) if be == "pywasm" else SAMPLE * 30
    for name in ("o200k_base", "cl100k_base"):
        out = ok(run(be, "encode", "--encoding", name, "--chunk-size", "7", input=text))
        assert json.loads(out) == tks[name].encode(text)
        assert out.count("\n") > 1
        assert ok(run(be, "count", "--encoding", name, "--chunk-size", "5", input=text)) == \
            "%d\n" % len(tks[name].encode(text))


def test_chunks_cut_only_where_the_core_proves_it(be, tks):
    """The parts are cut where st_encoding_cut says, about size characters apart, and cover the
    text; their ids join to the whole text's."""
    prev = supertok._set_backend(be)
    try:
        enc = supertok.get_encoding("o200k_base")
        text = "ab cd\nef, gh  ij é漢字 " * 3
        data = text.encode()
        for size in range(1, len(text) + 2):
            parts = list(cli._parts(enc._cut, data, size))
            assert "".join(p for _, p in parts) == text
            for (a, p), (b, _) in zip(parts, parts[1:]):
                assert len(p) >= size and a + len(p.encode()) == b
                assert enc._cut(data, b) == b  # a place the core proves
            assert [i for _, p in parts for i in enc.encode(p)] == tks["o200k_base"].encode(text)
        assert list(cli._parts(enc._cut, b"", 4)) == [(0, "")]
        assert list(cli._parts(enc._cut, b"a" * 50, 4)) == [(0, "a" * 50)]  # no place proven: whole
    finally:
        supertok._set_backend(prev)


def test_decode_round_trip_and_empty(be, tks):
    text = text_for(be, SAMPLE)
    ids = tks["cl100k_base"].encode(text)
    assert ok(run(be, "decode", "--encoding", "cl100k_base", input=json.dumps(ids))) == text
    # encode's multi-line output decodes
    out = run(be, "encode", "--chunk-size", "3", input=text).stdout
    assert ok(run(be, "decode", input=out)) == text
    for empty in ("", "\n", "  \n"):
        assert ok(run(be, "decode", input=empty)) == ""
    assert ok(run(be, "decode", input="[]")) == ""


def test_decode_matches_tiktoken_on_broken_utf8(be, tks):
    ids = tks["o200k_base"].encode("é")
    ids = [i for i in range(256, 300)][:3] + ids
    want = tks["o200k_base"].decode(ids)
    assert ok(run(be, "decode", input=json.dumps(ids))) == want


# ---- special tokens -----------------------------------------------------------------------------

def test_allowed_special_list(be, tks):
    tk = tks["o200k_base"]
    assert json.loads(ok(run(be, "encode", "--allowed-special", "all", input=SPECIAL))) == \
        tk.encode(SPECIAL, allowed_special="all")
    one = "<|endoftext|>"
    r = run(be, "encode", "--allowed-special", one, input=SPECIAL)  # <|endofprompt|> still refused
    fails(r, "<|endofprompt|>", "line 2")
    both = "<|endoftext|>,<|endofprompt|>"
    assert json.loads(ok(run(be, "encode", "--allowed-special", both, input=SPECIAL))) == \
        tk.encode(SPECIAL, allowed_special={"<|endoftext|>", "<|endofprompt|>"})
    assert json.loads(ok(run(be, "encode", "--allowed-special", one, "--disallowed-special", "none",
                             input=SPECIAL))) == tk.encode(SPECIAL, allowed_special={one}, disallowed_special=())
    assert json.loads(ok(run(be, "encode", "--disallowed-special", "none", input=SPECIAL))) == \
        tk.encode(SPECIAL, disallowed_special=())
    assert ok(run(be, "count", "--allowed-special", "all", input=SPECIAL)) == \
        "%d\n" % len(tk.encode(SPECIAL, allowed_special="all"))


def test_special_token_errors_name_token_and_line(be):
    fails(run(be, "encode", input=SPECIAL), "disallowed special token '<|endoftext|>'", "standard input: line 1")
    fails(run(be, "encode", "--allowed-special", "<|endoftext|>,<|nope|>", input="x"), "--allowed-special",
          "'<|nope|>' is not a special token of o200k_base")
    fails(run(be, "encode", "--lines", input="fine\nnot <|endofprompt|> fine\n"), "line 2", "<|endofprompt|>")
    # in a later chunk: the line counts the chunks before it (the error's offset, not a search)
    text = "a ok\n" * 30 + "x <|endoftext|>\n"
    for size in ("4", "1000"):
        fails(run(be, "encode", "--chunk-size", size, input=text), "standard input: line 31", "'<|endoftext|>'")


# ---- --lines: one output line per input line, streamed --------------------------------------

def test_lines(be, tks):
    lines = ["hello world", "", "德国 café", "x = 1  "] if be == "pywasm" else SAMPLE.split("\n")[:-1]
    data = "\n".join(lines) + "\n"
    tk = tks["o200k_base"]
    out = ok(run(be, "encode", "--lines", input=data)).split("\n")
    assert out[-1] == "" and [json.loads(x) for x in out[:-1]] == [tk.encode(ln) for ln in lines]
    assert ok(run(be, "count", "--lines", input=data)) == "".join("%d\n" % len(tk.encode(ln)) for ln in lines)
    enc_out = run(be, "encode", "--lines", input=data).stdout
    assert ok(run(be, "decode", "--lines", input=enc_out)) == data
    pieces = ok(run(be, "pretokenize", "--lines", input=data)).split("\n")[:-1]
    assert [json.loads(p) for p in pieces] == [supertok.pretokenize(ln) for ln in lines]
    # a last line without a newline is still a line
    assert ok(run(be, "count", "--lines", input="a b\nc")) == "2\n1\n"


def test_lines_stream_before_input_ends(be, tks):
    """The first line's ids arrive while standard input is still open."""
    e = dict(os.environ, SUPERTOK_BACKEND=be)
    p = subprocess.Popen([sys.executable, "-m", "supertok", "encode", "--lines"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=e)
    got = []
    t = threading.Thread(target=lambda: got.append(p.stdout.readline()))
    try:
        p.stdin.write(b"hello world\n")
        p.stdin.flush()
        t.start()
        t.join(300)  # a hang guard, not a timing check
        assert got and json.loads(got[0]) == tks["o200k_base"].encode("hello world")
    finally:
        p.stdin.close()
        p.wait(300)
        p.stdout.close()
        p.stderr.close()
    assert p.returncode == 0


# ---- pretokenize ----------------------------------------------------------------------------

@pytest.mark.parametrize("pattern", ["o200k", "cl100k", "gpt2", "llama3", "qwen2", "deepseek_v3"])
def test_pretokenize(be, pattern):
    import oracle
    text = text_for(be, SAMPLE) if be == "pywasm" else SAMPLE * 20
    want = oracle.pretokenize(text, pattern)
    for extra in ([], ["--chunk-size", "9"]):
        out = ok(run(be, "pretokenize", "--pattern", pattern, *extra, input=text))
        assert [json.loads(x) for x in out.split("\n")[:-1]] == want and out.endswith("\n")
    assert ok(run(be, "pretokenize", input="")) == ""


def test_pretokenize_script_aware(be):
    import oracle
    text = "德国HYDAC电磁球阀 ภาษาไทย abc"
    for scripts in (None, "Han", "Han,Thai"):
        extra = [] if scripts is None else ["--scripts", scripts]
        out = ok(run(be, "pretokenize", "--script-aware", *extra, input=text))
        sc = list(supertok.DEFAULT_SCRIPTS) if scripts is None else scripts.split(",")
        assert [json.loads(x) for x in out.split("\n")[:-1]] == oracle.pretokenize(text, "o200k", True, sc)


def test_pretokenize_takes_an_encoding_or_a_model(be, tmp_path):
    """pretokenize takes --encoding and --model as encode does, and splits as that encoding's
    pre-tokenizer does: a tiktoken encoding's pattern; a model's pattern, script-awareness and
    script list."""
    import oracle
    text = "德国HYDAC电磁球阀 ภาษาไทย abc's 12345\n"
    out = ok(run(be, "pretokenize", "--encoding", "cl100k_base", input=text))
    assert [json.loads(x) for x in out.split("\n")[:-1]] == oracle.pretokenize(text, "cl100k")
    assert oracle.pretokenize(text, "cl100k") != oracle.pretokenize(text, "o200k")  # the pattern mattered
    model, corpus = tmp_path / "m.stmodel", tmp_path / "t.txt"
    corpus.write_text(text * 3, encoding="utf-8")
    supertok.train(str(corpus), vocab_size=260, pattern="gpt2", script_aware=True, scripts=["Thai"],
                   progress=False).save(str(model))
    out = ok(run(be, "pretokenize", "--model", str(model), input=text))
    assert [json.loads(x) for x in out.split("\n")[:-1]] == oracle.pretokenize(text, "gpt2", True, ["Thai"])
    for extra in (["--pattern", "o200k"], ["--script-aware"], ["--scripts", "Han"]):
        fails(run(be, "pretokenize", "--encoding", "o200k_base", *extra, input=text), extra[0], "--encoding")
    fails(run(be, "pretokenize", "--model", str(tmp_path / "nope"), input=text), "nope")


def test_every_subcommand_taking_an_encoding_takes_the_same_names():
    """--encoding NAME and --model FILE on every subcommand that reads an encoding."""
    parser = cli.build_parser()
    subs = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices
    for name in ("encode", "count", "decode", "pretokenize"):
        opts = {o for a in subs[name]._actions for o in a.option_strings}
        assert {"--encoding", "--model"} <= opts, name


# ---- models ---------------------------------------------------------------------------------

@pytest.mark.slow_on_pywasm("ube_small.json", "bytes_small.json")
@pytest.mark.parametrize("model", ["ube_small.json", "bytes_small.json", "bytes_small.stmodel"])
def test_model_encode_decode(every_be, model):
    be = every_be
    path = os.path.join(MODELS, model)
    text = text_for(be, SAMPLE)
    prev = supertok._set_backend(be)
    try:
        want = supertok.load_model(path).encode(text)
    finally:
        supertok._set_backend(prev)
    out = ok(run(be, "encode", "--model", path, "--chunk-size", "4", input=text))
    assert json.loads(out) == want
    assert ok(run(be, "decode", "--model", path, input=out)) == text


# ---- errors: one line, the thing named, a non-zero exit -------------------------------------

def test_input_errors(be, tmp_path):
    fails(run(be, "encode", str(tmp_path / "missing.txt")), "missing.txt", "No such file")
    fails(run(be, "count", str(tmp_path)), str(tmp_path), "is a directory")
    fails(run(be, "pretokenize", str(tmp_path / "nope")), "nope")
    fails(run(be, "decode", str(tmp_path / "nope")), "nope")
    fails(run(be, "encode", input=b"ab\n\xffcd"), "standard input", "not valid UTF-8 at byte 3", "line 2")
    fails(run(be, "encode", "--lines", input=b"ok\nab\xff\n"), "line 2")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"x\xc3")
    fails(run(be, "pretokenize", str(bad)), "bad.txt", "not valid UTF-8")


def test_decode_errors(be):
    fails(run(be, "decode", input="not json"), "cannot decode", "standard input", "line 1")
    fails(run(be, "decode", input="[1, 99999999]"), "Invalid token for decoding: 99999999", "item 1")
    fails(run(be, "decode", input="[1, 2, 3, 99999999]"), "Invalid token for decoding: 99999999", "item 3")
    fails(run(be, "decode", input="[1, -1]"), "-1")
    fails(run(be, "decode", input="[1, 2e3]"), "item 1", "2000.0")
    fails(run(be, "decode", input="[1, true]"), "item 1")
    fails(run(be, "decode", input="[1, %d]" % (1 << 70)), "%d" % (1 << 70))
    fails(run(be, "decode", input='{"a": 1}'), "JSON list", "object")
    fails(run(be, "decode", "--lines", input="[1]\n[2,\n"), "line 2")


def test_model_errors(be, tmp_path):
    m = tmp_path / "m.json"
    m.write_text("[1,2]")
    fails(run(be, "encode", "--model", str(m), input="x"), str(m), "JSON object")
    base = {"format": "supertok-merges", "version": 1, "alphabet": "bytes", "pattern": "o200k"}
    m.write_text(json.dumps(dict(base, merges=[[1, 2], [10 ** 20, 3]])))
    fails(run(be, "encode", "--model", str(m), input="x"), str(m), "merges[1]", "too large")
    m.write_text(json.dumps(dict(base, merges=[[1, 2]], special_tokens={"<a>": 3})))
    fails(run(be, "encode", "--model", str(m), input="x"), str(m), "special")
    m.write_text("{not json")
    fails(run(be, "decode", "--model", str(m), input="[]"), str(m), "not JSON")
    fails(run(be, "encode", "--model", str(tmp_path), input="x"), str(tmp_path), "directory")
    fails(run(be, "encode", "--model", str(tmp_path / "none.json"), input="x"), "none.json", "No such file")


def test_option_errors(be):
    fails(run(be, "encode", "--model", "m.json", "--encoding", "cl100k_base", input="x"), "--model", "--encoding")
    fails(run(be, "pretokenize", "--scripts", "Han", input="x"), "--scripts", "--script-aware")
    fails(run(be, "pretokenize", "--script-aware", "--scripts", "Han, Xé ,Thai", input="x"), "--scripts: unknown script name 'Xé'")
    fails(run(be, "encode", "--encoding", "o300k", input="x"), "o300k")
    fails(run(be, "encode", "--chunk-size", "0", input="x"), "--chunk-size")
    fails(run(be, "frobnicate"), "frobnicate")
    fails(run(be), "COMMAND")


def test_backend_errors(tmp_path):
    fails(run("bogus", "encode", input="x"), "SUPERTOK_BACKEND", "bogus", status=1)
    # a forced backend that cannot load: a wasmtime that fails to import
    (tmp_path / "wasmtime.py").write_text("raise ImportError('simulated: no wasmtime here')\n")
    r = run("wasmtime", "count", input="x", env={"PYTHONPATH": str(tmp_path)})
    fails(r, "SUPERTOK_BACKEND=wasmtime", "cannot load", status=1)
    assert run("wasmtime", "--version", env={"PYTHONPATH": str(tmp_path)}).returncode == 0
    # info still reports, to show what went wrong
    out = ok(run("bogus", "info"))
    assert "backend:" in out and "bogus" in out and "available:" in out


def test_closed_pipe_is_quiet(be, tmp_path):
    if be == "pywasm":
        pytest.skip("pywasm is an interpreter: the closed-pipe test (a large output) runs on native and wasmtime")
    e = dict(os.environ, SUPERTOK_BACKEND=be)
    words = tmp_path / "words.txt"
    words.write_bytes(b"word " * 200000)
    lines = tmp_path / "lines.txt"
    lines.write_bytes(b"word\n" * 200000)
    for cmd in (["pretokenize", str(words)], ["encode", "--chunk-size", "1000", str(words)],
                ["encode", "--lines", str(lines)], ["pretokenize", "-"]):
        with open(str(words), "rb") as fin:
            p = subprocess.Popen([sys.executable, "-m", "supertok"] + cmd, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=e, stdin=fin)
        p.stdout.readline()
        p.stdout.close()  # as `| head -1` does
        err = p.stderr.read()
        p.wait(300)
        p.stderr.close()
        assert err == b"", err
        assert p.returncode == cli.EXIT_PIPE


# ---- progress, version, info, help ------------------------------------------------------------

def _run_with_tty_stderr(backend, args, data):
    import pty
    master, slave = pty.openpty()
    try:
        e = dict(os.environ, SUPERTOK_BACKEND=backend)
        p = subprocess.Popen([sys.executable, "-m", "supertok"] + args, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=slave, env=e)
        os.close(slave)
        slave = None
        out, _ = p.communicate(data, timeout=600)
        err = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
        return p.returncode, out, err
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="no pseudo-terminals on this platform")
def test_progress_bar_only_on_a_terminal(be, tks):
    text = (text_for(be, SAMPLE) * (2 if be == "pywasm" else 50)).encode()
    rc, out, err = _run_with_tty_stderr(be, ["encode", "--chunk-size", "20"], text)
    assert rc == 0 and json.loads(out) == tks["o200k_base"].encode(text.decode())
    assert b"supertok encode [" in err and b"100%" in err
    # one chunk: no bar even on a terminal
    rc, out, err = _run_with_tty_stderr(be, ["count"], b"short")
    assert rc == 0 and err == b""
    # not a terminal: no bar
    r = run(be, "encode", "--chunk-size", "20", input=text)
    assert r.returncode == 0 and r.stderr == b""
    r = run(be, "pretokenize", "--chunk-size", "20", "--progress", "on", input=text)
    assert r.returncode == 0 and b"supertok pretokenize [" in r.stderr


def test_version_and_info(be):
    out = ok(run(be, "--version"))
    assert out.startswith("supertok %s " % supertok.__version__) and ("backend %s" % be) in out
    info = ok(run(be, "info"))
    rows = dict(line.split(":", 1) for line in info.splitlines())
    rows = {k: v.strip() for k, v in rows.items()}
    assert rows["backend"] == be
    assert rows["core"] and rows["unicode"] and be in rows["available"]
    for k in ("package", "wasm", "vocab"):
        assert os.path.exists(rows[k]), (k, rows[k])


def test_every_option_has_help_and_default():
    ap = cli.build_parser()
    subs = [a for a in ap._actions if isinstance(a, __import__("argparse")._SubParsersAction)][0]
    for name, p in subs.choices.items():
        for a in p._actions:
            assert a.help and a.help.strip(), (name, a.option_strings or a.dest)
        text = p.format_help()
        if "--encoding" in text:
            assert "o200k_base" in text
        if "--pattern" in text:
            assert "(default: o200k)" in text
    r = run(BACKENDS[0], "pretokenize", "--help")
    assert r.returncode == 0 and b"--script-aware" in r.stdout and b"default: o200k" in r.stdout


# ---- item 5: the core's errors name the file, the line, the token ---------------------------

def test_rank_file_and_special_token_errors_name_what_and_where(backend, tmp_path):
    from supertok.encoding import Encoding
    pat = supertok.get_encoding("r50k_base")._pat_str
    ranks = tmp_path / "tiny.tiktoken"
    ranks.write_bytes(b"IQ== 0\nIg== 1\nIQ== 2\n")  # "!" twice
    with pytest.raises(supertok.SupertokError) as ei:
        Encoding("t", pat_str=pat, ranks_file=str(ranks), special_tokens={})
    msg = str(ei.value)
    assert "rank file %s, line 3:" % ranks in msg and "model file" not in msg and "byte" not in msg, msg
    assert ei.value.line == 3
    ranks.write_bytes(b"IQ== 0\nIg== 1\n")
    # (two strings for one id are tiktoken's aliases, as in o200k_harmony: accepted, not an error)
    for specials, needles in [({"<|x|>": 1}, ["'<|x|>'", "id 1", "ordinary token"]),
                              ({"<|a|>": 5, "": 9}, ["special token ''", "empty"])]:
        with pytest.raises(supertok.SupertokError) as ei:
            Encoding("t", pat_str=pat, ranks_file=str(ranks), special_tokens=specials)
        msg = str(ei.value)
        assert all(n in msg for n in needles) and "model file" not in msg and "byte 0" not in msg, msg
    with pytest.raises(supertok.SupertokError) as ei:
        Encoding("t", pat_str=pat, merges=[(1, 2)], special_tokens={"<|a|>": 256})
    assert "'<|a|>'" in str(ei.value) and "model file" not in str(ei.value), ei.value


def test_unknown_script_name_keeps_its_characters(backend):
    for name in ("Xé", "Хан", "X\U0001F600"):
        with pytest.raises(ValueError) as ei:
            supertok.pretokenize("x", script_aware=True, scripts=["Han", name])
        assert repr(name) in str(ei.value), ei.value
    # the core's own message (C hosts see it): the name's characters, escaped only when not text
    b = supertok._get()
    with pytest.raises(supertok.SupertokError) as ei:
        b.pretokenizer(3, 1, "Han,Xé".encode())
    assert 'unknown script "Xé"' in str(ei.value) and ei.value.offset == 4, ei.value
    with pytest.raises(supertok.SupertokError) as ei:
        b.pretokenizer(3, 1, b"Han,X\xff")
    assert 'unknown script "X\\xff"' in str(ei.value), ei.value
