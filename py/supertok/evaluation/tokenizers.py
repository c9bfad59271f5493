"""The tokenizers an evaluation measures, behind one small interface.

A tokenizer is named by a spec: a shipped encoding ("o200k_base"), a model file (".stmodel" or
any file supertok.load_model reads), a tiktoken rank file (".tiktoken"; its pattern is o200k's
unless `pattern=` says otherwise), or a HuggingFace `tokenizer.json` (through the `tokenizers`
package when it is installed). "SPEC:LABEL" gives it a label; the label is otherwise the
encoding's name or the file's stem. An Encoding object is taken as it is.
"""
import array
import json
import os
import struct
import sys
import time

from ..encoding import Encoding


class TokenizerError(ValueError):
    """A tokenizer spec that names nothing loadable; the message says which and why."""


class Measured:
    """What the evaluation needs of a tokenizer: ids of many texts, their bytes back, the size
    of its ordinary vocabulary, which tokens are merges and how deep."""

    label = source = kind = None
    training_counts = None  # how often each id occurs in the training text, when a sidecar says
    encode_wall = encode_cpu = 0.0  # seconds spent in encode_many / the core's encode, wall and CPU

    def encode_many(self, texts, threads):
        raise NotImplementedError

    def decode_many(self, batch, threads):
        raise NotImplementedError

    def measure(self, units, datas, threads, usage):
        """(each unit's token count, the indices of the units whose ids do not decode back to
        their UTF-8 bytes `datas[i]`); the ids go into `usage` (a measure.Usage)."""
        t, c = time.perf_counter(), time.process_time()
        batch = self.encode_many(units, threads)
        self.encode_wall += time.perf_counter() - t
        self.encode_cpu += time.process_time() - c
        usage.add_lists(batch)
        back = self.decode_many(batch, threads)
        return [len(ids) for ids in batch], [i for i, (b, raw) in enumerate(zip(back, datas)) if b != raw]

    def vocabulary(self):
        """(ordinary token count, the ids of the merge tokens, {merge token id: depth} or None
        when the tokenizer records no merge rules)."""
        raise NotImplementedError

    def describe(self):
        return {"label": self.label, "source": self.source, "kind": self.kind}


class RankMerges:
    """The merge tokens of a rank vocabulary (every token but the 256 single bytes), as a
    collection: its size, and how many of a set of used ids are among them, without listing
    the hundreds of thousands of ids."""

    def __init__(self, ranks):
        self.n = len(ranks)
        self.bytes_ids = {ranks[bytes([b])] for b in range(256) if bytes([b]) in ranks}

    def __len__(self):
        return self.n - len(self.bytes_ids)

    def unused(self, used):
        return len(self) - len(used - self.bytes_ids)


def merge_depths(pairs, first_id):
    """{id: depth} of merge tokens: rule i makes id first_id + i from (left, right); a base
    symbol has depth 0 and a merge 1 + the deeper of its two parts (the UBE paper's merge depth,
    Appendix D.5.3: depth 1 joins two base symbols)."""
    depth = {}
    for i, (left, right) in enumerate(pairs):
        depth[first_id + i] = 1 + max(depth.get(left, 0), depth.get(right, 0))
    return depth


