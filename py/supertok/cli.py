"""The command line: python -m supertok <command> ... (see `python -m supertok --help`).

Every failure is one line on standard error, `supertok: <what>: <why>`, and a non-zero exit:
2 for bad input or options, 1 for the environment (a backend that cannot load, an output
error), 141 (as for SIGPIPE) when the reader of the output went away (`| head`), 130 on Ctrl-C.
`export` exits 3 when it wrote the file but the export's ids differ from the model's on some
sample texts (listed on standard error), or the check could not run.

Long inputs are handled in chunks of about --chunk-size characters, cut only where the core proves
the cut cannot change the result (st_encoding_cut, for the encoding's pattern, mode, special tokens
and supermerges); the chunks' results are the whole text's results, and a text with no such place
goes whole. Each chunk's ids are one line of the JSON list `encode` prints, and a progress bar is
drawn on standard error when it is a terminal and the input takes more than one chunk.
"""
import argparse
import json
import os
import sys
import time

import supertok
from supertok import _catalogue
from supertok.backends import BackendUnavailable

EXIT_INPUT = 2      # bad input, bad options
EXIT_ENV = 1        # backend, output, internal errors
EXIT_PIPE = 141     # 128 + SIGPIPE: the reader closed the pipe
EXIT_INTERRUPT = 130

DEFAULT_CHUNK = 1 << 20          # characters per chunk
PYWASM_CHUNK = 4 << 10           # pywasm interprets the module: smaller chunks, a livelier bar
STDIN_NAMES = (None, "-")


class CliError(Exception):
    """A failure reported as `supertok: <what>: <why>` with an exit status."""

    def __init__(self, what, why, status=EXIT_INPUT):
        super().__init__("%s: %s" % (what, why) if what else why)
        self.status = status


# ---- argument parsing ----------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's one-line errors (argparse prints usage and exits 2)."""

    def error(self, message):
        raise CliError(self.prog.replace("supertok", "", 1).strip() or "usage",
                       "%s (see: python -m supertok%s --help)"
                       % (message, self.prog[len("supertok"):] if self.prog.startswith("supertok") else ""))


class _Version(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        try:
            extra = " (core %s, Unicode %s, backend %s)" % (supertok.version(), supertok.unicode_version(),
                                                             supertok.backend())
        except BackendUnavailable as exc:
            extra = " (no backend: %s)" % exc
        _write_text("supertok %s%s\n" % (supertok.__version__, extra))
        raise SystemExit(0)


class FMT(argparse.HelpFormatter):
    """Help with each option's default, unless the help says it already or there is none."""

    def _get_help_string(self, action):
        h = action.help or ""
        d = action.default
        if d in (None, False, argparse.SUPPRESS) or "default" in h or not action.option_strings:
            return h
        return h + " (default: %(default)s)"


def _add_input(p, what="UTF-8 text file"):
    p.add_argument("file", nargs="?", default="-", help="%s; - or nothing (the default): standard input" % what)


def _add_encoding(p):
    g = p.add_mutually_exclusive_group()
    g.add_argument("--encoding", default=None, choices=supertok.list_encoding_names(), metavar="NAME",
                   help="a tiktoken encoding, one of %s (default: o200k_base)" % ", ".join(supertok.list_encoding_names()))
    g.add_argument("--model", default=None, metavar="FILE",
                   help="a model file instead of --encoding: supertok's model formats or a HuggingFace tokenizer.json (supertok.load_model)")


def _add_lines(p, what):
    p.add_argument("--lines", action="store_true",
                   help="one line of output per input line (%s), written as each line is read; "
                        "a line is taken without its newline" % what)


def _add_chunking(p):
    p.add_argument("--chunk-size", type=_positive_int, default=None, metavar="CHARS",
                   help="work on about this many characters at a time (the result does not depend on it); "
                        "default: %d, %d on pywasm" % (DEFAULT_CHUNK, PYWASM_CHUNK))
    p.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                   help="progress bar on standard error: auto = when it is a terminal and the input is "
                        "longer than one chunk")


def _add_specials(p):
    p.add_argument("--allowed-special", default="none", metavar="TOKENS",
                   help="special tokens that the text may hold and that become their ids: 'all', 'none', or a "
                        "comma-separated list such as '<|endoftext|>,<|endofprompt|>'")
    p.add_argument("--disallowed-special", default="all", metavar="TOKENS",
                   help="special tokens that are an error when the text holds them (as in tiktoken): 'all' "
                        "(every one not allowed), 'none' (the others are encoded as plain text), or a list")


def _positive_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % s) from None
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1, not %d" % v)
    return v


def _vocab_sizes(s):
    """N, or N,M,... for a sweep (a list)."""
    parts = [p.strip() for p in s.split(",")]
    sizes = [_positive_int(p) for p in parts]
    return sizes if len(sizes) > 1 else sizes[0]


def _natural_int(s):
    try:
        v = int(s)
    except ValueError:
        raise argparse.ArgumentTypeError("%r is not a whole number" % s) from None
    if v < 0:
        raise argparse.ArgumentTypeError("must be at least 0, not %d" % v)
    return v


