"""Compile the numba backend's kernels into numba's cache, as a first use would, and say how
long each module took.

    python -m supertok.core_numba.warm               # compile (or load) and print the total
    python -m supertok.core_numba.warm --per-module  # and each module's compile time

The work below calls every part of the encoding protocol once through the public API, with the
argument types real calls have (a kernel compiles once per type signature), so a later process
finds every kernel it needs in the cache. .ci/run runs it before pytest, its two parts side by
side (--part encode, --part train); without it, each kernel compiles on its first call.
"""
import argparse
import os
import sys
import time


def workload(part="all"):
    """Every kind of call the encoding protocol makes, once (on the current backend): `part`
    "encode" the pre-tokenizers, encodings of every kind, their decoders, the UBE codec and NFC;
    "train" the counters and the trainers; "all" both. (The encode pipeline is most of the
    compile time: a split that has both halves encode compiles it twice.)"""
    if part in ("all", "encode"):
        encode_workload()
    if part in ("all", "train"):
        train_workload()


def encode_workload():
    import supertok
    from supertok import ube

    text = "Hello, world! 123 héllo\u4e16\u754c  \n\t<|endoftext|> \U0001F600"
    for pattern in ("gpt2", "cl100k", "o200k", "superbpe", "llama3", "qwen2", "deepseek_v3"):
        supertok.pretokenize(text, pattern)
        supertok.pretokenize_spans(text, pattern)
        supertok.pretokenize_count(text, pattern, script_aware=True)
    for name in ("o200k_base", "cl100k_base"):
        enc = supertok.get_encoding(name)
        ids = enc.encode(text, allowed_special="all")
        enc.encode_ordinary(text)
        enc.encode_batch([text, text[:5]], allowed_special="all")
        enc.decode(ids)
        enc.decode_bytes(ids)
        enc.decode_with_offsets(ids)
        enc.encode_single_token("hello")
        enc.encode_with_unstable("hello wor")
        enc.token_byte_values()[:1]
        # the span cache (a rank vocabulary's text of ST_SPAN_TEXT bytes or more): spans encoded,
        # the log grown (its entries copied into the new one), then found
        long_text = "Hello, world! 123 h\u00e9llo \u4e16\u754c and a few more words\n" * 400
        enc.encode(long_text)
        enc.encode(long_text)
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    small = supertok.Encoding("warm", pat_str=supertok.get_encoding("r50k_base")._pat_str, mergeable_ranks=ranks,
                              special_tokens={"<|x|>": 257})
    small.decode(small.encode("abab <|x|>", allowed_special="all"))
    symbols = ube.ube_encode_symbols(text)
    ube.ube_decode_symbols(symbols)
    supertok.normalize_nfc(text + "a\u0301\u0316\U0001D160")
    root = os.path.dirname(os.path.abspath(supertok.__file__))
    models = os.path.join(os.path.dirname(root), "..", "vectors", "models")
    for f in ("bytes_small.stmodel", "ube_small.stmodel", "super_bytes_small.stmodel"):
        path = os.path.join(models, f)
        if os.path.exists(path):
            m = supertok.load_model(path)
            ids = m.encode(text, allowed_special="all")
            m.decode(ids)
            if m.alphabet == "bytes":
                m.decode_with_offsets(ids)
            else:
                m.token_symbols(ids[0])
    rules = supertok.Encoding("warm_rules", pat_str=small._pat_str, special_tokens={},
                              merges=[(97, 98)])
    rules.decode(rules.encode("abab"))
    hf = supertok.load_model(tiny_tokenizer_json())  # a tokenizer.json: its reader, NFC and the added tokens' passes
    ids = hf.encode("hello he\u0301llo <|s|> <a> x\u0308", allowed_special="all")
    hf.encode_ordinary("hello <a>")
    hf.encode_batch(["hello", "he\u0301l <a>"], allowed_special="all")
    hf._encode_single_piece("hello")
    hf.decode(ids)
    supertok.load_model(hf.save_compact()).encode("hello <a>")  # the compact image: its writer and reader


