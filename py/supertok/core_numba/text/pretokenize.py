"""Mirrors core_c/src/text/pretokenize.c and pretokenize.h: the pre-tokenizers (gpt2, cl100k,
o200k, script-aware) and their handle.

Interface fixed for the other modules:
  Pretokenizer(pattern, flags, single_letter_scripts uint32[8])   (struct st_pretokenizer)
  The piece iterator (st__piece_iter) is a state array it = np.zeros(ITER_FIELDS, np.int64)
  (it[0] = i, it[1] = chunk_end, ...) over the text s (uint8 array, len given):
    pieces_init(pt, s, length, it); pieces_next(pt, s, length, it) -> end;
    pieces_fill(pt, s, length, it, ends, cap) -> count   (ends: uint64 array)
  pretokenizer_init(pattern, flags, scripts bytes or None) -> (status, Pretokenizer or None, error fields)
"""
from collections import namedtuple

Pretokenizer = namedtuple("Pretokenizer", "pattern flags single_letter_scripts")

ITER_FIELDS = 4
ST_PATTERN_NONE, ST_PATTERN_GPT2, ST_PATTERN_CL100K, ST_PATTERN_O200K = 0, 1, 2, 3
ST_PRETOK_SCRIPT_AWARE = 1