def build_parser():
    ap = _Parser(prog="supertok", formatter_class=FMT,
                 description="supertok: tiktoken-compatible tokenization on a portable C core.",
                 epilog="Errors are one line on standard error; exit status 2 for bad input or options, "
                        "1 for a backend or output failure, 141 when the output pipe is closed. "
                        "SUPERTOK_BACKEND=native|wasmtime|pywasm|wasm forces a backend.")
    ap.add_argument("--version", action=_Version, help="print the version and exit")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    e = sub.add_parser("encode", formatter_class=FMT, help="text to token ids (a JSON list)",
                       description="Encode UTF-8 text to token ids, printed as a JSON list (one line per chunk of "
                                   "text), or with --lines one JSON list per input line.")
    _add_input(e)
    _add_encoding(e)
    _add_specials(e)
    _add_lines(e, "a JSON list of ids")
    _add_chunking(e)

    c = sub.add_parser("count", formatter_class=FMT, help="the number of tokens of a text",
                       description="Print the number of tokens `encode` would give (with --lines: one count a line).")
    _add_input(c)
    _add_encoding(c)
    _add_specials(c)
    _add_lines(c, "its number of tokens")
    _add_chunking(c)

    d = sub.add_parser("decode", formatter_class=FMT, help="a JSON list of token ids to text",
                       description="Decode a JSON list of token ids (as `encode` prints it) to text; empty input "
                                   "is an empty text. With --lines: one JSON list a line, one text line each.")
    _add_input(d, "file holding a JSON list of ids")
    _add_encoding(d)
    _add_lines(d, "its text, then a newline")

    p = sub.add_parser("pretokenize", formatter_class=FMT, help="split text into pre-tokenizer pieces",
                       description="Print the pre-tokenizer pieces of UTF-8 text, one JSON string a line.")
    _add_input(p)
    p.add_argument("--pattern", default=None, choices=sorted(supertok.PATTERNS), metavar="NAME",
                   help="the pre-tokenizer pattern: %s (default: o200k)" % ", ".join(sorted(supertok.PATTERNS)))
    p.add_argument("--script-aware", action="store_true",
                   help="split the text into single-script chunks first (docs/design.md §5)")
    p.add_argument("--scripts", default=None, metavar="NAMES",
                   help="with --script-aware: comma-separated scripts split one letter per piece (default: %s)"
                        % ",".join(supertok.DEFAULT_SCRIPTS))
    g = p.add_mutually_exclusive_group()
    g.add_argument("--encoding", default=None, choices=supertok.list_encoding_names(), metavar="NAME",
                   help="split as this tiktoken encoding does (its pattern) instead of --pattern")
    g.add_argument("--model", default=None, metavar="FILE",
                   help="split as this model file does (its pattern, script-awareness and scripts) instead of "
                        "--pattern")
    _add_lines(p, "a JSON list of its pieces")
    _add_chunking(p)

    t = sub.add_parser("train", formatter_class=FMT, help="train a BPE tokenizer on text files, write its model",
                       description="Train a byte-level (or UBE) BPE tokenizer on text files (supertok.train) and "
                                   "write its model file, which --model and supertok.load_model load. A file is one "
                                   "document per line (its newline kept, as HuggingFace's trainer reads files); "
                                   ".jsonl files give the --text-column field of each line; .gz, .xz and .bz2 files "
                                   "are streamed; .parquet and Arrow (.arrow, .feather, .ipc) files give the "
                                   "--text-column column of each row (needs pyarrow). A folder stands for its "
                                   "files of those kinds (recursively, sorted); a quoted glob pattern for its "
                                   "matches. On a terminal a progress line is drawn on standard error; otherwise "
                                   "one line per phase is written there. Ctrl-C stops cleanly and leaves no file.")
    t.add_argument("files", nargs="+", metavar="FILE",
                   help="text (.txt) or JSON-lines (.jsonl) files, maybe compressed, .parquet or Arrow files, "
                        "folders of them, or glob patterns")
    t.add_argument("--text-column", default="text", metavar="NAME",
                   help="the column of .parquet and Arrow files, and the field of .jsonl lines, holding the text "
                        "(default: text)")
    t.add_argument("-o", "--output", required=True, metavar="MODEL",
                   help="the model file to write (replaced only when training succeeds)")
    t.add_argument("--vocab-size", required=True, type=_vocab_sizes, metavar="N[,N...]",
                   help="every id that can occur: the alphabet (243 bytes in paper mode, 256 in hf mode, the "
                        "reachable UBE symbols), the merges and the special tokens; several sizes (a sweep: "
                        "counted once, one model each, BPE) write to -o with {vocab_size} in its name")
    t.add_argument("--mode", default="paper", choices=["paper", "hf"],
                   help="paper: the Faster Superword paper's reference BPE; hf: merge for merge HuggingFace "
                        "tokenizers' BpeTrainer (bytes alphabet only) (default: paper)")
    t.add_argument("--alphabet", default=None, choices=["bytes", "ube"],
                   help="base symbols: UTF-8 bytes, or UBE (Universal Byte-Level Encoding) symbols (default: bytes; "
                        "with --extend the model's)")
    t.add_argument("--pattern", default=None, choices=sorted(supertok.PATTERNS), metavar="NAME",
                   help="the pre-tokenizer pattern: %s; with --extend superbpe, SuperBPE's Stage 2, unless "
                        "given (default: o200k)" % ", ".join(sorted(supertok.PATTERNS)))
    t.add_argument("--script-aware", action="store_true",
                   help="split the text into single-script chunks first (docs/design.md §5)")
    t.add_argument("--scripts", default=None, metavar="NAMES",
                   help="with --script-aware: comma-separated scripts split one letter per piece (default: %s)"
                        % ",".join(supertok.DEFAULT_SCRIPTS))
    t.add_argument("--special-token", action="append", default=[], metavar="TEXT", dest="special_tokens",
                   help="a special token, taking the ids after the merges (repeat the option for more)")
    t.add_argument("--min-frequency", type=_natural_int, default=None, metavar="N",
                   help="stop when the best pair occurs fewer times than this (default: 0; with --extend 2)")
    t.add_argument("--extend", default=None, metavar="MODEL",
                   help="extend this BPE model (SuperBPE's Stage 2, the UBE paper's S-UBE/S-BBPE): count the text "
                        "with the superbpe pre-tokenizer, replay the model's merges, then merge on to --vocab-size, "
                        "no token of more than four words or holding ': ' (docs/training.md)")
    t.add_argument("--seed-merges", type=_natural_int, default=None, metavar="N",
                   help="with --extend: replay only the model's first N merges (default: all)")
    t.add_argument("--algorithm", default="bpe", choices=["bpe", "boundless", "superbpe"],
                   help="bpe: regular merges only; boundless: BoundlessBPE, supermerges (tokens across "
                        "pretokens, such as ' of the') interleaved with the regular merges wherever a candidate "
                        "pair is more frequent than the next regular merge; superbpe: SuperBPE, the first "
                        "vocab-size - supermerges regular merges, then --supermerges supermerges. Superwords "
                        "read the files twice and need --mode paper (default: bpe)")
    t.add_argument("--supermerges", type=_natural_int, default=None, metavar="S",
                   help="with --algorithm superbpe (required there): the number of supermerges")
    t.add_argument("--ngram-split", action="store_true",
                   help="with --algorithm boundless or superbpe: split the supermerge candidates into frequent "
                        "n-grams first (the paper's Appendix B)")
    t.add_argument("--threads", type=_positive_int, default=None, metavar="N",
                   help="counting threads (native backend; default: every core; at most 1024); the model does not depend on it")
    t.add_argument("--name", default=None, metavar="NAME",
                   help="the model's name (default: the output file's name without its extension)")
    t.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                   help="auto: a live line on a terminal, one line per phase otherwise; on: the live line; "
                        "off: nothing but errors (why training stopped short of --vocab-size is still in the model's "
                        "comment)")
    t.add_argument("--dask", default=None, metavar="ADDRESS",
                   help="count the pretokens on a Dask cluster (supertok.dask; needs supertok[dask]), then train "
                        "here (superwords: their candidates pass runs on the cluster too): a scheduler's address "
                        "(tcp://host:8786), or local (a LocalCluster of a process per core) or local:N (N "
                        "processes). --threads does not apply to the counting then")
    t.add_argument("--token-counts", action="store_true",
                   help="also write OUT.token-counts.json beside each model: how often each token occurs when the "
                        "training counts are encoded with it (what evaluate's vocabulary diagnostics read; BPE)")
    t.add_argument("--min-count", type=_positive_int, default=None, metavar="K",
                   help="drop the pretokens seen fewer than K times before training (the UBE paper's per-shard "
                        "filter: the files are one shard; with --dask each shard is filtered, so the counts depend "
                        "on the sharding) (default: 1, keep all; with --extend 5)")

    x = sub.add_parser("export", formatter_class=FMT, help="write a model as a tiktoken rank file or a tokenizer.json",
                       description="Write a byte-level model of merge rules (not UBE, no supermerges, not script-aware) "
                                   "as a tiktoken rank file (--format tiktoken: base64 of each token's bytes and its "
                                   "id, as tiktoken.load.load_tiktoken_bpe reads it) or a HuggingFace tokenizers "
                                   "tokenizer.json (--format hf), then check it: the sample texts are encoded with "
                                   "the model and with the export loaded in tiktoken or tokenizers, and every text "
                                   "where the ids differ is listed on standard error (tiktoken merges by rank, the "
                                   "model by rule: they can differ). Exit status 0 when all agree, 3 when the file "
                                   "was written but some texts differ or the check could not run.")
    x.add_argument("model", metavar="MODEL", help="the model file (supertok.load_model's formats)")
    x.add_argument("--format", required=True, choices=["tiktoken", "hf"],
                   help="tiktoken: a rank file; hf: a HuggingFace tokenizer.json")
    x.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write")
    x.add_argument("--sample", action="append", default=[], metavar="FILE",
                   help="texts to check the export on, one per line (its newline kept), e.g. the training "
                        "text; repeat for more files (default: a built-in sample in many scripts)")
    x.add_argument("--no-check", action="store_true", help="write the file without checking it")

    k = sub.add_parser("compact", formatter_class=FMT, help="write a tokenizer.json model's compact image (.stvc)",
                       description="Write the compact image of a HuggingFace tokenizer.json model: the same model "
                                   "(its ids are the file's) in a few times fewer bytes, loaded without the JSON by "
                                   "supertok.load_model, JavaScript's loadModel and the C core's "
                                   "st_encoding_new_tokenizer_json (docs/formats/tokenizer-json.md).")
    k.add_argument("model", metavar="TOKENIZER_JSON", help="the tokenizer.json file")
    k.add_argument("-o", "--output", required=True, metavar="OUT", help="the file to write (e.g. llama3.stvc)")

    v = sub.add_parser("evaluate", formatter_class=FMT, help="what tokenizers cost each language: premiums, Gini, tests",
                       description="Encode a corpus of many languages with each tokenizer and report the token "
                                   "premium of every language against a reference, the Gini coefficient, variance "
                                   "and Theil indices of the premiums, and for each pair of tokenizers ΔGini with a "
                                   "paired bootstrap interval and a Wilcoxon signed-rank test (Holm and "
                                   "Benjamini-Hochberg adjusted), with vocabulary use and a round-trip audit (the UBE "
                                   "paper's measurements; docs/evaluation.md). Prints a summary table; -o writes "
                                   "report.json, report.md, report.html and the plots (with matplotlib).")
    v.add_argument("corpus", nargs="?", metavar="CORPUS",
                   help="aligned JSON lines ({\"lang\",\"id\",\"text\"}), UDHR JSON lines ({\"code\",\"text\"}), "
                        "or a FLORES-style folder ({lang}.{split} files); compressed .gz/.xz/.bz2 too (default: the "
                        "shipped sample, the UDHR's 30 articles in 52 languages)")
    v.add_argument("--tokenizer", "-t", action="append", dest="tokenizers", metavar="SPEC[:LABEL]",
                   help="an encoding name, a model file, a tiktoken rank file (.tiktoken) or a tokenizer.json; "
                        "repeat for several (default: cl100k_base and o200k_base)")
    v.add_argument("--reference", default="eng", metavar="LANG", help="the language premiums are relative to")
    v.add_argument("--bootstrap", type=_natural_int, default=10000, metavar="N",
                   help="resamples for the ΔGini intervals (0: none)")
    v.add_argument("--seed", type=_natural_int, default=0, metavar="S", help="the bootstrap's seed")
    v.add_argument("--compare", action="append", metavar="A:B",
                   help="compare tokenizer A with B (labels); repeat for more (default: every pair)")
    v.add_argument("--split", metavar="SPLIT", help="the split of a FLORES folder that holds several")
    v.add_argument("--pattern", metavar="NAME", default="o200k", help="tiktoken rank files' pre-tokenizer")
    v.add_argument("--threads", type=_positive_int, metavar="N", help="encoding threads (default: every core)")
    v.add_argument("-o", "--output", metavar="DIR", help="the folder to write the report into (made if missing)")
    v.add_argument("--json", action="store_true", help="print report.json on standard output instead of the table")
    v.add_argument("--progress", choices=["auto", "on", "off"], default="auto",
                   help="progress per tokenizer and language on standard error (auto: on a terminal)")

    sub.add_parser("info", formatter_class=FMT, help="backend, versions and where the files are",
                   description="Print the backend in use, the versions, the backends that load here and where "
                               "the package, the wasm module and the vocabularies are.")
    return ap