def train_workload():
    import supertok

    text = "Hello, world! 123 héllo\u4e16\u754c  \n\t<|endoftext|> \U0001F600"
    # pretoken counters (train/pretoken_counter.py, token_counts.py): counting (lines and
    # documents), save, load, merge, prune, token counts
    docs = [text + "\n", "more text here\n"]
    for script_aware in (False, True):
        counts = supertok.count_pretokens(iter(docs), script_aware=script_aware, threads=1)
        (counts + supertok.Counts.from_bytes(counts.to_bytes())).filtered(2)
    counts.token_counts(supertok.get_encoding("o200k_base"))
    # training (train/trainer.py, candidates.py, candidates_spec.py, ngram.py): both modes, both
    # alphabets, superwords with and without the n-gram split, an extension, specials, the model
    # written; TrainWarnings (a tiny text stops early) are expected here
    import warnings
    words = ["the cat sat on the mat, and the dog sat on the log; " * 3 + "\n", "héllo wörld 123 ünd\n",
             "\u4e16\u754c\u4f60\u597d and the cat\n"] * 20
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode, alphabet in (("paper", "bytes"), ("paper", "ube"), ("hf", "bytes")):
            supertok.train(iter(words), vocab_size=320 if alphabet == "bytes" else 600, mode=mode,
                           alphabet=alphabet, special_tokens=["<|end|>"], threads=1)
        base = supertok.train(iter(words), vocab_size=300, script_aware=True, threads=1)
        supertok.train(iter(words), vocab_size=320, extend=base, threads=1)
        for algorithm, kw in (("boundless", {}), ("superbpe", {"supermerges": 10})):
            for split in (False, True):
                supertok.train(iter(words), vocab_size=330, algorithm=algorithm, ngram_split=split, threads=1, **kw)


def tiny_tokenizer_json():
    """A byte-level BPE tokenizer.json: every byte, two merges, the NFC normalizer, a special added
    token and a normalized one (with lstrip and rstrip)."""
    import json
    from supertok.core_numba.formats.tokenizer_json import byte_level_char

    vocab = {chr(byte_level_char(b)): b for b in range(256)}
    vocab.update({"he": 256, "hel": 257})
    added = [{"id": 258, "content": "<|s|>", "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True},
             {"id": 259, "content": "<a>", "single_word": False, "lstrip": True, "rstrip": True,
              "normalized": True, "special": False}]
    return json.dumps({
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": {"type": "NFC"},
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": [["h", "e"], ["he", "l"]]}}).encode("utf-8")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m supertok.core_numba.warm", description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-module", action="store_true", help="print each module's compile time")
    ap.add_argument("--part", choices=("all", "encode", "train"), default="all",
                    help="the calls to make: all (default), or one of two halves (two processes compile them "
                         "side by side; numba's cache takes concurrent writers)")
    args = ap.parse_args(argv)
    from numba.core import event

    import supertok
    from supertok import backends
    from supertok.core_numba import jit

    supertok._set_backend(backends.load("numba"))
    warm0, total, where = jit.cache_state()
    spent = {}  # module -> seconds compiling its own kernels (nested compiles excluded)
    stack = []

    class Listener(event.Listener):
        def on_start(self, ev):
            stack.append([ev.data["dispatcher"].py_func.__module__, time.perf_counter(), 0.0])

        def on_end(self, ev):
            mod, t0, inner = stack.pop()
            dt = time.perf_counter() - t0
            spent[mod] = spent.get(mod, 0.0) + dt - inner
            if stack:
                stack[-1][2] += dt

    t0, c0 = time.perf_counter(), time.process_time()
    with event.install_listener("numba:compile", Listener()):
        workload(args.part)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    warm1, total, where = jit.cache_state()
    print("numba backend%s: %d of %d kernels were in the cache before, %d after (%s); the work took %.1f s wall, "
          "%.1f s CPU" % ("" if args.part == "all" else " (%s part)" % args.part, warm0 or 0, total, warm1 or 0, where,
                          wall, cpu))
    if args.per_module:
        for mod, dt in sorted(spent.items(), key=lambda kv: -kv[1]):
            print("  %-45s %6.1f s compiling" % (mod, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main())