class SupertokTokenizer(Measured):
    def __init__(self, enc, label, source):
        self.enc, self.label, self.source = enc, label, source
        self.kind = "supertok"

    def encode_many(self, texts, threads):
        return self.enc.encode_ordinary_batch(texts, num_threads=threads)

    def decode_many(self, batch, threads):  # as the audit decodes: from packed ids
        return [self.enc._decode_packed(struct.pack("<%dI" % len(ids), *ids)) for ids in batch]

    def measure(self, units, datas, threads, usage):
        """The ids stay packed bytes from the core to the audit (no int object per id). The
        audit decodes the units in one call per thread: their ids with a NUL token after each,
        compared with the units' bytes each followed by NUL. Equal means every unit decodes to
        itself, when no unit holds a NUL (a unit decoding wrong would have to make a NUL to stay
        aligned, and the count of NULs would then differ). Otherwise, or when they differ, unit
        by unit."""
        t, c = time.perf_counter(), time.process_time()
        packed, counts = self.enc._encode_ordinary_packed(datas, threads)
        self.encode_wall += time.perf_counter() - t
        self.encode_cpu += time.process_time() - c
        usage.add_packed(packed)
        sep = self._nul()
        starts = [0]
        for c in counts:
            starts.append(starts[-1] + c)

        def check(a, b):  # the units a..b-1: the indices of those that do not come back
            part = datas[a:b]
            joined = b"\0".join(part)
            if sep is not None and joined.count(b"\0") == b - a - 1:  # no unit holds a NUL
                ids = packed[4 * starts[a]:4 * starts[b]]
                if self.enc._decode_packed(_with_separator(ids, counts[a:b], sep)) == joined + b"\0":
                    return []
            return [i for i in range(a, b)
                    if self.enc._decode_packed(packed[4 * starts[i]:4 * starts[i + 1]]) != datas[i]]
        # the chunks decode on the encoder's threads (the core drops the GIL)
        return counts, [i for bad in self.enc._in_chunks(len(datas), threads, check) for i in bad]

    def _nul(self):
        try:
            return self.enc.encode_single_token(b"\0" if self.enc.alphabet == "bytes" else "\0")
        except KeyError:
            return None

    def vocabulary(self):
        enc = self.enc
        merges = [(a, b) for a, b, _ in enc.merges]
        supers = [(a, b) for a, b, _ in enc.supermerges]
        if not merges and not supers:  # a rank vocabulary: every token longer than one byte was a merge
            ranks = enc._mergeable_ranks
            return len(ranks), RankMerges(ranks), None
        alphabet = 512 if enc.alphabet == "ube" else 256
        depth = merge_depths(merges + supers, alphabet)
        return alphabet + len(merges) + len(supers), list(depth), depth

    def describe(self):
        d = super().describe()
        d.update(name=self.enc.name, alphabet=self.enc.alphabet, n_vocab=self.enc.n_vocab,
                 merges=len(self.enc.merges), supermerges=len(self.enc.supermerges))
        return d


class HuggingFaceTokenizer(Measured):
    """A tokenizer.json run by the `tokenizers` package itself (no special tokens added)."""

    def __init__(self, path, label, spec):
        try:
            import tokenizers
        except ImportError:
            raise TokenizerError("%s: a tokenizer.json is measured through the `tokenizers` package, which is not "
                                 "installed (pip install tokenizers)" % path) from None
        try:
            self.tok = tokenizers.Tokenizer.from_file(path)
        except Exception as exc:  # tokenizers raises its own Exception type for a bad file
            raise TokenizerError("%s: tokenizers cannot load it: %s" % (path, exc)) from None
        self.spec = spec  # the file's JSON, parsed by resolve
        self.label, self.source, self.kind = label, path, "tokenizers"

    def encode_many(self, texts, threads):
        return [e.ids for e in self.tok.encode_batch(list(texts), add_special_tokens=False)]

    def decode_many(self, batch, threads):
        return [s.encode("utf-8", "surrogatepass") for s in
                self.tok.decode_batch([list(ids) for ids in batch], skip_special_tokens=False)]

    def vocabulary(self):
        model = self.spec.get("model") or {}
        vocab = model.get("vocab") or {}
        added = {t["id"] for t in self.spec.get("added_tokens") or ()}
        ordinary = sum(1 for i in vocab.values() if i not in added)
        merges = model.get("merges") or []
        if model.get("type") != "BPE" or not merges:
            return ordinary, [], None
        depth = {}
        for m in merges:
            left, right = m.split(" ", 1) if isinstance(m, str) else m
            tid = vocab.get(left + right)
            if tid is not None and left in vocab and right in vocab:
                depth[tid] = 1 + max(depth.get(vocab[left], 0), depth.get(vocab[right], 0))
        return ordinary, list(depth), depth

    def describe(self):
        d = super().describe()
        d.update(n_vocab=self.tok.get_vocab_size())
        return d


def _label_split(spec):
    """(spec, label or None) of "SPEC:LABEL"; a Windows drive letter is not a label."""
    head, colon, label = spec.rpartition(":")
    if colon and head and label and not (len(head) == 1 and head.isalpha()) and "/" not in label and "\\" not in label:
        return head, label
    return spec, None


def _stem(path):
    base = os.path.basename(path)
    for ext in (".stmodel", ".tiktoken", ".json", ".stvc"):
        if base.endswith(ext):
            return base[:-len(ext)] or base
    return base