# ---- output --------------------------------------------------------------------------------

class _Out:
    """Standard output as bytes, written in blocks: one large write to a pipe whose reader has gone
    can end short without an error, which would hide the closed pipe."""
    BLOCK = 1 << 16

    def __init__(self):
        self.f = sys.stdout.buffer

    def write(self, data):
        if len(data) <= self.BLOCK:
            self.f.write(data)
            return
        mv = memoryview(data)
        for i in range(0, len(mv), self.BLOCK):
            self.f.write(mv[i:i + self.BLOCK])

    def flush(self):
        self.f.flush()


def _out():
    return _Out()


def _write_text(s):
    _out().write(s.encode("utf-8"))


class _Progress:
    """A one-line progress bar on standard error (drawn at most ~10 times a second)."""

    def __init__(self, mode, total, chunk, label):
        self.total = total
        self.label = label
        self.on = mode == "on" or (mode == "auto" and total > chunk and _isatty(sys.stderr))
        self.start = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def update(self, done):
        if not self.on:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and done < self.total:
            return
        self.last = now
        frac = done / self.total if self.total else 1.0
        width = 30
        fill = int(frac * width)
        rate = done / max(now - self.start, 1e-9)
        sys.stderr.write("\rsupertok %s [%s%s] %3d%% %s/%s chars %s/s " % (
            self.label, "#" * fill, "." * (width - fill), int(frac * 100), _human(done), _human(self.total),
            _human(rate)))
        sys.stderr.flush()
        self.drawn = True

    def close(self):
        if self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _isatty(f):
    try:
        return f.isatty()
    except (AttributeError, ValueError):
        return False


