"""Mirrors core_c/src/train/candidates_spec.c: the candidates spec (docs/formats/train-format.md,
"The candidates spec"; supertok.h, st_trainer_candidates_spec / st_candidates_new): what a
candidates counter needs, saved from a trainer whose phase 1 is done, so that another process or
machine makes the same counter without the trainer. The spec holds the pre-tokenizer, the
algorithm and its argument, the alphabet, the kept regular merges and their fingerprint; the
reader rebuilds the eligible vocabulary's tokens from the merges (as the trainer made them),
recomputes the fingerprint and refuses a spec whose fingerprint differs.

Layout: little-endian; an 84-byte header (magic "stcandsp", u32 version 1, u32 pattern, u32
flags, 8 u32 script words, u32 algorithm, u32 alphabet, u64 supermerges, u64 kept, u64
fingerprint), then kept merges of u32 left, u32 right. The writer and the reader are plain Python
over numpy (the merges are read and their tokens laid out as whole arrays).
"""
import numpy as np

from .. import export
from ..base.common import (ST_OK, ST_ERR_INVALID_ARGUMENT, ST_ERR_BUFFER_TOO_SMALL,
                           ST_ERR_MALFORMED_MODEL, ST_UNIT_NONE, ST_UNIT_BYTE, ST_KIND_OUT_OF_ORDER, clear, fail)
from ..text.pretokenize import pretokenizer_init, Pretokenizer, ST_PRETOK_SCRIPT_AWARE, ST_SCRIPT_WORDS
from ..text.unicode import st_script_count
from .candidates import counter_new_cand, vocab_fingerprint
from . import trainer as TR

SPEC_MAGIC = b"stcandsp"
SPEC_VERSION = 1
SPEC_HEADER = 84  # magic, version, pattern, flags, scripts (32), algorithm, alphabet, supermerges, kept, fingerprint
SPEC_MERGE = 8    # u32 left, u32 right
ST_RULES_MAX_IDS = (1 << 21) - 1


def candidates_spec(t, algorithm, supermerges, out, cap, out_len, err):
    """st__candidates_spec: the spec of the candidates counter st__counter_new_candidates makes."""
    clear(err)
    if t is None or out_len is None or (out is None and cap):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out_len is NULL, or out NULL with a cap")
    why = TR.superword_args_error(t, algorithm, supermerges)
    if why:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why)
    kept = TR.trainer_kept(t, algorithm, supermerges)
    size = SPEC_HEADER + kept * SPEC_MERGE
    out_len.v = size
    if cap < size:
        if err is not None:
            err.status = ST_ERR_BUFFER_TOO_SMALL
        return ST_ERR_BUFFER_TOO_SMALL
    pt = t.pt
    aware = pt.flags & ST_PRETOK_SCRIPT_AWARE
    S = t.S
    alphabet = int(S[TR.ALPHABET])
    merges = t.st.M.merges
    head = (SPEC_MAGIC + np.array([SPEC_VERSION, pt.pattern & 0xFFFFFFFF, pt.flags], "<u4").tobytes()
            + np.array([int(w) if aware else 0 for w in pt.single_letter_scripts[:ST_SCRIPT_WORDS]], "<u4").tobytes()
            + np.array([algorithm, alphabet], "<u4").tobytes()
            + np.array([supermerges if algorithm == TR.ST_ALGORITHM_SUPERBPE else 0, kept,
                        vocab_fingerprint(alphabet, merges, kept)], "<u8").tobytes())
    out[:SPEC_HEADER] = np.frombuffer(head, np.uint8)
    if kept:
        out[SPEC_HEADER:size] = np.frombuffer(merges[:2 * kept].astype("<u4").tobytes(), np.uint8)
    return ST_OK


@export
def st_trainer_candidates_spec(t, out, cap, out_len, err):
    clear(err)
    if t is None or out_len is None:
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "trainer or out_len is NULL")
    if TR.st_trainer_stat(t, TR.ST_TRAINER_STATE) != TR.ST_TRAINING_CANDIDATES:
        S = t.S
        why = ("the pass over the texts is closed (phase 2 has started)" if S[TR.PHASE] == 2
               else "phase 1 is not finished: the texts are wanted again after it (ST_TRAINING_CANDIDATES)"
               if not S[TR.DONE]
               else "the algorithm is BPE: training reads the texts once (st_trainer_set_superwords)")
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, why, kind=ST_KIND_OUT_OF_ORDER)
    return candidates_spec(t, int(t.S[TR.ALGORITHM]), int(t.S[TR.SUPERMERGES_ARG]), out, cap, out_len, err)


def _bad(err, off, what):
    return fail(err, ST_ERR_MALFORMED_MODEL, ST_UNIT_BYTE, off, what)


def _le32(b, at):
    return int.from_bytes(bytes(b[at:at + 4]), "little")


def _le64(b, at):
    return int.from_bytes(bytes(b[at:at + 8]), "little")