def resolve(spec, *, pattern=None):
    """A Measured for a spec (see the module's docstring) or an Encoding/Measured."""
    from .. import list_encoding_names, load_model, get_encoding
    if isinstance(spec, Measured):
        return spec
    if isinstance(spec, Encoding):
        return SupertokTokenizer(spec, spec.name, spec.name)
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[1], str):  # (tokenizer, label)
        t = resolve(spec[0], pattern=pattern)
        t.label = spec[1]
        return t
    if isinstance(spec, os.PathLike):
        spec = os.fsdecode(os.fspath(spec))
    if not isinstance(spec, str):
        raise TypeError("a tokenizer is an encoding name, a model path, an Encoding or (tokenizer, label), not %s"
                        % type(spec).__name__)
    path, label = _label_split(spec)
    if path in list_encoding_names() and not os.path.exists(path):
        return SupertokTokenizer(get_encoding(path), label or path, path)
    if not os.path.exists(path):
        raise TokenizerError("%s: neither a shipped encoding (%s) nor a file" % (path, ", ".join(list_encoding_names())))
    if os.path.isdir(path):
        raise TokenizerError("%s: is a folder, not a model file" % path)
    name = os.path.basename(path)
    if name.endswith(".json"):  # a HuggingFace tokenizer.json, or a supertok JSON model (load_model's)
        try:
            with open(path, "rb") as f:
                parsed = json.loads(f.read().decode("utf-8"))
        except OSError as exc:
            raise TokenizerError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            raise TokenizerError("%s: not JSON (%s)" % (path, exc)) from None
        if isinstance(parsed, dict) and "model" in parsed and "format" not in parsed:
            return HuggingFaceTokenizer(path, label or _stem(path), parsed)
    if name.endswith(".tiktoken"):
        return SupertokTokenizer(_rank_file(path, pattern), label or _stem(path), path)
    try:
        enc = load_model(path)
    except OSError as exc:
        raise TokenizerError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except ValueError as exc:
        msg = str(exc)
        raise TokenizerError(msg if msg.startswith(path) else "%s: %s" % (path, msg)) from None
    t = SupertokTokenizer(enc, label or _stem(path), path)
    from .._counts import TOKEN_COUNTS_SUFFIX, read_token_counts
    if os.path.exists(path + TOKEN_COUNTS_SUFFIX):  # the training text's token counts (train --token-counts)
        t.training_counts = read_token_counts(path + TOKEN_COUNTS_SUFFIX)
        if len(t.training_counts) != enc.n_vocab:
            raise TokenizerError("%s%s: counts for %d ids, the model has %d" % (
                path, TOKEN_COUNTS_SUFFIX, len(t.training_counts), enc.n_vocab))
    return t


def _rank_file(path, pattern):
    from .._catalogue import PATTERNS, pat_str
    from ..load import load_tiktoken_bpe
    if (pattern or "o200k") not in PATTERNS:
        raise TokenizerError("%s: unknown pattern %r (one of %s)" % (path, pattern, ", ".join(PATTERNS)))
    pat = pat_str(pattern or "o200k")
    try:
        ranks = load_tiktoken_bpe(path)
    except OSError as exc:
        raise TokenizerError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except ValueError as exc:
        raise TokenizerError("%s: not a tiktoken rank file: %s" % (path, exc)) from None
    return Encoding(_stem(path), pat_str=pat, mergeable_ranks=ranks, special_tokens={})


def _unpack(packed):
    """An array('I') of packed little-endian uint32 ids."""
    a = array.array("I")
    a.frombytes(packed)
    if sys.byteorder != "little":
        a.byteswap()
    return a


def _with_separator(packed, counts, sep):
    """The packed ids with the id `sep` after each text's (counts[i] ids each)."""
    try:
        import numpy as np
    except ImportError:
        np = None
    if np is not None:
        a = np.frombuffer(packed, "<u4")
        ends = np.cumsum(np.asarray(counts, dtype=np.int64))
        return np.insert(a, ends, np.uint32(sep)).astype("<u4").tobytes()
    ids, out, k = _unpack(packed), array.array("I"), 0
    for c in counts:
        out.extend(ids[k:k + c])
        out.append(sep)
        k += c
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()