def _human(n):
    for unit in ("", "k", "M", "G"):
        if n < 1000 or unit == "G":
            return ("%d%s" % (n, unit)) if unit == "" else ("%.1f%s" % (n, unit))
        n /= 1000.0
    return str(n)


# ---- input ---------------------------------------------------------------------------------

def _name(path):
    return "standard input" if path in STDIN_NAMES else path


def _open_input(path):
    if path in STDIN_NAMES:
        return sys.stdin.buffer
    if os.path.isdir(path):
        raise CliError(path, "is a directory, not a file")
    try:
        return open(path, "rb")
    except OSError as exc:
        raise CliError(path, "cannot read: %s" % (exc.strerror or exc)) from None


def _read_all(path):
    f = _open_input(path)
    try:
        return f.read()
    except OSError as exc:
        raise CliError(_name(path), "cannot read: %s" % (exc.strerror or exc)) from None
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _utf8(raw, path, line=None):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        if line is None:
            ln = raw.count(b"\n", 0, exc.start) + 1
            col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
            where = "line %d, column %d" % (ln, col)
        else:
            where = "line %d, byte %d of the line" % (line, exc.start + 1)
        raise CliError(_name(path), "not valid UTF-8 at byte %d (%s)" % (exc.start, where)) from None


def _lines(path):
    """(line number, line bytes without its newline) as the input arrives: read in blocks of what
    is available, so a pipe is answered line by line."""
    f = _open_input(path)
    read = getattr(f, "read1", f.read)
    rest = []  # the blocks of a line not ended yet: joined once, when its newline comes (linear time)
    n = 0
    try:
        while True:
            try:
                block = read(1 << 16)
            except OSError as exc:
                raise CliError(_name(path), "cannot read: %s" % (exc.strerror or exc)) from None
            if not block:
                break
            if b"\n" not in block:
                rest.append(block)
                continue
            if rest:
                rest.append(block)
                block = b"".join(rest)
            parts = block.split(b"\n")
            last = parts.pop()
            rest = [last] if last else []
            batch = []
            for ln in parts:
                n += 1
                batch.append((n, ln))
            yield batch
        if rest:
            yield [(n + 1, b"".join(rest))]
    finally:
        if f is not sys.stdin.buffer:
            f.close()


# ---- chunking ------------------------------------------------------------------------------

def _parts(cut, data, size):
    """The valid UTF-8 text data in parts of about size characters, as (byte offset, text) pairs,
    cut only where cut(data, from) (the core's st_encoding_cut) proves the parts' results, joined,
    are the whole text's; the rest whole where it proves no place."""
    a, n = 0, len(data)
    while True:
        # the byte offset size characters on (a character is at most 4 bytes)
        end = a + len(data[a:a + 4 * size].decode("utf-8", "ignore")[:size].encode("utf-8"))
        at = cut(data, end) if end < n else n
        if at >= n:
            break
        yield a, data[a:at].decode("utf-8")
        a = at
    yield a, data[a:].decode("utf-8")


def _chunk_size(args):
    if args.chunk_size:
        return args.chunk_size
    return PYWASM_CHUNK if supertok.backend() == "pywasm" else DEFAULT_CHUNK


# ---- encodings ------------------------------------------------------------------------------