@export
def st_candidates_new(b, length, alloc, out, err):
    clear(err)
    if out is None or (b is None and length):
        return fail(err, ST_ERR_INVALID_ARGUMENT, ST_UNIT_NONE, 0, "out is NULL, or spec NULL with a length")
    out.v = None
    if length < 8 or bytes(b[:8]) != SPEC_MAGIC:
        return _bad(err, 0, "not a candidates spec (magic 'stcandsp')")
    if length < SPEC_HEADER:
        return _bad(err, length, "candidates spec: the header is cut short (truncated?)")
    version = _le32(b, 8)
    if version != SPEC_VERSION:
        return _bad(err, 8, "candidates spec: format version %d is not supported (this core reads version 1)" % version)
    pattern = _le32(b, 12)
    if pattern >= 1 << 31:
        pattern -= 1 << 32  # (int) of the u32
    flags = _le32(b, 16)
    if flags & ~ST_PRETOK_SCRIPT_AWARE:
        return _bad(err, 16, "candidates spec: unknown pre-tokenizer flags")
    st, _ = pretokenizer_init(pattern, flags)
    if st != ST_OK:
        return _bad(err, 12, "candidates spec: unknown pattern")
    scripts = np.zeros(ST_SCRIPT_WORDS, np.uint32)
    nscripts = st_script_count()
    for w in range(ST_SCRIPT_WORDS):
        bits = _le32(b, 20 + 4 * w)
        scripts[w] = bits
        for k in range(32):
            if (bits >> k) & 1 and (not (flags & ST_PRETOK_SCRIPT_AWARE) or 32 * w + k >= nscripts):
                return _bad(err, 20 + 4 * w, "candidates spec: a script bit that is no script (or set without script-aware)")
    algorithm, alphabet = _le32(b, 52), _le32(b, 56)
    supermerges, kept, fingerprint = _le64(b, 60), _le64(b, 68), _le64(b, 76)
    if algorithm not in (TR.ST_ALGORITHM_BOUNDLESS, TR.ST_ALGORITHM_SUPERBPE):
        return _bad(err, 52, "candidates spec: unknown algorithm")
    if alphabet not in (TR.ST_ALPHABET_BYTES, TR.ST_ALPHABET_UBE):
        return _bad(err, 56, "candidates spec: unknown alphabet")
    if algorithm == TR.ST_ALGORITHM_BOUNDLESS and supermerges:
        return _bad(err, 60, "candidates spec: supermerges is SuperBPE's (0 with BoundlessBPE)")
    base, sw = (512, 2) if alphabet == TR.ST_ALPHABET_UBE else (256, 1)
    if kept > ST_RULES_MAX_IDS - base:
        return _bad(err, 68, "candidates spec: more merges than a model holds (2^21 - 1 ids)")
    size = SPEC_HEADER + kept * SPEC_MERGE
    if length < size:
        return _bad(err, length, "candidates spec: the merges are cut short (truncated?)")
    if length > size:
        return _bad(err, size, "candidates spec: bytes after the merges")
    # the merges: each of ids made before it; the tokens' bytes within a model's limit
    merges = np.frombuffer(bytes(b[SPEC_HEADER:size]), "<u4").astype(np.uint32)
    n = base + kept
    tlen = np.zeros(n, np.int64)
    tlen[:base] = sw
    made_bytes = 0
    for i in range(kept):
        at = SPEC_HEADER + SPEC_MERGE * i
        l, r = int(merges[2 * i]), int(merges[2 * i + 1])
        if l >= base + i or r >= base + i:
            return _bad(err, at if l >= base + i else at + 4, "candidates spec: a merge of an id not made before it")
        made_bytes += int(tlen[l]) + int(tlen[r])
        if made_bytes > TR.ST_RULES_TOKEN_BYTES_BASE + TR.ST_RULES_TOKEN_BYTES_PER_RULE * (i + 1):
            return _bad(err, at, "candidates spec: the merges' tokens pass the limit on a model's token bytes")
        tlen[base + i] = tlen[l] + tlen[r]
    if vocab_fingerprint(alphabet, merges, kept) != fingerprint:
        return _bad(err, 76, "candidates spec: the fingerprint does not match the merges")
    # the tokens' base-symbol sequences, laid out in id order as the trainer lays them out
    seq = np.zeros(max(base * sw + made_bytes, 1), np.uint8)
    toff = np.zeros(n, np.uint64)
    ids = np.arange(base, dtype=np.int64)
    toff[:base] = ids * sw
    if sw == 2:
        seq[0:2 * base:2] = ids >> 8
        seq[1:2 * base:2] = ids & 0xFF
    else:
        seq[:base] = ids
    _layout(seq, toff, tlen, merges, base, kept)
    pt = Pretokenizer(int(pattern), int(flags), scripts)
    st, c = counter_new_cand(pt, algorithm, alphabet, supermerges, kept, fingerprint, seq, toff,
                             tlen.astype(np.uint32), n, err)
    if st != ST_OK:
        return st
    out.v = c
    return ST_OK


def _layout(seq, toff, tlen, merges, base, kept):
    TR.layout_merged_tokens(seq, toff, tlen, merges, base, kept)