def _encoding(args):
    if args.model:
        if os.path.isdir(args.model):
            raise CliError(args.model, "is a directory, not a model file")
        try:
            return supertok.load_model(args.model)
        except OSError as exc:
            raise CliError(args.model, "cannot read: %s" % (exc.strerror or exc)) from None
        except (ValueError, KeyError, TypeError, OverflowError, RecursionError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if not msg.startswith(args.model):
                msg = "%s: %s" % (args.model, msg)
            raise CliError("", msg) from None
    return supertok.get_encoding(args.encoding or "o200k_base")


def _special_set(enc, value, option):
    value = value.strip()
    if value in ("all", "none", ""):
        return "all" if value == "all" else frozenset()
    names = [t for t in value.split(",") if t]
    for t in names:
        if t not in enc.special_tokens_set:
            raise CliError(option, "%r is not a special token of %s (its special tokens: %s)"
                           % (t, enc.name, ", ".join(sorted(enc.special_tokens_set)) or "none"))
    return frozenset(names)


def _policy(enc, args):
    allowed = _special_set(enc, args.allowed_special, "--allowed-special")
    disallowed = _special_set(enc, args.disallowed_special, "--disallowed-special")
    if args.disallowed_special.strip() == "none":
        disallowed = ()
    return allowed, disallowed


def _encode_error(exc, path, text, line=None, lines_before=0):
    """A CliError for an encode failure of text, naming the token and the line (lines_before: the
    newlines of the input before text)."""
    special = getattr(exc, "special", None)  # a disallowed special token: the string and where
    if special is not None:
        tok = repr(special)
        if line is None and exc.offset is not None:
            line = lines_before + text.count("\n", 0, exc.offset) + 1
        where = "%s: line %d" % (_name(path), line) if line else _name(path)
        return CliError(where, "disallowed special token %s in the text (allow it with --allowed-special %s "
                               "or encode it as plain text with --disallowed-special none)" % (tok, tok))
    msg = str(exc)
    where = "%s: line %d" % (_name(path), line) if line else _name(path)
    return CliError(where, msg.splitlines()[0] if msg else type(exc).__name__)


# ---- commands -------------------------------------------------------------------------------

def cmd_encode(args, count=False):
    enc = _encoding(args)
    allowed, disallowed = _policy(enc, args)
    out = _out()

    def run(text):
        if count:
            return enc.count(text, allowed_special=allowed, disallowed_special=disallowed)
        return enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)

    if args.lines:
        for batch in _lines(args.file):
            buf = []
            for n, raw in batch:
                text = _utf8(raw, args.file, n)
                try:
                    r = run(text)
                except ValueError as exc:
                    out.write(b"".join(buf))  # the lines before the bad one
                    raise _encode_error(exc, args.file, text, n) from None
                buf.append(b"%d\n" % r if count else json.dumps(r).encode() + b"\n")
            out.write(b"".join(buf))
            out.flush()
        return 0

    raw = _read_all(args.file)
    n_chars = len(_utf8(raw, args.file))
    size = _chunk_size(args)
    bar = _Progress(args.progress, n_chars, size, "count" if count else "encode")
    done, total, first = 0, 0, True
    try:
        for start, part in _parts(enc._cut, raw, size):
            try:
                r = run(part)
            except ValueError as exc:
                raise _encode_error(exc, args.file, part, lines_before=raw.count(b"\n", 0, start)) from None
            if count:
                total += r
            elif r:
                s = json.dumps(r)
                out.write(("[" if first else ",\n ").encode() + s[1:-1].encode())
                first = False
            done += len(part)
            bar.update(done)
    finally:
        bar.close()
    out.write(b"%d\n" % total if count else (b"[]\n" if first else b"]\n"))
    return 0


def _parse_ids(raw, path, line=None):
    where = _name(path) if line is None else "%s: line %d" % (_name(path), line)
    if not raw.strip():
        return []
    try:
        ids = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        detail = str(exc) if not isinstance(exc, json.JSONDecodeError) else "%s (line %d, column %d)" % (
            exc.msg, exc.lineno if line is None else line, exc.colno)
        raise CliError(where, "cannot decode: not a JSON list of token ids: %s" % detail) from None
    if not isinstance(ids, list):
        kind = {dict: "an object", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
        raise CliError(where, "cannot decode: expected a JSON list of token ids, got %s"
                       % kind.get(type(ids), "null"))
    for k, i in enumerate(ids):
        if not isinstance(i, int) or isinstance(i, bool):
            raise CliError(where, "cannot decode: item %d is %s, not a token id (a whole number)"
                           % (k, json.dumps(i)))
        if not 0 <= i < 1 << 32:
            raise CliError(where, "cannot decode: Invalid token for decoding: %d (item %d)" % (i, k))
    return ids


def _decode(enc, ids, path, line=None):
    try:
        return enc.decode(ids)
    except KeyError as exc:
        where = _name(path) if line is None else "%s: line %d" % (_name(path), line)
        k = getattr(exc, "index", None)  # where the id that is no token is
        raise CliError(where, "cannot decode: %s%s" % (exc.args[0] if exc.args else exc,
                                                      "" if k is None else " (item %d)" % k)) from None
    except ValueError as exc:
        where = _name(path) if line is None else "%s: line %d" % (_name(path), line)
        raise CliError(where, "cannot decode: %s" % str(exc).splitlines()[0]) from None


def cmd_decode(args):
    enc = _encoding(args)
    out = _out()
    if args.lines:
        for batch in _lines(args.file):
            out.write(b"".join(_decode(enc, _parse_ids(raw, args.file, n), args.file, n).encode("utf-8") + b"\n"
                               for n, raw in batch))
            out.flush()
        return 0
    ids = _parse_ids(_read_all(args.file), args.file)
    out.write(_decode(enc, ids, args.file).encode("utf-8"))
    return 0


def _scripts(args):
    if args.scripts is None:
        return None
    if not args.script_aware:
        raise CliError("--scripts", "applies only with --script-aware (add --script-aware, or drop --scripts)")
    return [s.strip() for s in args.scripts.split(",") if s.strip()]


def _pieces_json(pieces):
    """One JSON string a line for each piece: one json.dumps call (a JSON string never holds a raw
    newline, so the newline separator cannot occur inside an item)."""
    if not pieces:
        return b""
    s = json.dumps(pieces, ensure_ascii=False, separators=("\n", ":"))
    return s[1:-1].encode("utf-8", "surrogatepass") + b"\n"


def _pretokenizer(args):
    """(pattern, script_aware, scripts) to split with: the options', or the pre-tokenizer of the
    encoding --encoding or --model names (which the pre-tokenizer options would contradict)."""
    if args.encoding is None and args.model is None:
        return args.pattern or "o200k", args.script_aware, _scripts(args)
    given = [o for o, v in (("--pattern", args.pattern is not None), ("--script-aware", args.script_aware),
                            ("--scripts", args.scripts is not None)) if v]
    if given:
        raise CliError(given[0], "does not go with %s, which brings its own pre-tokenizer (drop one of them)"
                       % ("--encoding" if args.encoding else "--model"))
    enc = _encoding(args)
    pattern = _catalogue.PATTERN_BY_ID[enc._state["pattern_id"]]["name"]
    scripts = None if enc._scripts is None else [s.strip() for s in enc._scripts.decode("ascii").split(",") if s.strip()]
    return pattern, enc._script_aware, scripts


def cmd_pretokenize(args):
    pattern, script_aware, scripts = _pretokenizer(args)
    out = _out()

    def run(text):
        try:
            return supertok.pretokenize(text, pattern, script_aware, scripts)
        except ValueError as exc:
            raise CliError("--scripts" if getattr(exc, "argument", None) == "scripts" else _name(args.file),
                           str(exc).splitlines()[0]) from None

    if args.lines:
        for batch in _lines(args.file):
            out.write(b"".join(json.dumps(run(_utf8(raw, args.file, n)), ensure_ascii=False).encode("utf-8") + b"\n"
                               for n, raw in batch))
            out.flush()
        return 0
    raw = _read_all(args.file)
    n_chars = len(_utf8(raw, args.file))
    run("")  # options checked before any output
    size = _chunk_size(args)
    cut = supertok._pretokenize_cut(pattern, script_aware, scripts)
    bar = _Progress(args.progress, n_chars, size, "pretokenize")
    done = 0
    try:
        for _, part in _parts(cut, raw, size):
            out.write(_pieces_json(run(part)))
            done += len(part)
            bar.update(done)
    finally:
        bar.close()
    return 0


class _PhaseLines:
    """The progress of `train` when standard error is no terminal: one line when a phase ends."""

    def __init__(self, stream):
        self.stream = stream

    def __call__(self, r):
        if not r.done:
            return
        from supertok._train import _human
        if r.phase in ("count", "candidates"):
            rate = r.bytes / r.elapsed if r.elapsed > 0 else 0
            line = "%s %d documents, %sB in %.1f s (%sB/s)" % (
                "counted" if r.phase == "count" else "counted candidates in", r.documents, _human(r.bytes),
                r.elapsed, _human(rate))
            if r.phase == "candidates":
                line += ": %d distinct candidates" % r.candidates
        elif r.phase == "split":
            line = "split the candidates into n-grams: %d distinct candidates, in %.1f s" % (r.candidates, r.elapsed)
        elif r.phase == "supermerge":
            line = "learned %d supermerges in %d steps of %d in %.1f s" % (r.supermerges, r.merges, r.target,
                                                                          r.elapsed)
        else:
            line = "learned %d merges of %d in %.1f s" % (r.merges, r.target, r.elapsed)
            if r.kept is not None:
                line += " (SuperBPE keeps the first %d of them: vocab-size - alphabet - specials - supermerges)" % (
                    min(r.merges, r.kept))
        self.stream.write("supertok train: %s\n" % line)
        self.stream.flush()


def _check_output(path, inputs, what):
    """Before any input is read: -o names something that can be written (supertok._output.check:
    a file, new or not, a character device or a named pipe, in a writable place) and none of the
    inputs."""
    from supertok._output import SameFileError, check
    try:
        check(path, inputs)
    except SameFileError as exc:
        raise CliError("", str(exc)) from None
    except IsADirectoryError:
        raise CliError(path, "is a directory: -o names %s to write" % what) from None
    except OSError as exc:
        raise CliError(path, "cannot write: %s" % (exc.strerror or exc)) from None


def _write_output(path, data, inputs):
    from supertok._output import SameFileError, write
    try:
        write(path, data, inputs)
    except SameFileError as exc:  # the output became an input since the check
        raise CliError("", str(exc)) from None
    except OSError as exc:
        raise CliError(path, "cannot write: %s" % (exc.strerror or exc), EXIT_ENV) from None


def _model_name(args):
    if args.name is not None:
        return args.name
    base = os.path.basename(args.output)
    stem = os.path.splitext(base)[0] if "." in base[1:] else base
    name = "".join(ch if "!" <= ch <= "~" else "_" for ch in stem)[:128]
    return name or "model"


def _train_dask(args, files, options, kw, train_as, train_on=None, min_count=1):
    """cmd_train with --dask: the counting on the cluster (supertok.dask), the training here."""
    try:
        import distributed
        import supertok.dask as sd
    except ImportError as exc:
        raise CliError("--dask", "needs Dask's distributed scheduler: pip install 'supertok[dask]' (%s)" % exc) from None
    where = args.dask
    n = None
    if where == "local" or where.startswith("local:"):
        if where != "local":
            try:
                n = int(where[6:])
            except ValueError:
                n = 0
            if n < 1:
                raise CliError("--dask", "local:N takes a number of processes of at least 1, not %r" % where[6:])
    elif "://" not in where:
        raise CliError("--dask", "is a scheduler's address (tcp://host:port), local or local:N, not %r" % where)
    cluster = client = None
    try:
        try:
            if n is not None or where == "local":
                cluster = sd._local_cluster(n)
                client = distributed.Client(cluster)
            else:
                client = distributed.Client(where, timeout=30)
        except OSError as exc:
            raise CliError("--dask", "cannot reach the scheduler at %s: %s" % (where, exc), EXIT_ENV) from None
        count_progress = True if args.progress == "on" or (args.progress == "auto" and _isatty(sys.stderr)) else None
        return sd._train(files, client=client, min_count=min_count, shard_bytes=None,
                         count_progress=count_progress,
                         train_fn=train_on or (lambda counts, **k: train_as(options, counts, **k)), **kw)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


def cmd_train(args):
    import warnings
    from supertok._train import LiveProgress, SourceError, TrainWarning, _expand, _train_as
    files = []
    for f in args.files:  # folders and glob patterns stand for their files
        try:
            files += _expand(f, f)
        except (SourceError, OSError) as exc:
            raise CliError("", str(exc)) from None
    for f in files:
        if os.path.isdir(f):
            raise CliError(f, "is a directory, not a file")
        if not os.path.exists(f):
            raise CliError(f, "cannot read: No such file or directory")
        if not os.access(f, os.R_OK):
            raise CliError(f, "cannot read: Permission denied")
    sweep = isinstance(args.vocab_size, list)
    if sweep and "{vocab_size}" not in args.output:
        raise CliError("-o", "several --vocab-size values write several models: put {vocab_size} in the output's "
                             "name (e.g. -o 'model-{vocab_size}.stmodel')")
    outputs = [args.output.replace("{vocab_size}", str(v)) for v in args.vocab_size] if sweep else [args.output]
    for out in outputs:
        _check_output(out, files, "the model file")
        if args.token_counts:
            _check_output(out + ".token-counts.json", files, "the token-count file")
    if args.scripts is not None and not args.script_aware:
        raise CliError("--scripts", "applies only with --script-aware (add --script-aware, or drop --scripts)")
    scripts = None if args.scripts is None else [s.strip() for s in args.scripts.split(",") if s.strip()]
    live = args.progress == "on" or (args.progress == "auto" and _isatty(sys.stderr))
    progress = LiveProgress(sys.stderr) if live else _PhaseLines(sys.stderr) if args.progress == "auto" else False
    options = {"vocab_size": "--vocab-size", "mode": "--mode", "alphabet": "--alphabet", "special_tokens":
               "--special-token", "scripts": "--scripts", "min_frequency": "--min-frequency",
               "threads": "--threads", "name": "--name", "algorithm": "--algorithm", "supermerges": "--supermerges",
               "ngram_split": "--ngram-split", "text_column": "--text-column", "min_count": "--min-count",
               "extend": "--extend", "seed_merges": "--seed-merges", "pattern": "--pattern"}
    if args.seed_merges is not None and args.extend is None:
        raise CliError("--seed-merges", "applies only with --extend (the model whose merges seed training)")
    base = None
    if args.extend is not None:
        base = _encoding(argparse.Namespace(model=args.extend, encoding=None))
    pattern = args.pattern or ("superbpe" if base is not None else "o200k")
    min_count = args.min_count or (5 if base is not None else 1)
    if args.token_counts and args.algorithm != "bpe":
        raise CliError("--token-counts", "applies to BPE models (--algorithm bpe): a superword model's supermerges "
                                         "join pretokens, so its token counts come from encoding the text")
    kw = dict(vocab_size=args.vocab_size, mode=args.mode, alphabet=args.alphabet, pattern=pattern,
              script_aware=args.script_aware, scripts=scripts, special_tokens=args.special_tokens,
              min_frequency=args.min_frequency, algorithm=args.algorithm, supermerges=args.supermerges,
              ngram_split=args.ngram_split, threads=args.threads, progress=progress, name=_model_name(args))
    if base is not None:
        kw.update(extend=base, seed_merges=args.seed_merges)
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TrainWarning)
            held = {}

            def train_on(counts, **k):  # --token-counts: the models are trained from counts kept here
                held["counts"] = counts
                return _train_as(options, counts, **k)
            if args.dask is None and not args.token_counts:
                enc = _train_as(options, files, text_column=args.text_column, min_count=min_count, **kw)
            elif args.dask is None:
                from supertok import count_pretokens
                counts = count_pretokens(files, pattern=kw.pop("pattern"), script_aware=kw.pop("script_aware"),
                                         scripts=kw.pop("scripts"), threads=kw["threads"], progress=kw["progress"],
                                         text_column=args.text_column, min_count=min_count)
                enc = train_on(counts, counted_min_count=min_count, **kw)
            else:
                enc = _train_dask(args, files, options, kw, _train_as, train_on if args.token_counts else None,
                                  min_count=min_count)
        for w in caught:  # a training that stopped short says why (the others are passed on)
            if issubclass(w.category, TrainWarning):
                if args.progress != "off":  # off: nothing but errors (the model's comment says it)
                    sys.stderr.write("supertok train: warning: %s\n" % w.message)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        sys.stderr.flush()
    except SourceError as exc:
        raise CliError("", str(exc)) from None
    except ImportError as exc:  # pyarrow, for .parquet and Arrow files
        raise CliError("", str(exc), EXIT_ENV) from None
    except OSError as exc:
        raise CliError("", str(exc)) from None
    except (ValueError, TypeError) as exc:
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise CliError(options.get(getattr(exc, "argument", None), "train"), msg) from None
    for out, enc in zip(outputs, enc if sweep else [enc]):
        _write_output(out, enc._model_data, files)
        if args.token_counts:
            from supertok._counts import TOKEN_COUNTS_SUFFIX, token_counts_json
            _write_output(out + TOKEN_COUNTS_SUFFIX, token_counts_json(enc, held["counts"].token_counts(enc)), files)
        if args.progress != "off":
            n_sp = len(enc.special_tokens_set)
            n_super = len(enc.supermerges)
            sys.stderr.write("supertok train: wrote %s (%d merges, %s%d special token%s, n_vocab %d)\n"
                             % (out, len(enc.merges), "%d supermerges, " % n_super if args.algorithm != "bpe"
                                else "", n_sp, "" if n_sp == 1 else "s", enc.n_vocab))
            sys.stderr.flush()
    return 0


EXIT_EXPORT_DIFFERS = 3


def cmd_export(args):
    from supertok._export import ExportError, describe, export
    from supertok._output import SameFileError
    inputs = [args.model] + list(args.sample)
    _check_output(args.output, inputs, "the file")  # before anything is read
    enc = _encoding(argparse.Namespace(model=args.model, encoding=None))
    sample = None
    if args.sample:
        sample = []
        for path in args.sample:
            raw = _read_all(path)
            sample += [t + "\n" for t in _utf8(raw, path).split("\n") if t]
    try:
        result = export(enc, args.output, args.format, sample=sample, check=not args.no_check, warn=False,
                        inputs=inputs)
    except SameFileError as exc:  # the output became an input since the check
        raise CliError("", str(exc)) from None
    except ExportError as exc:
        raise CliError(args.model, str(exc)) from None
    except OSError as exc:
        raise CliError(args.output, "cannot write: %s" % (exc.strerror or exc), EXIT_ENV) from None
    sys.stderr.write("".join("supertok export: %s\n" % line for line in describe(result).split("\n")))
    if args.format == "tiktoken":
        sys.stderr.write("supertok export: load it with tiktoken.Encoding(%r, pat_str=supertok.get_encoding(%r)"
                         "._pat_str, mergeable_ranks=tiktoken.load.load_tiktoken_bpe(%r), special_tokens=%r)\n"
                         % (enc.name, _pattern_encoding(enc), args.output, result.special_tokens))
    sys.stderr.flush()
    return 0 if result.ok or args.no_check else EXIT_EXPORT_DIFFERS


def cmd_compact(args):
    _check_output(args.output, [args.model], "the file")  # before anything is read
    enc = _encoding(argparse.Namespace(model=args.model, encoding=None))
    try:
        data = enc.save_compact()
    except ValueError as exc:
        raise CliError(args.model, str(exc)) from None
    _write_output(args.output, data, [args.model])
    sys.stderr.write("supertok compact: wrote %s (%d bytes)\n" % (args.output, len(data)))
    return 0


def _pattern_encoding(enc):
    """The tiktoken encoding whose pat_str is the model's pattern (the encoding's pattern id)."""
    pid = enc._state["pattern_id"]
    return next((n for n in ("r50k_base", "cl100k_base", "o200k_base") if supertok.PATTERNS[n] == pid), enc.name)


def _numba_info(md):
    """numba's version and whether the numba backend's compile cache is warm."""
    try:
        version = md.version("numba")
    except md.PackageNotFoundError:
        return "not installed (pip install 'supertok[numba]' for the numba backend)"
    try:
        from .core_numba import jit
        warm, total, where = jit.cache_state()
    except Exception as exc:  # noqa: BLE001 -- a numba that does not import here: say why
        return "%s, does not load here (%s: %s)" % (version, type(exc).__name__, exc)
    if warm is None:
        return "%s, %d kernels (this numba's cache layout is unknown: cache state not shown)" % (version, total)
    if warm == 0:
        return "%s, compile cache cold: the first use compiles (about a minute or two), %s" % (version, where)
    return ("%s, compile cache warm: %d of %d kernels cached (the rest are inlined, or compile when first used), %s"
            % (version, warm, total, where))


def cmd_info(args):
    import importlib.metadata as md
    import platform

    from supertok import backends
    pkg = os.path.dirname(os.path.abspath(supertok.__file__))
    rows = []
    try:
        rows += [("backend", supertok.backend()), ("core", supertok.version()), ("unicode", supertok.unicode_version())]
    except BackendUnavailable as exc:
        rows.append(("backend", "none: %s" % exc))
    rows += [("supertok", supertok.__version__), ("python", "%s (%s)" % (platform.python_version(), sys.executable))]
    for dist in ("wasmtime", "pywasm", "cffi"):
        try:
            rows.append((dist, md.version(dist)))
        except md.PackageNotFoundError:
            rows.append((dist, "not installed"))
    rows.append(("numba", _numba_info(md)))
    rows.append(("forced", os.environ.get("SUPERTOK_BACKEND") or "no (SUPERTOK_BACKEND unset)"))
    rows.append(("available", ", ".join(backends.available()) or "none"))
    from .backends import wasm_runtime  # where the wasm runtimes load the module from
    native = [f for f in os.listdir(pkg) if f.startswith("_native") and f.endswith((".so", ".pyd"))]
    rows += [("package", pkg), ("native", os.path.join(pkg, native[0]) if native else "not built"),
             ("wasm", wasm_runtime.WASM_PATH), ("vocab", os.path.join(pkg, "vocab"))]
    _write_text("".join("%-10s %s\n" % (k + ":", v) for k, v in rows))
    return 0


def cmd_evaluate(args):
    from supertok.evaluation import DEFAULT_TOKENIZERS, CorpusError, TokenizerError, evaluate, progress_lines
    if args.output is not None and os.path.exists(args.output) and not os.path.isdir(args.output):
        raise CliError(args.output, "is not a folder: -o names the folder to write the report into")
    pairs = None
    if args.compare:
        pairs = []
        for spec in args.compare:
            a, colon, b = spec.partition(":")
            if not colon or not a or not b:
                raise CliError("--compare", "%r is not A:B (two tokenizer labels)" % spec)
            pairs.append((a, b))
    live = args.progress == "on" or (args.progress == "auto" and _isatty(sys.stderr))
    progress = None if args.progress == "off" else progress_lines(sys.stderr, live)
    try:
        report = evaluate(args.corpus, args.tokenizers or DEFAULT_TOKENIZERS, reference=args.reference,
                          bootstrap=args.bootstrap, seed=args.seed, threads=args.threads, comparisons=pairs,
                          split=args.split, pattern=args.pattern, progress=progress)
    except (CorpusError, TokenizerError) as exc:
        raise CliError("", str(exc)) from None
    except (ValueError, TypeError, KeyError) as exc:
        raise CliError("evaluate", str(exc).strip("'\"")) from None
    written = []
    if args.output is not None:
        try:
            written = report.save(args.output)
        except OSError as exc:
            raise CliError(args.output, "cannot write: %s" % (exc.strerror or exc), EXIT_ENV) from None
    _write_text(report.to_json() if args.json else report.summary() + "\n")
    if written and args.progress != "off":
        from supertok.evaluation import plots
        sys.stderr.write("supertok evaluate: wrote %s (%d files%s)\n" % (
            args.output, len(written), "" if plots.available() else "; " + plots.MISSING))
    return 0


COMMANDS = {"encode": cmd_encode, "evaluate": cmd_evaluate, "count": lambda a: cmd_encode(a, count=True), "decode": cmd_decode,
            "pretokenize": cmd_pretokenize, "train": cmd_train, "export": cmd_export, "compact": cmd_compact,
            "info": cmd_info}


def _fail(msg, status):
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    sys.stderr.write("supertok: %s\n" % msg)
    sys.stderr.flush()
    return status


def main(argv=None):
    try:
        try:
            args = build_parser().parse_args(argv)
            status = COMMANDS[args.command](args)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            raise
        except CliError as exc:
            return _fail(str(exc), exc.status)
        except BackendUnavailable as exc:
            return _fail("backend: %s" % exc, EXIT_ENV)
        except MemoryError:
            return _fail("out of memory", EXIT_ENV)
        except OSError as exc:
            if getattr(exc, "errno", None) == 32:  # EPIPE raised as a plain OSError
                raise BrokenPipeError() from None
            return _fail("output: %s" % (exc.strerror or exc), EXIT_ENV)
    except BrokenPipeError:
        # the reader went away: nothing more to say; stop Python's flush at exit from failing again
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_PIPE
    except KeyboardInterrupt:
        return _fail("interrupted", EXIT_INTERRUPT)
    except SystemExit:
        raise
    except Exception as exc:  # a bug: still one line, the trace with SUPERTOK_TRACEBACK=1
        if os.environ.get("SUPERTOK_TRACEBACK"):
            raise
        return _fail("internal error (a bug; SUPERTOK_TRACEBACK=1 shows where): %s: %s"
                     % (type(exc).__name__, exc), EXIT_ENV)
